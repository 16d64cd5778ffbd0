// RUN: fa-opt %s -split-input-file -verify-diagnostics

func.func @rank(%q: tensor<8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op query must have rank 4, got 3}}
  %o = fa.attention %q, %k, %v : tensor<8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @d_mismatch(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x128xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{head dimension mismatch: query D=64, key D=128, value D=64}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @kv_mismatch(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x96x64xf16>) {
  // expected-error @+1 {{key and value shapes differ: key is 'tensor<1x8x128x64xf16>', value is 'tensor<1x8x96x64xf16>'}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x96x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @heads(%q: tensor<1x6x128x64xf16>, %k: tensor<1x4x128x64xf16>, %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{query heads (6) must be a multiple of key/value heads (4)}}
  %o = fa.attention %q, %k, %v : tensor<1x6x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16> -> tensor<1x6x128x64xf16>
  return
}

// -----

func.func @batch(%q: tensor<2x8x128x64xf16>, %k: tensor<3x8x128x64xf16>, %v: tensor<3x8x128x64xf16>) {
  // expected-error @+1 {{batch mismatch: query B=2, key/value B=3}}
  %o = fa.attention %q, %k, %v : tensor<2x8x128x64xf16>, tensor<3x8x128x64xf16>, tensor<3x8x128x64xf16> -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @mixed(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{query, key and value must have one element type, got 'f16', 'f32', 'f16'}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @dynamic_d(%q: tensor<1x8x128x?xf16>, %k: tensor<1x8x128x?xf16>, %v: tensor<1x8x128x?xf16>) {
  // expected-error @+1 {{head dimension D must be static, got query D=?, key D=?, value D=?}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x?xf16>, tensor<1x8x128x?xf16>, tensor<1x8x128x?xf16> -> tensor<1x8x128x?xf16>
  return
}

// -----

func.func @int_type(%q: tensor<1x8x128x64xi8>, %k: tensor<1x8x128x64xi8>, %v: tensor<1x8x128x64xi8>) {
  // expected-error @+1 {{query element type must be f16, f32 or bf16, got 'i8'}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xi8>, tensor<1x8x128x64xi8>, tensor<1x8x128x64xi8> -> tensor<1x8x128x64xi8>
  return
}

// -----

func.func @result(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{result type 'tensor<1x8x64x64xf16>' does not match the query type 'tensor<1x8x128x64xf16>'}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x64x64xf16>
  return
}

// -----

func.func @result_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{result type 'tensor<1x8x128x64xf32>' does not match the query type 'tensor<1x8x128x64xf16>'}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @lse(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{lse result must be tensor<1x8x128xf32> ([B, Hq, Lq] f32), got 'tensor<1x8x128xf16>'}}
  %o, %l = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>, tensor<1x8x128xf16>
  return
}

// -----

func.func @scale(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{scale must be positive, got -1}}
  %o = fa.attention %q, %k, %v scale(-1.0) : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @matmul_k(%a: tensor<1x8x128x64xf16>, %b: tensor<1x8x128x32xf16>) {
  // expected-error @+1 {{'fa.matmul' op contraction mismatch: lhs has 64, rhs has 32}}
  %s = fa.matmul %a, %b transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x32xf16> -> tensor<1x8x128x128xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<1x8x128x64xf16>, %b: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{result must be tensor<1x8x128x128xf32>, got 'tensor<1x8x128x128xf16>'}}
  %s = fa.matmul %a, %b transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf16>
  return
}

// -----

func.func @matmul_types(%a: tensor<1x8x128x64xf16>, %b: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{operands must have one element type, got 'f16' and 'f32'}}
  %s = fa.matmul %a, %b transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf32> -> tensor<1x8x128x128xf32>
  return
}

// -----

func.func @matmul_heads(%a: tensor<1x8x128x64xf16>, %b: tensor<1x3x128x64xf16>) {
  // expected-error @+1 {{lhs heads (8) must be a multiple of rhs heads (3)}}
  %s = fa.matmul %a, %b transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x3x128x64xf16> -> tensor<1x8x128x128xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x8x128x64xf16>, %b: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{batch mismatch: lhs B=2, rhs B=1}}
  %s = fa.matmul %a, %b transpose_rhs : tensor<2x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<2x8x128x128xf32>
  return
}

// -----

func.func @softmax_input(%s: tensor<1x8x128x128xf16>) {
  // expected-error @+1 {{'fa.softmax' op input must be f32 scores, got 'f16'}}
  %p = fa.softmax %s : tensor<1x8x128x128xf16> -> tensor<1x8x128x128xf16>
  return
}

// -----

func.func @softmax_shape(%s: tensor<1x8x128x128xf32>) {
  // expected-error @+1 {{result 'tensor<1x8x128x64xf16>' must have the input's shape and a float type}}
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @softmax_scale(%s: tensor<1x8x128x128xf32>) {
  // expected-error @+1 {{'fa.softmax' op scale must be positive, got 0}}
  %p = fa.softmax %s scale(0.0) : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  return
}

// -----

func.func @load_tile_rank(%m: memref<?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'fa.load_tile' op a rank-2 tile needs a rank-4 memref, got rank 3}}
  %t = fa.load_tile %m[%i, %i, %i] : memref<?x?x64xf16> -> tensor<32x64xf16>
  return
}

// -----

func.func @load_tile_cols(%m: memref<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'fa.load_tile' op tile has 32 columns, memref rows have 64}}
  %t = fa.load_tile %m[%i, %i, %i] : memref<?x?x?x64xf16> -> tensor<32x32xf16>
  return
}

// -----

func.func @load_tile_type(%m: memref<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'fa.load_tile' op tile element type 'f32' differs from memref element type 'f16'}}
  %t = fa.load_tile %m[%i, %i, %i] : memref<?x?x?x64xf16> -> tensor<32x64xf32>
  return
}

// -----

func.func @load_tile_1d(%m: memref<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'fa.load_tile' op a rank-1 tile needs a rank-3 memref, got rank 4}}
  %t = fa.load_tile %m[%i, %i, %i] : memref<?x?x?x64xf16> -> tensor<32xf16>
  return
}

// -----

func.func @load_tile_3d(%m: memref<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'fa.load_tile' op result must be a 1-D or 2-D tile, got 'tensor<2x32x64xf16>'}}
  %t = fa.load_tile %m[%i, %i, %i] : memref<?x?x?x64xf16> -> tensor<2x32x64xf16>
  return
}



// -----

func.func @store_tile_rank(%t: tensor<2x2x2xf16>, %m: memref<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'fa.store_tile' op tile must be 1-D or 2-D, got 'tensor<2x2x2xf16>'}}
  fa.store_tile %t, %m[%i, %i, %i] : tensor<2x2x2xf16>, memref<?x?x?x64xf16>
  return
}

// -----

func.func @tile_dot_k(%a: tensor<32x64xf16>, %b: tensor<32x32xf16>) {
  // expected-error @+1 {{'fa.tile_dot' op contraction mismatch: lhs has 64, rhs has 32}}
  %s = fa.tile_dot %a, %b transpose_rhs : tensor<32x64xf16>, tensor<32x32xf16> -> tensor<32x32xf32>
  return
}

// -----

func.func @tile_dot_types(%a: tensor<32x64xf16>, %b: tensor<32x64xf32>) {
  // expected-error @+1 {{'fa.tile_dot' op operands must have one element type, got 'f16' and 'f32'}}
  %s = fa.tile_dot %a, %b transpose_rhs : tensor<32x64xf16>, tensor<32x64xf32> -> tensor<32x32xf32>
  return
}

// -----

func.func @tile_dot_result(%a: tensor<32x64xf16>, %b: tensor<32x64xf16>) {
  // expected-error @+1 {{'fa.tile_dot' op result must be tensor<32x32xf32>, got 'tensor<32x32xf16>'}}
  %s = fa.tile_dot %a, %b transpose_rhs : tensor<32x64xf16>, tensor<32x64xf16> -> tensor<32x32xf16>
  return
}

// -----

func.func @tile_dot_rank(%a: tensor<32xf16>, %b: tensor<32x64xf16>) {
  // expected-error @+1 {{'fa.tile_dot' op operands must be static 2-D tiles}}
  %s = fa.tile_dot %a, %b : tensor<32xf16>, tensor<32x64xf16> -> tensor<32x64xf32>
  return
}

// -----

func.func @tile_dot_acc(%a: tensor<32x64xf16>, %b: tensor<64x64xf16>, %c: tensor<32x32xf32>) {
  // expected-error @+1 {{'fa.tile_dot' op accumulator type 'tensor<32x32xf32>' differs from result type 'tensor<32x64xf32>'}}
  %s = fa.tile_dot %a, %b, %c : tensor<32x64xf16>, tensor<64x64xf16>, tensor<32x32xf32> -> tensor<32x64xf32>
  return
}

// -----

func.func @row_reduce(%s: tensor<32x64xf32>) {
  // expected-error @+1 {{'fa.row_reduce' op expects an MxN tile and an M result of the same element type, got 'tensor<32x64xf32>' -> 'tensor<64xf32>'}}
  %r = fa.row_reduce max %s : tensor<32x64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @row_reduce_partial_max(%s: tensor<32x64xf32>) {
  // expected-error @+1 {{'fa.row_reduce' op partial applies to 'add' only}}
  %r = fa.row_reduce max %s partial : tensor<32x64xf32> -> tensor<32xf32>
  return
}

// -----

func.func @row_combine(%l: tensor<32xf32>) {
  // expected-error @+1 {{'fa.row_combine' op expects M rows and the same result type, got 'tensor<32xf32>' -> 'tensor<16xf32>'}}
  %r = fa.row_combine %l : tensor<32xf32> -> tensor<16xf32>
  return
}

// -----

func.func @row_broadcast(%s: tensor<32xf32>) {
  // expected-error @+1 {{'fa.row_broadcast' op expects an M input and an MxN result of the same element type, got 'tensor<32xf32>' -> 'tensor<64x64xf32>'}}
  %r = fa.row_broadcast %s : tensor<32xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @tile_mask(%s: tensor<32x64xf16>, %i: index) {
  // expected-error @+1 {{'fa.tile_mask' op expects a 2-D f32 tile, got 'tensor<32x64xf16>'}}
  %m = fa.tile_mask %s rows(%i, %i) cols(%i, %i) : tensor<32x64xf16>
  return
}

// -----

func.func @copy_narrowing(%src: memref<?x8x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %buf = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'fa.copy_tile' op source element type 'f32' cannot be stored in a buffer of 'f16'}}
  fa.copy_tile %src[%i, %i, %i] to %buf : memref<?x8x?x64xf32, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  return
}

// -----

// A buffer may be wider than the source rows (a padded head dimension), not
// narrower.
func.func @copy_narrower(%src: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %buf = fa.lds_buffer "k" : memref<64x56xf16, strided<[56, 1]>, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'fa.copy_tile' op source rows have 64 elements, the buffer's rows 56}}
  fa.copy_tile %src[%i, %i, %i] to %buf : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<64x56xf16, strided<[56, 1]>, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @store_dynamic_d(%t: tensor<32x64xf16>, %m: memref<?x?x?x?xf16>, %i: index) {
  // expected-error @+1 {{'fa.store_tile' op tile has 64 columns, memref rows have ?}}
  fa.store_tile %t, %m[%i, %i, %i] : tensor<32x64xf16>, memref<?x?x?x?xf16>
  return
}

// -----

func.func @fetch_wrong_shape(%src: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %buf = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'fa.fetch_tile' op result 'tensor<32x64xf16>' must be 'tensor<64x64xf16>' (the buffer's tile, the source's element type)}}
  %t = fa.fetch_tile %src[%i, %i, %i] for %buf : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> for memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<32x64xf16>
  return
}

// -----

func.func @fetch_narrowing(%src: memref<?x8x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %buf = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'fa.fetch_tile' op source element type 'f32' cannot be stored in a buffer of 'f16'}}
  %t = fa.fetch_tile %src[%i, %i, %i] for %buf : memref<?x8x?x64xf32, strided<[?, ?, ?, 1], offset: ?>> for memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf32>
  return
}

// -----

func.func @stage_not_fetched(%t: tensor<64x64xf16>) {
  %buf = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'fa.stage_tile' op tile must come from fa.fetch_tile (directly or through scf.for iteration arguments)}}
  fa.stage_tile %t to %buf : tensor<64x64xf16> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @stage_other_buffer(%src: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %k = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  %v = fa.lds_buffer "v" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  %t = fa.fetch_tile %src[%i, %i, %i] for %k : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> for memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf16>
  // expected-error @+1 {{'fa.stage_tile' op tile was fetched for another buffer: its distribution over the threads is that buffer's}}
  fa.stage_tile %t to %v : tensor<64x64xf16> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @stage_loop_mixed(%src: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index, %other: tensor<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  %t = fa.fetch_tile %src[%i, %i, %i] for %k : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> for memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf16>
  %r = scf.for %j = %c0 to %i step %c1 iter_args(%a = %t) -> (tensor<64x64xf16>) {
    // expected-error @+1 {{'fa.stage_tile' op tile must come from fa.fetch_tile (directly or through scf.for iteration arguments)}}
    fa.stage_tile %a to %k : tensor<64x64xf16> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
    scf.yield %other : tensor<64x64xf16>
  }
  return
}

// -----

// Static head counts and head dimensions of 0 (they used to divide by zero
// in the verifier).
func.func @zero_heads(%q: tensor<1x0x16x64xf16>, %k: tensor<1x0x16x64xf16>, %v: tensor<1x0x16x64xf16>) -> tensor<1x0x16x64xf16> {
  // expected-error @+1 {{'fa.attention' op query head count must be positive, got 0}}
  %o = fa.attention %q, %k, %v : tensor<1x0x16x64xf16>, tensor<1x0x16x64xf16>, tensor<1x0x16x64xf16> -> tensor<1x0x16x64xf16>
  return %o : tensor<1x0x16x64xf16>
}

// -----

func.func @zero_kv_heads(%q: tensor<1x8x16x64xf16>, %k: tensor<1x0x16x64xf16>, %v: tensor<1x0x16x64xf16>) -> tensor<1x8x16x64xf16> {
  // expected-error @+1 {{'fa.attention' op key head count must be positive, got 0}}
  %o = fa.attention %q, %k, %v : tensor<1x8x16x64xf16>, tensor<1x0x16x64xf16>, tensor<1x0x16x64xf16> -> tensor<1x8x16x64xf16>
  return %o : tensor<1x8x16x64xf16>
}

// -----

func.func @matmul_zero_heads(%a: tensor<1x8x128x64xf16>, %b: tensor<1x0x128x64xf16>) -> tensor<1x8x128x128xf32> {
  // expected-error @+1 {{'fa.matmul' op rhs head count must be positive, got 0}}
  %s = fa.matmul %a, %b transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x0x128x64xf16> -> tensor<1x8x128x128xf32>
  return %s : tensor<1x8x128x128xf32>
}

// -----

func.func @zero_head_dim(%q: tensor<1x8x16x0xf16>, %k: tensor<1x8x16x0xf16>, %v: tensor<1x8x16x0xf16>) -> tensor<1x8x16x0xf16> {
  // expected-error @+1 {{'fa.attention' op query head dimension must be positive, got 0}}
  %o = fa.attention %q, %k, %v : tensor<1x8x16x0xf16>, tensor<1x8x16x0xf16>, tensor<1x8x16x0xf16> -> tensor<1x8x16x0xf16>
  return %o : tensor<1x8x16x0xf16>
}

// -----

func.func @lds_not_workgroup() {
  // expected-error @+1 {{'fa.lds_buffer' op result: an LDS buffer must be in #gpu.address_space<workgroup>}}
  %buf = fa.lds_buffer "k" : memref<64x64xf16>
  return
}

// -----

func.func @lds_stride_too_short() {
  // expected-error @+1 {{'fa.lds_buffer' op result: a row-major LDS buffer needs strides [S, 1] with S >= 64}}
  %buf = fa.lds_buffer "k" : memref<64x64xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @lds_bad_pairs() {
  // expected-error @+1 {{'fa.lds_buffer' op result: a pair-interleaved LDS buffer needs shape [R/2, C, 2] and strides [2S, 2, 1] with S >= 64}}
  %buf = fa.lds_buffer "v" : memref<32x64x2xf16, strided<[64, 2, 1]>, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @lds_dot_pairs_lhs() {
  %a = fa.lds_buffer "v" : memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>
  %b = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'fa.lds_dot' op lhs must be row-major}}
  %s = fa.lds_dot %a, %b transpose_rhs : memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>, memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf32>
  return
}

// -----

func.func @lds_dot_mismatch() {
  %a = fa.lds_buffer "q" : memref<64x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
  %b = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'fa.lds_dot' op contraction mismatch: lhs has 32, rhs has 64}}
  %s = fa.lds_dot %a, %b transpose_rhs : memref<64x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>, memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf32>
  return
}

// -----

func.func @write_pairs(%t: tensor<64x64xf16>) {
  %v = fa.lds_buffer "v" : memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'fa.write_tile' op writes only row-major buffers}}
  fa.write_tile %t to %v : tensor<64x64xf16> to memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @paged_table_type(%q: tensor<2x8x1x64xf16>, %k: tensor<?x16x2x64xf16>, %t: tensor<2x4xi64>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'fa.attention' op block table must be [B, max_pages] i32, got 'tensor<2x4xi64>'}}
  %o = fa.attention %q, %k, %k paged(%t, %l) : tensor<2x8x1x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<2x4xi64>, tensor<2xi32> -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @paged_lens_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<?x16x2x64xf16>, %t: tensor<2x4xi32>, %l: tensor<2x1xi32>) {
  // expected-error @+1 {{'fa.attention' op cache lengths must be [B] i32, got 'tensor<2x1xi32>'}}
  %o = fa.attention %q, %k, %k paged(%t, %l) : tensor<2x8x1x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<2x4xi32>, tensor<2x1xi32> -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @paged_batch(%q: tensor<2x8x1x64xf16>, %k: tensor<?x16x2x64xf16>, %t: tensor<3x4xi32>, %l: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op batch mismatch: query B=2, block table B=3, cache lengths B=3}}
  %o = fa.attention %q, %k, %k paged(%t, %l) : tensor<2x8x1x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<3x4xi32>, tensor<3xi32> -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @paged_heads(%q: tensor<2x6x1x64xf16>, %k: tensor<?x16x4x64xf16>, %t: tensor<2x4xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'fa.attention' op query heads (6) must be a multiple of key/value heads (4)}}
  %o = fa.attention %q, %k, %k paged(%t, %l) : tensor<2x6x1x64xf16>, tensor<?x16x4x64xf16>, tensor<?x16x4x64xf16>, tensor<2x4xi32>, tensor<2xi32> -> tensor<2x6x1x64xf16>
  return
}

// -----

func.func @pages_table_type(%k: memref<?x16x2x64xf16>, %t: memref<?x?xf32>, %i: index) {
  // expected-error @+1 {{'fa.load_tile' op block table must be a [B, max_pages] i32 memref, got 'memref<?x?xf32>'}}
  %tile = fa.load_tile %k[%i, %i, %i] pages(%t : memref<?x?xf32>, %i) : memref<?x16x2x64xf16> -> tensor<32x64xf16>
  return
}

// -----

func.func @varlen_rank(%q: tensor<2x8x5x64xf16>, %k: tensor<?x2x64xf16>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op query (varlen: [total, H, D]) must have rank 3, got 4}}
  %o = fa.attention %q, %k, %k varlen(%c, %c : tensor<3xi32>, tensor<3xi32>) : tensor<2x8x5x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<2x8x5x64xf16>
  return
}

// -----

func.func @varlen_cu_type(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %c: tensor<3xi64>, %d: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op cu_seqlens_q must be [B + 1] i32, got 'tensor<3xi64>'}}
  %o = fa.attention %q, %k, %k varlen(%c, %d : tensor<3xi64>, tensor<3xi32>) : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @varlen_cu_lengths(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %c: tensor<3xi32>, %d: tensor<4xi32>) {
  // expected-error @+1 {{'fa.attention' op cu_seqlens_q and cu_seqlens_k must have one length (B + 1), got 3 and 4}}
  %o = fa.attention %q, %k, %k varlen(%c, %d : tensor<3xi32>, tensor<4xi32>) : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @varlen_cu_empty(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %c: tensor<0xi32>) {
  // expected-error @+1 {{'fa.attention' op cu_seqlens_q must have B + 1 >= 1 entries, got 0}}
  %o = fa.attention %q, %k, %k varlen(%c, %c : tensor<0xi32>, tensor<0xi32>) : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @varlen_heads(%q: tensor<?x6x64xf16>, %k: tensor<?x4x64xf16>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op query heads (6) must be a multiple of key/value heads (4)}}
  %o = fa.attention %q, %k, %k varlen(%c, %c : tensor<3xi32>, tensor<3xi32>) : tensor<?x6x64xf16>, tensor<?x4x64xf16>, tensor<?x4x64xf16> -> tensor<?x6x64xf16>
  return
}

// -----

func.func @varlen_head_dim(%q: tensor<?x8x64xf16>, %k: tensor<?x2x32xf16>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op head dimension mismatch: query D=64, key D=32, value D=32}}
  %o = fa.attention %q, %k, %k varlen(%c, %c : tensor<3xi32>, tensor<3xi32>) : tensor<?x8x64xf16>, tensor<?x2x32xf16>, tensor<?x2x32xf16> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @varlen_result(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op result type 'tensor<?x4x64xf16>' does not match the query type 'tensor<?x8x64xf16>'}}
  %o = fa.attention %q, %k, %k varlen(%c, %c : tensor<3xi32>, tensor<3xi32>) : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x4x64xf16>
  return
}

// -----

func.func @varlen_lse(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op lse result must be tensor<8x?xf32> ([Hq, total_q] f32, varlen), got 'tensor<4x?xf32>'}}
  %o, %l = fa.attention %q, %k, %k varlen(%c, %c : tensor<3xi32>, tensor<3xi32>) : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>, tensor<4x?xf32>
  return
}

// -----

func.func @mixed_cu_k(%q: tensor<?x8x64xf16>, %k: tensor<?x16x2x64xf16>, %t: tensor<2x4xi32>, %l: tensor<2xi32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op varlen over a paged cache takes cu_seqlens_q only (the keys of each sequence are paged's cache lengths)}}
  %o = fa.attention %q, %k, %k paged(%t, %l) varlen(%c, %c : tensor<3xi32>, tensor<3xi32>) : tensor<?x8x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<2x4xi32>, tensor<2xi32> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @varlen_no_cu_k(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op varlen takes cu_seqlens_q and cu_seqlens_k}}
  %o = fa.attention %q, %k, %k varlen(%c : tensor<3xi32>) : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @mixed_kv_rank(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %t: tensor<2x4xi32>, %l: tensor<2xi32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op key (varlen over a paged cache: [num_pages, page_size, H, D]) must have rank 4, got 3}}
  %o = fa.attention %q, %k, %k paged(%t, %l) varlen(%c : tensor<3xi32>) : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16>, tensor<2x4xi32>, tensor<2xi32> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @mixed_batch(%q: tensor<?x8x64xf16>, %k: tensor<?x16x2x64xf16>, %t: tensor<2x4xi32>, %l: tensor<3xi32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op batch mismatch: cu_seqlens_q B=2, block table B=2, cache lengths B=3}}
  %o = fa.attention %q, %k, %k paged(%t, %l) varlen(%c : tensor<3xi32>) : tensor<?x8x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<2x4xi32>, tensor<3xi32> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @mixed_heads(%q: tensor<?x6x64xf16>, %k: tensor<?x16x4x64xf16>, %t: tensor<2x4xi32>, %l: tensor<2xi32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op query heads (6) must be a multiple of key/value heads (4)}}
  %o = fa.attention %q, %k, %k paged(%t, %l) varlen(%c : tensor<3xi32>) : tensor<?x6x64xf16>, tensor<?x16x4x64xf16>, tensor<?x16x4x64xf16>, tensor<2x4xi32>, tensor<2xi32> -> tensor<?x6x64xf16>
  return
}

// -----

func.func @mixed_table_type(%q: tensor<?x8x64xf16>, %k: tensor<?x16x2x64xf16>, %t: tensor<2x4xi64>, %l: tensor<2xi32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{'fa.attention' op block table must be [B, max_pages] i32, got 'tensor<2x4xi64>'}}
  %o = fa.attention %q, %k, %k paged(%t, %l) varlen(%c : tensor<3xi32>) : tensor<?x8x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<2x4xi64>, tensor<2xi32> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @seq_half(%q: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expected ','}}
  %tile = fa.load_tile %q[%i, %i, %i] seq(%i) : memref<?x8x?x64xf16> -> tensor<32x64xf16>
  return
}

// -----

func.func @seq_and_pages(%k: memref<?x16x2x64xf16>, %t: memref<?x?xi32>, %i: index) {
  // expected-error @+1 {{'fa.load_tile' op seq and pages exclude each other}}
  %tile = fa.load_tile %k[%i, %i, %i] pages(%t : memref<?x?xi32>, %i) seq(%i, %i) : memref<?x16x2x64xf16> -> tensor<32x64xf16>
  return
}

// -----

func.func @window_negative(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op window sides must be -1 (unbounded) or >= 0, got window(-2, 0)}}
  %o = fa.attention %q, %k, %v window(-2, 0) : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @window_none(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op window(-1, -1) is no window: leave it out}}
  %o = fa.attention %q, %k, %v window(-1, -1) : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @softcap_zero(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op softcap must be positive and finite, got 0}}
  %o = fa.attention %q, %k, %v softcap(0.0) : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @softcap_inf(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op softcap must be positive and finite, got INF}}
  %o = fa.attention %q, %k, %v softcap(0x7F800000) : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @softmax_window(%s: tensor<1x8x128x128xf32>) {
  // expected-error @+1 {{'fa.softmax' op window sides must be -1 (unbounded) or >= 0, got window(3, -5)}}
  %p = fa.softmax %s window(3, -5) : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  return
}

// -----

func.func @tile_mask_window(%t: tensor<32x32xf32>, %i: index) {
  // expected-error @+1 {{'fa.tile_mask' op window(-1, -1) is no window: leave it out}}
  %m = fa.tile_mask %t rows(%i, %i) cols(%i, %i) window(-1, -1) : tensor<32x32xf32>
  return
}

// -----

func.func @varlen_softcap(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %v: tensor<?x2x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) {
  // expected-error @+1 {{'fa.attention' op softcap must be positive and finite, got -1}}
  %o = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) softcap(-1.0) : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @alibi_wrong_heads(%q: tensor<1x8x128x64xf16>, %k: tensor<1x2x128x64xf16>, %v: tensor<1x2x128x64xf16>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'fa.attention' op alibi slopes must be tensor<8xf32> (one f32 per query head), got 'tensor<2xf32>'}}
  %o = fa.attention %q, %k, %v alibi(%s : tensor<2xf32>) : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @sinks_f16(%q: tensor<1x8x128x64xf16>, %k: tensor<1x2x128x64xf16>, %v: tensor<1x2x128x64xf16>, %s: tensor<8xf16>) {
  // expected-error @+1 {{'fa.attention' op sinks must be tensor<8xf32> (one f32 per query head), got 'tensor<8xf16>'}}
  %o = fa.attention %q, %k, %v sinks(%s : tensor<8xf16>) : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @sinks_rank2(%q: tensor<1x8x128x64xf16>, %k: tensor<1x2x128x64xf16>, %v: tensor<1x2x128x64xf16>, %s: tensor<1x8xf32>) {
  // expected-error @+1 {{'fa.attention' op sinks must be tensor<8xf32> (one f32 per query head), got 'tensor<1x8xf32>'}}
  %o = fa.attention %q, %k, %v sinks(%s : tensor<1x8xf32>) : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @varlen_alibi_heads(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %v: tensor<?x2x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'fa.attention' op alibi slopes must be tensor<8xf32> (one f32 per query head), got 'tensor<4xf32>'}}
  %o = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) alibi(%s : tensor<4xf32>) : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @tile_mask_alibi_rows(%t: tensor<32x32xf32>, %r: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{'fa.tile_mask' op alibi must be tensor<32xf32> (one slope per row), got 'tensor<16xf32>'}}
  %m = fa.tile_mask %t rows(%i, %i) cols(%i, %i) alibi(%r : tensor<16xf32>) : tensor<32x32xf32>
  return
}

// -----

func.func @merge_splits_rows(%o: memref<?x?x?x64xf32>, %l: memref<?x?x?xf32>, %i: index) {
  // expected-error @+1 {{'fa.merge_splits' op acc must be tensor<4xCxf32>, got 'tensor<8x64xf32>'}}
  %m, %s, %a = fa.merge_splits %o, %l[%i, %i, %i] splits(%i, %i) : memref<?x?x?x64xf32>, memref<?x?x?xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @merge_splits_lse_rank(%o: memref<?x?x?x64xf32>, %l: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{'fa.merge_splits' op a rank-1 tile needs a rank-3 memref, got rank 4}}
  %m, %s, %a = fa.merge_splits %o, %l[%i, %i, %i] splits(%i, %i) : memref<?x?x?x64xf32>, memref<?x?x?x64xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>
  return
}
