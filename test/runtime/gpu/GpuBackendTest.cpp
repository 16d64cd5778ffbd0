//===- GpuBackendTest.cpp - HIP and CUDA backends without (and with) a GPU
//-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The GPU backends' decisions that need no GPU (lib/gpu/Vendor.h): kernel
// parameter packing, target matching, the gcnArchName scan, launch limits,
// absent libraries; the manifest's dynamic_lds_bytes; target-aware `auto`.
// CudaDevice.* runs a hand-written PTX kernel that echoes its parameters, so
// on a CUDA machine it checks the packing end to end; elsewhere it is
// skipped, saying why.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "gpu/Vendor.h"

#include <cstring>

using namespace fa;
using namespace fa::detail;

namespace {

using test::ScratchDir;

//===----------------------------------------------------------------------===//
// Kernel parameters
//===----------------------------------------------------------------------===//

TEST(KernelParamsTest, MemrefDescriptorsAreTheWordsInOrder) {
  uint64_t words[FA_ABI_MAX_WORDS];
  for (int i = 0; i < FA_ABI_MAX_WORDS; ++i)
    words[i] = 1000 + i;
  for (size_t count :
       {size_t(FA_ABI_V1_NUM_WORDS), size_t(FA_ABI_V2_NUM_WORDS)}) {
    void *params[kMaxKernelParams] = {};
    ASSERT_EQ(packKernelParams(words, count, params), count);
    for (size_t i = 0; i < kMaxKernelParams; ++i) {
      EXPECT_EQ(params[i], i < count ? &words[i] : nullptr) << i;
      if (i < count)
        EXPECT_EQ(*static_cast<uint64_t *>(params[i]), uint64_t(1000 + i));
    }
  }
  EXPECT_EQ(kMaxKernelParams, size_t(FA_ABI_MAX_WORDS));
}

// The AMDGPU kernarg segment: the words as they are with 64-bit indices;
// 4-byte descriptor fields with 32-bit indices, at the offsets the code
// object's .args metadata gives (test/tools/fac-gfx906.test pins those).
// Version 2 appends the workspace descriptors, narrowed the same way, and
// S as 8 bytes.
TEST(KernelParamsTest, KernargSegmentFollowsTheIndexWidth) {
  uint64_t words[FA_ABI_MAX_WORDS];
  for (int i = 0; i < FA_ABI_MAX_WORDS; ++i)
    words[i] = 0x1000 + i;
  std::vector<uint8_t> wide = packKernargSegment(words, 44, 64);
  ASSERT_EQ(wide.size(), 352u);
  EXPECT_EQ(std::memcmp(wide.data(), words, 352), 0);
  std::vector<uint8_t> wide2 = packKernargSegment(words, 55, 64);
  ASSERT_EQ(wide2.size(), 440u);
  EXPECT_EQ(std::memcmp(wide2.data(), words, 440), 0);

  for (size_t count : {size_t(44), size_t(55)}) {
    std::vector<uint8_t> narrow = packKernargSegment(words, count, 32);
    ASSERT_EQ(narrow.size(), count == 44 ? 312u : 384u);
    auto u64 = [&](size_t at) {
      uint64_t v;
      std::memcpy(&v, narrow.data() + at, 8);
      return v;
    };
    auto u32 = [&](size_t at) {
      uint32_t v;
      std::memcpy(&v, narrow.data() + at, 4);
      return v;
    };
    auto descriptor = [&](size_t base, int firstWord) {
      EXPECT_EQ(u64(base + 0), words[firstWord + 0]) << firstWord;
      EXPECT_EQ(u64(base + 8), words[firstWord + 1]) << firstWord;
      EXPECT_EQ(u32(base + 16), uint32_t(words[firstWord + 2])) << firstWord;
      EXPECT_EQ(u32(base + 20), uint32_t(words[firstWord + 3])) << firstWord;
      EXPECT_EQ(u32(base + 24), uint32_t(words[firstWord + 4])) << firstWord;
      EXPECT_EQ(u32(base + 28), 0u) << firstWord; // padding
    };
    for (int b = 0; b < FA_ABI_NUM_BUFFERS; ++b)
      descriptor(32 * b, 5 * b);
    for (int i = 0; i < FA_ABI_NUM_SIZES + FA_ABI_NUM_STRIDES; ++i)
      EXPECT_EQ(u64(160 + 8 * i), words[FA_ABI_SIZES + i]) << i;
    if (count == 55) {
      descriptor(312, FA_ABI_WS_O);
      descriptor(344, FA_ABI_WS_LSE);
      EXPECT_EQ(u64(376), words[FA_ABI_SPLITS]);
    }
  }
}

// A trace kernel (fac --trace; KernelAbi.h, "Trace"): version 1's words,
// the trace descriptor narrowed like the others, then the traced batch,
// head and row as 8 bytes each (the code object's .args: fac-trace.test and
// the ctest trace-layer2-gfx906-sim run it).
TEST(KernelParamsTest, KernargSegmentOfATraceKernel) {
  uint64_t words[FA_ABI_MAX_WORDS];
  for (int i = 0; i < FA_ABI_MAX_WORDS; ++i)
    words[i] = 0x1000 + i;
  const size_t count = fa_kernel_num_words(1, 1);
  ASSERT_EQ(count, 52u);
  EXPECT_EQ(fa_kernel_num_words(2, 1), 0u);
  EXPECT_EQ(fa_kernel_num_words(4, 0), 77u);
  std::vector<uint8_t> wide = packKernargSegment(words, count, 64);
  ASSERT_EQ(wide.size(), 416u);
  EXPECT_EQ(std::memcmp(wide.data(), words, 416), 0);
  std::vector<uint8_t> narrow = packKernargSegment(words, count, 32);
  ASSERT_EQ(narrow.size(), 312u + 32u + 24u);
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, narrow.data() + at, 8);
    return v;
  };
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, narrow.data() + at, 4);
    return v;
  };
  EXPECT_EQ(u64(312), words[44]);
  EXPECT_EQ(u64(320), words[45]);
  EXPECT_EQ(u32(328), uint32_t(words[46]));
  EXPECT_EQ(u32(332), uint32_t(words[47]));
  EXPECT_EQ(u32(336), uint32_t(words[48]));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(u64(344 + 8 * i), words[44 + FA_ABI_TRACE_ROW + i]) << i;
}

//===----------------------------------------------------------------------===//
// Targets
//===----------------------------------------------------------------------===//

TEST(TargetTest, ParsesSmTargets) {
  int cc;
  bool a;
  ASSERT_TRUE(parseSmTarget("sm_90", cc, a));
  EXPECT_EQ(cc, 90);
  EXPECT_FALSE(a);
  ASSERT_TRUE(parseSmTarget("sm_90a", cc, a));
  EXPECT_EQ(cc, 90);
  EXPECT_TRUE(a);
  ASSERT_TRUE(parseSmTarget("sm_100", cc, a));
  EXPECT_EQ(cc, 100);
  EXPECT_FALSE(parseSmTarget("gfx906", cc, a));
  EXPECT_FALSE(parseSmTarget("sm_9", cc, a));
  EXPECT_FALSE(parseSmTarget("sm_9x", cc, a));
}

TEST(TargetTest, CudaCubinNeedsTheExactCapability) {
  EXPECT_EQ(cudaTargetProblem("sm_90", "cubin", 9, 0), "");
  EXPECT_EQ(cudaTargetProblem("sm_90", "cubin", 10, 0),
            "a cubin for sm_90 runs only on compute capability 9.0; this "
            "device has compute capability 10.0");
  EXPECT_EQ(cudaTargetProblem("sm_80", "cubin", 9, 0),
            "a cubin for sm_80 runs only on compute capability 8.0; this "
            "device has compute capability 9.0");
}

TEST(TargetTest, CudaPtxRunsOnNewerDevices) {
  EXPECT_EQ(cudaTargetProblem("sm_90", "ptx", 9, 0), "");
  EXPECT_EQ(cudaTargetProblem("sm_80", "ptx", 9, 0), "");
  EXPECT_EQ(cudaTargetProblem("sm_90", "", 10, 0), "");
  EXPECT_EQ(cudaTargetProblem("sm_90", "ptx", 8, 6),
            "PTX for sm_90 needs compute capability 9.0 or newer; this device "
            "has compute capability 8.6");
  // Arch-specific features exist on one capability only.
  EXPECT_EQ(cudaTargetProblem("sm_90a", "ptx", 9, 0), "");
  EXPECT_EQ(cudaTargetProblem("sm_90a", "ptx", 10, 0),
            "arch-specific code for sm_90a runs only on compute capability "
            "9.0; this device has compute capability 10.0");
  EXPECT_EQ(cudaTargetProblem("gfx906", "ptx", 9, 0),
            "a CUDA device runs targets spelled sm_XY, not 'gfx906'");
}

TEST(TargetTest, GcnArchNames) {
  EXPECT_EQ(gcnArchBase("gfx906:sramecc+:xnack-"), "gfx906");
  EXPECT_EQ(gcnArchBase("gfx90a"), "gfx90a");
  EXPECT_EQ(hipTargetProblem("gfx906", "gfx906:sramecc+:xnack-"), "");
  EXPECT_EQ(hipTargetProblem("gfx906", "gfx906"), "");
  EXPECT_EQ(hipTargetProblem("gfx906:xnack-", "gfx906:sramecc+:xnack-"), "");
  EXPECT_EQ(hipTargetProblem("gfx906:sramecc-", "gfx906"), "");
  EXPECT_EQ(hipTargetProblem("gfx906", "gfx908:sramecc+:xnack-"),
            "code for gfx906 does not run on gfx908 (the device's gcnArchName "
            "is 'gfx908:sramecc+:xnack-')");
  EXPECT_EQ(hipTargetProblem("gfx906:xnack+", "gfx906:sramecc+:xnack-"),
            "the code object was built with xnack+ but the device runs xnack- "
            "(gcnArchName 'gfx906:sramecc+:xnack-')");
  EXPECT_EQ(hipTargetProblem("sm_90", "gfx906"),
            "code for sm_90 does not run on gfx906 (the device's gcnArchName "
            "is 'gfx906')");
}

/// A fake hipDeviceProp_t: marketing name first, numbers, the arch name at
/// `offset`.
std::vector<char> fakeProps(size_t offset, const char *arch) {
  std::vector<char> p(2048, 0);
  std::strcpy(p.data(), "AMD Instinct MI50");
  int32_t numbers[] = {65536, 64, 1024, 0x67, 906, 0x7fffffff};
  std::memcpy(p.data() + 256, numbers, sizeof(numbers));
  if (arch)
    std::strcpy(p.data() + offset, arch);
  return p;
}

TEST(TargetTest, FindsGcnArchNameAtAnyOffset) {
  for (size_t offset : {396u, 1160u, 1500u}) {
    std::vector<char> p = fakeProps(offset, "gfx906:sramecc+:xnack-");
    EXPECT_EQ(findGcnArchName(p.data(), p.size()), "gfx906:sramecc+:xnack-")
        << offset;
  }
  std::vector<char> bare = fakeProps(396, "gfx90a");
  EXPECT_EQ(findGcnArchName(bare.data(), bare.size()), "gfx90a");
  std::vector<char> none = fakeProps(0, nullptr);
  EXPECT_EQ(findGcnArchName(none.data(), none.size()), "");
  // A bare name elsewhere loses to the one with target features.
  std::vector<char> both = fakeProps(800, "gfx906:xnack-");
  std::strcpy(both.data() + 500, "gfx906");
  EXPECT_EQ(findGcnArchName(both.data(), both.size()), "gfx906:xnack-");
  // Not NUL-terminated before the end: not a string field.
  std::vector<char> cut(8, 'x');
  std::memcpy(cut.data() + 2, "gfx906", 6);
  EXPECT_EQ(findGcnArchName(cut.data(), cut.size()), "");
}

//===----------------------------------------------------------------------===//
// Limits, errors, libraries
//===----------------------------------------------------------------------===//

KernelInfo kernelInfo(int64_t threads, int64_t lds, int64_t dynamic) {
  KernelInfo k;
  k.name = "attn";
  k.threads = threads;
  k.ldsBytes = lds;
  k.dynamicLdsBytes = dynamic;
  return k;
}

TEST(LaunchLimitsTest, ThreadsAndSharedMemory) {
  FA_ASSERT_OK(checkKernelFits(kernelInfo(256, 49152, 100000), "cuda:0", 49152,
                               1024, 232448, "", ""));
  Status threads =
      checkKernelFits(kernelInfo(256, 0, 0), "cuda:0", 0, 128, 232448,
                      "the function uses 255 registers", "");
  EXPECT_EQ(threads.code(), ErrorCode::Unsupported);
  EXPECT_EQ(threads.message(),
            "kernel 'attn' needs 256 threads per workgroup, device 'cuda:0' "
            "allows 128 (the function uses 255 registers)");
  EXPECT_EQ(threads.kernel(), "attn");
  Status lds = checkKernelFits(kernelInfo(256, 1024, 232000), "cuda:0", 1024,
                               1024, 232448, "", "opt-in limit");
  EXPECT_EQ(lds.message(),
            "kernel 'attn' needs 233024 bytes of LDS (1024 static + 232000 "
            "dynamic), device 'cuda:0' allows 232448 (opt-in limit)");
  Status gfx = checkKernelFits(kernelInfo(256, 65537, 0), "hip:0", 65537, 1024,
                               65536, "", "");
  EXPECT_EQ(gfx.message(), "kernel 'attn' needs 65537 bytes of LDS (65537 "
                           "static + 0 dynamic), device 'hip:0' allows 65536");
}

TEST(VendorErrorTest, NamesCallErrorAndHint) {
  Status s = vendorCallError(
      ErrorCode::LoadFailed, "cuda:0", "cannot load code object 'a.ptx' (ptx)",
      "cuModuleLoadDataEx", 209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
      "no kernel image is available for execution on "
      "the device",
      "mismatched target chip?");
  EXPECT_EQ(s.code(), ErrorCode::LoadFailed);
  EXPECT_EQ(s.message(),
            "cannot load code object 'a.ptx' (ptx): cuModuleLoadDataEx "
            "returned CUDA_ERROR_NO_BINARY_FOR_GPU (209): no kernel image is "
            "available for execution on the device (mismatched target chip?)");
  EXPECT_EQ(s.call(), "cuModuleLoadDataEx");
  EXPECT_EQ(s.backendError(), "CUDA_ERROR_NO_BINARY_FOR_GPU");
  EXPECT_EQ(s.device(), "cuda:0");
  // Unknown names: the number stands in; a string equal to the name is not
  // repeated.
  EXPECT_EQ(vendorCallError(ErrorCode::Unavailable, "hip", "x", "hipInit", 101,
                            nullptr, nullptr)
                .message(),
            "x: hipInit returned error 101 (101)");
  EXPECT_EQ(vendorCallError(ErrorCode::Unavailable, "hip", "x", "hipInit", 101,
                            "hipErrorInvalidDevice", "hipErrorInvalidDevice")
                .message(),
            "x: hipInit returned hipErrorInvalidDevice (101)");
}

TEST(VendorLibraryTest, AbsentLibrarySaysWhichAndWhy) {
  void *handle = nullptr;
  Status s = openVendorLibrary(
      "cuda", {"libfa-test-absent.so.1", "libfa-test-absent.so"}, handle);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::Unavailable);
  EXPECT_EQ(s.message().rfind("device 'cuda' unavailable: "
                              "libfa-test-absent.so.1 not found (dlopen: "
                              "libfa-test-absent.so.1: cannot open shared "
                              "object file",
                              0),
            0u)
      << s.message();
  EXPECT_EQ(s.call(), "dlopen");
  Status missing = missingVendorSymbol("hip", "hipModuleLaunchKernel");
  EXPECT_EQ(missing.message(), "device 'hip' unavailable: the vendor runtime "
                               "lacks 'hipModuleLaunchKernel' (too old?)");
}

TEST(VendorLibraryTest, GpuElfCheck) {
  std::vector<uint8_t> text = {'/', '/', ' ', 'p', 't', 'x'};
  Status notElf = checkGpuElf(text, 190, "cubin");
  EXPECT_EQ(notElf.code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(notElf.message(),
            "code object is not an ELF file (a cubin code object is one)");
  // The host fixture is an ELF file, for x86-64 (62), not AMDGPU (224).
  Status wrong = checkGpuElf(test::readBytes(test::fixturePath("attn_f32")),
                             224, "AMDGPU");
  EXPECT_EQ(wrong.message(),
            "code object is for ELF machine 62, not AMDGPU (224)");
}

//===----------------------------------------------------------------------===//
// Manifest and module loading
//===----------------------------------------------------------------------===//

TEST(DynamicLdsTest, ManifestFieldIsOptional) {
  Manifest m = test::fixtureManifest("attn_f32");
  EXPECT_EQ(m.kernels[0].dynamicLdsBytes, 0);
  std::string text = formatManifest(m);
  // Written always (as fac does), read as 0 when absent.
  size_t field = text.find("\"dynamic_lds_bytes\": 0,\n");
  ASSERT_NE(field, std::string::npos);
  Expected<Manifest> absent =
      parseManifest(text.substr(0, field) + text.substr(field + 24));
  FA_ASSERT_OK(absent);
  EXPECT_EQ(absent->kernels[0].dynamicLdsBytes, 0);

  m.kernels[0].dynamicLdsBytes = 100000;
  text = formatManifest(m);
  EXPECT_NE(text.find("\"dynamic_lds_bytes\": 100000"), std::string::npos);
  Expected<Manifest> back = parseManifest(text);
  FA_ASSERT_OK(back);
  EXPECT_EQ(back->kernels[0].dynamicLdsBytes, 100000);

  size_t at = text.find("100000");
  Expected<Manifest> bad =
      parseManifest(text.substr(0, at) + "-1" + text.substr(at + 6));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "manifest field 'kernels[0].dynamic_lds_bytes': -1 is outside [0, "
            "4294967296]");
}

TEST(DynamicLdsTest, CountsTowardsTheDeviceLimit) {
  ScratchDir dir;
  Manifest m = test::fixtureManifest("attn_f32");
  m.kernels[0].dynamicLdsBytes = (1 << 20) - m.kernels[0].ldsBytes + 1;
  std::string path = test::writeCodeObject(
      dir, "attn.so", test::readBytes(test::fixturePath("attn_f32")), m);
  Expected<Module> module = Module::load(test::hostDevice(), path);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().message(),
            "kernel 'attn_f32' needs 1048577 bytes of LDS (" +
                std::to_string(m.kernels[0].ldsBytes) + " static + " +
                std::to_string(m.kernels[0].dynamicLdsBytes) +
                " dynamic), device 'host' has 1048576");
}

TEST(ModuleTargetTest, GpuTargetsOnTheHostDevice) {
  ScratchDir dir;
  Manifest m = test::fixtureManifest("attn_f32");
  m.target = "sm_90";
  m.codeObjectFormat = "ptx";
  std::string path = test::writeCodeObject(
      dir, "attn.ptx", test::readBytes(test::fixturePath("attn_f32")), m);
  Expected<Module> module = Module::load(test::hostDevice(), path);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().message(),
            "code object is for target 'sm_90' but device 'host' runs 'host'");

  Expected<Manifest> read = Module::readManifest(path);
  FA_ASSERT_OK(read);
  EXPECT_EQ(read->target, "sm_90");
  Expected<Manifest> viaJson = Module::readManifest(path + ".json");
  FA_ASSERT_OK(viaJson);
  EXPECT_EQ(viaJson->codeObjectFormat, "ptx");
  Expected<Manifest> missing = Module::readManifest(dir.file("none.ptx"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::NotFound);
}

//===----------------------------------------------------------------------===//
// Device selection
//===----------------------------------------------------------------------===//

TEST(AutoDeviceTest, HostTargetSkipsGpus) {
  Expected<Device> d = Device::open("auto", "host");
  FA_ASSERT_OK(d);
  EXPECT_EQ(d->name(), "host");
  EXPECT_EQ(d->selectionLog(),
            "hip skipped: target 'host' is not an AMD GPU target; cuda "
            "skipped: target 'host' is not an NVIDIA GPU target");
}

TEST(AutoDeviceTest, GpuTargetTriesItsVendorOnly) {
  Expected<Device> d = Device::open("auto", "sm_90");
  FA_ASSERT_OK(d);
  const std::string &log = d->selectionLog();
  EXPECT_NE(log.find("hip skipped: target 'sm_90' is not an AMD GPU target"),
            std::string::npos)
      << log;
  if (d->name() == "host")
    EXPECT_NE(log.find("cuda"), std::string::npos) << log; // says why not
  else
    EXPECT_TRUE(d->supportsTarget("sm_90")) << d->name();

  Expected<Device> amd = Device::open("auto", "gfx906");
  FA_ASSERT_OK(amd);
  EXPECT_NE(amd->selectionLog().find(
                "cuda skipped: target 'gfx906' is not an NVIDIA GPU target"),
            std::string::npos)
      << amd->selectionLog();
}

//===----------------------------------------------------------------------===//
// On a CUDA GPU: the packing end to end
//===----------------------------------------------------------------------===//

/// A PTX kernel with the ABI's 44 u64 parameters; thread 0 stores
/// parameters 25 (B), 28 (Lq), 18 (O's size), 43 (lse.head stride), 21
/// (LSE's aligned pointer) and 0 (Q's allocated pointer) to O as u64s.
/// With `splitKv`, the split kernel of a pair: 55 parameters, and it also
/// stores 54 (S), 45 (workspace O's aligned pointer), 48 (its stride), 51
/// (workspace LSE's offset) and 53 (its stride); its combine kernel
/// `fa_abi_echo_combine` stores the same from its 55 parameters 64 bytes
/// further on.
const int echoedV1[] = {25, 28, 18, 43, 21, 0};
const int echoedV2[] = {25, 28, 18, 43, 21, 0, 54, 45, 48, 51, 53};

std::string echoKernelPtx(const std::string &name, int words, const int *echoed,
                          int count, int at) {
  std::string ptx = ".visible .entry " + name + "(\n";
  for (int i = 0; i < words; ++i)
    ptx +=
        "  .param .u64 w" + std::to_string(i) + (i + 1 < words ? ",\n" : "\n");
  ptx += ")\n{\n"
         "  .reg .pred %p;\n  .reg .b32 %r1;\n  .reg .b64 %rd<3>;\n"
         "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p, %r1, 0;\n"
         "  @%p bra DONE;\n"
         "  ld.param.u64 %rd1, [w16];\n  cvta.to.global.u64 %rd1, %rd1;\n";
  for (int i = 0; i < count; ++i)
    ptx += "  ld.param.u64 %rd2, [w" + std::to_string(echoed[i]) +
           "];\n  st.global.u64 [%rd1+" + std::to_string(at + 8 * i) +
           "], %rd2;\n";
  ptx += "DONE:\n  ret;\n}\n";
  return ptx;
}

std::string echoPtx(bool splitKv = false) {
  std::string ptx = ".version 7.0\n.target sm_50\n.address_size 64\n\n";
  if (!splitKv)
    return ptx +
           echoKernelPtx("fa_abi_echo", FA_ABI_V1_NUM_WORDS, echoedV1, 6, 0);
  return ptx +
         echoKernelPtx("fa_abi_echo", FA_ABI_V2_NUM_WORDS, echoedV2, 11, 0) +
         echoKernelPtx("fa_abi_echo_combine", FA_ABI_V2_NUM_WORDS, echoedV2, 11,
                       128);
}

Manifest echoManifest(const std::string &ptx, int64_t dynamicLds) {
  Manifest m;
  m.compiler = "GpuBackendTest";
  m.target = "sm_50";
  m.codeObjectFile = "echo.ptx";
  m.codeObjectFormat = "ptx";
  m.codeObjectBytes = ptx.size();
  m.codeObjectHash = formatFnv1a64(fnv1a64(ptx.data(), ptx.size()));
  KernelInfo k;
  k.name = k.symbol = "fa_abi_echo";
  k.abiVersion = 1;
  k.dtype = DType::F32;
  k.headDim = 8;
  k.scale = 1;
  k.hasLse = true;
  k.blockM = 16;
  k.blockN = 16;
  k.threads = 64;
  k.waveSize = 32;
  k.dynamicLdsBytes = dynamicLds;
  m.kernels.push_back(k);
  return m;
}

class CudaDevice : public ::testing::TestWithParam<int64_t> {};

TEST_P(CudaDevice, KernelSeesTheAbiWords) {
  Expected<Device> device = Device::open("cuda");
  if (!device)
    GTEST_SKIP() << "no CUDA device: " << device.status().message();
  std::string ptx = echoPtx();
  Manifest manifest = echoManifest(ptx, GetParam());
  Expected<Module> module = Module::loadFromMemory(
      *device, ptx.data(), ptx.size(), formatManifest(manifest), "echo.ptx");
  FA_ASSERT_OK(module);
  Expected<Kernel> kernel = module->kernel();
  FA_ASSERT_OK(kernel);

  AttentionArgs args;
  args.shape.batch = 2;
  args.shape.headsQ = 2;
  args.shape.headsKv = 1;
  args.shape.seqQ = 3;
  args.shape.seqK = 5;
  Expected<Buffer> q = device->allocate(4096), k = device->allocate(4096),
                   v = device->allocate(4096), o = device->allocate(4096),
                   lse = device->allocate(4096);
  FA_ASSERT_OK(q);
  FA_ASSERT_OK(k);
  FA_ASSERT_OK(v);
  FA_ASSERT_OK(o);
  FA_ASSERT_OK(lse);
  args.q = &*q;
  args.k = &*k;
  args.v = &*v;
  args.o = &*o;
  args.lse = &*lse;
  Expected<PackedLaunch> packed =
      packAttentionArgs(kernel->info(), args, device->limits());
  FA_ASSERT_OK(packed);
  FA_ASSERT_OK(kernel->launch(args));

  uint64_t echoed[6] = {};
  FA_ASSERT_OK(o->copyToHost(echoed, sizeof(echoed)));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(echoed[i], packed->words[echoedV1[i]]) << "word " << echoedV1[i];
}

// A split-KV pair: both kernels see the 55 words (S, the workspace
// descriptors); the workspace words are the launch's own, so the split
// kernel's are compared with the combine kernel's, which saw the same.
TEST(CudaDeviceSplitKv, BothKernelsSeeTheWords) {
  Expected<Device> device = Device::open("cuda");
  if (!device)
    GTEST_SKIP() << "no CUDA device: " << device.status().message();
  std::string ptx = echoPtx(true);
  Manifest manifest = echoManifest(ptx, 0);
  KernelInfo &split = manifest.kernels[0];
  split.abiVersion = 2;
  split.splitKv = true;
  split.combine = "fa_abi_echo_combine";
  KernelInfo combine = split;
  combine.name = combine.symbol = split.combine;
  combine.splitKv = false;
  combine.combine.clear();
  combine.role = KernelRole::Combine;
  combine.blockM = 4;
  manifest.kernels.push_back(combine);
  Expected<Module> module = Module::loadFromMemory(
      *device, ptx.data(), ptx.size(), formatManifest(manifest), "echo.ptx");
  FA_ASSERT_OK(module);
  Expected<Kernel> kernel = module->kernel();
  FA_ASSERT_OK(kernel);
  EXPECT_EQ(kernel->name(), "fa_abi_echo");

  AttentionArgs args;
  args.shape = {2, 2, 1, 3, 5};
  std::vector<Buffer> buffers;
  for (int i = 0; i < 5; ++i) {
    Expected<Buffer> b = device->allocate(4096);
    FA_ASSERT_OK(b);
    buffers.push_back(b.take());
  }
  args.q = &buffers[0];
  args.k = &buffers[1];
  args.v = &buffers[2];
  args.o = &buffers[3];
  args.lse = &buffers[4];
  LaunchOptions options;
  options.kvSplits = 5;
  LaunchInfo info;
  FA_ASSERT_OK(kernel->launch(args, options, &info));
  EXPECT_EQ(info.kvSplits, 5);
  uint64_t echoed[32] = {};
  FA_ASSERT_OK(buffers[3].copyToHost(echoed, sizeof(echoed)));
  const uint64_t expected[] = {
      2, 3, 4096 / 4, 3, buffers[4].address(), buffers[0].address(), 5};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(echoed[i], expected[i]) << "split kernel, word " << echoedV2[i];
    EXPECT_EQ(echoed[16 + i], expected[i])
        << "combine kernel, word " << echoedV2[i];
  }
  // The workspace: a pointer, stride 1, offset 0, stride 1.
  EXPECT_NE(echoed[7], 0u);
  EXPECT_EQ(echoed[8], 1u);
  EXPECT_EQ(echoed[9], 0u);
  EXPECT_EQ(echoed[10], 1u);
  for (int i = 7; i < 11; ++i)
    EXPECT_EQ(echoed[16 + i], echoed[i]) << "word " << echoedV2[i];
}

/// Loads `ptx` with `manifest` on the CUDA device; the status.
Status loadOnCuda(const Device &device, const std::string &ptx,
                  Manifest manifest) {
  manifest.codeObjectBytes = ptx.size();
  manifest.codeObjectHash = formatFnv1a64(fnv1a64(ptx.data(), ptx.size()));
  Expected<Module> m = Module::loadFromMemory(
      device, ptx.data(), ptx.size(), formatManifest(manifest), "echo.ptx");
  return m ? Status::success() : m.takeStatus();
}

TEST(CudaDeviceErrors, SayWhatAndWhy) {
  Expected<Device> device = Device::open("cuda");
  if (!device)
    GTEST_SKIP() << "no CUDA device: " << device.status().message();
  std::string ptx = echoPtx();
  const std::string &cc = device->targets().front(); // "sm_90"

  // PTX for a newer device than this one.
  Manifest newer = echoManifest(ptx, 0);
  newer.target = "sm_990";
  Status s = loadOnCuda(*device, ptx, newer);
  EXPECT_EQ(s.code(), ErrorCode::Unsupported);
  EXPECT_NE(s.message().find("PTX for sm_990 needs compute capability 99.0 "
                             "or newer"),
            std::string::npos)
      << s.toString();

  // A cubin must match exactly; this one is not even ELF.
  Manifest cubin = echoManifest(ptx, 0);
  cubin.target = cc;
  cubin.codeObjectFormat = "cubin";
  s = loadOnCuda(*device, ptx, cubin);
  EXPECT_EQ(s.code(), ErrorCode::CorruptCodeObject) << s.toString();

  // The JIT's error log comes with the failure.
  std::string broken = ptx;
  broken.replace(broken.find("ret;"), 4, "bogus_instruction;");
  s = loadOnCuda(*device, broken, echoManifest(broken, 0));
  EXPECT_EQ(s.code(), ErrorCode::LoadFailed) << s.toString();
  EXPECT_EQ(s.call(), "cuModuleLoadDataEx");
  EXPECT_NE(s.log().find("JIT error log"), std::string::npos) << s.toString();

  // A kernel symbol the code object lacks.
  Manifest missing = echoManifest(ptx, 0);
  missing.kernels[0].symbol = "no_such_kernel";
  s = loadOnCuda(*device, ptx, missing);
  EXPECT_EQ(s.code(), ErrorCode::NotFound) << s.toString();
  EXPECT_EQ(s.call(), "cuModuleGetFunction");

  // More shared memory than the opt-in limit.
  Manifest big = echoManifest(ptx, int64_t(device->limits().maxLdsBytes) + 1);
  s = loadOnCuda(*device, ptx, big);
  EXPECT_EQ(s.code(), ErrorCode::Unsupported);
  EXPECT_NE(s.message().find("bytes of LDS (0 static + "), std::string::npos)
      << s.toString();

  // More threads than a block may have.
  Manifest wide = echoManifest(ptx, 0);
  wide.kernels[0].threads = 2048;
  s = loadOnCuda(*device, ptx, wide);
  EXPECT_EQ(s.code(), ErrorCode::Unsupported);
  EXPECT_NE(s.message().find("needs 2048 threads per workgroup"),
            std::string::npos)
      << s.toString();
}

// 0: static shared memory only; 100000: above the 48 KiB default, so the
// backend must raise MAX_DYNAMIC_SHARED_SIZE_BYTES (sm_70 and newer).
INSTANTIATE_TEST_SUITE_P(DynamicLds, CudaDevice,
                         ::testing::Values(int64_t(0), int64_t(100000)));

} // namespace
