//===- Launcher.h - AOT C launchers of compiled kernels ---------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// renderLauncher turns a compiled GPU code object and its manifest into a
// self-contained C source and header (`fac --emit=launcher`, as Triton's AOT
// compiler writes one per kernel): the code object as a byte array,
// `<p>_load` / `<p>_unload`, `<p>_kv_splits` and `<p>_workspace_size`, and a
// typed `<p>_launch` that checks the call, packs the kernel ABI's words
// (fa/KernelAbi.h) exactly as the runtime does and launches on the caller's
// stream through the vendor driver API only (HIP for gfx906, CUDA for
// sm_80 / sm_90). The manifest's facts are baked into the source as
// constants; docs/aot-launcher.md describes what is generated.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_DRIVER_LAUNCHER_H
#define FA_COMPILER_DRIVER_LAUNCHER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::fa {

struct LauncherOptions {
  /// The C identifier every generated name starts with; empty: the
  /// attention kernel's name, made an identifier.
  std::string prefix;
  /// The header's file name, as the source includes it ("attn.h").
  std::string headerName;
};

struct LauncherFiles {
  std::string source;
  std::string header;
};

/// The C launcher of `codeObject`, described by `manifestJson` (what
/// fa::compile returned for it). Fails, saying why, for a target that is not
/// a GPU, a module that is not one attention kernel (with its combine
/// kernel), a paged or varlen kernel (ABI versions 3 and 4, which the
/// launcher does not implement), or a prefix that is not a C identifier.
llvm::Expected<LauncherFiles> renderLauncher(llvm::StringRef codeObject,
                                             llvm::StringRef manifestJson,
                                             const LauncherOptions &options);

} // namespace mlir::fa

#endif // FA_COMPILER_DRIVER_LAUNCHER_H
