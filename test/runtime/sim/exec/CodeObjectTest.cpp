//===- CodeObjectTest.cpp - Reading hsaco images and kernel descriptors ---===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// sim::readCodeObject on the committed gfx906 code object (its descriptor's
// fields against the AMDGPU metadata and GFX906.md's description of fa's
// kernels) and on damaged copies: every damage is a clean error.
//
//===----------------------------------------------------------------------===//

#include "SimTest.h"

#include <fstream>
#include <iterator>

using namespace fa;
using namespace fa::sim;

namespace {

std::vector<uint8_t> committedHsaco() {
  std::ifstream f(FA_TEST_DATA_DIR "/attention_gfx906.hsaco", std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

} // namespace

TEST(SimCodeObject, DescriptorOfTheCommittedKernel) {
  std::vector<uint8_t> bytes = committedHsaco();
  ASSERT_FALSE(bytes.empty());
  Expected<CodeObject> co = readCodeObject(bytes);
  ASSERT_TRUE(co.ok()) << co.status().message();
  const CodeObjectKernel *k = co->find("attention_kernel");
  ASSERT_NE(k, nullptr);
  const KernelDescriptor &kd = k->kd;
  // The metadata says 25600 bytes of LDS, 312 bytes of kernargs, 127 VGPRs.
  EXPECT_EQ(kd.groupSegmentFixedSize, 25600u);
  EXPECT_EQ(kd.kernargSize, 312u);
  EXPECT_GE(kd.vgprCount(), 127u);
  EXPECT_EQ(kd.privateSegmentFixedSize, 0u);
  // s[0:3] scratch resource, s[4:5] kernarg pointer: 6 user SGPRs; then
  // workgroup IDs; v0 alone holds the work-item ID; denormals kept, IEEE
  // and DX10 clamp on.
  EXPECT_TRUE(kd.privateSegmentBuffer());
  EXPECT_TRUE(kd.kernargSegmentPtr());
  EXPECT_FALSE(kd.dispatchPtr());
  EXPECT_EQ(kd.userSgprCount(), 6u);
  EXPECT_EQ(kd.enabledUserSgprs(), 6u);
  EXPECT_TRUE(kd.workgroupId(0));
  EXPECT_EQ(kd.workItemIdDims(), 0u);
  EXPECT_EQ(kd.floatDenormMode32(), 3u);
  EXPECT_TRUE(kd.ieeeMode());
  EXPECT_TRUE(kd.dx10Clamp());
  EXPECT_FALSE(kd.wave32());
  EXPECT_GE(k->entry, co->codeBegin);
  EXPECT_LT(k->entry, co->codeEnd);
  EXPECT_TRUE(checkDescriptor(k->name, kd).ok());
  // The whole text decodes and the entry starts an instruction.
  Program p = Program::decode(*co);
  EXPECT_GE(p.indexOf(k->entry), 0);
}

TEST(SimCodeObject, DamageIsACleanError) {
  std::vector<uint8_t> good = committedHsaco();
  ASSERT_FALSE(good.empty());
  // Truncated at every 997th length: never a crash, always an error.
  for (size_t n = 0; n < good.size(); n += 997) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + n);
    Expected<CodeObject> co = readCodeObject(cut);
    if (!co.ok())
      EXPECT_EQ(co.status().code(), ErrorCode::CorruptCodeObject) << n;
  }
  std::vector<uint8_t> notElf(good);
  notElf[0] = 0;
  Expected<CodeObject> co = readCodeObject(notElf);
  ASSERT_FALSE(co.ok());
  EXPECT_EQ(co.status().message(), "code object: not an ELF file");

  // The descriptor's entry offset pointed outside the code.
  Expected<CodeObject> parsed = readCodeObject(good);
  ASSERT_TRUE(parsed.ok());
  uint64_t kdAt = parsed->kernels[0].descriptorAddr;
  // The descriptor's file offset: the .rodata segment maps 1:1 here
  // (vaddr == offset for the first PT_LOAD).
  ASSERT_LT(kdAt + 24, good.size());
  std::vector<uint8_t> badEntry(good);
  int64_t far = int64_t(1) << 40;
  std::memcpy(&badEntry[kdAt + 16], &far, 8);
  co = readCodeObject(badEntry);
  ASSERT_FALSE(co.ok());
  EXPECT_NE(co.status().message().find("entry point"), std::string::npos)
      << co.status().message();

  // Sizes no gfx906 dispatch has are refused before anything is allocated.
  KernelDescriptor kd = parsed->kernels[0].kd;
  kd.privateSegmentFixedSize = 131057;
  Status s = checkDescriptor("k", kd);
  EXPECT_EQ(s.code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(s.message(), "kernel 'k': private segment of 131057 bytes per "
                         "work-item, gfx906 has at most 131056");
  kd = parsed->kernels[0].kd;
  kd.kernargSize = 1u << 31;
  s = checkDescriptor("k", kd);
  EXPECT_EQ(s.message(), "kernel 'k': kernarg segment of 2147483648 bytes, "
                         "the simulator takes at most 65536");
}
