//===- LauncherTest.cpp - fac's AOT launchers on the fake HIP runtime -----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file runs the C launchers `fac --emit=launcher` wrote for two gfx906
// kernels (CMakeLists.txt: Inputs/launcher_dense.mlir, dense with 64-bit
// indices; Inputs/launcher_split.mlir, split-KV and GQA-packed with an LSE
// output and 32-bit indices), compiled by the system C compiler against
// HIP's headers only and linked here with libfa-fake-hip.so, whose launches
// execute on the gfx906 simulator. It checks:
//   - the outputs against an fp64 reference of softmax(Q K^T * scale) V
//     (scale and causal flag from the launcher's header, i.e. the
//     manifest), contiguous and with distinct padded strides;
//   - the kernel arguments, argument by argument as the code object's
//     `.args` place them (the fake requires zero padding, so this is the
//     kernarg segment byte for byte), of each launch against the runtime's
//     launch of the same code object (fa::Module::loadFromMemory of the
//     launcher's own bytes and manifest, through the HIP backend on the
//     same fake): Kernel::enqueue on the same buffers, workspace and
//     stream, every byte equal; Kernel::launch, with a workspace of its
//     own, all but the workspace descriptors;
//   - that a launch reaches HIP as its kernels on the caller's stream and
//     nothing else (no synchronisation);
//   - the automatic K/V split count against fa::planKvSplits for the
//     fake's 60 CUs, and the workspace size against the plan;
//   - that every refusal is an error code and launches nothing.
//
//===----------------------------------------------------------------------===//

#include "FakeHip.h"

// The generated launchers (prefixes dense and split).
#include "dense.h"
#include "split.h"

#include "fa/AttentionShape.h"
#include "fa/Device.h"
#include "fa/Half.h"
#include "fa/Module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace fa;

namespace {

// Before any test opens a device: the runtime's HIP backend dlopens the
// fake this test is linked with, so both talk to one fake GPU.
const int kPointedAtTheFake = setenv("FA_HIP_LIBRARY", FA_FAKE_HIP_LIBRARY, 1);

/// The fake's compute units (FakeHip.cpp).
constexpr int kFakeComputeUnits = 60;

/// Words 44 to 53: the split-KV workspace descriptors.
bool isWorkspaceWord(int word) { return word >= 44 && word <= 53; }

/// Elements from the first to one past the last of a [n0, n1, n2, inner]
/// view.
int64_t extent(int64_t n0, int64_t n1, int64_t n2, int64_t inner, int64_t s0,
               int64_t s1, int64_t s2) {
  return (n0 - 1) * s0 + (n1 - 1) * s1 + (n2 - 1) * s2 + inner;
}

/// One hipMalloc'ed allocation on the fake, freed on destruction.
struct DeviceMemory {
  void *ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceMemory(size_t bytes) : bytes(bytes) {
    EXPECT_EQ(hipMalloc(&ptr, bytes), hipSuccess);
  }
  ~DeviceMemory() {
    if (ptr)
      (void)hipFree(ptr);
  }
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
};

/// What a launcher's header says of its kernel.
struct KernelFacts {
  int64_t headDim;
  double scale;
  bool causal, hasLse;
};

/// One attention problem on the fake: f16 Q, K, V, O and f32 LSE in
/// allocations of exactly the extent their strides span (so that the
/// runtime's descriptor size words, the buffers' sizes, are the
/// launcher's), random inputs, NaN in every element no view covers.
struct Problem {
  AttentionShape shape;
  KernelFacts facts;
  std::array<int64_t, 14> st{};
  std::vector<uint16_t> q, k, v; // host copies, padding included
  std::optional<DeviceMemory> dq, dk, dv, dout, dlse;

  Problem(const AttentionShape &sh, const KernelFacts &f, bool distinct,
          unsigned seed)
      : shape(sh), facts(f) {
    AttentionStrides s =
        distinct ? AttentionStrides::fromLayout(sh, f.headDim,
                                                AttentionLayout::distinct())
                 : AttentionStrides::contiguous(sh, f.headDim);
    st = {s.q.batch, s.q.head,  s.q.row,    s.k.batch, s.k.head,
          s.k.row,   s.v.batch, s.v.head,   s.v.row,   s.o.batch,
          s.o.head,  s.o.row,   s.lseBatch, s.lseHead};
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    auto make = [&](std::vector<uint16_t> &host, std::optional<DeviceMemory> &d,
                    int64_t heads, int64_t rows, int first) {
      host.assign(size_t(elements(heads, rows, first)), 0x7e00); // f16 NaN
      for (int64_t b = 0; b < sh.batch; ++b)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t x = 0; x < f.headDim; ++x)
              host[size_t(at(first, b, h, r) + x)] = floatToHalf(uniform(rng));
      d.emplace(host.size() * 2);
      EXPECT_EQ(hipMemcpyHtoD(d->ptr, host.data(), d->bytes), hipSuccess);
    };
    make(q, dq, sh.headsQ, sh.seqQ, 0);
    make(k, dk, sh.headsKv, sh.seqK, 3);
    make(v, dv, sh.headsKv, sh.seqK, 6);
    dout.emplace(size_t(elements(sh.headsQ, sh.seqQ, 9)) * 2);
    EXPECT_EQ(hipMemset(dout->ptr, 0xff, dout->bytes), hipSuccess);
    if (f.hasLse) {
      dlse.emplace(
          size_t(extent(sh.batch, sh.headsQ, 1, sh.seqQ, st[12], st[13], 0)) *
          4);
      EXPECT_EQ(hipMemset(dlse->ptr, 0xff, dlse->bytes), hipSuccess);
    }
  }

  int64_t elements(int64_t heads, int64_t rows, int first) const {
    return extent(shape.batch, heads, rows, facts.headDim, st[size_t(first)],
                  st[size_t(first) + 1], st[size_t(first) + 2]);
  }
  int64_t at(int first, int64_t b, int64_t h, int64_t r) const {
    return b * st[size_t(first)] + h * st[size_t(first) + 1] +
           r * st[size_t(first) + 2];
  }
  void *lse() const { return dlse ? dlse->ptr : nullptr; }

  /// O and LSE against the fp64 reference: softmax(scale * Q K^T) V with
  /// the causal mask aligned bottom-right; a row that sees no key is 0 with
  /// LSE -inf.
  void checkOutputs() const {
    const AttentionShape &sh = shape;
    const int64_t D = facts.headDim;
    std::vector<uint16_t> o(dout->bytes / 2);
    std::vector<float> lse(dlse ? dlse->bytes / 4 : 0);
    ASSERT_EQ(hipMemcpyDtoH(o.data(), dout->ptr, dout->bytes), hipSuccess);
    if (dlse)
      ASSERT_EQ(hipMemcpyDtoH(lse.data(), dlse->ptr, dlse->bytes), hipSuccess);
    double worst = 0, worstLse = 0;
    std::vector<double> p(size_t(sh.seqK));
    for (int64_t b = 0; b < sh.batch; ++b)
      for (int64_t h = 0; h < sh.headsQ; ++h)
        for (int64_t i = 0; i < sh.seqQ; ++i) {
          const int64_t hk = h / (sh.headsQ / sh.headsKv);
          const int64_t visible =
              facts.causal
                  ? std::max<int64_t>(
                        0, std::min(sh.seqK, i + 1 + sh.seqK - sh.seqQ))
                  : sh.seqK;
          double m = -std::numeric_limits<double>::infinity(), l = 0;
          for (int64_t j = 0; j < visible; ++j) {
            double s = 0;
            for (int64_t x = 0; x < D; ++x)
              s += double(halfToFloat(q[size_t(at(0, b, h, i) + x)])) *
                   halfToFloat(k[size_t(at(3, b, hk, j) + x)]);
            p[size_t(j)] = s * facts.scale;
            m = std::max(m, p[size_t(j)]);
          }
          for (int64_t j = 0; j < visible; ++j)
            l += std::exp(p[size_t(j)] - m);
          for (int64_t x = 0; x < D; ++x) {
            double want = 0;
            for (int64_t j = 0; j < visible; ++j)
              want += std::exp(p[size_t(j)] - m) / l *
                      halfToFloat(v[size_t(at(6, b, hk, j) + x)]);
            double got = halfToFloat(o[size_t(at(9, b, h, i) + x)]);
            worst = std::max(worst, std::isnan(got) ? INFINITY
                                                    : std::fabs(got - want));
          }
          if (dlse) {
            float got = lse[size_t(b * st[12] + h * st[13] + i)];
            if (visible == 0)
              EXPECT_TRUE(std::isinf(got) && got < 0) << "row " << i;
            else
              worstLse =
                  std::max(worstLse, std::isnan(got)
                                         ? INFINITY
                                         : std::fabs(got - (m + std::log(l))));
          }
        }
    // f16 inputs and output, f32 accumulation, P rounded to f16 for P V.
    EXPECT_LT(worst, 1e-3) << "max |O - reference| for " << sh.toString();
    EXPECT_LT(worstLse, 1e-4) << "max |LSE - reference| for " << sh.toString();
  }
};

/// What the fake saw of one launch, copied.
fake_hip_launch lastLaunch() { return *fake_hip_last_launch(); }
fake_hip_launch previousLaunch() { return *fake_hip_previous_launch(); }

/// The launch reached the kernel and ran to completion.
void expectRan(const fake_hip_launch &l) {
  EXPECT_STREQ(l.problem, "") << "kernel " << l.kernel;
  EXPECT_EQ(l.executed, 1) << "kernel " << l.kernel;
  EXPECT_STREQ(l.fault, "") << "kernel " << l.kernel;
}

/// The launcher's launch `a` and the runtime's `b` of one kernel: the same
/// kernel, geometry, LDS and kernarg segment, except the workspace
/// descriptors when `exceptWorkspace`.
void expectSameLaunch(const fake_hip_launch &a, const fake_hip_launch &b,
                      bool exceptWorkspace) {
  EXPECT_STREQ(a.kernel, b.kernel);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.grid[i], b.grid[i]) << a.kernel << " grid " << i;
    EXPECT_EQ(a.block[i], b.block[i]) << a.kernel << " block " << i;
  }
  EXPECT_EQ(a.shared_mem_bytes, b.shared_mem_bytes);
  EXPECT_EQ(a.used_kernel_params, b.used_kernel_params);
  EXPECT_EQ(a.kernarg_bytes, b.kernarg_bytes);
  ASSERT_EQ(a.num_args, b.num_args);
  for (int i = 0; i < a.num_args; ++i) {
    const fake_hip_arg &x = a.args[i], &y = b.args[i];
    EXPECT_EQ(x.offset, y.offset) << "argument " << i;
    EXPECT_EQ(x.size, y.size) << "argument " << i;
    EXPECT_STREQ(x.value_kind, y.value_kind) << "argument " << i;
    if (!(exceptWorkspace && isWorkspaceWord(i)))
      EXPECT_EQ(x.value, y.value)
          << a.kernel << ": argument " << i << " (word " << i << ", offset "
          << x.offset << ") differs: launcher " << x.value << ", runtime "
          << y.value;
  }
}

class Launcher : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(kPointedAtTheFake, 0);
    fake_hip_reset();
    Expected<Device> opened = Device::open("hip");
    ASSERT_TRUE(opened.ok()) << opened.status().toString();
    device.emplace(opened.take());
    ASSERT_EQ(device->limits().computeUnits, uint32_t(kFakeComputeUnits));
  }

  /// The runtime's module of the launcher's own code object and manifest.
  Kernel runtimeKernel(const unsigned char *code, size_t bytes,
                       const char *manifest) {
    Expected<Module> module =
        Module::loadFromMemory(*device, code, bytes, manifest, "launcher");
    EXPECT_TRUE(module.ok()) << module.status().toString();
    Expected<Kernel> kernel = module->kernel();
    EXPECT_TRUE(kernel.ok()) << kernel.status().toString();
    return kernel.take();
  }

  /// The runtime's launch of `kernel` on the problem's own memory
  /// (Device::wrap) with its strides: Kernel::enqueue on `stream` over
  /// `workspace` (then the stream is synchronised), or with no workspace
  /// given, the blocking Kernel::launch.
  void runtimeLaunch(const Kernel &kernel, Problem &p, int64_t kvSplits,
                     LaunchInfo *info, hipStream_t stream = nullptr,
                     void *workspace = nullptr, size_t workspaceBytes = 0) {
    auto wrap = [&](void *ptr, size_t bytes) {
      Expected<Buffer> b = device->wrap(ptr, bytes);
      EXPECT_TRUE(b.ok()) << b.status().toString();
      return b.take();
    };
    Buffer q = wrap(p.dq->ptr, p.dq->bytes), k = wrap(p.dk->ptr, p.dk->bytes),
           v = wrap(p.dv->ptr, p.dv->bytes),
           o = wrap(p.dout->ptr, p.dout->bytes);
    std::optional<Buffer> lse, ws;
    if (p.dlse)
      lse.emplace(wrap(p.dlse->ptr, p.dlse->bytes));
    if (workspace)
      ws.emplace(wrap(workspace, workspaceBytes));
    AttentionArgs args;
    args.q = &q;
    args.k = &k;
    args.v = &v;
    args.o = &o;
    args.lse = lse ? &*lse : nullptr;
    args.shape = p.shape;
    AttentionStrides s;
    s.q = {p.st[0], p.st[1], p.st[2]};
    s.k = {p.st[3], p.st[4], p.st[5]};
    s.v = {p.st[6], p.st[7], p.st[8]};
    s.o = {p.st[9], p.st[10], p.st[11]};
    s.lseBatch = p.st[12];
    s.lseHead = p.st[13];
    args.strides = s;
    LaunchOptions options;
    options.kvSplits = kvSplits;
    // On a stream: an enqueue (with the workspace given, or none); else
    // the blocking launch.
    Status status = stream ? kernel.enqueue(args, stream, ws ? &*ws : nullptr,
                                            options, info)
                           : kernel.launch(args, options, info);
    ASSERT_TRUE(status.ok()) << status.toString();
    if (stream)
      ASSERT_EQ(hipStreamSynchronize(stream), hipSuccess);
  }

  /// A stream of the fake, destroyed with the test.
  hipStream_t stream() {
    if (!stream_)
      EXPECT_EQ(hipStreamCreate(&stream_), hipSuccess);
    return stream_;
  }
  void TearDown() override {
    if (stream_)
      (void)hipStreamDestroy(stream_);
  }

  hipStream_t stream_ = nullptr;
  std::optional<Device> device;
};

const KernelFacts kDense = {DENSE_HEAD_DIM, DENSE_SCALE, DENSE_CAUSAL != 0,
                            DENSE_HAS_LSE != 0};
const KernelFacts kSplit = {SPLIT_HEAD_DIM, SPLIT_SCALE, SPLIT_CAUSAL != 0,
                            SPLIT_HAS_LSE != 0};

TEST_F(Launcher, DenseMatchesReferenceAndRuntime) {
  static_assert(DENSE_SPLIT_KV == 0 && DENSE_HAS_LSE == 0,
                "Inputs/launcher_dense.mlir: dense, no LSE output");
  dense_module m;
  ASSERT_EQ(dense_load(&m), 0);
  EXPECT_EQ(m.compute_units, kFakeComputeUnits);
  Kernel kernel =
      runtimeKernel(dense_code_object, dense_code_object_size, dense_manifest);
  EXPECT_EQ(dense_workspace_size(2, 4, 2, 70, 90, 0), 0u);
  const struct {
    AttentionShape shape;
    bool distinct, explicitStrides;
  } cases[] = {{{2, 4, 2, 70, 90}, false, false},
               {{2, 4, 2, 70, 90}, false, true},
               {{1, 4, 2, 129, 33}, true, true},
               {{3, 4, 2, 1, 200}, true, true}};
  unsigned seed = 1;
  for (const auto &c : cases) {
    SCOPED_TRACE(c.shape.toString() + (c.distinct ? " distinct strides" : ""));
    Problem p(c.shape, kDense, c.distinct, seed++);
    const AttentionShape &sh = c.shape;
    hipStream_t caller = stream();
    fake_hip_reset();
    ASSERT_EQ(
        dense_launch(&m, caller, p.dq->ptr, p.dk->ptr, p.dv->ptr, p.dout->ptr,
                     p.lse(), sh.batch, sh.headsQ, sh.headsKv, sh.seqQ, sh.seqK,
                     c.explicitStrides ? p.st.data() : nullptr, nullptr, 0, 0),
        0);
    EXPECT_EQ(std::string(fake_hip_stream_log()),
              "launch attention_kernel on stream 1\n");
    EXPECT_EQ(std::string(fake_hip_calls()), "hipModuleLaunchKernel\n");
    ASSERT_EQ(hipStreamSynchronize(stream()), hipSuccess);
    fake_hip_launch ours = lastLaunch();
    expectRan(ours);
    EXPECT_EQ(ours.stream, static_cast<void *>(stream()));
    EXPECT_EQ(ours.num_args, 44);
    p.checkOutputs();

    runtimeLaunch(kernel, p, 0, nullptr);
    fake_hip_launch theirs = lastLaunch();
    expectRan(theirs);
    expectSameLaunch(ours, theirs, /*exceptWorkspace=*/false);
  }
  EXPECT_EQ(dense_unload(&m), 0);
  EXPECT_EQ(m.module, nullptr);
}

TEST_F(Launcher, SplitKvMatchesReferenceAndRuntime) {
  static_assert(SPLIT_SPLIT_KV == 1 && SPLIT_HAS_LSE == 1 &&
                    SPLIT_HEAD_DIM == 32,
                "Inputs/launcher_split.mlir: split-KV, LSE output, D=32");
  split_module m;
  ASSERT_EQ(split_load(&m), 0);
  ASSERT_NE(m.combine, nullptr);
  const struct {
    AttentionShape shape;
    bool distinct;
    int64_t kvSplits; // 0: automatic
  } cases[] = {       // S * B * Hq * Lq odd: the LSE part is past a rounding.
               {{3, 3, 1, 5, 300}, true, 5},
               {{1, 6, 2, 1, 700}, false, 0},
               {{2, 4, 2, 5, 90}, true, 0},
               // Causal with Lq > Lk: the first rows see no key; one
               // split, which writes O itself (no workspace, no combine).
               {{1, 2, 1, 40, 33}, false, 1},
               // No workspace and kv_splits 0: one split.
               {{2, 4, 2, 5, 90}, true, -1},
               {{1, 3, 3, 7, 130}, true, 3}};
  unsigned seed = 11;
  for (const auto &c : cases) {
    SCOPED_TRACE(c.shape.toString() + " kv_splits " +
                 std::to_string(c.kvSplits));
    const AttentionShape &sh = c.shape;
    Problem p(sh, kSplit, c.distinct, seed++);
    const int64_t S = c.kvSplits > 0 ? c.kvSplits
                      : c.kvSplits < 0
                          ? 1
                          : split_kv_splits(&m, sh.batch, sh.headsQ,
                                            sh.headsKv, sh.seqQ, sh.seqK);
    ASSERT_GE(S, 1);
    // The workspace: exactly what workspace_size says (none at S = 1), in
    // an allocation of its own.
    const uint64_t wsBytes = split_workspace_size(
        sh.batch, sh.headsQ, sh.headsKv, sh.seqQ, sh.seqK, S);
    const uint64_t oBytes =
        uint64_t(S * sh.batch * sh.headsQ * sh.seqQ) * SPLIT_HEAD_DIM * 4;
    EXPECT_EQ(wsBytes, S == 1 ? 0
                              : (oBytes + 255) / 256 * 256 +
                                    uint64_t(S * sh.batch * sh.headsQ *
                                             sh.seqQ) *
                                        4);
    EXPECT_GE(split_workspace_size(sh.batch, sh.headsQ, sh.headsKv, sh.seqQ,
                                   sh.seqK, 0),
              wsBytes)
        << "kv_splits 0 covers the automatic count";
    DeviceMemory ws(std::max<uint64_t>(wsBytes, 16));
    hipStream_t caller = stream();
    fake_hip_reset();
    // kv_splits -1 here: 0 without a workspace.
    const bool noWorkspace = c.kvSplits < 0;
    ASSERT_EQ(split_launch(&m, caller, p.dq->ptr, p.dk->ptr, p.dv->ptr,
                           p.dout->ptr, p.lse(), sh.batch, sh.headsQ,
                           sh.headsKv, sh.seqQ, sh.seqK,
                           c.distinct ? p.st.data() : nullptr,
                           noWorkspace ? nullptr : ws.ptr, wsBytes,
                           std::max<int64_t>(c.kvSplits, 0)),
              0)
        << fake_hip_last_launch()->problem;
    // The kernels on the caller's stream (at S = 1 the split kernel
    // alone), and no other HIP call.
    const bool direct = S == 1;
    EXPECT_EQ(std::string(fake_hip_stream_log()),
              direct ? "launch attention_kernel on stream 1\n"
                     : "launch attention_kernel on stream 1\n"
                       "launch attention_kernel1 on stream 1\n");
    EXPECT_EQ(std::string(fake_hip_calls()),
              direct ? "hipModuleLaunchKernel\n"
                     : "hipModuleLaunchKernel\nhipModuleLaunchKernel\n");
    ASSERT_EQ(hipStreamSynchronize(stream()), hipSuccess);
    fake_hip_launch ourSplit = direct ? lastLaunch() : previousLaunch(),
                    ourCombine = lastLaunch();
    expectRan(ourSplit);
    expectRan(ourCombine);
    EXPECT_EQ(ourSplit.num_args, 55);
    EXPECT_EQ(int64_t(ourSplit.args[54].value), S);
    EXPECT_EQ(ourSplit.args[44].value,
              direct ? 0 : uint64_t(uintptr_t(ws.ptr)));
    EXPECT_EQ(ourSplit.args[49].value,
              direct ? 0
                     : uint64_t(uintptr_t(ws.ptr)) +
                           (oBytes + 255) / 256 * 256);
    p.checkOutputs();

    // The runtime's enqueue over the same workspace on the same stream:
    // every byte the same.
    Kernel kernel = runtimeKernel(split_code_object, split_code_object_size,
                                  split_manifest);
    LaunchInfo info;
    runtimeLaunch(kernel, p, std::max<int64_t>(c.kvSplits, 0), &info,
                  stream(), noWorkspace ? nullptr : ws.ptr, ws.bytes);
    EXPECT_EQ(info.kvSplits, S);
    EXPECT_EQ(info.combineGeometry.has_value(), !direct);
    fake_hip_launch theirSplit = direct ? lastLaunch() : previousLaunch(),
                    theirCombine = lastLaunch();
    expectRan(theirSplit);
    expectRan(theirCombine);
    expectSameLaunch(ourSplit, theirSplit, /*exceptWorkspace=*/false);
    if (!direct) {
      EXPECT_STRNE(theirSplit.kernel, theirCombine.kernel);
      expectSameLaunch(ourCombine, theirCombine, /*exceptWorkspace=*/false);
      // The combine kernel reads what the split kernel wrote: same words.
      for (int i = 0; i < ourSplit.num_args; ++i)
        EXPECT_EQ(ourSplit.args[i].value, ourCombine.args[i].value) << i;
    }

    // The blocking launch, over a workspace of its own: the rest the same
    // (without a workspace argument it chooses S itself: not compared).
    if (noWorkspace)
      continue;
    runtimeLaunch(kernel, p, c.kvSplits, &info);
    expectSameLaunch(ourSplit, direct ? lastLaunch() : previousLaunch(),
                     /*exceptWorkspace=*/true);
    if (!direct)
      expectSameLaunch(ourCombine, lastLaunch(), /*exceptWorkspace=*/true);
  }
  EXPECT_EQ(split_unload(&m), 0);
}

TEST_F(Launcher, AutomaticSplitCountIsTheRuntimes) {
  split_module m;
  ASSERT_EQ(split_load(&m), 0);
  Kernel kernel =
      runtimeKernel(split_code_object, split_code_object_size, split_manifest);
  const AttentionShape shapes[] = {
      {1, 8, 2, 1, 700},     {1, 8, 2, 1, 4096},   {4, 8, 2, 1, 300},
      {2, 8, 2, 3, 300},     {1, 8, 2, 128, 8192}, {16, 8, 2, 1, 100000},
      {64, 8, 2, 1, 64},     {1, 8, 2, 1, 1},      {8, 8, 2, 17, 2000},
      {1, 8, 2, 1000, 1000}, {1, 32, 8, 1, 32768}, {3, 3, 1, 5, 300},
      {1, 64, 1, 1, 5000}};
  for (const AttentionShape &sh : shapes) {
    Expected<KvSplitPlan> plan =
        planKvSplits(kernel.info(), sh, device->limits(), 0);
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    EXPECT_EQ(
        split_kv_splits(&m, sh.batch, sh.headsQ, sh.headsKv, sh.seqQ, sh.seqK),
        plan->kvSplits)
        << sh.toString();
    // The workspace holds the plan's O, then its LSE 256-aligned: the
    // runtime's size of an enqueue's workspace. kv_splits 0 asks for a
    // bound of the automatic count's, on any device.
    Expected<uint64_t> runtimeBytes = kernel.workspaceSize(sh, 0);
    ASSERT_TRUE(runtimeBytes.ok());
    EXPECT_EQ(*runtimeBytes, workspaceBytes(*plan));
    EXPECT_EQ(split_workspace_size(sh.batch, sh.headsQ, sh.headsKv, sh.seqQ,
                                   sh.seqK, plan->kvSplits),
              *runtimeBytes)
        << sh.toString();
    EXPECT_EQ(workspaceLseOffset(*plan),
              (plan->workspaceOBytes + 255) / 256 * 256);
    EXPECT_GE(split_workspace_size(sh.batch, sh.headsQ, sh.headsKv, sh.seqQ,
                                   sh.seqK, 0),
              *runtimeBytes)
        << sh.toString();
  }
  EXPECT_EQ(split_kv_splits(nullptr, 1, 8, 2, 1, 1), SPLIT_ERROR_NOT_LOADED);
  EXPECT_EQ(split_kv_splits(&m, 1, 8, 3, 1, 1), SPLIT_ERROR_INVALID_SHAPE);
  EXPECT_EQ(split_unload(&m), 0);
}

TEST_F(Launcher, RefusalsLaunchNothing) {
  dense_module d;
  split_module s;
  ASSERT_EQ(dense_load(&d), 0);
  ASSERT_EQ(split_load(&s), 0);
  Problem p({1, 4, 2, 8, 16}, kDense, false, 3);
  Problem ps({1, 8, 2, 3, 40}, kSplit, false, 4);
  // Room for the automatic split count and for the S = 3 launches below
  // (with 32-key blocks the automatic rule stops at 2 splits of Lk = 40).
  DeviceMemory ws(std::max(split_workspace_size(1, 8, 2, 3, 40, 0),
                           split_workspace_size(1, 8, 2, 3, 40, 3)));
  ASSERT_GT(ws.bytes, 0u);
  const int launches = fake_hip_last_launch()->launches;
  auto dense = [&](const dense_module *m, const void *q, void *o, void *lse,
                   int64_t B, int64_t Hq, int64_t Hkv, int64_t Lq,
                   const int64_t *st, int64_t kvSplits) {
    return dense_launch(m, nullptr, q, p.dk->ptr, p.dv->ptr, o, lse, B, Hq, Hkv,
                        Lq, 16, st, nullptr, 0, kvSplits);
  };
  auto split = [&](void *w, uint64_t bytes, int64_t kvSplits) {
    return split_launch(&s, nullptr, ps.dq->ptr, ps.dk->ptr, ps.dv->ptr,
                        ps.dout->ptr, ps.lse(), 1, 8, 2, 3, 40, nullptr, w,
                        bytes, kvSplits);
  };
  void *q = p.dq->ptr, *o = p.dout->ptr, *lse = p.lse();
  dense_module unloaded = {};
  EXPECT_EQ(dense(nullptr, q, o, lse, 1, 4, 2, 8, nullptr, 0),
            DENSE_ERROR_NOT_LOADED);
  EXPECT_EQ(dense(&unloaded, q, o, lse, 1, 4, 2, 8, nullptr, 0),
            DENSE_ERROR_NOT_LOADED);
  EXPECT_EQ(dense(&d, q, o, lse, 0, 4, 2, 8, nullptr, 0),
            DENSE_ERROR_INVALID_SHAPE);
  EXPECT_EQ(dense(&d, q, o, lse, 1, 4, 2, 0, nullptr, 0),
            DENSE_ERROR_INVALID_SHAPE);
  EXPECT_EQ(dense(&d, q, o, lse, 1, 8, 2, 8, nullptr, 0),
            DENSE_ERROR_STATIC_SIZE);
  EXPECT_EQ(dense(&d, q, o, lse, 1, 4, 1, 8, nullptr, 0),
            DENSE_ERROR_STATIC_SIZE);
  std::array<int64_t, 14> bad = p.st;
  bad[4] = -1;
  EXPECT_EQ(dense(&d, q, o, lse, 1, 4, 2, 8, bad.data(), 0),
            DENSE_ERROR_INVALID_STRIDES);
  bad = p.st;
  bad[10] = 1; // O's heads over each other's rows
  EXPECT_EQ(dense(&d, q, o, lse, 1, 4, 2, 8, bad.data(), 0),
            DENSE_ERROR_INVALID_STRIDES);
  bad = p.st;
  bad[0] = INT64_MAX; // Q's view past 64 bits of bytes
  EXPECT_EQ(dense(&d, q, o, lse, 2, 4, 2, 8, bad.data(), 0),
            DENSE_ERROR_INVALID_STRIDES);
  EXPECT_EQ(dense(&d, nullptr, o, lse, 1, 4, 2, 8, nullptr, 0),
            DENSE_ERROR_INVALID_BUFFER);
  EXPECT_EQ(dense(&d, q, o, p.dk->ptr, 1, 4, 2, 8, nullptr, 0),
            DENSE_ERROR_INVALID_BUFFER)
      << "the kernel has no LSE output";
  EXPECT_EQ(dense(&d, q, q, lse, 1, 4, 2, 8, nullptr, 0),
            DENSE_ERROR_INVALID_BUFFER)
      << "O is also Q";
  EXPECT_EQ(dense(&d, q, o, lse, 1, 4, 2, 8, nullptr, 2),
            DENSE_ERROR_INVALID_KV_SPLITS);
  EXPECT_EQ(dense(&d, q, o, lse, 70000, 4, 2, 8, nullptr, 0), DENSE_ERROR_GRID)
      << "grid z past the fake's 65536";

  // The split kernel: LSE, and 32-bit index arithmetic.
  auto splitWith = [&](void *lseArg, const int64_t *st) {
    return split_launch(&s, nullptr, ps.dq->ptr, ps.dk->ptr, ps.dv->ptr,
                        ps.dout->ptr, lseArg, 1, 8, 2, 3, 40, st, ws.ptr,
                        ws.bytes, 0);
  };
  EXPECT_EQ(splitWith(nullptr, nullptr), SPLIT_ERROR_INVALID_BUFFER)
      << "the kernel writes LSE";
  EXPECT_EQ(splitWith(ps.dout->ptr, nullptr), SPLIT_ERROR_INVALID_BUFFER)
      << "LSE is also O";
  bad = ps.st;
  bad[13] = 0; // every head's LSE at one place
  EXPECT_EQ(splitWith(ps.lse(), bad.data()), SPLIT_ERROR_INVALID_STRIDES);
  bad = ps.st;
  bad[1] = int64_t(1) << 31; // offsets into Q past INT32_MAX
  EXPECT_EQ(splitWith(ps.lse(), bad.data()), SPLIT_ERROR_INDEX_OVERFLOW);
  bad = ps.st;
  bad[13] = int64_t(1) << 31; // into LSE
  EXPECT_EQ(splitWith(ps.lse(), bad.data()), SPLIT_ERROR_INDEX_OVERFLOW);
  bad[13] = int64_t(1) << 28; // 7 * 2^28 elements of f32: past 2^32 bytes
  EXPECT_EQ(splitWith(ps.lse(), bad.data()), SPLIT_ERROR_INDEX_OVERFLOW);
  EXPECT_EQ(split_launch(&s, nullptr, ps.dq->ptr, ps.dk->ptr, ps.dv->ptr,
                         ps.dout->ptr, ps.lse(), 1, 8, 2, 3, 40, nullptr,
                         ws.ptr, ws.bytes, 70000),
            SPLIT_ERROR_INVALID_KV_SPLITS);
  // The workspace's O: 1024 splits of [1, 8, 8192, 32] pass INT32_MAX
  // elements, 512 splits (2^30 f32) 2^32 - 1 bytes.
  for (int splits : {1024, 512})
    EXPECT_EQ(split_launch(&s, nullptr, ps.dq->ptr, ps.dk->ptr, ps.dv->ptr,
                           ps.dout->ptr, ps.lse(), 1, 8, 2, 8192, 40, nullptr,
                           ws.ptr, ws.bytes, splits),
              SPLIT_ERROR_INDEX_OVERFLOW)
        << splits;
  EXPECT_EQ(split(ws.ptr, ws.bytes, -1), SPLIT_ERROR_INVALID_KV_SPLITS);
  EXPECT_EQ(split(ws.ptr, ws.bytes, SPLIT_MAX_KV_SPLITS + 1),
            SPLIT_ERROR_INVALID_KV_SPLITS);
  EXPECT_EQ(split(nullptr, ws.bytes, 3), SPLIT_ERROR_WORKSPACE);
  EXPECT_EQ(split(ps.dout->ptr, ws.bytes, 3), SPLIT_ERROR_WORKSPACE)
      << "the workspace is also O";
  EXPECT_EQ(split(static_cast<char *>(ws.ptr) + 4, ws.bytes - 4, 3),
            SPLIT_ERROR_WORKSPACE)
      << "misaligned";
  EXPECT_EQ(split_workspace_size(1, 8, 2, 3, 40, 1), 0u)
      << "one split writes O itself";
  EXPECT_EQ(split(ws.ptr, split_workspace_size(1, 8, 2, 3, 40, 3) - 1, 3),
            SPLIT_ERROR_WORKSPACE);
  EXPECT_EQ(split_workspace_size(1, 8, 3, 3, 40, 0), 0u);
  EXPECT_EQ(split_workspace_size(1, 8, 2, 3, 40, -1), 0u);

  EXPECT_EQ(fake_hip_last_launch()->launches, launches)
      << "a refused launch reached hipModuleLaunchKernel";
  EXPECT_STREQ(dense_error_string(DENSE_ERROR_GRID),
               "the grid exceeds the device's limits");
  EXPECT_STREQ(dense_error_string(hipErrorInvalidValue),
               hipGetErrorString(hipErrorInvalidValue));

  // The smallest workspace works, and the launcher's error for the
  // driver's failure is the driver's code.
  ASSERT_EQ(split(ws.ptr, split_workspace_size(1, 8, 2, 3, 40, 3), 3), 0);
  ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
  fake_hip_fail_next("hipModuleLaunchKernel", hipErrorOutOfMemory);
  EXPECT_EQ(split(ws.ptr, ws.bytes, 0), int(hipErrorOutOfMemory));
  EXPECT_EQ(dense_unload(&d), 0);
  EXPECT_EQ(split_unload(&s), 0);
}

TEST_F(Launcher, LoadFailuresLeaveNothingLoaded) {
  split_module m;
  fake_hip_fail_next("hipModuleGetFunction", hipErrorNotFound);
  EXPECT_EQ(split_load(&m), int(hipErrorNotFound));
  EXPECT_EQ(m.module, nullptr);
  EXPECT_EQ(fake_hip_call_count("hipModuleUnload"), 1);
  fake_hip_fail_next("hipModuleLoadData", hipErrorInvalidImage);
  EXPECT_EQ(split_load(&m), int(hipErrorInvalidImage));
  EXPECT_EQ(m.kernel, nullptr);
  EXPECT_EQ(split_load(nullptr), SPLIT_ERROR_NOT_LOADED);
}

} // namespace
