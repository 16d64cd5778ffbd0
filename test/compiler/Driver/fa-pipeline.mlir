// RUN: split-file %s %t

// The pipeline fac runs (fa-fuse, fa-tile, fa-promote, fa-pad-lds,
// fa-lower-to-gpu): attention spelled as matmul -> softmax -> matmul becomes
// one fused kernel.
// RUN: fa-opt %t/unfused.mlir --fa-pipeline="target=gfx906 kv-splits=off" | FileCheck %s --check-prefixes=CHECK,GFX906
// gfx906's default (kv-splits=auto): the same tiles, split-KV (ABI version
// 2, a combine kernel; at S = 1 the split kernel writes O itself). sm_90's
// stays dense (the CHECK-NOT above).
// RUN: fa-opt %t/unfused.mlir --fa-pipeline="target=gfx906" | FileCheck %s --check-prefix=SPLIT
// SPLIT: gpu.launch_func @fa_kernels::@attention_kernel blocks
// SPLIT: gpu.launch_func @fa_kernels::@attention_kernel1 blocks
// SPLIT: gpu.func @attention_kernel(
// SPLIT-SAME: fa.abi_version = 2 : i64, fa.causal, {{.*}}fa.kv_splits = "runtime", {{.*}}fa.split_direct, {{.*}}fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64,
// SPLIT: gpu.func @attention_kernel1(
// SPLIT-SAME: fa.combine
// RUN: fa-opt %t/unfused.mlir --fa-pipeline="target=sm_90" | FileCheck %s --check-prefixes=CHECK,SM90
// Tile options reach fa-tile.
// RUN: fa-opt %t/unfused.mlir --fa-pipeline="target=gfx906 block-m=64 block-n=32" | FileCheck %s --check-prefix=TILES
// RUN: fa-opt %t/unfused.mlir --fa-pipeline="target=gfx906 block-m=64 block-n=32 pad-lds=false" | FileCheck %s --check-prefix=NOPAD
// K/V slot sharing reaches fa-tile, pair-rhs reaches fa-promote.
// RUN: fa-opt %t/unfused.mlir --fa-pipeline="target=gfx906 kv-shared=off" | FileCheck %s --check-prefix=APART
// RUN: fa-opt %t/unfused.mlir --fa-pipeline="target=gfx906 pair-rhs=false" | FileCheck %s --check-prefix=ROWS

// Errors surface through the pipeline.
// RUN: fa-opt %t/unknown-target.mlir --fa-pipeline="target=gfx1234" -verify-diagnostics
// RUN: fa-opt %t/over-budget.mlir --fa-pipeline="block-m=128 block-n=128" -verify-diagnostics

//--- unfused.mlir

// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @attention
// CHECK-NOT: fa.matmul
// CHECK-NOT: fa.softmax
// CHECK-NOT: fa.attention
// CHECK-NOT: scf.forall
// CHECK: gpu.launch_func @fa_kernels::@attention_kernel
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.module @fa_kernels {
// CHECK-NEXT: gpu.func @attention_kernel
// GFX906-SAME: workgroup(%{{[^ ]+}} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>)
// The softmax's causal mask and scale are the kernel's.
// CHECK-SAME: kernel attributes {fa.abi_version = 1 : i64, fa.causal, {{(fa.fetch_ahead = "next-block", )?}}fa.has_lse = false, fa.head_dim = 64 : i64, fa.lds_buffers = [{{.*}}], fa.scale = 1.250000e-01 : f32, fa.static_sizes = array<i64: -1, 8, 2, -1, -1>,
// gfx906's choice (fa-tile.mlir): 64x64 with K and V in one slot, so three
// LDS attributions; V is stored pair-interleaved.
// GFX906-SAME: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, {{.*}}wave_size = 64{{.*}}, kv_shared = true>
// GFX906-DAG: %[[WAVE:.+]] = arith.constant 64 : i32
// GFX906: vector.interleave
// GFX906: gpu.shuffle xor %{{.+}}, %{{.+}}, %[[WAVE]] {fa.row_xor} : f32
// SM90-SAME: fa.tile = #fa.tile<target = "sm_90", {{.*}}wave_size = 32
// SM90-DAG: %[[WAVE:.+]] = arith.constant 32 : i32
// SM90: gpu.shuffle xor %{{.+}}, %{{.+}}, %[[WAVE]] {fa.row_xor} : f32
// CHECK: gpu.return
// CHECK-NOT: gpu.func

// fa-pad-lds runs in the pipeline: it pads Q's rows by 16 bytes (64 x 72
// halves) and records the largest padding in #fa.tile; each slot is one 1-D
// attribution.
// TILES: workgroup(%{{[^ ]+}} : memref<4608xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>)
// TILES-SAME: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, {{.*}}lds_pad = {{[1-9][0-9]*}}>
// Without it: Q 64x64, K and V 32x64, P 64x32, unpadded.
// NOPAD: workgroup(%{{[^ ]+}} : memref<4096xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<2048xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<2048xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<2048xf16, #gpu.address_space<workgroup>>)
// NOPAD-SAME: block_m = 64, block_n = 32, {{.*}}lds_pad = 0>

// Separate K and V slots: four attributions, and the chooser falls back to
// 64x32 to keep two workgroups per CU.
// APART: gpu.func @attention_kernel
// APART-SAME: workgroup({{(%[^ ]+ : memref<[0-9]+xf16, #gpu.address_space<workgroup>>, ){3}%}}{{[^ ]+}} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>)
// APART-SAME: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, {{[^>]*}}lds_pad = {{[0-9]+}}>,

// V row-major: no pairs to interleave.
// ROWS: gpu.func @attention_kernel
// ROWS-NOT: vector.interleave
// ROWS: gpu.return
func.func @attention(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x?xf32>
  %p = fa.softmax %s causal scale(1.250000e-01) : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf16>
  %o32 = fa.matmul %p, %v : tensor<?x8x?x?xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf32>
  %o = arith.truncf %o32 : tensor<?x8x?x64xf32> to tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

//--- unknown-target.mlir

// expected-error @+1 {{unknown target 'gfx1234'; known targets: gfx906, sm_90, sm_80, host}}
module {
  func.func @attention(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
    return %o : tensor<1x8x128x64xf16>
  }
}

//--- over-budget.mlir

func.func @attention(%q: tensor<1x8x256x128xf16>, %k: tensor<1x8x256x128xf16>, %v: tensor<1x8x256x128xf16>) -> tensor<1x8x256x128xf16> {
  // expected-error @+1 {{BLOCK_M=128 BLOCK_N=128 with D=128 f16 needs 131072 bytes of LDS (144180 with the 10% margin), gfx906 has 65536}}
  %o = fa.attention %q, %k, %v : tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16> -> tensor<1x8x256x128xf16>
  return %o : tensor<1x8x256x128xf16>
}
