//===- Files.cpp - Whole-file reads with errno messages -------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements whole-file reads for code objects, manifests and
// golden vectors.
//
//===----------------------------------------------------------------------===//

#include "core/Files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

using namespace fa;

Expected<std::vector<uint8_t>> detail::readFileBytes(const std::string &path,
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

std::string detail::parentFolder(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}
