// RUN: fa-opt %s | FileCheck %s
// Round trip: what fa-opt prints, it parses back to the same text.
// RUN: fa-opt %s | fa-opt | FileCheck %s

// CHECK-LABEL: func.func @static_f16
func.func @static_f16(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>, %v: tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  // CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x64xf16>
  %o = fa.attention %q, %k, %v : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// CHECK-LABEL: func.func @dynamic_causal_scale
func.func @dynamic_causal_scale(%q: tensor<?x?x?x128xf32>, %k: tensor<?x?x?x128xf32>, %v: tensor<?x?x?x128xf32>) -> tensor<?x?x?x128xf32> {
  // CHECK: fa.attention {{.*}} causal scale(5.000000e-01) : tensor<?x?x?x128xf32>
  %o = fa.attention %q, %k, %v causal scale(0.5) : tensor<?x?x?x128xf32>, tensor<?x?x?x128xf32>, tensor<?x?x?x128xf32> -> tensor<?x?x?x128xf32>
  return %o : tensor<?x?x?x128xf32>
}

// GQA (8 query heads, 2 KV heads), Lq != Lk, with the LSE result.
// CHECK-LABEL: func.func @gqa_lse
func.func @gqa_lse(%q: tensor<1x8x77x64xbf16>, %k: tensor<1x2x203x64xbf16>, %v: tensor<1x2x203x64xbf16>) -> (tensor<1x8x77x64xbf16>, tensor<1x8x77xf32>) {
  // CHECK: %{{.*}}, %{{.*}} = fa.attention {{.*}} causal : tensor<1x8x77x64xbf16>, tensor<1x2x203x64xbf16>, tensor<1x2x203x64xbf16> -> tensor<1x8x77x64xbf16>, tensor<1x8x77xf32>
  %o, %lse = fa.attention %q, %k, %v causal : tensor<1x8x77x64xbf16>, tensor<1x2x203x64xbf16>, tensor<1x2x203x64xbf16> -> tensor<1x8x77x64xbf16>, tensor<1x8x77xf32>
  return %o, %lse : tensor<1x8x77x64xbf16>, tensor<1x8x77xf32>
}

// CHECK-LABEL: func.func @unfused
func.func @unfused(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf32> {
  // CHECK: fa.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x?xf32>
  %s = fa.matmul %q, %k transpose_rhs : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x?xf32>
  // CHECK: fa.softmax %{{.*}} causal scale(1.250000e-01) : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf16>
  %p = fa.softmax %s causal scale(0.125) : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf16>
  // CHECK: fa.matmul %{{.*}}, %{{.*}} : tensor<?x8x?x?xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf32>
  %o = fa.matmul %p, %v : tensor<?x8x?x?xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}

// Level 1 (tile) operations.
// CHECK-LABEL: func.func @tile_ops
func.func @tile_ops(%m: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %i: index) {
  // CHECK: fa.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<32x64xf16>
  %t = fa.load_tile %m[%i, %i, %i] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<32x64xf16>
  // A tile wider than the rows (D padded for the thread grid; the extra
  // columns read as zero).
  // CHECK: fa.load_tile %{{.*}} : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<32x72xf16>
  %wide = fa.load_tile %m[%i, %i, %i] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<32x72xf16>
  // CHECK: fa.tile_dot %{{.*}}, %{{.*}} transpose_rhs : tensor<32x64xf16>, tensor<32x64xf16> -> tensor<32x32xf32>
  %s = fa.tile_dot %t, %t transpose_rhs : tensor<32x64xf16>, tensor<32x64xf16> -> tensor<32x32xf32>
  // CHECK: fa.tile_mask %{{.*}} rows(%{{.*}}, %{{.*}}) cols(%{{.*}}, %{{.*}}) causal : tensor<32x32xf32>
  %sm = fa.tile_mask %s rows(%i, %i) cols(%i, %i) causal : tensor<32x32xf32>
  // CHECK: fa.row_reduce max %{{.*}} : tensor<32x32xf32> -> tensor<32xf32>
  %r = fa.row_reduce max %sm : tensor<32x32xf32> -> tensor<32xf32>
  // CHECK: fa.row_reduce add
  %r2 = fa.row_reduce add %sm : tensor<32x32xf32> -> tensor<32xf32>
  // CHECK: fa.row_reduce add %{{.*}} partial : tensor<32x32xf32> -> tensor<32xf32>
  %r3 = fa.row_reduce add %sm partial : tensor<32x32xf32> -> tensor<32xf32>
  // CHECK: fa.row_combine %{{.*}} : tensor<32xf32> -> tensor<32xf32>
  %r4 = fa.row_combine %r3 : tensor<32xf32> -> tensor<32xf32>
  // CHECK: fa.row_broadcast %{{.*}} : tensor<32xf32> -> tensor<32x64xf32>
  %b = fa.row_broadcast %r : tensor<32xf32> -> tensor<32x64xf32>
  %p = arith.truncf %sm : tensor<32x32xf32> to tensor<32x32xf16>
  // CHECK: fa.tile_dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x32xf16>, tensor<32x64xf16>, tensor<32x64xf32> -> tensor<32x64xf32>
  %o = fa.tile_dot %p, %t, %b : tensor<32x32xf16>, tensor<32x64xf16>, tensor<32x64xf32> -> tensor<32x64xf32>
  %oh = arith.truncf %o : tensor<32x64xf32> to tensor<32x64xf16>
  // CHECK: fa.store_tile %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<32x64xf16>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
  fa.store_tile %oh, %m[%i, %i, %i] : tensor<32x64xf16>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
  // CHECK: fa.store_tile %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<32xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  fa.store_tile %r2, %lse[%i, %i, %i] : tensor<32xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  // GQA packing (group) and the causal mask's period; a row tile loaded
  // from a rank-3 memref (split-KV's partial LSE).
  // CHECK: fa.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] group(%{{.*}}) : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<32x64xf16>
  %packed = fa.load_tile %m[%i, %i, %i] group(%i) : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<32x64xf16>
  // CHECK: fa.tile_mask %{{.*}} rows(%{{.*}}, %{{.*}}) cols(%{{.*}}, %{{.*}}) period(%{{.*}}) causal : tensor<32x32xf32>
  %pm = fa.tile_mask %s rows(%i, %i) cols(%i, %i) period(%i) causal : tensor<32x32xf32>
  // CHECK: fa.store_tile %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] group(%{{.*}}) : tensor<32x64xf16>
  fa.store_tile %oh, %m[%i, %i, %i] group(%i) : tensor<32x64xf16>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
  // CHECK: fa.load_tile %{{.*}} : memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>> -> tensor<32xf32>
  %rows = fa.load_tile %lse[%i, %i, %i] : memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>> -> tensor<32xf32>
  return
}

// CHECK-LABEL: func.func @tile_config_attr
// CHECK-SAME: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>
func.func @tile_config_attr() attributes {fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>} {
  return
}

// Level 1b (memory level): buffers with their layouts, copies, products.
// CHECK-LABEL: func.func @memory_level
// CHECK: fa.lds_buffer "k" slot("kv") : memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
// CHECK: fa.lds_buffer "v" slot("kv") : memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>
// CHECK: fa.copy_tile %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] to %{{.+}} : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf32, strided<[64, 1]>, #gpu.address_space<workgroup>>
// CHECK: fa.lds_dot %{{.+}}, %{{.+}} transpose_rhs
// CHECK: fa.write_tile %{{.+}} to %{{.+}} : tensor<64x64xf16> to memref<64x64xf16, strided<[66, 1]>
// CHECK: fa.lds_dot %{{.+}}, %{{.+}}, %{{.+}} : memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>, memref<32x64x2xf16
func.func @memory_level(%src: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index, %p: tensor<64x64xf16>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %k = fa.lds_buffer "k" slot("kv") : memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
  %v = fa.lds_buffer "v" slot("kv") : memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>
  %q = fa.lds_buffer "q" : memref<64x64xf32, strided<[64, 1]>, #gpu.address_space<workgroup>>
  %pb = fa.lds_buffer "p" : memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
  fa.copy_tile %src[%i, %i, %i] to %q : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf32, strided<[64, 1]>, #gpu.address_space<workgroup>>
  fa.copy_tile %src[%i, %i, %i] to %k : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
  gpu.barrier
  %s = fa.lds_dot %pb, %k transpose_rhs : memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>, memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf32>
  fa.write_tile %p to %pb : tensor<64x64xf16> to memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
  gpu.barrier
  %o = fa.lds_dot %pb, %v, %acc : memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>, memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %o : tensor<64x64xf32>
}

// Level 1b, double-buffered: a copy split into fetch (registers) and stage
// (LDS), the fetched tile carried by the loop.
// CHECK-LABEL: func.func @pipelined
// CHECK: %[[F:.+]] = fa.fetch_tile %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] for %[[B:[^ ]+]] : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> for memref<64x64xf32, strided<[66, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf16>
// CHECK: scf.for {{.+}} iter_args(%[[T:.+]] = %[[F]])
// CHECK: fa.stage_tile %[[T]] to %[[B]] : tensor<64x64xf16> to memref<64x64xf32, strided<[66, 1]>, #gpu.address_space<workgroup>>
func.func @pipelined(%src: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = fa.lds_buffer "k" : memref<64x64xf32, strided<[66, 1]>, #gpu.address_space<workgroup>>
  %f = fa.fetch_tile %src[%i, %i, %c0] for %k : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> for memref<64x64xf32, strided<[66, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf16>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%t = %f) -> (tensor<64x64xf16>) {
    gpu.barrier
    fa.stage_tile %t to %k : tensor<64x64xf16> to memref<64x64xf32, strided<[66, 1]>, #gpu.address_space<workgroup>>
    %next = fa.fetch_tile %src[%i, %i, %j] for %k : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> for memref<64x64xf32, strided<[66, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf16>
    scf.yield %next : tensor<64x64xf16>
  }
  return
}

// A paged K/V cache: [num_pages, page_size, Hkv, D] with the block table and
// the lengths; the tile level reads it through `pages`.
// CHECK-LABEL: func.func @paged
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} paged(%{{.*}}, %{{.*}}) causal : tensor<2x8x1x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<2x?xi32>, tensor<2xi32> -> tensor<2x8x1x64xf16>
func.func @paged(%q: tensor<2x8x1x64xf16>, %k: tensor<?x16x2x64xf16>, %v: tensor<?x16x2x64xf16>, %t: tensor<2x?xi32>, %l: tensor<2xi32>) -> tensor<2x8x1x64xf16> {
  %o = fa.attention %q, %k, %v paged(%t, %l) causal : tensor<2x8x1x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<2x?xi32>, tensor<2xi32> -> tensor<2x8x1x64xf16>
  return %o : tensor<2x8x1x64xf16>
}

// CHECK-LABEL: func.func @paged_tile
// CHECK: fa.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] pages(%{{.*}} : memref<?x?xi32>, %{{.*}}) : memref<?x16x2x64xf16> -> tensor<32x64xf16>
func.func @paged_tile(%k: memref<?x16x2x64xf16>, %t: memref<?x?xi32>, %i: index) {
  %tile = fa.load_tile %k[%i, %i, %i] pages(%t : memref<?x?xi32>, %i) : memref<?x16x2x64xf16> -> tensor<32x64xf16>
  return
}

// A variable-length batch: packed [total, H, D] rows cut by cu_seqlens; the
// tile level addresses one sequence's rows through `seq`.
// CHECK-LABEL: func.func @varlen
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} varlen(%{{.*}}, %{{.*}} : tensor<?xi32>, tensor<?xi32>) causal : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>, tensor<8x?xf32>
func.func @varlen(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %v: tensor<?x2x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<?x8x64xf16>, tensor<8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) causal : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>, tensor<8x?xf32>
  return %o, %lse : tensor<?x8x64xf16>, tensor<8x?xf32>
}

// A mixed batch: varlen queries over a paged cache (one launch for prompt
// chunks and decode tokens); the keys of each sequence are paged's lengths.
// CHECK-LABEL: func.func @mixed
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} paged(%{{.*}}, %{{.*}}) varlen(%{{.*}} : tensor<?xi32>) causal : tensor<?x8x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x8x64xf16>, tensor<8x?xf32>
func.func @mixed(%q: tensor<?x8x64xf16>, %k: tensor<?x16x2x64xf16>, %v: tensor<?x16x2x64xf16>, %t: tensor<?x?xi32>, %l: tensor<?xi32>, %cq: tensor<?xi32>) -> (tensor<?x8x64xf16>, tensor<8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v paged(%t, %l) varlen(%cq : tensor<?xi32>) causal : tensor<?x8x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x8x64xf16>, tensor<8x?xf32>
  return %o, %lse : tensor<?x8x64xf16>, tensor<8x?xf32>
}

// CHECK-LABEL: func.func @varlen_tile
// CHECK: fa.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] group(%{{.*}}) seq(%{{.*}}, %{{.*}}) : memref<?x8x?x64xf16> -> tensor<32x64xf16>
// CHECK: fa.store_tile %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] seq(%{{.*}}, %{{.*}}) : tensor<32x64xf16>, memref<?x8x?x64xf16>
func.func @varlen_tile(%q: memref<?x8x?x64xf16>, %i: index, %s: index, %n: index) {
  %tile = fa.load_tile %q[%i, %i, %i] group(%i) seq(%s, %n) : memref<?x8x?x64xf16> -> tensor<32x64xf16>
  fa.store_tile %tile, %q[%i, %i, %i] seq(%s, %n) : tensor<32x64xf16>, memref<?x8x?x64xf16>
  return
}

// Sliding window and softcap (issue 32): each side may be -1 (unbounded).
// CHECK-LABEL: func.func @window_softcap
func.func @window_softcap(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>, %s: tensor<1x8x?x?xf32>, %t: tensor<32x32xf32>, %i: index) -> (tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x?xf16>, tensor<32x32xf32>) {
  // CHECK: fa.attention {{.*}} causal window(128, -1) softcap(5.000000e+01) : tensor<1x8x?x64xf16>
  %o = fa.attention %q, %k, %v causal window(128, -1) softcap(50.0) : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  // CHECK: fa.attention {{.*}} window(-1, 0) : tensor<1x8x?x64xf16>
  %o2 = fa.attention %q, %k, %v window(-1, 0) : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  // CHECK: fa.softmax %{{.*}} scale(1.250000e-01) window(4, 2) softcap(3.000000e+01) : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf16>
  %p = fa.softmax %s scale(0.125) window(4, 2) softcap(30.0) : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf16>
  // CHECK: fa.tile_mask %{{.*}} rows(%{{.*}}, %{{.*}}) cols(%{{.*}}, %{{.*}}) causal window(16, -1) : tensor<32x32xf32>
  %m = fa.tile_mask %t rows(%i, %i) cols(%i, %i) causal window(16, -1) : tensor<32x32xf32>
  return %o, %o2, %p, %m : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x?xf16>, tensor<32x32xf32>
}

// ALiBi slopes and sinks (issue 32): one f32 per query head, with every
// other option (paged, varlen, window, softcap, the LSE).
// CHECK-LABEL: func.func @alibi_sinks
func.func @alibi_sinks(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>, %slopes: tensor<8xf32>, %sinks: tensor<?xf32>, %pq: tensor<?x8x64xf16>, %cache: tensor<?x16x2x64xf16>, %table: tensor<?x?xi32>, %lens: tensor<?xi32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>, %pk: tensor<?x2x64xf16>, %t: tensor<32x32xf32>, %r: tensor<32xf32>, %i: index) -> (tensor<1x8x?x64xf16>, tensor<1x8x?xf32>, tensor<?x8x1x64xf16>, tensor<?x8x64xf16>, tensor<32x32xf32>) {
  // CHECK: fa.attention {{.*}} causal window(127, 0) softcap(3.000000e+01) alibi(%{{.*}} : tensor<8xf32>) sinks(%{{.*}} : tensor<?xf32>) : tensor<1x8x?x64xf16>
  %o, %lse = fa.attention %q, %k, %v causal window(127, 0) softcap(30.0) alibi(%slopes : tensor<8xf32>) sinks(%sinks : tensor<?xf32>) : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>, tensor<1x8x?xf32>
  // CHECK: fa.attention {{.*}} paged(%{{.*}}, %{{.*}}) sinks(%{{.*}} : tensor<?xf32>) :
  %q1 = tensor.expand_shape %pq [[0], [1, 2], [3]] output_shape [1, 8, 1, 64] : tensor<?x8x64xf16> into tensor<?x8x1x64xf16>
  %op = fa.attention %q1, %cache, %cache paged(%table, %lens) sinks(%sinks : tensor<?xf32>) : tensor<?x8x1x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x8x1x64xf16>
  // CHECK: fa.attention {{.*}} varlen(%{{.*}}, %{{.*}} : tensor<?xi32>, tensor<?xi32>) alibi(%{{.*}} : tensor<8xf32>) :
  %ov = fa.attention %pq, %pk, %pk varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) alibi(%slopes : tensor<8xf32>) : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>
  // CHECK: fa.tile_mask %{{.*}} rows(%{{.*}}, %{{.*}}) cols(%{{.*}}, %{{.*}}) causal alibi(%{{.*}} : tensor<32xf32>) : tensor<32x32xf32>
  %m = fa.tile_mask %t rows(%i, %i) cols(%i, %i) causal alibi(%r : tensor<32xf32>) : tensor<32x32xf32>
  return %o, %lse, %op, %ov, %m : tensor<1x8x?x64xf16>, tensor<1x8x?xf32>, tensor<?x8x1x64xf16>, tensor<?x8x64xf16>, tensor<32x32xf32>
}

// CHECK-LABEL: func.func @merge_splits
func.func @merge_splits(%o: memref<?x?x?x128xf32>, %l: memref<?x?x?xf32>, %i: index) -> (tensor<4xf32>, tensor<4xf32>, tensor<4x128xf32>) {
  // CHECK: fa.merge_splits %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] splits(%{{.*}}, %{{.*}}) : memref<?x?x?x128xf32>, memref<?x?x?xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<4x128xf32>
  %m, %s, %a = fa.merge_splits %o, %l[%i, %i, %i] splits(%i, %i) : memref<?x?x?x128xf32>, memref<?x?x?xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<4x128xf32>
  // CHECK: fa.merge_splits {{.*}} splits(%{{.*}}, %{{.*}}) seq(%{{.*}}, %{{.*}}) :
  %m2, %s2, %a2 = fa.merge_splits %o, %l[%i, %i, %i] splits(%i, %i) seq(%i, %i) : memref<?x?x?x128xf32>, memref<?x?x?xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<4x128xf32>
  return %m, %s, %a : tensor<4xf32>, tensor<4xf32>, tensor<4x128xf32>
}
