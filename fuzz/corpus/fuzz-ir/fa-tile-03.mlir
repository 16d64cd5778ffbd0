// A function without fa.attention is not a kernel: left untouched.
func.func @no_attention(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

//--- choice.mlir

// gfx906 aims for 2 waves per SIMD, counting the LDS each workgroup takes
// (a CU's 64 KiB shared by its workgroups) as well as the registers. At D=64,
// 64x64 with separate K and V slots plus the padding reserved for fa-pad-lds
// (33792 bytes) leaves room for one workgroup per CU; with K and V in one
// slot (25344) two fit, so the chooser shares the slot. At D=128 the largest
// tile that reaches 2 waves is 64x32 with K and V shared.


// kv-shared=off: the largest tiles with separate K and V slots that still
// reach 2 waves per SIMD.

// kv-shared=on at D=64 is what auto chose; explicit tiles with kv-shared=auto
// share K and V only when that is what lets LDS reach the occupancy goal:
// 64x64 at D=64 (1 workgroup per CU apart, 2 shared) does, 64x32 (3
// workgroups per CU apart, the `loops` case above) does not.

// sm_90 does not count LDS towards occupancy and its goal is 1 wave; the
// chooser caps the blocks at 128x64 (the best measured on the H200, run 7),
// the register estimate does not bind there (ptxas decides), K and V keep
// their own slots, and 16-bit tiles are budgeted as f32 (kept widened in
// LDS).



func.func @d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @d128(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

//--- bf16-gfx906.mlir

func.func @bf16(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) -> tensor<1x8x128x64xbf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return %o : tensor<1x8x128x64xbf16>
}

//--- bf16.mlir

func.func @bf16(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) -> tensor<1x8x128x64xbf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return %o : tensor<1x8x128x64xbf16>
}

//--- kernel-shape.mlir

func.func @nested(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %r = scf.execute_region -> tensor<1x8x128x64xf16> {
    %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
    scf.yield %o : tensor<1x8x128x64xf16>
  }
  return %r : tensor<1x8x128x64xf16>
}
