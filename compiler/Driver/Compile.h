//===- Compile.h - Compiling attention is a library call --------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa::compile takes attention IR (MLIR text or a parsed module), a target
// and the options `fac` has, and returns the code object bytes, the
// manifest, the report text and the diagnostics (remarks, warnings, errors
// with their source locations). It holds everything fac does between
// parsing its command line and writing files: the kernel pipeline, the
// target's backend, and the gfx906 retries judged by the backend (spills:
// fetch-ahead=in-block, then smaller tiles; v_dot2 where it costs waves).
// `fac` is a thin main over it; fa_compile.h is the C API over it.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_DRIVER_COMPILE_H
#define FA_COMPILER_DRIVER_COMPILE_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::fa {

/// What to compile for. Every field is one of fac's options (same name,
/// same values, same default); setCompileOption sets them by that name.
struct CompileOptions {
  /// gfx906, sm_90, sm_80 or host.
  std::string target = "gfx906";
  /// Stop at: mlir (gpu dialect), llvm (LLVM IR), asm, obj, ptx, cubin;
  /// empty or launcher (GPU targets): the code object with its manifest,
  /// from which fac --emit=launcher writes its C launcher (Launcher.h).
  std::string emit;
  /// Tile configuration; 0 lets fa-tile choose.
  int64_t blockM = 0, blockN = 0, waves = 0, stages = 0;
  /// With stages=2: auto, next-block or in-block.
  std::string fetchAhead = "auto";
  /// Width of GPU index arithmetic, 32 or 64; 0: the default (32). The
  /// host target accepts only the default.
  unsigned indexBits = 0;
  bool padLds = true;
  /// K and V in one LDS slot: auto, on, off.
  std::string kvShared = "auto";
  /// V pair-interleaved in LDS.
  bool pairRhs = true;
  /// 16-bit tiles in LDS as f32: auto, on, off.
  std::string widenLds = "auto";
  /// gfx906 v_dot2_f32_f16 in Q*K^T: auto, on, off.
  std::string dot2 = "auto";
  /// The lhs rows of the LDS products rotated around each thread row
  /// (fa-lower-to-gpu share-rows): auto, on, off.
  std::string shareRows = "auto";
  /// Split-KV (flash-decoding; fa-tile kv-splits): off or runtime.
  std::string kvSplits = "auto";
  /// GQA packing (fa-tile gqa-pack): off or on.
  std::string gqaPack = "off";
  /// The split-KV combine's fa.merge_splits (fa-tile merge-splits): auto
  /// (the target's choice), on, off.
  std::string mergeSplits = "auto";
  /// Validation layer 2 (fa-tile trace): the kernel writes one query row's
  /// running max, sum and output after every K/V block to a trace buffer
  /// (KernelAbi.h, "Trace"); dense kernels only.
  bool trace = false;
  bool allowBf16 = false;
  /// gfx906: fail where the kept kernel still spills to scratch (after the
  /// retries), instead of keeping it with a remark.
  bool forbidSpills = false;
  /// The tile configuration, LDS budget and the backend's figures.
  bool report = false;
  /// The code object's file name as the manifest records it (fac: the
  /// basename of -o). Empty: "attention" with the format's extension.
  std::string codeObjectName;
  /// Test only: a bug to plant (compiler/Testing/PlantedBugs.h).
  std::string plantBug;
};

/// Sets the option fac spells `--<name>` to `value` ("block-m", "64"):
/// the one mapping from option names to fields, for the C API and tools.
/// "o" is not an option here; "name" sets codeObjectName.
llvm::Error setCompileOption(CompileOptions &options, llvm::StringRef name,
                             llvm::StringRef value);

/// The option errors fac reports before reading any input (an unknown
/// target, --emit, --index-bits, --dot2 value, or --emit=ptx on a target
/// that is not NVIDIA), in fac's order and words.
llvm::Error validateCompileOptions(const CompileOptions &options);

/// One message of a compilation, in the order it was produced.
struct CompileDiagnostic {
  enum class Severity { Note, Remark, Warning, Error };
  Severity severity = Severity::Error;
  /// Located (from the IR): "file:line:col: remark: ..." with the source
  /// line and a caret, as mlir-opt prints it. Otherwise the bare message
  /// of the driver ("the input has no fa.attention to compile"), which a
  /// tool prefixes ("fac: error: ").
  std::string text;
  bool located = false;
};

/// "note", "remark", "warning" or "error".
llvm::StringRef severityName(CompileDiagnostic::Severity severity);

struct CompileResult {
  bool ok = false;
  /// The code object (host: ELF shared object, gfx906: hsaco, sm_*: cubin
  /// or PTX), or what --emit asked for (text, or the object file).
  std::string output;
  /// What `output` is: elf-shared-object, hsaco, cubin, ptx, mlir, llvm,
  /// asm or obj.
  std::string format;
  /// The manifest JSON of a code object (docs/manifest.md); empty for an
  /// --emit output.
  std::string manifest;
  /// The backend's report (report=true): what fac prints on stdout.
  std::string report;
  std::vector<CompileDiagnostic> diagnostics;

  /// The first error's text; empty when there is none.
  std::string firstError() const;
};

/// Parses `source` (MLIR text; diagnostics name `sourceName`) and compiles
/// it. Never aborts on bad input: errors are diagnostics and ok = false.
CompileResult compile(llvm::StringRef source, llvm::StringRef sourceName,
                      const CompileOptions &options);

/// Compiles a parsed module (left unchanged; its context must have the fa
/// dialects registered: registerFaDialects). `sourceText` is what the
/// manifest hashes as the source; empty: the module's printed form.
CompileResult compile(ModuleOp module, llvm::StringRef sourceText,
                      const CompileOptions &options);

} // namespace mlir::fa

#endif // FA_COMPILER_DRIVER_COMPILE_H
