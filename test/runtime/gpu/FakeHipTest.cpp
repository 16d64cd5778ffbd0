//===- FakeHipTest.cpp - The HIP backend run against a fake HIP runtime ---===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file runs device "hip" end to end on libfa-fake-hip.so (FakeHip.cpp),
// the only way the HIP half of the GPU backend runs where there is no AMD
// GPU: the committed gfx906 code object (test/runtime/data/
// attention_gfx906.hsaco, compiled by fac) is loaded and launched through
// the public API, and the fake says what the HIP runtime was given: the
// symbol, grid, block and LDS, and the kernarg segment at the offsets the
// code object's own `.args` metadata gives, holding the buffer addresses and
// the shape; the fake then runs the kernel on the gfx906 simulator (fa-run's
// fake-hip-* tests validate its results). It also plants failures (the
// Status names the call and the error) and a gfx908 device (the target
// check refuses the code object).
//
// A separate executable: FA_HIP_LIBRARY is set before main, so the
// once-per-process HIP probe finds the fake, and device selection in the
// other runtime tests never sees it.
//
//===----------------------------------------------------------------------===//

#include "FakeHip.h"

#include "fa/Device.h"
#include "fa/Half.h"
#include "fa/Module.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <thread>

using namespace fa;

namespace {

// Before any test (and before gtest lists them) opens a device.
const int kPointedAtTheFake = setenv("FA_HIP_LIBRARY", FA_FAKE_HIP_LIBRARY, 1);

const std::string kHsaco =
    std::string(FA_TEST_DATA_DIR) + "/attention_gfx906.hsaco";

#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    const auto &okValue = (expr);                                              \
    ASSERT_TRUE(okValue.ok()) << okValue.status().toString();                  \
  } while (0)

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class FakeHip : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(kPointedAtTheFake, 0);
    fake_hip_reset();
    Expected<Device> d = Device::open("hip");
    ASSERT_TRUE(d.ok()) << d.status().toString();
    device.emplace(d.take());
  }

  /// The committed code object with its manifest, `dynamicLds` written
  /// into the manifest when not 0.
  Expected<Module> loadKernel(int64_t dynamicLds = 0) {
    if (dynamicLds == 0)
      return Module::load(*device, kHsaco);
    std::string bytes = readText(kHsaco);
    std::string manifest = readText(kHsaco + ".json");
    const std::string field = "\"dynamic_lds_bytes\": 0";
    size_t at = manifest.find(field);
    EXPECT_NE(at, std::string::npos);
    manifest.replace(at, field.size(),
                     "\"dynamic_lds_bytes\": " + std::to_string(dynamicLds));
    return Module::loadFromMemory(*device, bytes.data(), bytes.size(), manifest,
                                  "attention_gfx906.hsaco");
  }

  std::optional<Device> device;
};

TEST_F(FakeHip, OpensOneGfx906) {
  EXPECT_EQ(device->name(), "hip:0");
  ASSERT_EQ(device->targets().size(), 1u);
  EXPECT_EQ(device->targets()[0], "gfx906");
  EXPECT_EQ(device->limits().maxThreadsPerWorkgroup, 1024u);
  EXPECT_EQ(device->limits().maxLdsBytes, 65536u);
  EXPECT_TRUE(device->supportsTarget("gfx906"));
  EXPECT_FALSE(device->supportsTarget("gfx908"));
  // Device selection finds it too, for a gfx906 code object.
  Expected<Device> automatic = Device::open("auto", "gfx906");
  ASSERT_OK(automatic);
  EXPECT_EQ(automatic->name(), "hip:0");
}

TEST_F(FakeHip, MemoryIsZeroedAndCopied) {
  std::optional<Buffer> b;
  {
    Expected<Buffer> allocated = device->allocate(1000);
    ASSERT_OK(allocated);
    b.emplace(allocated.take());
  }
  // The fake fills new memory with 0xcd: the runtime zeroes it itself.
  std::vector<uint8_t> back(1000, 0xff);
  ASSERT_TRUE(b->copyToHost(back.data(), back.size()).ok());
  EXPECT_EQ(back, std::vector<uint8_t>(1000, 0));
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t(i * 7);
  ASSERT_TRUE(b->copyFromHost(data.data(), data.size()).ok());
  ASSERT_TRUE(b->copyToHost(back.data(), back.size()).ok());
  EXPECT_EQ(back, data);
  EXPECT_EQ(fake_hip_call_count("hipMalloc"), 1);
  EXPECT_EQ(fake_hip_call_count("hipMemset"), 1);
  int live = fake_hip_live_allocations();
  b.reset();
  EXPECT_EQ(fake_hip_live_allocations(), live - 1);
}

/// A launch of the gfx906 kernel for B=2, Hq=8, Hkv=2 (its static sizes),
/// Lq=100, Lk=70, contiguous BHLD, no LSE (it has none).
struct AttentionLaunch {
  // Sizes that differ, so a descriptor packed into the wrong slot shows.
  static constexpr size_t kQ = 2 * 8 * 100 * 64 * 2, kK = 2 * 2 * 70 * 64 * 2;
  Buffer q, k, v, o;
  AttentionArgs args;

  explicit AttentionLaunch(const Device &d)
      : q(d.allocate(kQ).take()), k(d.allocate(kK).take()),
        v(d.allocate(kK + 128).take()), o(d.allocate(kQ + 256).take()) {
    args.q = &q;
    args.k = &k;
    args.v = &v;
    args.o = &o;
    args.shape = {2, 8, 2, 100, 70};
  }

  /// The 44 ABI words as KernelAbi.h defines them, from the shape and the
  /// buffers (not from the runtime's packing).
  std::vector<uint64_t> expectedWords() const {
    std::vector<uint64_t> w;
    for (const Buffer *b : {&q, &k, &v, &o})
      w.insert(w.end(), {b->address(), b->address(), 0, b->size() / 2, 1});
    w.insert(w.end(), {0, 0, 0, 0, 1}); // no LSE: null, size 0
    w.insert(w.end(), {2, 8, 2, 100, 70});
    const uint64_t D = 64;
    w.insert(w.end(), {8 * 100 * D, 100 * D, D}); // Q
    w.insert(w.end(), {2 * 70 * D, 70 * D, D});   // K
    w.insert(w.end(), {2 * 70 * D, 70 * D, D});   // V
    w.insert(w.end(), {8 * 100 * D, 100 * D, D}); // O
    w.insert(w.end(), {8 * 100, 100});            // LSE
    return w;
  }
};

TEST_F(FakeHip, LaunchPassesTheKernargSegmentOfTheMetadata) {
  Expected<Module> module = loadKernel();
  ASSERT_OK(module);
  Expected<Kernel> kernel = module->kernel();
  ASSERT_OK(kernel);
  ASSERT_EQ(kernel->info().indexBits, 32); // what the manifest says
  AttentionLaunch launch(*device);
  fake_hip_reset();
  Status s = kernel->launch(launch.args);
  const fake_hip_launch &l = *fake_hip_last_launch();
  ASSERT_TRUE(s.ok()) << s.toString() << "\nthe fake says: " << l.problem;
  EXPECT_STREQ(l.problem, "");
  // It ran on the simulator to the end (zeroed inputs: no fault).
  EXPECT_EQ(l.executed, 1);
  EXPECT_STREQ(l.fault, "");
  EXPECT_EQ(std::string(fake_hip_calls()),
            "hipSetDevice\nhipModuleLaunchKernel\nhipDeviceSynchronize\n");

  EXPECT_EQ(l.launches, 1);
  EXPECT_STREQ(l.kernel, "attention_kernel");
  // grid (ceil(Lq / block_m), Hq, B), block (threads, 1, 1): KernelAbi.h.
  EXPECT_EQ(l.grid[0], 2u);
  EXPECT_EQ(l.grid[1], 8u);
  EXPECT_EQ(l.grid[2], 2u);
  EXPECT_EQ(l.block[0], 256u);
  EXPECT_EQ(l.block[1], 1u);
  EXPECT_EQ(l.block[2], 1u);
  EXPECT_EQ(l.shared_mem_bytes, 0u);
  EXPECT_FALSE(l.used_kernel_params);

  // The segment is the metadata's, and each argument is at its offset.
  EXPECT_EQ(l.kernarg_segment_size, 312u);
  EXPECT_EQ(l.kernarg_bytes, l.kernarg_segment_size);
  std::vector<uint64_t> words = launch.expectedWords();
  ASSERT_EQ(l.num_args, 44);
  for (int i = 0; i < 44; ++i) {
    const fake_hip_arg &a = l.args[i];
    bool descriptor = i < 25;
    bool pointer = descriptor && i % 5 < 2;
    // 32-bit index arithmetic: offset, size, stride of a descriptor are
    // 4-byte arguments; the pointers and the 19 sizes and strides 8.
    EXPECT_EQ(a.size, descriptor && !pointer ? 4u : 8u) << "argument " << i;
    EXPECT_STREQ(a.value_kind, pointer ? "global_buffer" : "by_value")
        << "argument " << i;
    uint64_t want = a.size == 4 ? uint64_t(uint32_t(words[i])) : words[i];
    EXPECT_EQ(a.value, want) << "argument " << i << " at offset " << a.offset;
    if (pointer && i < 20)
      EXPECT_TRUE(a.is_allocation) << "argument " << i;
  }
}

TEST_F(FakeHip, DynamicLdsOfTheManifestIsPassed) {
  Expected<Module> module = loadKernel(/*dynamicLds=*/4096);
  ASSERT_OK(module);
  AttentionLaunch launch(*device);
  Status s = module->kernel()->launch(launch.args);
  ASSERT_TRUE(s.ok()) << s.toString()
                      << "\nthe fake says: " << fake_hip_last_launch()->problem;
  EXPECT_EQ(fake_hip_last_launch()->shared_mem_bytes, 4096u);
}

TEST_F(FakeHip, LoadResolvesTheSymbolAndUnloads) {
  {
    Expected<Module> module = loadKernel();
    ASSERT_OK(module);
    EXPECT_EQ(fake_hip_call_count("hipModuleLoadData"), 1);
    EXPECT_EQ(fake_hip_call_count("hipModuleGetFunction"), 1);
    EXPECT_EQ(fake_hip_call_count("hipFuncGetAttribute"), 3);
    EXPECT_EQ(fake_hip_call_count("hipModuleUnload"), 0);
  }
  EXPECT_EQ(fake_hip_call_count("hipModuleUnload"), 1);
}

//===----------------------------------------------------------------------===//
// Failures
//===----------------------------------------------------------------------===//

TEST_F(FakeHip, FailedLoadNamesTheCallAndTheError) {
  fake_hip_fail_next("hipModuleLoadData", 200); // hipErrorInvalidImage
  Expected<Module> module = loadKernel();
  ASSERT_FALSE(module.ok());
  const Status &s = module.status();
  EXPECT_EQ(s.code(), ErrorCode::LoadFailed);
  EXPECT_EQ(s.call(), "hipModuleLoadData");
  EXPECT_EQ(s.backendError(), "hipErrorInvalidImage");
  EXPECT_EQ(s.device(), "hip:0");
  EXPECT_NE(s.message().find(
                "hipModuleLoadData returned hipErrorInvalidImage (200): device "
                "kernel image is invalid (mismatched target chip? the manifest "
                "says gfx906, the device is gfx906:sramecc+:xnack-)"),
            std::string::npos)
      << s.message();
}

TEST_F(FakeHip, MissingSymbolIsNotFound) {
  fake_hip_fail_next("hipModuleGetFunction", 500); // hipErrorNotFound
  Expected<Module> module = loadKernel();
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), ErrorCode::NotFound);
  EXPECT_EQ(module.status().message(),
            "kernel 'attention_kernel': symbol 'attention_kernel' not loaded: "
            "hipModuleGetFunction returned hipErrorNotFound (500): named "
            "symbol not found (the manifest does not describe this code "
            "object's kernels? its descriptor is 'attention_kernel.kd')");
  // The half-built module was unloaded.
  EXPECT_EQ(fake_hip_call_count("hipModuleUnload"), 1);
}

TEST_F(FakeHip, FailedAllocationIsOutOfMemory) {
  fake_hip_fail_next("hipMalloc", 2); // hipErrorOutOfMemory
  Expected<Buffer> b = device->allocate(64);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), ErrorCode::OutOfMemory);
  EXPECT_EQ(b.status().call(), "hipMalloc");
  EXPECT_EQ(b.status().message(),
            "cannot allocate 64 bytes on device 'hip:0': hipMalloc returned "
            "hipErrorOutOfMemory (2): out of memory");
}

TEST_F(FakeHip, FailedLaunchAndFaultNameTheCall) {
  Expected<Module> module = loadKernel();
  ASSERT_OK(module);
  AttentionLaunch launch(*device);
  fake_hip_fail_next("hipModuleLaunchKernel", 1); // hipErrorInvalidValue
  Status s = module->kernel()->launch(launch.args);
  EXPECT_EQ(s.code(), ErrorCode::LaunchFailed);
  EXPECT_EQ(s.call(), "hipModuleLaunchKernel");
  EXPECT_EQ(s.message(), "cannot launch kernel 'attention_kernel' with grid "
                         "(2, 8, 2), block (256, 1, 1): hipModuleLaunchKernel "
                         "returned hipErrorInvalidValue (1): invalid argument");

  fake_hip_fail_next("hipDeviceSynchronize", 700); // hipErrorIllegalAddress
  s = module->kernel()->launch(launch.args);
  EXPECT_EQ(s.call(), "hipDeviceSynchronize");
  EXPECT_EQ(s.backendError(), "hipErrorIllegalAddress");
  EXPECT_EQ(s.message(),
            "kernel 'attention_kernel' failed while running (grid (2, 8, 2), "
            "block (256, 1, 1)): hipDeviceSynchronize returned "
            "hipErrorIllegalAddress (700): an illegal memory access was "
            "encountered (a memory fault here usually means an out-of-bounds "
            "access in the kernel)");
}

TEST_F(FakeHip, DeviceSelectFailureNamesHipSetDevice) {
  fake_hip_fail_next("hipSetDevice", 101); // hipErrorInvalidDevice
  Status s = device->synchronize();
  EXPECT_EQ(s.code(), ErrorCode::Unavailable);
  EXPECT_EQ(s.message(), "cannot use device 'hip:0': hipSetDevice returned "
                         "hipErrorInvalidDevice (101): invalid device ordinal");
}

TEST(FakeHipTarget, Gfx908RefusesGfx906Code) {
  struct Restore {
    ~Restore() { fake_hip_reset(); }
  } restore;
  fake_hip_reset();
  fake_hip_set_arch("gfx908:sramecc+:xnack-");
  // A fresh backend (no handle of hip:0 is alive) reads the new arch.
  Expected<Device> device = Device::open("hip");
  ASSERT_OK(device);
  EXPECT_EQ(device->targets()[0], "gfx908");
  Expected<Module> module = Module::load(*device, kHsaco);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), ErrorCode::Unsupported);
  EXPECT_EQ(module.status().message(),
            "code object is for target 'gfx906' but device 'hip:0' runs "
            "'gfx908': code for gfx906 does not run on gfx908 (the device's "
            "gcnArchName is 'gfx908:sramecc+:xnack-')");
  // Refused before the loader saw it.
  EXPECT_EQ(fake_hip_call_count("hipModuleLoadData"), 0);
}

// Run by ctest with FA_FAKE_HIP_FAIL=hipInit=3 (test/runtime/gpu/
// CMakeLists.txt): the probe's failure, once per process.
TEST(FakeHipProbe, FailedInitNamesHipInit) {
  if (!std::getenv("FA_FAKE_HIP_FAIL"))
    GTEST_SKIP() << "run with FA_FAKE_HIP_FAIL=hipInit=3";
  Expected<Device> device = Device::open("hip");
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), ErrorCode::Unavailable);
  EXPECT_EQ(device.status().call(), "hipInit");
  EXPECT_EQ(device.status().message(),
            "device 'hip' unavailable: hipInit returned hipErrorNotInitialized "
            "(3): initialization error");
}

} // namespace

//===----------------------------------------------------------------------===//
// The engine's launch: the caller's memory, stream and workspace
//===----------------------------------------------------------------------===//

// The fake's HIP entry points the tests call as an engine would (C linkage;
// the fake defines them against HIP's own declarations).
extern "C" {
int hipMalloc(void **ptr, size_t size);
int hipFree(void *ptr);
int hipMemcpyHtoD(void *dst, void *src, size_t bytes);
int hipMemcpyDtoH(void *dst, void *src, size_t bytes);
int hipStreamCreate(ihipStream_t **stream);
int hipStreamDestroy(ihipStream_t *stream);
int hipStreamSynchronize(ihipStream_t *stream);
}

namespace {

const std::string kSplitHsaco =
    std::string(FA_TEST_DATA_DIR) + "/attention_split_gfx906.hsaco";

/// Memory an engine allocated with hipMalloc (freed with hipFree), holding
/// `bytes`.
struct EngineTensor {
  void *ptr = nullptr;
  size_t bytes = 0;
  explicit EngineTensor(const std::vector<uint8_t> &data)
      : bytes(data.size()) {
    EXPECT_EQ(hipMalloc(&ptr, bytes), 0);
    EXPECT_EQ(hipMemcpyHtoD(ptr, const_cast<uint8_t *>(data.data()), bytes),
              0);
  }
  EngineTensor(const EngineTensor &) = delete;
  ~EngineTensor() { hipFree(ptr); }
  std::vector<uint8_t> read() const {
    std::vector<uint8_t> out(bytes);
    EXPECT_EQ(hipMemcpyDtoH(out.data(), ptr, bytes), 0);
    return out;
  }
};

/// Deterministic f16 bytes of values in [-1, 1).
std::vector<uint8_t> halfInputs(size_t count, uint64_t seed) {
  std::vector<float> v(count);
  for (float &x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = float(double(seed >> 11) / double(1ull << 53) * 2.0 - 1.0);
  }
  return encodeElements(DType::F16, v);
}

/// The committed split-KV pair (f16, D = 64, causal, Hq = 8, Hkv = 2, GQA
/// packed, no LSE) on one problem: Q, K, V and O as an engine's tensors.
struct SplitProblem {
  AttentionShape shape;
  EngineTensor q, k, v, o;
  SplitProblem(int64_t b, int64_t lq, int64_t lk, uint64_t seed)
      : shape{b, 8, 2, lq, lk}, q(halfInputs(size_t(b * 8 * lq * 64), seed)),
        k(halfInputs(size_t(b * 2 * lk * 64), seed + 1)),
        v(halfInputs(size_t(b * 2 * lk * 64), seed + 2)),
        o(std::vector<uint8_t>(size_t(b * 8 * lq * 64 * 2), 0x55)) {}

  /// O of the blocking launch over fa's own buffers.
  std::vector<uint8_t> blocking(const Kernel &kernel, int64_t kvSplits) const {
    Device dev = kernel.device();
    auto copy = [&](const EngineTensor &t) {
      Expected<Buffer> b = dev.allocate(t.bytes);
      EXPECT_TRUE(b.ok());
      std::vector<uint8_t> data = t.read();
      EXPECT_TRUE(b->copyFromHost(data.data(), data.size()).ok());
      return b.take();
    };
    Buffer bq = copy(q), bk = copy(k), bv = copy(v), bo = copy(o);
    AttentionArgs a{&bq, &bk, &bv, &bo, nullptr, shape, {}, {}, {}};
    LaunchOptions options;
    options.kvSplits = kvSplits;
    Status s = kernel.launch(a, options);
    EXPECT_TRUE(s.ok()) << s.toString();
    std::vector<uint8_t> out(bo.size());
    EXPECT_TRUE(bo.copyToHost(out.data(), out.size()).ok());
    return out;
  }
};

Buffer wrapped(const Device &device, const EngineTensor &t) {
  Expected<Buffer> b = device.wrap(t.ptr, t.bytes);
  EXPECT_TRUE(b.ok()) << b.status().toString();
  return b.take();
}

} // namespace

// An enqueue on the engine's stream: the split and the combine kernel are
// launched on that stream, in order, and nothing else reaches HIP (no
// synchronisation, allocation or copy); the kernels ran on the simulator
// behind the fake and wrote the blocking launch's bits.
TEST_F(FakeHip, EnqueueLaunchesOnTheCallersStreamOnly) {
  Expected<Module> module = Module::load(*device, kSplitHsaco);
  ASSERT_OK(module);
  Expected<Kernel> kernel = module->kernel();
  ASSERT_OK(kernel);
  SplitProblem p(2, 3, 300, 7);
  Buffer q = wrapped(*device, p.q), k = wrapped(*device, p.k),
         v = wrapped(*device, p.v), o = wrapped(*device, p.o);
  Expected<uint64_t> bytes = kernel->workspaceSize(p.shape, 5);
  ASSERT_OK(bytes);
  EngineTensor workspace(std::vector<uint8_t>(*bytes, 0));
  Buffer ws = wrapped(*device, workspace);
  ihipStream_t *stream = nullptr;
  ASSERT_EQ(hipStreamCreate(&stream), 0);
  AttentionArgs a{&q, &k, &v, &o, nullptr, p.shape, {}, {}, {}};
  LaunchOptions options;
  options.kvSplits = 5;
  fake_hip_reset();
  Status s = kernel->enqueue(a, stream, &ws, options);
  ASSERT_TRUE(s.ok()) << s.toString() << "\nthe fake says: "
                      << fake_hip_last_launch()->problem;
  EXPECT_EQ(std::string(fake_hip_stream_log()),
            "launch attention_kernel on stream 1\n"
            "launch attention_kernel1 on stream 1\n");
  EXPECT_EQ(std::string(fake_hip_calls()),
            "hipStreamGetDevice\nhipSetDevice\nhipModuleLaunchKernel\n"
            "hipSetDevice\nhipModuleLaunchKernel\n");
  EXPECT_EQ(fake_hip_last_launch()->stream, static_cast<void *>(stream));
  EXPECT_STREQ(fake_hip_last_launch()->fault, "");
  ASSERT_EQ(hipStreamSynchronize(stream), 0);
  const std::vector<uint8_t> got = p.o.read();
  EXPECT_EQ(got, p.blocking(*kernel, 5));
  // The null stream is the legacy default stream.
  fake_hip_reset();
  ASSERT_TRUE(kernel->enqueue(a, nullptr, &ws, options).ok());
  EXPECT_EQ(std::string(fake_hip_stream_log()),
            "launch attention_kernel on null stream\n"
            "launch attention_kernel1 on null stream\n");
  hipStreamDestroy(stream);
}

// A stream of another GPU is refused by name before anything is launched.
TEST_F(FakeHip, EnqueueRefusesAStreamOfAnotherDevice) {
  Expected<Module> module = Module::load(*device, kSplitHsaco);
  ASSERT_OK(module);
  Expected<Kernel> kernel = module->kernel();
  ASSERT_OK(kernel);
  SplitProblem p(1, 1, 64, 3);
  Buffer q = wrapped(*device, p.q), k = wrapped(*device, p.k),
         v = wrapped(*device, p.v), o = wrapped(*device, p.o);
  EngineTensor workspace(std::vector<uint8_t>(1 << 20, 0));
  Buffer ws = wrapped(*device, workspace);
  ihipStream_t *other = fake_hip_stream_of_device(1);
  AttentionArgs a{&q, &k, &v, &o, nullptr, p.shape, {}, {}, {}};
  fake_hip_reset();
  Status s = kernel->enqueue(a, other, &ws);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  char address[32];
  std::snprintf(address, sizeof(address), "%#llx",
                (unsigned long long)reinterpret_cast<uintptr_t>(other));
  EXPECT_EQ(s.message(), std::string("stream ") + address +
                             " belongs to hip:1, not to hip:0, where this "
                             "module is loaded");
  EXPECT_EQ(fake_hip_call_count("hipModuleLaunchKernel"), 0);
  hipStreamDestroy(other);
}

// One module enqueued from several threads, each on its own stream with its
// own tensors and workspace: every result is the blocking launch's.
TEST_F(FakeHip, ConcurrentEnqueuesOnSeveralStreams) {
  Expected<Module> module = Module::load(*device, kSplitHsaco);
  ASSERT_OK(module);
  Expected<Kernel> kernel = module->kernel();
  ASSERT_OK(kernel);
  constexpr int threads = 4;
  std::vector<std::unique_ptr<SplitProblem>> problems;
  for (int t = 0; t < threads; ++t)
    problems.push_back(std::make_unique<SplitProblem>(1, 1 + t, 100 + 50 * t,
                                                      40 + uint64_t(t)));
  std::vector<std::string> failures(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      SplitProblem &p = *problems[size_t(t)];
      ihipStream_t *stream = nullptr;
      if (hipStreamCreate(&stream) != 0) {
        failures[size_t(t)] = "hipStreamCreate failed";
        return;
      }
      Buffer q = wrapped(*device, p.q), k = wrapped(*device, p.k),
             v = wrapped(*device, p.v), o = wrapped(*device, p.o);
      Expected<uint64_t> bytes = kernel->workspaceSize(p.shape);
      EngineTensor workspace(std::vector<uint8_t>(bytes ? *bytes : 1, 0));
      Buffer ws = wrapped(*device, workspace);
      AttentionArgs a{&q, &k, &v, &o, nullptr, p.shape, {}, {}, {}};
      for (int round = 0; round < 2; ++round)
        if (Status s = kernel->enqueue(a, stream, &ws); !s.ok())
          failures[size_t(t)] = s.toString();
      if (hipStreamSynchronize(stream) != 0)
        failures[size_t(t)] += " (the stream reported a fault)";
      hipStreamDestroy(stream);
    });
  for (std::thread &t : pool)
    t.join();
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(failures[size_t(t)], "") << t;
    EXPECT_EQ(problems[size_t(t)]->o.read(),
              problems[size_t(t)]->blocking(*kernel, 0))
        << t;
  }
}
