func.func @output_not_returned(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128xf32> {
  %o, %lse = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>, tensor<1x8x128xf32>
  return %lse : tensor<1x8x128xf32>
}

//--- over-budget.mlir

// The seed's example: 128x128 blocks at D=128 need twice gfx906's LDS.
func.func @over_budget(%q: tensor<1x8x1024x128xf16>, %k: tensor<1x8x1024x128xf16>, %v: tensor<1x8x1024x128xf16>) -> tensor<1x8x1024x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x1024x128xf16>, tensor<1x8x1024x128xf16>, tensor<1x8x1024x128xf16> -> tensor<1x8x1024x128xf16>
  return %o : tensor<1x8x1024x128xf16>
}

//--- no-fit.mlir

// Even 16x16 blocks of f32 at D=512 overflow 64 KiB (Q, K and V: 96 KiB).
func.func @no_fit(%q: tensor<1x1x64x512xf32>, %k: tensor<1x1x64x512xf32>, %v: tensor<1x1x64x512xf32>) -> tensor<1x1x64x512xf32> {
  %o = fa.attention %q, %k, %v : tensor<1x1x64x512xf32>, tensor<1x1x64x512xf32>, tensor<1x1x64x512xf32> -> tensor<1x1x64x512xf32>
  return %o : tensor<1x1x64x512xf32>
}

//--- too-many-threads.mlir

func.func @too_many_threads(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- not-divisible.mlir

// 24 rows do not divide over 256 threads in whole rows of lanes.
func.func @not_divisible(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- registers.mlir

// One wave for a 128x32 tile: fits gfx906's LDS, not its registers.
func.func @registers(%q: tensor<1x8x1024x64xf16>, %k: tensor<1x8x1024x64xf16>, %v: tensor<1x8x1024x64xf16>) -> tensor<1x8x1024x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16> -> tensor<1x8x1024x64xf16>
  return %o : tensor<1x8x1024x64xf16>
}

//--- registers-sm90.mlir

func.func @registers(%q: tensor<1x8x1024x64xf16>, %k: tensor<1x8x1024x64xf16>, %v: tensor<1x8x1024x64xf16>) -> tensor<1x8x1024x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16> -> tensor<1x8x1024x64xf16>
  return %o : tensor<1x8x1024x64xf16>
}

//--- stages.mlir

func.func @stages(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- stages-auto.mlir

// f32 at D=64, 32x64 over 128 threads: single-buffered about 104 registers
// (2 waves per SIMD); the 32 that would hold K or V of block n+1 make it
// 136 (1 wave).
func.func @stages_auto(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}

//--- stages-forced.mlir

// f16 at D=128, 64x64 over 128 threads: 256 registers single-buffered (the
// most a gfx906 lane has), 288 with K or V of block n+1.
func.func @stages_forced(%q: tensor<1x8x128x128xf16>, %k: tensor<1x8x128x128xf16>, %v: tensor<1x8x128x128xf16>) -> tensor<1x8x128x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x128xf16>, tensor<1x8x128x128xf16> -> tensor<1x8x128x128xf16>
  return %o : tensor<1x8x128x128xf16>
}

//--- huge.mlir

// Used to overflow the budget's arithmetic ("LDS total -9223372036854760192").
func.func @huge(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- negative.mlir

func.func @negative(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- kv-shared.mlir

func.func @kv_shared(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- unknown-target.mlir

module {
  func.func @unknown_target(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
    return %o : tensor<1x8x128x64xf16>
  }
}
