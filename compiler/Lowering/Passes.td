//===- Passes.td - fa lowering passes ----------------------*- tablegen -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The passes that leave the tile and memory levels: fa-lower-to-gpu (Level
// 1b -> gpu dialect, Level 2) and fa-gpu-to-host (gpu dialect -> x86-64
// functions for the host emulator).
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_LOWERING_PASSES_TD
#define FA_COMPILER_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def FaLowerToGpuPass : Pass<"fa-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower tile-level attention grids to gpu.func kernels";
  let description = [{
    Turns every tile grid produced by `fa-tile` into a `gpu.func` kernel in
    `gpu.module @fa_kernels` and a host-side `gpu.launch_func`:

    1. the kernel takes the argument list of runtime/include/fa/KernelAbi.h
       (flat buffers Q, K, V, O, LSE; sizes B, Hq, Hkv, Lq, Lk; strides);
    2. memory (Level 1b, made explicit by fa-promote): each LDS storage
       slot becomes one 1-D workgroup attribution addressed through its
       buffers' layouts; fa.copy_tile is a cooperative copy (16-byte vector
       loads where base and strides allow; a K/V loop is versioned on that
       condition, the other version copying scalars), fa.write_tile writes
       fragments, and the barriers fa-promote placed are kept as they are;
    3. threads: a TR x TC grid owns RM x (C/TC) fragments of S and O; row
       max/sum are in-thread reductions plus xor shuffles over TC lanes;
       fa.lds_dot is a per-thread loop over pairs of the reduction
       dimension (f32 FMAs; one 32-bit load per contiguous pair).
    Un-promoted tile IR (fa.load_tile, fa.tile_dot) is an error.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark when there is nothing to lower">,
    Option<"shareRows", "share-rows", "std::string", /*default=*/"\"auto\"",
           "The lhs rows of an LDS product read once per thread row and "
           "rotated around its 16 lanes (gpu.shuffle idx, fa.row_rotate; "
           "DPP row_ror on gfx906) instead of by every lane: auto (the "
           "target's choice), on, off">,
    Option<"testPlantBug", "test-plant-bug", "std::string", /*default=*/"\"\"",
           "Test only: plant this bug (PlantedBugs.h) in the kernel">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect"
  ];
}

def FaMergeGuardsPass : Pass<"fa-merge-guards", "::mlir::ModuleOp"> {
  let summary = "Merge the scf.if guards of one block that test one condition";
  let description = [{
    After fa-lower-to-gpu and CSE: fa-lower-to-gpu guards each tile load
    with its rows' bound (an scf.if per fa.load_tile, its elements or
    zeros), so a split-KV combine trip tests one bound twice per split.
    An scf.if B joins an earlier scf.if A of its block with the same
    condition value when B's operands from outside are defined above A or
    by ops between them that are free of memory effects and regions and do
    not use A (those move above A). The scan from A stops at an op that may
    write memory or whose effects are unknown; B moves above reads only if
    it writes nothing. The merged scf.if runs A's then B's ops in each
    region and returns A's then B's results. gfx906: one s_and_saveexec /
    s_cbranch_execz / s_or_b64 per merged guard instead of one per load.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def FaGpuToHostPass : Pass<"fa-gpu-to-host", "::mlir::ModuleOp"> {
  let summary = "Lower gpu kernels to x86-64 functions for the host emulator";
  let description = [{
    The host emulation target. Each `gpu.func` kernel becomes a function
    the runtime's emulator calls once per (workgroup, thread):
    thread and block ids come from the `fa_host_env` argument, barriers and
    shuffles are calls through its callbacks, LDS is a per-workgroup block
    whose every access is reported to `env->lds_access` (the race
    checker's hook). The module is lowered to the LLVM dialect and gets one
    exported entry point per kernel, `void <kernel>_host(const uint64_t
    *args, fa_host_env *env)` (runtime/include/fa/KernelAbi.h). The gpu
    modules and host-side launch functions are removed.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::func::FuncDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::cf::ControlFlowDialect"
  ];
}

#endif // FA_COMPILER_LOWERING_PASSES_TD
