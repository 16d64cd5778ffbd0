//===- ReplayMain.cpp - Replays fuzz inputs without libFuzzer -------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The main() of a fuzz target in a normal build (no libFuzzer): every
// argument is a file or a folder of files, and each file is passed once to
// LLVMFuzzerTestOneInput. ctest runs the seed corpora and the regression
// inputs through it, so a crash that was fixed stays fixed. A crash here is
// a crash of the target (the process dies); anything else returns 0.
// Arguments starting with '-' (libFuzzer's flags, such as -runs=0, which
// the same test passes to a libFuzzer build) are ignored.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
    __attribute__((weak));

namespace fs = std::filesystem;

static bool runFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read '%s'\n", path.c_str());
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
  // A copy of exactly `size` bytes, as libFuzzer passes them, so reads past
  // the end are caught by the sanitizers.
  auto *data = new uint8_t[bytes.size() ? bytes.size() : 1];
  std::copy(bytes.begin(), bytes.end(), data);
  LLVMFuzzerTestOneInput(data, bytes.size());
  delete[] data;
  return true;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  size_t count = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-')
      continue;
    fs::path arg = argv[i];
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry &e : fs::directory_iterator(arg, ec))
        // Dot files (.gitkeep) keep empty folders in git; not inputs.
        if (e.is_regular_file() && e.path().filename().string()[0] != '.')
          files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const fs::path &f : files)
        ok &= runFile(f), ++count;
    } else {
      ok &= runFile(arg), ++count;
    }
  }
  std::fprintf(stderr, "replay: %zu inputs, no crash\n", count);
  return ok ? 0 : 1;
}
