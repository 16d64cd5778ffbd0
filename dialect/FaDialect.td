//===- FaDialect.td - The fa dialect definition ------------*- tablegen -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_TD
#define FA_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Fa_Dialect : Dialect {
  let name = "fa";
  let summary = "Fused attention: ops from standard attention to tile level";
  let description = [{
    The `fa` dialect spells attention at two levels:

    * Level 0 (tensor semantics): `fa.attention`, and the unfused chain
      `fa.matmul` -> `fa.softmax` -> `fa.matmul` that `fa-fuse` recognises.
    * Level 1 (tile level, produced by `fa-tile`): tile-sized tensor values
      loaded from and stored to memrefs (`fa.load_tile`, `fa.store_tile`),
      tile products (`fa.tile_dot`), row reductions and broadcasts, and masks.
      Elementwise math on tiles uses `arith` and `math` on tensors.

    The dialect holds IR only: transformations live in compiler/.
  }];
  let cppNamespace = "::mlir::fa";
  let useDefaultAttributePrinterParser = 1;
}

class Fa_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fa_Dialect, mnemonic, traits>;

def Fa_ReduceKind : I32EnumAttr<"ReduceKind", "row reduction kind", [
    I32EnumAttrCase<"max", 0>,
    I32EnumAttrCase<"add", 1>
  ]> {
  let cppNamespace = "::mlir::fa";
  let genSpecializedAttr = 0;
}
def Fa_ReduceKindAttr : EnumAttr<Fa_Dialect, Fa_ReduceKind, "reduce_kind"> {
  let assemblyFormat = "$value";
}

def Fa_TileConfigAttr : AttrDef<Fa_Dialect, "TileConfig"> {
  let mnemonic = "tile";
  let summary = "Tile configuration of one attention kernel";
  let description = [{
    Chosen by `fa-tile` (explicitly or from the target's budget model) and
    carried by the tile-level IR so that later passes lower it consistently.
    `lds_pad` is the row padding (elements) that `fa-promote` gives every
    row-major LDS buffer; `fa-pad-lds` then pads each buffer on its own and
    records the largest padding here. `kv_shared` (printed only when true)
    puts the K and V blocks in one LDS slot, one after the other: less LDS
    (more workgroups per CU) for two more barriers per K/V block.

    ```mlir
    #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4,
             wave_size = 64, stages = 1, lds_pad = 0>
    ```
  }];
  let parameters = (ins
    "::mlir::StringAttr":$target,
    "int64_t":$block_m,
    "int64_t":$block_n,
    "int64_t":$waves,
    "int64_t":$wave_size,
    "int64_t":$stages,
    "int64_t":$lds_pad,
    DefaultValuedParameter<"bool", "false">:$kv_shared
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    int64_t getThreads() const { return getWaves() * getWaveSize(); }
  }];
}

#endif // FA_DIALECT_TD
