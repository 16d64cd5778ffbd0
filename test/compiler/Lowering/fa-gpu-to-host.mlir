// RUN: split-file %s %t

// The host target's kernel, lowered as fac does it (explicit 64x32 tiles,
// without fa-pad-lds so that the LDS offsets are the unpadded ones).
// RUN: fa-opt %t/attention.mlir --fa-tile="target=host block-m=64 block-n=32" --fa-promote --canonicalize --cse --fa-lower-to-gpu=share-rows=off --canonicalize --cse --fa-gpu-to-host | FileCheck %s

// Nothing to lower, or a gpu op the emulator has no callback for.
// RUN: fa-opt %t/no-kernels.mlir --fa-gpu-to-host -verify-diagnostics
// RUN: fa-opt %t/unsupported.mlir --fa-gpu-to-host -verify-diagnostics
// RUN: fa-opt %t/not-fa.mlir --fa-gpu-to-host -verify-diagnostics

//--- attention.mlir

// Only LLVM dialect is left: the gpu.module, the container attribute and the
// host-side launch function are gone.
// CHECK: module {
// CHECK-NOT: gpu.
// CHECK-NOT: func.func

// The kernel body: the ABI's arguments with each memref expanded to
// (allocated, aligned, offset, size, stride), then the LDS block as one more
// such memref, then the fa_host_env pointer. It is not exported.
// CHECK-LABEL: llvm.func internal @causal_lse_kernel_body
// CHECK-SAME: ({{((%[^:]+: !llvm.ptr, ){2}(%[^:]+: i64, ){3}){5}(%[^:]+: i64, ){19}%[^:]+}}: !llvm.ptr, %[[LDS:[^:]+]]: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %[[ENV:[^:]+]]: !llvm.ptr)
// Q 64x64, K and V 32x64, P 64x32 halves: 20480 bytes.
// CHECK-SAME: attributes {fa.lds_bytes = 20480 : i64, sym_visibility = "private"}
// CHECK-DAG: %[[C0_I32:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[C1_I32:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[C2_I32:.+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-DAG: %[[C4_I32:.+]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-DAG: %[[C8_I32:.+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-DAG: %[[C16_I32:.+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-DAG: %[[C32_I32:.+]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-DAG: %[[C64_I32:.+]] = llvm.mlir.constant(64 : i32) : i32
//
// Workgroup attributions (one 1-D buffer per LDS slot: Q, K, V, P) are
// views of the LDS block at 16-byte aligned offsets (Q at 0 is the block
// itself).
// CHECK: %[[KLDS:[^ ]+]] = llvm.getelementptr %[[LDS]][8192] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %[[VLDS:[^ ]+]] = llvm.getelementptr %[[LDS]][12288] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %[[PLDS:[^ ]+]] = llvm.getelementptr %[[LDS]][16384] : (!llvm.ptr) -> !llvm.ptr, i8
//
// env fields are read at their byte offsets in KernelAbi.h's fa_host_env
// (offsetof): thread_id at 40, block_id at 52.
// CHECK: llvm.getelementptr %[[ENV]][40] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[ENV]][52] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[ENV]][56] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[ENV]][60] : (!llvm.ptr) -> !llvm.ptr, i8
//
// Every LDS access first reports itself through env->lds_access (byte 32):
// (emu (byte 0), address, bytes, is_write). Here the 16-byte store of the Q
// copy.
// CHECK: %[[HOOK_P:[^ ]+]] = llvm.getelementptr %[[ENV]][32]
// CHECK-NEXT: %[[HOOK:[^ ]+]] = llvm.load %[[HOOK_P]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[EMU:[^ ]+]] = llvm.load %[[ENV]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call %[[HOOK]](%[[EMU]], %{{[^,]+}}, %[[C16_I32]], %[[C1_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
//
// A vector access that claims more alignment than its element's (16 bytes
// here) checks its address: if the low bits are not zero, it calls
// env->misaligned (byte 96) with (emu, address, bytes, claimed, is_write),
// and then runs with the element's alignment (x86's aligned moves would
// fault; the emulator reports instead).
// CHECK: %[[LOW:[^ ]+]] = llvm.and %[[ADDR:[^,]+]], %{{[^ ]+}} : i64
// CHECK-NEXT: %[[BAD:[^ ]+]] = llvm.icmp "ne" %[[LOW]], %{{[^ ]+}} : i64
// CHECK-NEXT: llvm.cond_br %[[BAD]], ^[[REPORT:[^,]+]], ^[[GO:[^ ]+]]
// CHECK-NEXT: ^[[REPORT]]:
// CHECK-NEXT: %[[MPTR:[^ ]+]] = llvm.inttoptr %[[ADDR]] : i64 to !llvm.ptr
// CHECK-NEXT: %[[MIS_P:[^ ]+]] = llvm.getelementptr %[[ENV]][96]
// CHECK-NEXT: %[[MIS:[^ ]+]] = llvm.load %[[MIS_P]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[EMU2:[^ ]+]] = llvm.load %[[ENV]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call %[[MIS]](%[[EMU2]], %[[MPTR]], %[[C16_I32]], %[[C16_I32]], %[[C1_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32, i32) -> ()
// CHECK-NEXT: llvm.br ^[[GO]]
// CHECK-NEXT: ^[[GO]]:
// CHECK-NOT: llvm.call
// CHECK: %[[QW:[^ ]+]] = llvm.getelementptr {{.*}}%[[LDS]][%{{[^]]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK-NEXT: llvm.store %{{[^,]+}}, %[[QW]] {alignment = 2 : i64} : vector<8xf16>, !llvm.ptr
//
// In the KV loop, the K copy comes first (Q and K need one barrier between
// them and their reader, not one each).
// CHECK-NOT: (!llvm.ptr) -> ()
// CHECK: llvm.call %{{[^(]+}}(%{{[^,]+}}, %{{[^,]+}}, %[[C16_I32]], %[[C1_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK: llvm.call %{{[^(]+}}(%{{[^,]+}}, %{{[^,]+}}, %[[C16_I32]], %[[C16_I32]], %[[C1_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32, i32) -> ()
// CHECK-NOT: llvm.call
// CHECK: %[[KW:[^ ]+]] = llvm.getelementptr {{.*}}%[[KLDS]][%{{[^]]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK-NEXT: llvm.store %{{[^,]+}}, %[[KW]] {{.*}}: vector<8xf16>, !llvm.ptr
//
// gpu.barrier: an indirect call through env->barrier (byte 16).
// CHECK-NEXT: %[[BAR_P:[^ ]+]] = llvm.getelementptr %[[ENV]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %[[BAR:[^ ]+]] = llvm.load %[[BAR_P]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[EMU2:[^ ]+]] = llvm.load %[[ENV]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call %[[BAR]](%[[EMU2]]) : !llvm.ptr, (!llvm.ptr) -> ()
//
// The V copy after that barrier (last iteration's P·V read V's slot): V is
// pair-interleaved, two keys' rows in one 32-byte store.
// CHECK-NOT: (!llvm.ptr) -> ()
// CHECK: llvm.call %{{[^(]+}}(%{{[^,]+}}, %{{[^,]+}}, %[[C32_I32]], %[[C1_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK: llvm.call %{{[^(]+}}(%{{[^,]+}}, %{{[^,]+}}, %[[C32_I32]], %{{[^,]+}}, %[[C1_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32, i32) -> ()
// CHECK-NOT: llvm.call
// CHECK: %[[VW:[^ ]+]] = llvm.getelementptr {{.*}}%[[VLDS]][%{{[^]]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK-NEXT: llvm.store %{{[^,]+}}, %[[VW]] {{.*}}: vector<16xf16>, !llvm.ptr
//
// S = Q·Kᵀ without another barrier: a reported 4-byte read (is_write = 0)
// right before each load of a pair of Q (and of K).
// CHECK-NOT: (!llvm.ptr) -> ()
// CHECK: llvm.call %{{[^(]+}}(%{{[^,]+}}, %{{[^,]+}}, %[[C4_I32]], %[[C0_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK: llvm.call %{{[^(]+}}(%{{[^,]+}}, %{{[^,]+}}, %[[C4_I32]], %[[C4_I32]], %[[C0_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32, i32) -> ()
// CHECK-NOT: llvm.call
// CHECK: %[[QR:[^ ]+]] = llvm.getelementptr {{.*}}%[[LDS]][%{{[^]]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK-NEXT: llvm.load %[[QR]] {{.*}}: !llvm.ptr -> vector<2xf16>
// CHECK: %[[KR:[^ ]+]] = llvm.getelementptr {{.*}}%[[KLDS]][%{{[^]]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK-NEXT: llvm.load %[[KR]] {{.*}}: !llvm.ptr -> vector<2xf16>
//
// gpu.shuffle: env->shuffle (byte 24) on the f32's bits, with the offset,
// the wave width and the mode (0: xor).
// CHECK: %[[SH_P:[^ ]+]] = llvm.getelementptr %[[ENV]][24] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %[[SH:[^ ]+]] = llvm.load %[[SH_P]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[EMU3:[^ ]+]] = llvm.load %[[ENV]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[BITS:[^ ]+]] = llvm.call %[[SH]](%[[EMU3]], %{{[^,]+}}, %[[C1_I32]], %[[C64_I32]], %[[C0_I32]]) : !llvm.ptr, (!llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK-NEXT: llvm.bitcast %[[BITS]] : i32 to f32
//
// P is written to LDS (2-byte reported writes), the second barrier, then
// P·V reads pairs of P and pairs of V back.
// CHECK-NOT: (!llvm.ptr) -> ()
// CHECK: llvm.call %{{[^(]+}}(%{{[^,]+}}, %{{[^,]+}}, %[[C2_I32]], %[[C1_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK-NOT: llvm.call
// CHECK: %[[PW:[^ ]+]] = llvm.getelementptr {{.*}}%[[PLDS]][%{{[^]]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK-NEXT: llvm.store %{{[^,]+}}, %[[PW]] : f16, !llvm.ptr
// CHECK: llvm.call %{{[^(]+}}(%{{[^)]+}}) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK-NOT: (!llvm.ptr) -> ()
// CHECK: llvm.call %{{[^(]+}}(%{{[^,]+}}, %{{[^,]+}}, %[[C4_I32]], %[[C0_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK: llvm.call %{{[^(]+}}(%{{[^,]+}}, %{{[^,]+}}, %[[C4_I32]], %[[C4_I32]], %[[C0_I32]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, i32, i32) -> ()
// CHECK-NOT: llvm.call
// CHECK: %[[PR:[^ ]+]] = llvm.getelementptr {{.*}}%[[PLDS]][%{{[^]]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK-NEXT: llvm.load %[[PR]] {{.*}}: !llvm.ptr -> vector<2xf16>
// CHECK-NOT: (!llvm.ptr) -> ()
// CHECK: %[[VR:[^ ]+]] = llvm.getelementptr {{.*}}%[[VLDS]][%{{[^]]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK-NEXT: llvm.load %[[VR]] {{.*}}: !llvm.ptr -> vector<2xf16>
// CHECK: llvm.return

// The exported entry: `void <kernel>_host(const uint64_t *args,
// fa_host_env *env)` reads the 44 ABI words, takes the LDS block from
// env->lds (byte 8) and calls the body.
// CHECK-LABEL: llvm.func @causal_lse_kernel_host
// CHECK-SAME: (%[[ARGS:[^:]+]]: !llvm.ptr, %[[HENV:[^:]+]]: !llvm.ptr) {
// CHECK-NEXT: %[[W0P:[^ ]+]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[W0:[^ ]+]] = llvm.load %[[W0P]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[QALLOC:[^ ]+]] = llvm.inttoptr %[[W0]] : i64 to !llvm.ptr
// CHECK-COUNT-43: llvm.load %{{[^ ]+}} : !llvm.ptr -> i64
// CHECK-NOT: llvm.getelementptr %[[ARGS]]
// CHECK: %[[LDS_P:[^ ]+]] = llvm.getelementptr %[[HENV]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %[[HLDS:[^ ]+]] = llvm.load %[[LDS_P]] : !llvm.ptr -> !llvm.ptr
// CHECK-DAG: %[[SIZE:[^ ]+]] = llvm.mlir.constant(20480 : i64) : i64
// CHECK: llvm.call @causal_lse_kernel_body(%[[QALLOC]], {{.*}}, %[[HLDS]], %[[HLDS]], %{{[^,]+}}, %[[SIZE]], %{{[^,]+}}, %[[HENV]])
// CHECK-NEXT: llvm.return
// CHECK-NOT: llvm.func
//
// The record the runtime checks the manifest against: fa_host_info as 12
// words (KernelAbi.h): ABI version 1 | 96-byte record << 32, 44 words |
// 104-byte env << 32, 20480 bytes of LDS, 256 threads | wave 64 << 32, f16
// (2) | D 64 << 32, block_m 64 | block_n 32 << 32, has_lse 1 | 64-bit
// indices << 32, static sizes (-1, 8, 2, -1, -1).
// CHECK: llvm.mlir.global external constant @causal_lse_kernel_host_info(dense<[412316860417, 446676598828, 20480, 274877907200, 274877906946, 137438953536, 274877906945, -1, 8, 2, -1, -1]> : tensor<12xi64>) {{{.*}}alignment = 8 : i64} : !llvm.array<12 x i64>
func.func @causal_lse(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v causal scale(0.125) : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

//--- no-kernels.mlir

// expected-error @+1 {{no gpu kernels to lower to the host target (run fa-lower-to-gpu first)}}
module {
  func.func @attention(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
    return %o : tensor<1x8x128x64xf16>
  }
}

//--- unsupported.mlir

module attributes {gpu.container_module} {
  gpu.module @fa_kernels {
    gpu.func @k(%out: memref<?xi32>) kernel attributes {fa.head_dim = 64 : i64, fa.scale = 1.250000e-01 : f32, fa.static_sizes = array<i64: -1, -1, -1, -1, -1>, fa.tile = #fa.tile<target = "host", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>} {
      // expected-error @+1 {{'gpu.lane_id' op is not supported by the host emulation target}}
      %lane = gpu.lane_id
      gpu.return
    }
  }
}

//--- not-fa.mlir

// The fa_host_info record needs the kernel's fa.* attributes (what fac's
// manifest says too).
module attributes {gpu.container_module} {
  gpu.module @fa_kernels {
    // expected-error @+1 {{'gpu.func' op is not an fa kernel (missing fa.* attributes)}}
    gpu.func @k(%out: memref<?xi32>) kernel {
      gpu.return
    }
  }
}
