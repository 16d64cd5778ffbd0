//===- Files.h - Whole-file reads with errno messages -----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. Reads a file into memory, reporting the system's reason on
// failure (NotFound when it does not exist, IoError otherwise).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_FILES_H
#define FA_LIB_FILES_H

#include "fa/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fa {
namespace detail {

/// Reads all of `path`; `what` names it in errors ("code object").
Expected<std::vector<uint8_t>> readFileBytes(const std::string &path,
                                             const std::string &what);

/// The folder part of `path` with a trailing '/', or "" for a bare name.
std::string parentFolder(const std::string &path);

} // namespace detail
} // namespace fa

#endif // FA_LIB_FILES_H
