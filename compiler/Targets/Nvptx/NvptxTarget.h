//===- NvptxTarget.h - The sm_90 / sm_80 backend -----------------*- C++
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// NVIDIA targets: the Level 2 gpu.module goes through the upstream NVVM
// lowering to LLVM IR and LLVM's NVPTX backend to PTX (no CUDA toolkit
// needed); when ptxas is found, it assembles the PTX to a cubin and its
// verbose report gives the registers, spills and shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TARGETS_NVPTX_NVPTX_TARGET_H
#define FA_COMPILER_TARGETS_NVPTX_NVPTX_TARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::fa {

/// The kernels of `module`'s gpu.modules as an LLVM-dialect module with NVVM
/// ops, ready for translation. f32 exp2/log2 become the NVVM intrinsics
/// (ex2.approx / lg2.approx): no libdevice. With `indexBits` = 32, index
/// arithmetic (addresses, loop counters, the memref descriptors' offset,
/// size and stride parameters) is 32-bit; the ABI words stay 64-bit and the
/// runtime refuses problems whose element offsets do not fit.
FailureOr<OwningOpRef<ModuleOp>> lowerToNvvm(ModuleOp module,
                                             unsigned indexBits);

/// Moves every shared-memory (addrspace 3) global of `module` into one
/// dynamic shared-memory array, so a kernel may use more than the 48 KiB a
/// static allocation allows (the launch opts in). Each global is placed
/// after those already placed for the functions that use it, so kernels
/// that share no global each start at offset 0 (the split-KV combine's
/// merge scratch does not sit behind the split kernel's tiles). Returns the
/// bytes each function needs: the end of the last global it uses (a
/// function that uses none, e.g. the loop-only combine, is absent).
std::map<std::string, int64_t> useDynamicSharedMemory(llvm::Module &module);

/// What ptxas reports for one kernel (`ptxas -v`).
struct PtxasResources {
  std::string kernel;
  int64_t registers = 0, spillStoreBytes = 0, spillLoadBytes = 0;
  int64_t stackBytes = 0, sharedBytes = 0;
};

/// The ptxas executable ($FA_PTXAS, PATH, then /usr/local/cuda/bin), or ""
/// (also when FA_PTXAS=none).
std::string findPtxas();

/// Assembles `ptx` for `arch` (e.g. "sm_90") with ptxas into `cubin`;
/// fills `resources` from its verbose output. Errors quote ptxas.
llvm::Error assemblePtx(llvm::StringRef ptxas, llvm::StringRef ptx,
                        llvm::StringRef arch, std::string &cubin,
                        std::vector<PtxasResources> &resources);

/// Parses `ptxas -v` output.
std::vector<PtxasResources> parsePtxasReport(llvm::StringRef text);

/// Blocks per SM allowed by registers and shared memory on sm_80/sm_90
/// (65536 registers, 2048 threads, 228 KiB shared per SM), an estimate.
int64_t nvidiaBlocksPerSm(const PtxasResources &r, int64_t threads,
                          int64_t sharedBytes);

} // namespace mlir::fa

#endif // FA_COMPILER_TARGETS_NVPTX_NVPTX_TARGET_H
