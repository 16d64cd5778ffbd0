//===- DeviceTest.cpp - Device selection and buffers ----------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cstdint>
#include <cstring>
#include <dlfcn.h>

using namespace fa;

namespace {

bool libraryLoads(const char *name) {
  void *h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (h)
    ::dlclose(h);
  return h != nullptr;
}

TEST(DeviceTest, OpensHost) {
  Expected<Device> d = Device::open("host");
  FA_ASSERT_OK(d);
  EXPECT_EQ(d->name(), "host");
  EXPECT_TRUE(d->isHostEmulator());
  EXPECT_TRUE(d->supportsTarget("host"));
  EXPECT_FALSE(d->supportsTarget("gfx906"));
  EXPECT_TRUE(d->selectionLog().empty());
  EXPECT_GE(d->limits().maxThreadsPerWorkgroup, 1024u);
  FA_ASSERT_OK(Device::open("host:0"));
}

TEST(DeviceTest, UnknownNameListsKnownDevices) {
  Expected<Device> d = Device::open("tpu");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(d.status().message(),
            "unknown device 'tpu' (known devices: auto, host, hip[:N], "
            "cuda[:N], gfx906-sim)");
}

TEST(DeviceTest, BadOrdinals) {
  Expected<Device> a = Device::open("hip:x");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("ordinal after ':' must be a number"),
            std::string::npos);
  Expected<Device> b = Device::open("host:1");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("there is one host device"),
            std::string::npos);
  EXPECT_FALSE(Device::open("").ok());
  EXPECT_FALSE(Device::open("auto:0").ok());
}

// No GPU backend is implemented yet, so `auto` must end on the host device
// on every machine, saying why each GPU runtime was skipped.
TEST(DeviceTest, AutoFallsBackToHost) {
  // For a host code object, auto skips the GPU backends (and says why).
  Expected<Device> d = Device::open("auto", "host");
  FA_ASSERT_OK(d);
  EXPECT_EQ(d->name(), "host");
  EXPECT_NE(d->selectionLog().find(
                "hip skipped: target 'host' is not an AMD GPU target"),
            std::string::npos)
      << d->selectionLog();
  EXPECT_NE(d->selectionLog().find(
                "cuda skipped: target 'host' is not an NVIDIA GPU target"),
            std::string::npos)
      << d->selectionLog();
}

// gfx906 code without an AMD GPU: `auto` opens the simulator and says why
// (a machine with a gfx906 GPU would get hip:0 instead).
TEST(DeviceTest, AutoRunsGfx906CodeInTheSimulator) {
  Expected<Device> d = Device::open("auto", "gfx906");
  FA_ASSERT_OK(d);
  if (d->name().rfind("hip", 0) == 0)
    GTEST_SKIP() << "an AMD GPU runs gfx906 here: " << d->name();
  EXPECT_EQ(d->name(), "gfx906-sim");
  EXPECT_NE(d->selectionLog().find("gfx906-sim: no AMD GPU runs target "
                                   "'gfx906', so its machine code runs in "
                                   "the gfx906 simulator"),
            std::string::npos)
      << d->selectionLog();
  // Code for another AMD processor is not simulated: auto ends on host.
  Expected<Device> other = Device::open("auto", "gfx908");
  FA_ASSERT_OK(other);
  EXPECT_NE(other->name(), "gfx906-sim");
}

TEST(DeviceTest, Gfx906SimByName) {
  Expected<Device> d = Device::open("gfx906-sim");
  FA_ASSERT_OK(d);
  EXPECT_EQ(d->name(), "gfx906-sim");
  EXPECT_TRUE(d->supportsTarget("gfx906"));
  EXPECT_FALSE(d->supportsTarget("gfx908"));
  EXPECT_EQ(d->limits().maxLdsBytes, 65536u);
  EXPECT_EQ(d->limits().maxThreadsPerWorkgroup, 1024u);
}

TEST(DeviceTest, CudaAbsentSaysWhy) {
  Expected<Device> d = Device::open("cuda");
  if (d.ok())
    GTEST_SKIP() << "a CUDA device is present: " << d->name();
  const Status &s = d.status();
  if (!libraryLoads("libcuda.so.1") && !libraryLoads("libcuda.so")) {
    EXPECT_EQ(s.code(), ErrorCode::Unavailable);
    EXPECT_EQ(s.message().rfind("device 'cuda' unavailable: libcuda.so.1 not "
                                "found (dlopen: ",
                                0),
              0u)
        << s.message();
    EXPECT_EQ(s.call(), "dlopen");
  } else {
    // A driver is present: the message names the failing call or says the
    // backend is missing.
    EXPECT_TRUE(s.code() == ErrorCode::Unavailable ||
                s.code() == ErrorCode::Unsupported)
        << s.toString();
    EXPECT_NE(s.message().find("device 'cuda"), std::string::npos);
  }
}

TEST(DeviceTest, HipAbsentSaysWhy) {
  Expected<Device> d = Device::open("hip:0");
  ASSERT_FALSE(d.ok());
  const Status &s = d.status();
  EXPECT_NE(s.message().find("device 'hip"), std::string::npos);
  if (!libraryLoads("libamdhip64.so") && !libraryLoads("libamdhip64.so.6") &&
      !libraryLoads("libamdhip64.so.5")) {
    EXPECT_NE(s.message().find("libamdhip64.so not found (dlopen: "),
              std::string::npos)
        << s.message();
  } else {
    // The library loads here: the error names the HIP call and its error,
    // reports no GPU, or says the backend is not built.
    EXPECT_TRUE(!s.backendError().empty() ||
                s.message().find("found no AMD GPU") != std::string::npos ||
                s.message().find("no hip launch backend") != std::string::npos)
        << s.toString();
  }
}

TEST(BufferTest, HugeAllocationIsRefusedNotWrapped) {
  // SIZE_MAX - 100 rounded up to the 256-byte granule used to wrap to 0 and
  // "succeed"; a copy into it then corrupted the heap.
  Device d = test::hostDevice();
  for (size_t bytes : {SIZE_MAX, SIZE_MAX - 100, SIZE_MAX - 255}) {
    Expected<Buffer> b = d.allocate(bytes);
    ASSERT_FALSE(b.ok()) << bytes;
    EXPECT_NE(b.status().message().find("cannot allocate " +
                                        std::to_string(bytes) + " bytes"),
              std::string::npos)
        << b.status().toString();
  }
}

TEST(BufferTest, AllocateCopyAndBounds) {
  Device d = test::hostDevice();
  EXPECT_FALSE(d.allocate(0).ok());
  Expected<Buffer> b = d.allocate(100);
  FA_ASSERT_OK(b);
  EXPECT_EQ(b->size(), 100u);
  EXPECT_NE(b->address(), 0u);
  EXPECT_TRUE(b->belongsTo(d));

  std::vector<uint8_t> zeros(100, 0xaa);
  FA_ASSERT_OK(b->copyToHost(zeros.data(), 100));
  EXPECT_EQ(zeros, std::vector<uint8_t>(100, 0)); // allocations are zeroed

  std::vector<uint8_t> data(40);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t(i * 7);
  FA_ASSERT_OK(b->copyFromHost(data.data(), 40, 60));
  std::vector<uint8_t> back(40);
  FA_ASSERT_OK(b->copyToHost(back.data(), 40, 60));
  EXPECT_EQ(back, data);

  Status over = b->copyFromHost(data.data(), 40, 61);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.message(),
            "copy to device of 40 bytes at offset 61 overruns a buffer of 100 "
            "bytes");

  Buffer moved = b.take();
  EXPECT_EQ(moved.size(), 100u);
  Buffer target = std::move(moved);
  EXPECT_EQ(target.size(), 100u);
  EXPECT_EQ(moved.size(), 0u); // NOLINT: moved-from state is specified
  EXPECT_FALSE(moved.copyToHost(back.data(), 1).ok());
}

} // namespace
