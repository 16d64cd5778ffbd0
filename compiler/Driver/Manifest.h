//===- Manifest.h - The code object's sidecar manifest ----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Fills the runtime's manifest (runtime/include/fa/Manifest.h, the one
// writer and the one FNV-1a hash; docs/manifest.md) from the compiler's
// kernel facts: the ABI, target, tile config, compiler version and hashes
// that make a code object launchable without the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_DRIVER_MANIFEST_H
#define FA_COMPILER_DRIVER_MANIFEST_H

#include "compiler/Analysis/KernelInfo.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::fa {

/// The manifest JSON text of `codeObjectBytes` (written as
/// `codeObjectFile`), compiled from `sourceText`. Fails when the text would
/// not read back as written: a file name that is not UTF-8 (JSON text is),
/// or a kernel fact outside what the runtime accepts.
llvm::Expected<std::string>
renderManifest(llvm::StringRef target, llvm::StringRef codeObjectFile,
               llvm::StringRef format, llvm::StringRef codeObjectBytes,
               llvm::StringRef sourceText,
               const std::vector<KernelInfo> &kernels,
               llvm::StringRef symbolSuffix);

} // namespace mlir::fa

#endif // FA_COMPILER_DRIVER_MANIFEST_H
