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
#include "fa/Module.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

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
