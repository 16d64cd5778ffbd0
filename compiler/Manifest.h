//===- Manifest.h - The code object's sidecar manifest ----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Writes `<code object>.json` (docs/manifest.md): the ABI, target, tile
// config, compiler version and hashes that make a code object launchable
// without the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_MANIFEST_H
#define FA_COMPILER_MANIFEST_H

#include "compiler/KernelInfo.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::fa {

/// FNV-1a 64 of `bytes`, formatted "fnv1a64:%016x".
std::string fnv1a64(llvm::StringRef bytes);

/// The `resources` object of a kernel entry (compile-time figures).
std::string renderResourcesJson(int64_t vgprs, int64_t sgprs,
                                int64_t vgprSpills, int64_t sgprSpills,
                                int64_t scratchBytes, int64_t wavesPerSimd);

/// The manifest JSON text.
std::string renderManifest(llvm::StringRef target,
                           llvm::StringRef codeObjectFile,
                           llvm::StringRef format,
                           llvm::StringRef codeObjectBytes,
                           llvm::StringRef sourceText,
                           const std::vector<KernelInfo> &kernels,
                           llvm::StringRef symbolSuffix);

} // namespace mlir::fa

#endif // FA_COMPILER_MANIFEST_H
