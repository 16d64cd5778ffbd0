// The host target's kernel, lowered as fac does it (explicit 64x32 tiles,
// without fa-pad-lds so that the LDS offsets are the unpadded ones).

// Nothing to lower, or a gpu op the emulator has no callback for.

//--- attention.mlir

// Only LLVM dialect is left: the gpu.module, the container attribute and the
// host-side launch function are gone.

// The kernel body: the ABI's arguments with each memref expanded to
// (allocated, aligned, offset, size, stride), then the LDS block as one more
// such memref, then the fa_host_env pointer. It is not exported.
// Q 64x64, K and V 32x64, P 64x32 halves: 20480 bytes.
//
// Workgroup attributions (one 1-D buffer per LDS slot: Q, K, V, P) are
// views of the LDS block at 16-byte aligned offsets (Q at 0 is the block
// itself).
//
// Thread and block ids are env fields 5 and 6.
//
// Every LDS access first reports itself through env->lds_access (field 4):
// (emu, address, bytes, is_write). Here the 16-byte store of the Q copy.
//
// In the KV loop, the K copy comes first (Q and K need one barrier between
// them and their reader, not one each).
//
// gpu.barrier: an indirect call through env->barrier (field 2).
//
// The V copy after that barrier (last iteration's P·V read V's slot): V is
// pair-interleaved, two keys' rows in one 32-byte store.
//
// S = Q·Kᵀ without another barrier: a reported 4-byte read (is_write = 0)
// right before each load of a pair of Q (and of K).
//
// gpu.shuffle: env->shuffle (field 3) on the f32's bits, with the offset,
// the wave width and the mode (0: xor).
//
// P is written to LDS (2-byte reported writes), the second barrier, then
// P·V reads pairs of P and pairs of V back.

// The exported entry: `void <kernel>_host(const uint64_t *args,
// fa_host_env *env)` reads the 44 ABI words, takes the LDS block from
// env->lds (field 1) and calls the body.
func.func @causal_lse(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v causal scale(0.125) : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

//--- no-kernels.mlir

module {
  func.func @attention(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
    return %o : tensor<1x8x128x64xf16>
  }
}

//--- unsupported.mlir

module attributes {gpu.container_module} {
  gpu.module @fa_kernels {
    gpu.func @k(%out: memref<?xi32>) kernel {
      %lane = gpu.lane_id
      gpu.return
    }
  }
}
