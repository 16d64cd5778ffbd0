//===- TestUtil.h - Shared helpers of the runtime tests ---------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Paths of fixture kernels and golden cases, scratch folders, whole-file
// I/O, and a gtest helper that prints a Status when it is not ok.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TEST_RUNTIME_TESTUTIL_H
#define FA_TEST_RUNTIME_TESTUTIL_H

#include "fa/Runtime.h"
#include "fa/Validate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fa {
namespace test {

/// `<build>/test/runtime/kernels/<name>.so`.
std::string fixturePath(const std::string &name);
/// `test/data/golden/<name>`.
std::string goldenPath(const std::string &name);
/// The six golden case names.
std::vector<std::string> goldenCases();

/// A fresh empty folder, removed with its contents on destruction.
class ScratchDir {
public:
  ScratchDir();
  ~ScratchDir();
  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }

private:
  std::string dir;
};

std::vector<uint8_t> readBytes(const std::string &path);
void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes);
void writeText(const std::string &path, const std::string &text);

/// The manifest of a fixture, parsed.
Manifest fixtureManifest(const std::string &name);

/// Copies `bytes` to `dir/name` and writes a manifest for them made from
/// `manifest` with the code object fields (file, bytes, hash) updated.
std::string writeCodeObject(const ScratchDir &dir, const std::string &name,
                            const std::vector<uint8_t> &bytes,
                            Manifest manifest);

/// The host device; fails the test if it does not open.
Device hostDevice();

/// The fixture kernel `name` (fixturePath) loaded on the host device, and
/// its one kernel; each fails the test if it does not load.
Module loadModule(const std::string &name);
Kernel loadKernel(const std::string &name);

/// The texts of a validation report's failed checks, one a line (for a
/// test's failure message).
std::string failures(const ValidationReport &r);

/// The message of packing `args` for kernel `info` on the host device,
/// which must fail with InvalidArgument (checked; "ok" if it packed).
std::string packError(const KernelInfo &info, const AttentionArgs &args,
                      const KernelInfo *combine = nullptr);

} // namespace test
} // namespace fa

/// Asserts that a Status or Expected is ok, printing the error otherwise.
#define FA_ASSERT_OK(expr)                                                     \
  do {                                                                         \
    const auto &faAssertValue = (expr);                                        \
    ASSERT_TRUE(faAssertValue.ok()) << ::fa::test::describe(faAssertValue);    \
  } while (0)

namespace fa {
namespace test {
inline std::string describe(const Status &s) { return s.toString(); }
template <typename T> std::string describe(const Expected<T> &e) {
  return e.status().toString();
}
} // namespace test
} // namespace fa

#endif // FA_TEST_RUNTIME_TESTUTIL_H
