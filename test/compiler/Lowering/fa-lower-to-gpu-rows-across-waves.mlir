// fa-lower-to-gpu's row reductions where a thread row spans several waves
// (KernelLowering::rowReduce, ThreadMapping::wavesPerRow): a decode tile of
// at most 16 rows whose BLOCK_N and D are multiples of the workgroup's
// threads puts every thread in one thread row (thread grid 1 x threads),
// so each K and V element is read from LDS by one thread. The butterfly
// then stops at the wave (xor 1 .. wave/2); lane 0 of each wave stores its
// part of every row to a workgroup f32 buffer [TR * RM * waves], and after
// a barrier every thread combines the waves' parts in wave order (the same
// value in every thread), a second barrier keeping the buffer until all
// have read it. sm_90 with 4 x 64 over 2 warps is such a tile; the host
// target (64-lane waves) with 4 x 128 and 2 waves is another.
// RUN: split-file %s %t
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_90 kv-splits=runtime gqa-pack=on block-m=4 block-n=64 waves=2" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=SM90
// RUN: fa-opt %t/decode.mlir --fa-tile="target=host kv-splits=runtime gqa-pack=on block-m=4 block-n=128 waves=2" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=HOST
// The budget names the buffer (fac --report, fa-tile report=true).
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_90 kv-splits=runtime gqa-pack=on block-m=4 block-n=64 waves=2 report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// One wave (sm_90's decode tiles, 4 x 32 of one warp): the same thread
// grid (1 x 32, each lane all four rows) but no combine across waves.
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_90 kv-splits=runtime gqa-pack=on report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=ONE-REPORT
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_90 kv-splits=runtime gqa-pack=on" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=NONE
// ONE-REPORT: thread grid 1x32, per thread 4x1 of S and 4x4 of O
// ONE-REPORT-NOT: row reduction across waves

// Where it must not fire: rows within a wave (sm_90 4 x 32 of 4 warps:
// thread grid 4 x 32; gfx906's decode tiles, 4 x 16 of one wave), and a D
// that the threads do not divide (D = 64 over 128 threads).
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_90 kv-splits=runtime gqa-pack=on block-m=4 block-n=32 waves=4" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=NONE
// RUN: fa-opt %t/decode.mlir --fa-tile="target=gfx906 kv-splits=runtime gqa-pack=on" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=NONE
// RUN: fa-opt %t/d64.mlir --fa-tile="target=sm_90 kv-splits=runtime block-m=4 block-n=128 waves=4" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=NONE

// REPORT: thread grid 1x64, per thread 4x1 of S and 4x2 of O
// REPORT: row reduction across waves (f32) LDS              32

// The split kernel has the buffer (4 rows x 2 waves); the combine kernel,
// which reduces no rows, has none: its one buffer is fa.merge_splits'
// state (6 fields x 128 threads).
// SM90-LABEL: gpu.func @decode_kernel(
// SM90-SAME: %[[SCRATCH:[^ ]+]] : memref<8xf32, #gpu.address_space<workgroup>>) kernel
// SM90-SAME: fa.tile = #fa.tile<target = "sm_90", block_m = 4, block_n = 64, waves = 2, wave_size = 32
// The row maxima: a butterfly within the warp (xor 16 is its last step) ...
// SM90: gpu.shuffle  xor %{{[^,]+}}, %c16_i32, %c32_i32 {fa.row_xor} : f32
// SM90-NOT: gpu.shuffle  xor %{{[^,]+}}, %c32_i32
// SM90: %[[LANE:[^ ]+]] = arith.remui %{{[^,]+}}, %c32 : index
// SM90: %[[FIRST:[^ ]+]] = arith.cmpi eq, %[[LANE]], %c0 : index
// ... lane 0 of each warp stores its parts of the 4 rows ...
// SM90: scf.if %[[FIRST]] {
// SM90-COUNT-4: memref.store %{{[^,]+}}, %[[SCRATCH]][%{{[^]]+}}] : memref<8xf32, #gpu.address_space<workgroup>>
// SM90: }
// ... every thread combines the two warps' parts between two barriers.
// SM90-NEXT: gpu.barrier
// SM90-COUNT-4: arith.maxnumf %{{[^,]+}}, %{{[^ ]+}} : f32
// SM90-NEXT: gpu.barrier
// sm_90 sums l across the row every K/V block (TargetDesc::partialRowSums
// off: ptxas gave the parts more registers): the same way, with additions,
// inside the loop.
// SM90: scf.if %{{[^ ]+}} {
// SM90-COUNT-4: memref.store %{{[^,]+}}, %[[SCRATCH]]
// SM90: }
// SM90-NEXT: gpu.barrier
// SM90-COUNT-4: arith.addf %{{[^,]+}}, %{{[^ ]+}} : f32
// SM90-NEXT: gpu.barrier
// SM90: scf.yield %{{[^,]+}}, %{{[^,]+}}, %{{[^ ]+}} : vector<4xf32>, vector<4xf32>, vector<8xf32>
// SM90-LABEL: gpu.func @decode_kernel1(
// SM90-SAME: workgroup(%{{[^ ]+}} : memref<768xf32, #gpu.address_space<workgroup>>) kernel

// Host: 64-lane waves, so the butterfly goes to xor 32.
// HOST-LABEL: gpu.func @decode_kernel(
// HOST-SAME: %[[SCRATCH:[^ ]+]] : memref<8xf32, #gpu.address_space<workgroup>>) kernel
// HOST: gpu.shuffle  xor %{{[^,]+}}, %c32_i32, %c64_i32 {fa.row_xor} : f32
// HOST: scf.if
// HOST-COUNT-4: memref.store %{{[^,]+}}, %[[SCRATCH]]
// HOST: gpu.barrier
// The host target (as gfx906) carries l in parts (fa.row_combine): the row
// sums cross the waves once, after the loop, with no barrier in it for them.
// HOST-NOT: memref.store %{{[^,]+}}, %[[SCRATCH]]
// HOST: scf.yield %{{[^,]+}}, %{{[^,]+}}, %{{[^ ]+}} : vector<4xf32>, vector<4xf32>, vector<4xf32>
// After the loop (its full-block and ragged copies): l's parts, row 0 first.
// HOST: vector.extract %{{[^ ]+}}#1[0] : f32 from vector<4xf32>
// HOST: gpu.shuffle  xor %{{[^,]+}}, %c32_i32, %c64_i32 {fa.row_xor} : f32
// HOST: scf.if %{{[^ ]+}} {
// HOST-COUNT-4: memref.store %{{[^,]+}}, %[[SCRATCH]]
// HOST: }
// HOST-NEXT: gpu.barrier
// HOST-COUNT-4: arith.addf %{{[^,]+}}, %{{[^ ]+}} : f32
// HOST-NEXT: gpu.barrier

// NONE-LABEL: gpu.func @decode_kernel(
// NONE-NOT: xf32, #gpu.address_space<workgroup>>
// NONE-SAME: kernel

//--- decode.mlir
func.func @decode(%q: tensor<?x8x?x128xf16>, %k: tensor<?x2x?x128xf16>, %v: tensor<?x2x?x128xf16>) -> tensor<?x8x?x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x8x?x128xf16>, tensor<?x2x?x128xf16>, tensor<?x2x?x128xf16> -> tensor<?x8x?x128xf16>
  return %o : tensor<?x8x?x128xf16>
}

//--- d64.mlir
func.func @decode(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}
