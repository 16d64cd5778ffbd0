//===- CodeObjectTest.cpp - gfx906 code object metadata -------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Gfx906/CodeObject.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace mlir::fa;

TEST(Gfx906CodeObject, RejectsBytesThatAreNotElf) {
  auto r = readAmdgpuCodeObject("not an ELF file at all, just some bytes...");
  ASSERT_FALSE(bool(r));
  EXPECT_FALSE(llvm::toString(r.takeError()).empty());
}

TEST(Gfx906CodeObject, RejectsAnElfForAnotherMachine) {
  auto self = llvm::MemoryBuffer::getFile("/proc/self/exe");
  ASSERT_TRUE(bool(self));
  auto r = readAmdgpuCodeObject((*self)->getBuffer());
  ASSERT_FALSE(bool(r));
  std::string message = llvm::toString(r.takeError());
  EXPECT_NE(message.find("not an AMDGPU code object (e_machine 62)"),
            std::string::npos)
      << message;
}
