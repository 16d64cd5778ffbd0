//===- Files.h - Whole-file reads with errno messages -----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. Reads a file into memory, reporting the system's reason on
// failure (NotFound when it does not exist, IoError otherwise): code objects
// and manifests (fa::runtime), golden vectors (fa::validate).
//
// Header-only, so that each of the two libraries compiles its own copy and
// fa::validate links no internal symbol of fa::runtime; hidden visibility
// keeps the functions out of both shared objects' exports.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_FILES_H
#define FA_LIB_FILES_H

#include "fa/Status.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

#pragma GCC visibility push(hidden)

namespace fa {
namespace detail {

/// Reads all of `path`; `what` names it in errors ("code object").
inline Expected<std::vector<uint8_t>> readFileBytes(const std::string &path,
                                                    const std::string &what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    return Status::error(
               err == ENOENT ? ErrorCode::NotFound : ErrorCode::IoError,
               "cannot read " + what + " '" + path + "': " + std::strerror(err))
        .withFile(path);
  }
  if (S_ISDIR(st.st_mode))
    return Status::error(ErrorCode::IoError, "cannot read " + what + " '" +
                                                 path + "': it is a directory")
        .withFile(path);
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    int err = errno;
    return Status::error(ErrorCode::IoError, "cannot open " + what + " '" +
                                                 path +
                                                 "': " + std::strerror(err))
        .withFile(path);
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    bytes.insert(bytes.end(), chunk, chunk + n);
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed)
    return Status::error(ErrorCode::IoError,
                         "error while reading " + what + " '" + path + "'")
        .withFile(path);
  return bytes;
}

/// The folder part of `path` with a trailing '/', or "" for a bare name.
inline std::string parentFolder(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

} // namespace detail
} // namespace fa

#pragma GCC visibility pop

#endif // FA_LIB_FILES_H
