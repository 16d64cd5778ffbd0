//===- LinkageTest.cpp - The runtime links no LLVM or MLIR ----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Reads the DT_NEEDED entries of libfa_runtime.so straight from its ELF
// dynamic section (no ldd, which would also list indirect dependencies of
// the test environment) and checks that only the C/C++ runtime is needed.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <algorithm>
#include <cstring>
#include <elf.h>

using namespace fa;

namespace {

std::vector<std::string> neededLibraries(const std::vector<uint8_t> &f) {
  std::vector<std::string> needed;
  Elf64_Ehdr h;
  if (f.size() < sizeof(h))
    return needed;
  std::memcpy(&h, f.data(), sizeof(h));
  std::vector<Elf64_Shdr> sections(h.e_shnum);
  for (size_t i = 0; i < h.e_shnum; ++i)
    std::memcpy(&sections[i], f.data() + h.e_shoff + i * h.e_shentsize,
                sizeof(Elf64_Shdr));
  for (const Elf64_Shdr &s : sections) {
    if (s.sh_type != SHT_DYNAMIC)
      continue;
    const Elf64_Shdr &strtab = sections[s.sh_link];
    for (size_t off = 0; off + sizeof(Elf64_Dyn) <= s.sh_size;
         off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, f.data() + s.sh_offset + off, sizeof(d));
      if (d.d_tag == DT_NULL)
        break;
      if (d.d_tag == DT_NEEDED)
        needed.emplace_back(reinterpret_cast<const char *>(
            f.data() + strtab.sh_offset + d.d_un.d_val));
    }
  }
  return needed;
}

TEST(LinkageTest, RuntimeNeedsNoLlvmOrMlir) {
  std::vector<std::string> needed =
      neededLibraries(test::readBytes(FA_TEST_RUNTIME_LIBRARY));
  ASSERT_FALSE(needed.empty())
      << "no DT_NEEDED found in " << FA_TEST_RUNTIME_LIBRARY;
  const char *allowed[] = {"libc.so",     "libstdc++.so",  "libm.so",
                           "libgcc_s.so", "libpthread.so", "libdl.so",
                           "ld-linux",    "libc++.so",     "libc++abi.so"};
  for (const std::string &lib : needed) {
    std::string lower = lib;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    EXPECT_EQ(lower.find("llvm"), std::string::npos) << lib;
    EXPECT_EQ(lower.find("mlir"), std::string::npos) << lib;
    bool ok = std::any_of(std::begin(allowed), std::end(allowed),
                          [&](const char *a) { return lib.rfind(a, 0) == 0; });
    EXPECT_TRUE(ok) << "unexpected dependency " << lib;
  }
}

} // namespace
