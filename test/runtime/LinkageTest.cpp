//===- LinkageTest.cpp - What the runtime's shared objects link and hold --===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Reads the DT_NEEDED entries of libfa_runtime.so and libfa_validate.so
// straight from their ELF dynamic sections (no ldd, which would also list
// indirect dependencies of the test environment) and checks that only the
// C/C++ runtime is needed (and, by fa::validate, fa::runtime). Reads their
// dynamic symbol tables to check the split of the two libraries: no symbol
// of the validation harness is defined by libfa_runtime.so, each is by
// libfa_validate.so, and libfa_validate.so needs nothing of fa::runtime's
// internals (fa::detail), only its API.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <elf.h>
#include <string_view>

using namespace fa;

namespace {

/// The section headers of ELF file `f`; empty if they do not fit in it.
std::vector<Elf64_Shdr> sectionHeaders(const std::vector<uint8_t> &f) {
  Elf64_Ehdr h;
  if (f.size() < sizeof(h))
    return {};
  std::memcpy(&h, f.data(), sizeof(h));
  if (h.e_shentsize != sizeof(Elf64_Shdr) ||
      h.e_shoff + uint64_t(h.e_shnum) * sizeof(Elf64_Shdr) > f.size())
    return {};
  std::vector<Elf64_Shdr> sections(h.e_shnum);
  for (size_t i = 0; i < h.e_shnum; ++i)
    std::memcpy(&sections[i], f.data() + h.e_shoff + i * h.e_shentsize,
                sizeof(Elf64_Shdr));
  return sections;
}

std::vector<std::string> neededLibraries(const std::vector<uint8_t> &f) {
  std::vector<std::string> needed;
  std::vector<Elf64_Shdr> sections = sectionHeaders(f);
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

/// A dynamic symbol: its name, demangled where it is a C++ name, and whether
/// the file defines it (else it is an undefined reference to another).
struct DynamicSymbol {
  std::string name;
  bool defined;
};

std::vector<DynamicSymbol> dynamicSymbols(const std::vector<uint8_t> &f) {
  std::vector<DynamicSymbol> symbols;
  std::vector<Elf64_Shdr> sections = sectionHeaders(f);
  for (const Elf64_Shdr &s : sections) {
    if (s.sh_type != SHT_DYNSYM || s.sh_link >= sections.size() ||
        s.sh_offset + s.sh_size > f.size())
      continue;
    const Elf64_Shdr &strtab = sections[s.sh_link];
    for (size_t off = sizeof(Elf64_Sym); off + sizeof(Elf64_Sym) <= s.sh_size;
         off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, f.data() + s.sh_offset + off, sizeof(sym));
      if (sym.st_name >= strtab.sh_size)
        continue;
      const char *raw = reinterpret_cast<const char *>(
          f.data() + strtab.sh_offset + sym.st_name);
      int status = 0;
      char *demangled = abi::__cxa_demangle(raw, nullptr, nullptr, &status);
      symbols.push_back(
          {status == 0 ? demangled : raw, sym.st_shndx != SHN_UNDEF});
      std::free(demangled);
    }
  }
  return symbols;
}

void expectOnlySystemLibraries(const char *path,
                               const std::vector<std::string> &needed,
                               const std::vector<const char *> &alsoAllowed) {
  std::vector<const char *> allowed = {
      "libc.so",  "libstdc++.so", "libm.so",   "libgcc_s.so", "libpthread.so",
      "libdl.so", "ld-linux",     "libc++.so", "libc++abi.so"};
  allowed.insert(allowed.end(), alsoAllowed.begin(), alsoAllowed.end());
  for (const std::string &lib : needed) {
    std::string lower = lib;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    EXPECT_EQ(lower.find("llvm"), std::string::npos) << path << ": " << lib;
    EXPECT_EQ(lower.find("mlir"), std::string::npos) << path << ": " << lib;
    bool ok = std::any_of(allowed.begin(), allowed.end(),
                          [&](const char *a) { return lib.rfind(a, 0) == 0; });
    EXPECT_TRUE(ok) << path << ": unexpected dependency " << lib;
  }
}

TEST(LinkageTest, RuntimeNeedsNoLlvmOrMlir) {
  std::vector<std::string> needed =
      neededLibraries(test::readBytes(FA_TEST_RUNTIME_LIBRARY));
  ASSERT_FALSE(needed.empty())
      << "no DT_NEEDED found in " << FA_TEST_RUNTIME_LIBRARY;
  expectOnlySystemLibraries(FA_TEST_RUNTIME_LIBRARY, needed, {});
}

TEST(LinkageTest, ValidateNeedsTheRuntimeAndNoLlvmOrMlir) {
  std::vector<std::string> needed =
      neededLibraries(test::readBytes(FA_TEST_VALIDATE_LIBRARY));
  EXPECT_TRUE(std::any_of(
      needed.begin(), needed.end(),
      [](const auto &lib) { return lib.rfind("libfa_runtime.so", 0) == 0; }))
      << FA_TEST_VALIDATE_LIBRARY << " does not need libfa_runtime.so";
  expectOnlySystemLibraries(FA_TEST_VALIDATE_LIBRARY, needed,
                            {"libfa_runtime.so"});
}

/// The functions of the validation harness (fa/Reference.h, Inputs.h,
/// Metrics.h, Golden.h, Validate.h, DeviceReference.h, PagedVarlen.h).
const char *const kValidationFunctions[] = {
    // Reference.h
    "fa::checkShape", "fa::checkProblem", "fa::referenceAttentionF64",
    "fa::referenceAttentionF32", "fa::naiveAttention",
    // Inputs.h
    "fa::distributionName", "fa::parseDistribution", "fa::generateInputs",
    // Metrics.h
    "fa::compareOutputs", "fa::compareLse", "fa::magnitudeFloor",
    "fa::compareScaled", "fa::cosineSimilarity", "fa::scaledThreshold",
    "fa::defaultCriteria", "fa::judge",
    // Golden.h
    "fa::loadGoldenCase",
    // Validate.h
    "fa::checkLayout", "fa::validationMemory", "fa::hostMemoryAvailable",
    "fa::checkMemory", "fa::checkGoldenMatchesKernel", "fa::validateKernel",
    "fa::attentionFlops", "fa::benchmarkKernel", "fa::kernelProblem",
    // DeviceReference.h
    "fa::referenceKindName", "fa::parseReferenceKind", "fa::useDeviceReference",
    "fa::deviceReferenceSource", "fa::compileDeviceReference",
    "fa::deviceReferenceAttention",
    // PagedVarlen.h
    "fa::PagedProblem::qElements", "fa::PagedProblem::cacheElements",
    "fa::PagedProblem::lseElements", "fa::VarlenProblem::fromLengths",
    "fa::VarlenProblem::qElements", "fa::VarlenProblem::kvElements",
    "fa::VarlenProblem::lseElements", "fa::checkPagedProblem",
    "fa::checkPagedData", "fa::checkVarlenProblem", "fa::checkVarlenData",
    "fa::generatePagedProblem", "fa::generateVarlenProblem",
    "fa::generatePagedInputs", "fa::generateVarlenInputs",
    "fa::poisonUnreadCacheRows", "fa::referencePagedAttentionF64",
    "fa::naivePagedAttention", "fa::referenceVarlenAttentionF64",
    "fa::naiveVarlenAttention", "fa::gatherPagedSequences",
    "fa::gatherVarlenSequences"};

/// True if the demangled `symbol` is function `function` (any overload;
/// "fa::f(int)", or "fa::f[abi:cxx11](int)" for one returning std::string).
bool isFunction(const std::string &symbol, std::string_view function) {
  return symbol.size() > function.size() &&
         symbol.compare(0, function.size(), function) == 0 &&
         (symbol[function.size()] == '(' || symbol[function.size()] == '[');
}

bool isValidationFunction(const std::string &symbol) {
  return std::any_of(
      std::begin(kValidationFunctions), std::end(kValidationFunctions),
      [&](const char *function) { return isFunction(symbol, function); });
}

TEST(LinkageTest, RuntimeHoldsNoValidationCode) {
  std::vector<DynamicSymbol> symbols =
      dynamicSymbols(test::readBytes(FA_TEST_RUNTIME_LIBRARY));
  ASSERT_FALSE(symbols.empty())
      << "no dynamic symbols found in " << FA_TEST_RUNTIME_LIBRARY;
  for (const DynamicSymbol &s : symbols)
    EXPECT_FALSE(s.defined && isValidationFunction(s.name))
        << FA_TEST_RUNTIME_LIBRARY << " defines " << s.name
        << ", which belongs to fa::validate";
}

TEST(LinkageTest, ValidateDefinesTheHarnessOverThePublicApi) {
  std::vector<DynamicSymbol> symbols =
      dynamicSymbols(test::readBytes(FA_TEST_VALIDATE_LIBRARY));
  ASSERT_FALSE(symbols.empty())
      << "no dynamic symbols found in " << FA_TEST_VALIDATE_LIBRARY;
  // Each name of the list is a function libfa_validate.so defines (which
  // also keeps the list above true to the headers).
  for (const char *function : kValidationFunctions)
    EXPECT_TRUE(std::any_of(symbols.begin(), symbols.end(),
                            [&](const DynamicSymbol &s) {
                              return s.defined && isFunction(s.name, function);
                            }))
        << FA_TEST_VALIDATE_LIBRARY << " does not define " << function;
  // What it takes from libfa_runtime.so is the API: no internal symbol.
  for (const DynamicSymbol &s : symbols)
    EXPECT_FALSE(!s.defined && s.name.rfind("fa::detail::", 0) == 0)
        << FA_TEST_VALIDATE_LIBRARY << " needs the internal symbol " << s.name;
}

} // namespace
