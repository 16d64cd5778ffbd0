//===- DeviceReferenceTest.cpp - The reference attention on the GPU -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The device reference (fa/DeviceReference.h): its kernel compiles with
// hiprtc for gfx906 and with NVRTC for sm_90 where those libraries are
// installed (no GPU needed; skipped, saying why, where they are not), the
// `auto` choice, and, on a machine with a CUDA (or HIP) device, agreement
// with the CPU fp64 reference to 1e-9 on a small problem with causal masking,
// GQA, masked rows and distinct strides; with sliding windows and softcaps
// also on the gfx906 simulator (hiprtc's code object), where hiprtc is
// installed.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <elf.h>
#include <optional>

using namespace fa;

namespace {

/// Skips the test when the compiler library is not installed.
#define SKIP_IF_UNAVAILABLE(expected, what)                                    \
  if (!(expected) && (expected).status().code() == ErrorCode::Unavailable)     \
  GTEST_SKIP() << what << " not installed: " << (expected).status().message()

bool contains(const std::vector<uint8_t> &bytes, const std::string &text) {
  return std::search(bytes.begin(), bytes.end(), text.begin(), text.end()) !=
         bytes.end();
}

Elf64_Ehdr elfHeader(const std::vector<uint8_t> &bytes) {
  Elf64_Ehdr h{};
  if (bytes.size() >= sizeof(h))
    std::memcpy(&h, bytes.data(), sizeof(h));
  return h;
}

TEST(DeviceReferenceSourceTest, SpecializesWithMacros) {
  std::string s = deviceReferenceSource(DType::BF16, 96, true);
  EXPECT_EQ(
      s.rfind("#define FA_DTYPE 2\n#define FA_D 96\n#define FA_NAIVE 1\n", 0),
      0u);
  EXPECT_NE(s.find(std::string("__global__ void ") + deviceReferenceSymbol),
            std::string::npos);
}

TEST(DeviceReferenceSourceTest, ReferenceKinds) {
  EXPECT_EQ(parseReferenceKind("auto"), ReferenceKind::Auto);
  EXPECT_EQ(parseReferenceKind("cpu"), ReferenceKind::Cpu);
  EXPECT_EQ(parseReferenceKind("device"), ReferenceKind::Device);
  EXPECT_FALSE(parseReferenceKind("gpu"));
  EXPECT_STREQ(referenceKindName(ReferenceKind::Device), "device");
  Device host = test::hostDevice();
  AttentionProblem big{{8, 32, 8, 4096, 4096}, 128, true, 0.1};
  // `auto` never picks the device reference on the emulator.
  EXPECT_FALSE(useDeviceReference(ReferenceKind::Auto, host, big));
  EXPECT_TRUE(useDeviceReference(ReferenceKind::Device, host, big));
  EXPECT_FALSE(useDeviceReference(ReferenceKind::Cpu, host, big));
}

TEST(DeviceReferenceSourceTest, HostDeviceIsRefused) {
  Device host = test::hostDevice();
  AttentionProblem p{{1, 1, 1, 4, 4}, 8, false, 0.5};
  Expected<Buffer> b = host.allocate(1024);
  FA_ASSERT_OK(b);
  Expected<DeviceReferenceResult> r =
      deviceReferenceAttention(host, p, DType::F32, *b, *b, *b,
                               AttentionStrides::contiguous(p.shape, 8));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::Unsupported);
  EXPECT_NE(r.status().message().find("needs a GPU device"), std::string::npos)
      << r.status().message();
}

TEST(DeviceReferenceCompileTest, UnknownTarget) {
  Expected<DeviceReferenceCode> c =
      compileDeviceReference("host", DType::F32, 64, false);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.status().message(), "no run-time compiler for target 'host' "
                                  "(sm_XY: NVRTC, gfx...: hiprtc)");
}

TEST(DeviceReferenceCompileTest, HiprtcGfx906) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (bool naive : {false, true}) {
      Expected<DeviceReferenceCode> c =
          compileDeviceReference("gfx906", dtype, 64, naive);
      SKIP_IF_UNAVAILABLE(c, "hiprtc");
      FA_ASSERT_OK(c);
      EXPECT_EQ(c->format, "hsaco");
      EXPECT_EQ(c->compiler, "hiprtc");
      const std::vector<uint8_t> &b = c->bytes;
      ASSERT_GE(b.size(), sizeof(Elf64_Ehdr));
      ASSERT_EQ(std::memcmp(b.data(), ELFMAG, SELFMAG), 0);
      Elf64_Ehdr h = elfHeader(b);
      EXPECT_EQ(h.e_machine, 224); // EM_AMDGPU
      EXPECT_EQ(h.e_flags & 0xff, 0x2fu)
          << "EF_AMDGPU_MACH is not gfx906: e_flags " << h.e_flags;
      EXPECT_TRUE(contains(b, deviceReferenceSymbol));
    }
}

TEST(DeviceReferenceCompileTest, NvrtcSm90) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (bool naive : {false, true}) {
      Expected<DeviceReferenceCode> c =
          compileDeviceReference("sm_90", dtype, 128, naive);
      SKIP_IF_UNAVAILABLE(c, "NVRTC");
      FA_ASSERT_OK(c);
      EXPECT_EQ(c->compiler, "NVRTC");
      const std::vector<uint8_t> &b = c->bytes;
      EXPECT_TRUE(contains(b, deviceReferenceSymbol));
      if (c->format == "cubin") {
        ASSERT_GE(b.size(), sizeof(Elf64_Ehdr));
        ASSERT_EQ(std::memcmp(b.data(), ELFMAG, SELFMAG), 0);
        Elf64_Ehdr h = elfHeader(b);
        EXPECT_EQ(h.e_machine, 190); // EM_CUDA
        // The SM version: bits 8-15 since CUDA 12.8's new ELF ABI, bits 0-7
        // before.
        EXPECT_TRUE((h.e_flags >> 8 & 0xff) == 90 || (h.e_flags & 0xff) == 90)
            << "e_flags " << h.e_flags;
      } else {
        ASSERT_EQ(c->format, "ptx");
        EXPECT_TRUE(contains(b, ".target sm_90"));
        EXPECT_TRUE(contains(b, ".entry fa_reference_attention"));
      }
    }
}

// A paged problem on `device`: each sequence gathered and run through the
// dense device reference; the sequences without keys are O = 0, LSE = -inf
// without a launch. Against the CPU's paged references, shuffled and shared
// pages, poisoned rows.
void checkPagedDeviceReference(const Device &device,
                               const std::string &description) {
  AttentionProblem dense{{4, 4, 2, 9, 70}, 32, true, 0.2};
  PagedCacheOptions o;
  o.pageSize = 16;
  o.sharePages = true;
  Expected<PagedProblem> p = pagedProblemFor(dense, o, 3);
  FA_ASSERT_OK(p);
  AttentionData data =
      generatePagedInputs(*p, DType::F16, Distribution::Outliers, 3);
  FA_ASSERT_OK(poisonUnreadCacheRows(*p, data));
  Expected<DeviceReferenceResult> r =
      devicePagedReferenceAttention(device, *p, DType::F16, data);
  FA_ASSERT_OK(r);
  EXPECT_EQ(r->description, description);
  AttentionResult<double> cpu = referencePagedAttentionF64(*p, data);
  AttentionResult<float> naive = naivePagedAttention(*p, DType::F16, data);
  ASSERT_EQ(r->exact.o.size(), cpu.o.size());
  ASSERT_EQ(r->exact.lse.size(), cpu.lse.size());
  ASSERT_EQ(r->naive.o.size(), naive.o.size());
  for (size_t i = 0; i < cpu.o.size(); ++i) {
    ASSERT_LE(std::fabs(r->exact.o[i] - cpu.o[i]),
              1e-9 * cpu.magnitude[i] + 1e-300)
        << "O " << i;
    ASSERT_LE(std::fabs(r->exact.magnitude[i] - cpu.magnitude[i]),
              1e-9 * cpu.magnitude[i] + 1e-300)
        << "magnitude " << i;
    ASSERT_LE(std::fabs(double(r->naive.o[i]) - naive.o[i]),
              4.0 / 1024 * cpu.magnitude[i] + 1e-6)
        << "naive O " << i;
  }
  size_t masked = 0;
  for (size_t i = 0; i < cpu.lse.size(); ++i) {
    if (std::isinf(cpu.lse[i])) {
      ++masked;
      ASSERT_TRUE(std::isinf(r->exact.lse[i]) && r->exact.lse[i] < 0) << i;
      ASSERT_TRUE(std::isinf(r->naive.lse[i])) << i;
      continue;
    }
    ASSERT_LE(std::fabs(r->exact.lse[i] - cpu.lse[i]),
              1e-9 * std::max(1.0, std::fabs(cpu.lse[i])))
        << "LSE " << i;
  }
  // The empty sequence's rows, and the causal rows of the one of length 1
  // that see no key (8 of 9).
  EXPECT_EQ(masked, size_t(4 * 9 + 4 * 8));

  // Every sequence empty: nothing runs, where it would is named.
  o.cacheSeqlens = {0, 0, 0, 0};
  Expected<PagedProblem> empty = pagedProblemFor(dense, o, 3);
  FA_ASSERT_OK(empty);
  AttentionData none =
      generatePagedInputs(*empty, DType::F16, Distribution::Normal, 1);
  r = devicePagedReferenceAttention(device, *empty, DType::F16, none);
  FA_ASSERT_OK(r);
  EXPECT_EQ(r->description, "fp64 on device (no sequence has keys: nothing "
                            "ran on " +
                                device.name() + ")");
  for (double lse : r->exact.lse)
    EXPECT_TRUE(std::isinf(lse) && lse < 0);
  // The host emulator is refused, with or without keys.
  Expected<DeviceReferenceResult> host = devicePagedReferenceAttention(
      test::hostDevice(), *empty, DType::F16, none);
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.status().code(), ErrorCode::Unsupported);
  host =
      devicePagedReferenceAttention(test::hostDevice(), *p, DType::F16, data);
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.status().message().find("needs a GPU device"),
            std::string::npos);
}

// On the gfx906 simulator: hiprtc's hsaco.
TEST(DevicePagedReferenceTest, GathersEachSequenceOnGfx906Sim) {
  Expected<DeviceReferenceCode> code =
      compileDeviceReference("gfx906", DType::F16, 32, false);
  SKIP_IF_UNAVAILABLE(code, "hiprtc");
  Expected<Device> sim = Device::open("gfx906-sim");
  FA_ASSERT_OK(sim);
  checkPagedDeviceReference(*sim, "fp64 on device (hiprtc gfx906)");
}

// A varlen problem on `device`: each sequence cut out and run through the
// dense device reference, scattered back into the packed O and LSE; the
// sequences without keys are O = 0, LSE = -inf without a launch, the one
// without queries gives nothing. Against the CPU's varlen references.
void checkVarlenDeviceReference(const Device &device,
                                const std::string &description) {
  VarlenProblem p = VarlenProblem::fromLengths(4, 2, 32, {9, 0, 5, 3},
                                               {7, 4, 0, 1}, true, 0.2);
  AttentionData data =
      generateVarlenInputs(p, DType::F16, Distribution::Outliers, 3);
  Expected<DeviceReferenceResult> r =
      deviceVarlenReferenceAttention(device, p, DType::F16, data);
  FA_ASSERT_OK(r);
  EXPECT_EQ(r->description, description);
  AttentionResult<double> cpu = referenceVarlenAttentionF64(p, data);
  AttentionResult<float> naive = naiveVarlenAttention(p, DType::F16, data);
  ASSERT_EQ(r->exact.o.size(), cpu.o.size());
  ASSERT_EQ(r->exact.o.size(), size_t(17 * 4 * 32)); // total_q 17
  ASSERT_EQ(r->exact.lse.size(), cpu.lse.size());
  ASSERT_EQ(r->naive.o.size(), naive.o.size());
  for (size_t i = 0; i < cpu.o.size(); ++i) {
    ASSERT_LE(std::fabs(r->exact.o[i] - cpu.o[i]),
              1e-9 * cpu.magnitude[i] + 1e-300)
        << "O " << i;
    ASSERT_LE(std::fabs(r->exact.magnitude[i] - cpu.magnitude[i]),
              1e-9 * cpu.magnitude[i] + 1e-300)
        << "magnitude " << i;
    ASSERT_LE(std::fabs(double(r->naive.o[i]) - naive.o[i]),
              4.0 / 1024 * cpu.magnitude[i] + 1e-6)
        << "naive O " << i;
  }
  size_t masked = 0;
  for (size_t i = 0; i < cpu.lse.size(); ++i) {
    if (std::isinf(cpu.lse[i])) {
      ++masked;
      ASSERT_TRUE(std::isinf(r->exact.lse[i]) && r->exact.lse[i] < 0) << i;
      ASSERT_TRUE(std::isinf(r->naive.lse[i])) << i;
      continue;
    }
    ASSERT_LE(std::fabs(r->exact.lse[i] - cpu.lse[i]),
              1e-9 * std::max(1.0, std::fabs(cpu.lse[i])))
        << "LSE " << i;
  }
  // Per head: sequence 0's first 2 rows (causal, Lq 9 > Lk 7), sequence
  // 2's 5 rows (no keys), sequence 3's first 2 rows (Lq 3, Lk 1).
  EXPECT_EQ(masked, size_t(4 * (2 + 5 + 2)));

  // No sequence has keys: nothing runs, where it would is named.
  VarlenProblem empty =
      VarlenProblem::fromLengths(4, 2, 32, {3, 1}, {0, 0}, true, 0.2);
  AttentionData none =
      generateVarlenInputs(empty, DType::F16, Distribution::Normal, 1);
  r = deviceVarlenReferenceAttention(device, empty, DType::F16, none);
  FA_ASSERT_OK(r);
  EXPECT_EQ(r->description, "fp64 on device (no sequence has queries and "
                            "keys: nothing ran on " +
                                device.name() + ")");
  for (double lse : r->exact.lse)
    EXPECT_TRUE(std::isinf(lse) && lse < 0);
  // The host emulator is refused.
  Expected<DeviceReferenceResult> host =
      deviceVarlenReferenceAttention(test::hostDevice(), p, DType::F16, data);
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.status().message().find("needs a GPU device"),
            std::string::npos);
}

// On the gfx906 simulator: hiprtc's hsaco.
TEST(DeviceVarlenReferenceTest, GathersEachSequenceOnGfx906Sim) {
  Expected<DeviceReferenceCode> code =
      compileDeviceReference("gfx906", DType::F16, 32, false);
  SKIP_IF_UNAVAILABLE(code, "hiprtc");
  Expected<Device> sim = Device::open("gfx906-sim");
  FA_ASSERT_OK(sim);
  checkVarlenDeviceReference(*sim, "fp64 on device (hiprtc gfx906)");
}

// A mixed batch on `device`: each sequence's packed queries and its keys
// gathered from the cache, run through the dense device reference (queries
// last), scattered back into the packed O and LSE; the sequence without
// queries gives nothing. Against the CPU's mixed references.
void checkMixedDeviceReference(const Device &device,
                               const std::string &description) {
  MixedGeneratorOptions o;
  o.batch = 5;
  o.headsQ = 4;
  o.headsKv = 2;
  o.headDim = 32;
  o.pageSize = 8;
  o.maxSeqlenQ = 9;
  o.maxSeqlenK = 40;
  o.causal = true;
  o.scale = 0.2;
  Expected<MixedProblem> p = generateMixedProblem(o, 4);
  FA_ASSERT_OK(p);
  AttentionData data =
      generateMixedInputs(*p, DType::F16, Distribution::Outliers, 3);
  FA_ASSERT_OK(poisonUnreadCacheRows(*p, data));
  Expected<DeviceReferenceResult> r =
      deviceMixedReferenceAttention(device, *p, DType::F16, data);
  FA_ASSERT_OK(r);
  EXPECT_EQ(r->description, description);
  AttentionResult<double> cpu = referenceMixedAttentionF64(*p, data);
  ASSERT_EQ(r->exact.o.size(), cpu.o.size());
  ASSERT_EQ(r->exact.lse.size(), cpu.lse.size());
  for (size_t i = 0; i < cpu.o.size(); ++i)
    ASSERT_LE(std::fabs(r->exact.o[i] - cpu.o[i]),
              1e-9 * cpu.magnitude[i] + 1e-300)
        << "O " << i;
  for (size_t i = 0; i < cpu.lse.size(); ++i)
    ASSERT_LE(std::fabs(r->exact.lse[i] - cpu.lse[i]),
              1e-9 * std::max(1.0, std::fabs(cpu.lse[i])))
        << "LSE " << i;
  // The host emulator is refused.
  Expected<DeviceReferenceResult> host =
      deviceMixedReferenceAttention(test::hostDevice(), *p, DType::F16, data);
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.status().message().find("needs a GPU device"),
            std::string::npos);
}

// On the gfx906 simulator: hiprtc's hsaco.
TEST(DeviceMixedReferenceTest, GathersEachSequenceOnGfx906Sim) {
  Expected<DeviceReferenceCode> code =
      compileDeviceReference("gfx906", DType::F16, 32, false);
  SKIP_IF_UNAVAILABLE(code, "hiprtc");
  Expected<Device> sim = Device::open("gfx906-sim");
  FA_ASSERT_OK(sim);
  checkMixedDeviceReference(*sim, "fp64 on device (hiprtc gfx906)");
}

// Where no GPU reference runs, the host emulator is refused all the same.
TEST(DeviceMixedReferenceTest, HostDeviceIsRefused) {
  MixedGeneratorOptions o;
  o.batch = 2;
  o.headDim = 8;
  o.maxSeqlenQ = 2;
  o.maxSeqlenK = 5;
  Expected<MixedProblem> p = generateMixedProblem(o, 1);
  FA_ASSERT_OK(p);
  AttentionData data =
      generateMixedInputs(*p, DType::F16, Distribution::Normal, 1);
  Expected<DeviceReferenceResult> host =
      deviceMixedReferenceAttention(test::hostDevice(), *p, DType::F16, data);
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.status().message().find("needs a GPU device"),
            std::string::npos)
      << host.status().toString();
}

//===----------------------------------------------------------------------===//
// On a GPU
//===----------------------------------------------------------------------===//

/// A CUDA device, else a HIP device, else none.
std::optional<Device> gpu(std::string &why) {
  for (const char *spec : {"cuda", "hip"}) {
    Expected<Device> d = Device::open(spec);
    if (d)
      return d.take();
    why += std::string(why.empty() ? "" : "; ") + d.status().message();
  }
  return std::nullopt;
}

/// `values` (contiguous [batch, heads, rows, d]) encoded as `dtype` and
/// placed through `strides` into a buffer on `device`.
Expected<Buffer> upload(const Device &device, DType dtype,
                        const std::vector<float> &values, int64_t batch,
                        int64_t heads, int64_t rows, int64_t d,
                        const TensorStrides &s) {
  size_t elem = dtypeBytes(dtype);
  std::vector<uint8_t> dense = encodeElements(dtype, values);
  int64_t last =
      (batch - 1) * s.batch + (heads - 1) * s.head + (rows - 1) * s.row + d;
  std::vector<uint8_t> bytes(size_t(last) * elem, 0xff);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t l = 0; l < rows; ++l)
        std::memcpy(&bytes[size_t(b * s.batch + h * s.head + l * s.row) * elem],
                    &dense[size_t(((b * heads + h) * rows + l) * d) * elem],
                    size_t(d) * elem);
  Expected<Buffer> buffer = device.allocate(bytes.size());
  if (!buffer)
    return buffer;
  if (Status st = buffer->copyFromHost(bytes.data(), bytes.size()); !st.ok())
    return st;
  return buffer;
}

struct GpuCase {
  DType dtype;
  bool causal;
  /// The sliding window and the softcap (issue 32).
  int64_t windowLeft = -1, windowRight = -1;
  double softcap = 0;
};
void PrintTo(const GpuCase &c, std::ostream *os) {
  *os << dtypeName(c.dtype) << (c.causal ? " causal" : "");
  if (c.windowLeft >= 0 || c.windowRight >= 0)
    *os << " window [" << c.windowLeft << ", " << c.windowRight << "]";
  if (c.softcap != 0)
    *os << " softcap " << c.softcap;
}
std::string caseName(const ::testing::TestParamInfo<GpuCase> &info) {
  const GpuCase &c = info.param;
  std::string name =
      std::string(dtypeName(c.dtype)) + (c.causal ? "_causal" : "");
  auto bound = [](int64_t b) {
    return b < 0 ? std::string("none") : std::to_string(b);
  };
  if (c.windowLeft >= 0 || c.windowRight >= 0)
    name += "_window_" + bound(c.windowLeft) + "_" + bound(c.windowRight);
  if (c.softcap != 0)
    name += "_softcap";
  return name;
}

/// The rows of the problem that see no key, by the rule of Reference.h
/// applied key by key.
size_t rowsWithoutKeys(const AttentionProblem &p) {
  const AttentionShape &s = p.shape;
  size_t rows = 0;
  for (int64_t i = 0; i < s.seqQ; ++i) {
    bool any = false;
    const int64_t diagonal = i + s.seqK - s.seqQ;
    for (int64_t j = 0; j < s.seqK; ++j)
      any = any || ((p.windowLeft < 0 || j >= diagonal - p.windowLeft) &&
                    (p.windowRight < 0 || j <= diagonal + p.windowRight) &&
                    (!p.causal || j <= diagonal));
    rows += !any;
  }
  return rows * size_t(s.batch * s.headsQ);
}

/// The dense device reference on `device` against the CPU references: GQA
/// (4 query heads on 2 KV heads), Lq > Lk so that causal masking leaves
/// rows with no visible key, every tensor with its own strides.
void checkDenseDeviceReference(const Device &device, const GpuCase &c,
                               int64_t headDim) {
  AttentionProblem p{{2, 4, 2, 50, 37}, headDim, c.causal, 0.125};
  p.windowLeft = c.windowLeft;
  p.windowRight = c.windowRight;
  p.softcap = c.softcap;
  AttentionStrides st = AttentionStrides::fromLayout(
      p.shape, p.headDim, AttentionLayout::distinct());
  AttentionData data = generateInputs(p, c.dtype, Distribution::Outliers, 5);
  const AttentionShape &s = p.shape;
  Expected<Buffer> q = upload(device, c.dtype, data.q, s.batch, s.headsQ,
                              s.seqQ, p.headDim, st.q);
  FA_ASSERT_OK(q);
  Expected<Buffer> k = upload(device, c.dtype, data.k, s.batch, s.headsKv,
                              s.seqK, p.headDim, st.k);
  FA_ASSERT_OK(k);
  Expected<Buffer> v = upload(device, c.dtype, data.v, s.batch, s.headsKv,
                              s.seqK, p.headDim, st.v);
  FA_ASSERT_OK(v);
  Expected<DeviceReferenceResult> r =
      deviceReferenceAttention(device, p, c.dtype, *q, *k, *v, st);
  FA_ASSERT_OK(r);
  EXPECT_EQ(r->description.rfind("fp64 on device (", 0), 0u) << r->description;

  AttentionResult<double> cpu = referenceAttentionF64(p, data);
  ASSERT_EQ(r->exact.o.size(), cpu.o.size());
  ASSERT_EQ(r->exact.lse.size(), cpu.lse.size());
  ASSERT_EQ(r->exact.magnitude.size(), cpu.magnitude.size());
  // Relative to each element's conditioning magnitude sum_j p|v| >= |o|.
  for (size_t i = 0; i < cpu.o.size(); ++i) {
    double tol = 1e-9 * cpu.magnitude[i] + 1e-300;
    ASSERT_LE(std::fabs(r->exact.o[i] - cpu.o[i]), tol) << "O " << i;
    ASSERT_LE(std::fabs(r->exact.magnitude[i] - cpu.magnitude[i]),
              1e-9 * cpu.magnitude[i] + 1e-300)
        << "magnitude " << i;
  }
  size_t masked = 0;
  for (size_t i = 0; i < cpu.lse.size(); ++i) {
    if (std::isinf(cpu.lse[i])) {
      ++masked;
      ASSERT_TRUE(std::isinf(r->exact.lse[i]) && r->exact.lse[i] < 0) << i;
      continue;
    }
    ASSERT_LE(std::fabs(r->exact.lse[i] - cpu.lse[i]),
              1e-9 * std::max(1.0, std::fabs(cpu.lse[i])))
        << "LSE " << i;
  }
  EXPECT_EQ(masked, rowsWithoutKeys(p));
  if (c.causal && c.windowLeft < 0 && c.windowRight < 0)
    EXPECT_EQ(masked, size_t(2 * 4 * 13));

  // The naive baseline: float math, so exp/log may differ by an ulp from the
  // host's and a rounding of P or O to the dtype may go the other way.
  AttentionResult<float> naive = naiveAttention(p, c.dtype, data);
  ASSERT_EQ(r->naive.o.size(), naive.o.size());
  double ulp = c.dtype == DType::F32   ? 1e-6
               : c.dtype == DType::F16 ? 1.0 / 1024
                                       : 1.0 / 128;
  for (size_t i = 0; i < naive.o.size(); ++i)
    ASSERT_LE(std::fabs(double(r->naive.o[i]) - naive.o[i]),
              4 * ulp * cpu.magnitude[i] + 1e-6)
        << "naive O " << i << ": device " << r->naive.o[i] << ", cpu "
        << naive.o[i];
  for (size_t i = 0; i < naive.lse.size(); ++i) {
    if (std::isinf(naive.lse[i])) {
      ASSERT_TRUE(std::isinf(r->naive.lse[i])) << i;
      continue;
    }
    ASSERT_LE(std::fabs(double(r->naive.lse[i]) - naive.lse[i]),
              1e-5 * std::max(1.0, std::fabs(double(naive.lse[i]))))
        << "naive LSE " << i;
  }
}

class DeviceReferenceGpu : public ::testing::TestWithParam<GpuCase> {};

TEST_P(DeviceReferenceGpu, MatchesTheCpuReferences) {
  std::string why;
  std::optional<Device> device = gpu(why);
  if (!device)
    GTEST_SKIP() << "no GPU: " << why;
  checkDenseDeviceReference(*device, GetParam(), 64);
}

/// Windows on either side and both, with causal, a window that leaves rows
/// without keys, softcaps.
const GpuCase windowCases[] = {
    {DType::F32, false, 7, 3, 0},    {DType::F32, false, -1, 2, 0},
    {DType::F16, true, 12, -1, 0},   {DType::F16, true, 5, 4, 0},
    {DType::F32, false, 0, 0, 0},    {DType::F32, false, -1, -1, 2.5},
    {DType::BF16, false, 9, -1, 1.5}};

INSTANTIATE_TEST_SUITE_P(Cases, DeviceReferenceGpu,
                         ::testing::Values(GpuCase{DType::F32, false},
                                           GpuCase{DType::F32, true},
                                           GpuCase{DType::F16, false},
                                           GpuCase{DType::F16, true},
                                           GpuCase{DType::BF16, true}),
                         caseName);
INSTANTIATE_TEST_SUITE_P(Windows, DeviceReferenceGpu,
                         ::testing::ValuesIn(windowCases), caseName);

// The same on the gfx906 simulator with hiprtc's hsaco (D = 32, so that the
// simulation stays short): the device reference's window and softcap are
// those of the CPU references.
class DeviceReferenceGfx906Sim : public ::testing::TestWithParam<GpuCase> {};

TEST_P(DeviceReferenceGfx906Sim, MatchesTheCpuReferences) {
  Expected<DeviceReferenceCode> code =
      compileDeviceReference("gfx906", GetParam().dtype, 32, false);
  SKIP_IF_UNAVAILABLE(code, "hiprtc");
  Expected<Device> sim = Device::open("gfx906-sim");
  FA_ASSERT_OK(sim);
  checkDenseDeviceReference(*sim, GetParam(), 32);
}

INSTANTIATE_TEST_SUITE_P(Windows, DeviceReferenceGfx906Sim,
                         ::testing::ValuesIn(windowCases), caseName);

/// `want` (a CPU reference) and `got` (the device's) agree to 1e-9 of each
/// element's magnitude, -inf where the CPU's LSE is.
void expectSameResults(const AttentionResult<double> &got,
                       const AttentionResult<double> &want,
                       const std::string &what) {
  ASSERT_EQ(got.o.size(), want.o.size()) << what;
  ASSERT_EQ(got.lse.size(), want.lse.size()) << what;
  for (size_t i = 0; i < want.o.size(); ++i)
    ASSERT_LE(std::fabs(got.o[i] - want.o[i]),
              1e-9 * want.magnitude[i] + 1e-300)
        << what << " O " << i;
  for (size_t i = 0; i < want.lse.size(); ++i) {
    if (std::isinf(want.lse[i])) {
      ASSERT_TRUE(std::isinf(got.lse[i]) && got.lse[i] < 0) << what << i;
      continue;
    }
    ASSERT_LE(std::fabs(got.lse[i] - want.lse[i]),
              1e-9 * std::max(1.0, std::fabs(want.lse[i])))
        << what << " LSE " << i;
  }
}

// Paged and varlen problems with a window and a softcap: each gathered
// sequence's dense problem carries them to the device reference.
TEST(DevicePagedReferenceTest, WindowAndSoftcapOnGfx906Sim) {
  Expected<DeviceReferenceCode> code =
      compileDeviceReference("gfx906", DType::F16, 32, false);
  SKIP_IF_UNAVAILABLE(code, "hiprtc");
  Expected<Device> sim = Device::open("gfx906-sim");
  FA_ASSERT_OK(sim);
  AttentionProblem dense{{3, 4, 2, 9, 70}, 32, true, 0.2};
  dense.windowLeft = 11;
  dense.softcap = 1.5;
  PagedCacheOptions o;
  o.pageSize = 16;
  Expected<PagedProblem> p = pagedProblemFor(dense, o, 3);
  FA_ASSERT_OK(p);
  AttentionData data =
      generatePagedInputs(*p, DType::F16, Distribution::Outliers, 3);
  FA_ASSERT_OK(poisonUnreadCacheRows(*p, data));
  Expected<DeviceReferenceResult> r =
      devicePagedReferenceAttention(*sim, *p, DType::F16, data);
  FA_ASSERT_OK(r);
  expectSameResults(r->exact, referencePagedAttentionF64(*p, data), "paged");

  VarlenProblem v = VarlenProblem::fromLengths(4, 2, 32, {9, 0, 5, 30},
                                               {7, 4, 0, 40}, false, 0.2);
  v.windowLeft = 3;
  v.windowRight = 2;
  v.softcap = 2.0;
  AttentionData vd =
      generateVarlenInputs(v, DType::F16, Distribution::Outliers, 3);
  r = deviceVarlenReferenceAttention(*sim, v, DType::F16, vd);
  FA_ASSERT_OK(r);
  expectSameResults(r->exact, referenceVarlenAttentionF64(v, vd), "varlen");
}

// On a GPU (NVRTC or hiprtc for the device's own target).
TEST(DevicePagedReferenceTest, GathersEachSequenceOnAGpu) {
  std::string why;
  std::optional<Device> device = gpu(why);
  if (!device)
    GTEST_SKIP() << "no GPU: " << why;
  Expected<DeviceReferenceCode> code =
      compileDeviceReference(device->targets().front(), DType::F16, 32, false);
  FA_ASSERT_OK(code);
  checkPagedDeviceReference(*device, "fp64 on device (" + code->compiler + " " +
                                         device->targets().front() + ")");
}

} // namespace

// On a GPU (NVRTC or hiprtc for the device's own target).
TEST(DeviceVarlenReferenceTest, GathersEachSequenceOnAGpu) {
  std::string why;
  std::optional<Device> device = gpu(why);
  if (!device)
    GTEST_SKIP() << "no GPU: " << why;
  Expected<DeviceReferenceCode> code =
      compileDeviceReference(device->targets().front(), DType::F16, 32, false);
  FA_ASSERT_OK(code);
  checkVarlenDeviceReference(*device, "fp64 on device (" + code->compiler +
                                          " " + device->targets().front() +
                                          ")");
}

// On a GPU (NVRTC or hiprtc for the device's own target).
TEST(DeviceMixedReferenceTest, GathersEachSequenceOnAGpu) {
  std::string why;
  std::optional<Device> device = gpu(why);
  if (!device)
    GTEST_SKIP() << "no GPU: " << why;
  Expected<DeviceReferenceCode> code =
      compileDeviceReference(device->targets().front(), DType::F16, 32, false);
  FA_ASSERT_OK(code);
  checkMixedDeviceReference(*device, "fp64 on device (" + code->compiler + " " +
                                         device->targets().front() + ")");
}
