//===- LowerToRocdl.cpp - gfx906: gpu dialect -> ROCDL --------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file lowers Level 2 kernels for gfx906 (upstream ROCDL):
//
//   1. in each gpu.module: f32 exp2 and log2 become the hardware's v_exp_f32
//      and v_log_f32 (rocdl.exp2 / rocdl.log, per element), not ocml calls,
//      so no device library is needed; with dot2, Q*K^T products over
//      contiguous f16 pairs become v_dot2_f32_f16; scf -> cf;
//      convert-gpu-to-rocdl (chipset gfx906);
//   2. the gpu.module's contents become a builtin.module for translation
//      (Targets/Codegen.h runs the AMDGPU backend on it).
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Gfx906/LowerToRocdl.h"
#include "compiler/Analysis/KernelInfo.h"
#include "compiler/Analysis/LdsBudget.h"
#include "compiler/Targets/DeviceModule.h"
#include "dialect/FaOps.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// The ROCDL op `RocdlOp` on one f32 value.
template <typename RocdlOp>
static Value rocdl(OpBuilder &b, Location loc, Value x) {
  return RocdlOp::create(b, loc, b.getF32Type(), x);
}

/// The f16 value `v` was extended from, or null.
static Value f16Source(Value v) {
  auto ext = v.getDefiningOp<arith::ExtFOp>();
  if (!ext || !ext.getIn().getType().isF16())
    return Value();
  return ext.getIn();
}

/// The f16 sources of every element of `v` = vector.from_elements(extf ...)
/// or vector.broadcast(extf x) (what canonicalisation makes of
/// from_elements(x, x, ...): one rhs column per thread), or false.
static bool f16Elements(Value v, SmallVectorImpl<Value> &out) {
  if (auto bc = v.getDefiningOp<vector::BroadcastOp>()) {
    Value src = f16Source(bc.getSource());
    auto vt = dyn_cast<VectorType>(v.getType());
    if (!src || !vt || vt.getRank() != 1)
      return false;
    out.append(vt.getNumElements(), src);
    return true;
  }
  auto fe = v.getDefiningOp<vector::FromElementsOp>();
  if (!fe)
    return false;
  for (Value e : fe.getElements()) {
    Value src = f16Source(e);
    if (!src)
      return false;
    out.push_back(src);
  }
  return true;
}

/// Whether x and y are elements 0 and 1 of one vector<2xf16> (a pair that
/// is contiguous in LDS, read with one load).
static bool samePair(Value x, Value y) {
  auto ex = x.getDefiningOp<vector::ExtractOp>();
  auto ey = y.getDefiningOp<vector::ExtractOp>();
  if (!ex || !ey || ex.getSource() != ey.getSource())
    return false;
  auto px = ex.getStaticPosition(), py = ey.getStaticPosition();
  return px.size() == 1 && py.size() == 1 && px[0] == 0 && py[0] == 1;
}

/// Rewrites the tile products' f16 pair steps into v_dot2_f32_f16:
///
///   %p0 = math.fma (from_elements(extf a0_i)), (from_elements(extf b0_j)),
///   %acc %p1 = math.fma (from_elements(extf a1_i)), (from_elements(extf
///   b1_j)), %p0
///
/// becomes, per element e, llvm.amdgcn.fdot2([a0_e, a1_e], [b0_e, b1_e],
/// acc_e, clamp=false): two f16 products summed into an f32 accumulator in
/// one instruction (fp32 accumulation, as the seed requires).
static void useDot2(Operation *root) {
  SmallVector<math::FmaOp> outer;
  root->walk([&](math::FmaOp op) {
    auto inner = op.getC().getDefiningOp<math::FmaOp>();
    if (inner && inner->hasOneUse() && isa<VectorType>(op.getType()) &&
        getElementTypeOrSelf(op.getType()).isF32())
      outer.push_back(op);
  });
  for (math::FmaOp op : outer) {
    // In an unrolled chain the previous pair was already rewritten.
    auto inner = op.getC().getDefiningOp<math::FmaOp>();
    if (!inner)
      continue;
    SmallVector<Value> a0, b0, a1, b1;
    if (!f16Elements(inner.getA(), a0) || !f16Elements(inner.getB(), b0) ||
        !f16Elements(op.getA(), a1) || !f16Elements(op.getB(), b1))
      continue;
    // Only where both operands' pairs are contiguous (Q·Kᵀ): packing a pair
    // read from two places (V down a column) costs the registers that
    // decide gfx906's occupancy; that needs V stored pair-interleaved.
    bool contiguous = true;
    for (size_t e = 0; e < a0.size(); ++e)
      contiguous =
          contiguous && samePair(a0[e], a1[e]) && samePair(b0[e], b1[e]);
    if (!contiguous)
      continue;
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto pairType = VectorType::get({2}, b.getF16Type());
    auto vt = cast<VectorType>(op.getType());
    StringAttr name = b.getStringAttr("llvm.amdgcn.fdot2");
    Value clamp = arith::ConstantIntOp::create(b, loc, 0, 1);
    SmallVector<Value> results;
    for (int64_t e = 0; e < vt.getNumElements(); ++e) {
      Value x = vector::FromElementsOp::create(b, loc, pairType,
                                               ValueRange{a0[e], a1[e]});
      Value y = vector::FromElementsOp::create(b, loc, pairType,
                                               ValueRange{b0[e], b1[e]});
      Value acc =
          vector::ExtractOp::create(b, loc, inner.getC(), ArrayRef<int64_t>{e});
      results.push_back(
          LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(), name,
                                        ValueRange{x, y, acc, clamp})
              .getResult(0));
    }
    op.replaceAllUsesWith(
        vector::FromElementsOp::create(b, loc, vt, results).getResult());
    op.erase();
    inner.erase();
  }
}

/// fa-lower-to-gpu's share-rows rotations: a gpu.shuffle idx marked
/// fa.row_rotate = r reads lane (c + r) mod 16 of the reader's 16-lane row
/// (c its own in-row lane), which is DPP row_ror:(16 - r): row_ror:n gives
/// lane i the value of lane (i - n) mod 16 of its row (AMD's Vega ISA,
/// "DPP"). One v_mov_b32_dpp on the VALU instead of a ds_bpermute_b32
/// through the LDS. Every lane of the row is valid: `valid` is true.
///
/// fa-lower-to-gpu's row reductions: a gpu.shuffle xor k (k = 1, 2, 4, 8)
/// marked fa.row_xor, whose value is the same on each aligned group of k
/// lanes. Lane i then needs any lane of the partner group i ^ k, which DPP
/// reads within a 16-lane row: quad_perm [1,0,3,2] (i ^ 1) and [2,3,0,1]
/// (i ^ 2) exactly, row_half_mirror (8-lane group base + 7 - i%8: the other
/// 4-lane half) for 4, row_mirror (row base + 15 - i%16: the other 8-lane
/// half) for 8. Every source lane is valid, so bound_ctrl changes nothing;
/// it is set because the backend folds a v_mov_b32_dpp into the VALU
/// instruction that uses it (v_add_f32_dpp, v_max_f32_dpp) only with it
/// (GCNDPPCombine). Offsets of 16 and up stay shuffles (ds_swizzle).
static int32_t rowXorDpp(int64_t k) {
  switch (k) {
  case 1:
    return 1 | 0 << 2 | 3 << 4 | 2 << 6; // quad_perm:[1,0,3,2]
  case 2:
    return 2 | 3 << 2 | 0 << 4 | 1 << 6; // quad_perm:[2,3,0,1]
  case 4:
    return 0x141; // row_half_mirror
  case 8:
    return 0x140; // row_mirror
  default:
    return -1;
  }
}

static void useDpp(Operation *root) {
  SmallVector<std::pair<gpu::ShuffleOp, int32_t>> moves;
  root->walk([&](gpu::ShuffleOp op) {
    if (!op.getValue().getType().isIntOrFloat() ||
        op.getValue().getType().getIntOrFloatBitWidth() != 32)
      return;
    if (op->hasAttr("fa.row_rotate") && op.getMode() == gpu::ShuffleMode::IDX) {
      int64_t r = op->getAttrOfType<IntegerAttr>("fa.row_rotate").getInt();
      if (r > 0 && r < 16)
        moves.push_back({op, 0x120 + int32_t(16 - r)});
      return;
    }
    if (op->hasAttr("fa.row_xor") && op.getMode() == gpu::ShuffleMode::XOR) {
      IntegerAttr k;
      if (!matchPattern(op.getOffset(), m_Constant(&k)))
        return;
      if (int32_t ctrl = rowXorDpp(k.getInt()); ctrl >= 0)
        moves.push_back({op, ctrl});
    }
  });
  for (auto [op, ctrl] : moves) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value v = op.getValue();
    Value moved = ROCDL::DPPUpdateOp::create(
        b, loc, v.getType(), v, v, b.getI32IntegerAttr(ctrl),
        b.getI32IntegerAttr(0xf), b.getI32IntegerAttr(0xf),
        b.getBoolAttr(op->hasAttr("fa.row_xor")));
    op.getShuffleResult().replaceAllUsesWith(moved);
    op.getValid().replaceAllUsesWith(
        arith::ConstantIntOp::create(b, loc, 1, 1).getResult());
    op.erase();
  }
}

/// Global memory addressed as a uniform base plus a 32-bit byte offset.
/// memref-to-llvm's GEPs index elements with the 32-bit index (index_bits
/// 32): the backend forms each address as the 64-bit sum
/// base + zext(index) * size per lane (v_lshlrev_b64, v_mov, v_add_co,
/// v_addc: four VALU a load or store). Rewritten as
///
///   getelementptr i8, %base, zext(shl nuw %index, log2 size)
///
/// the backend selects gfx9's `global_load v, v_off, s[base]` (base in
/// SGPRs, one 32-bit VGPR offset): one VALU or none. The rewrite needs the
/// byte offset to fit 32 unsigned bits; the runtime and the AOT launcher
/// refuse a launch of an index_bits 32 kernel whose offsets pass 2^32 - 1
/// bytes (and 2^31 - 1 elements). The rewrite needs the index
/// non-negative. memref-to-llvm states it (`nuw`) for memref.load/store;
/// vector-to-llvm's GEPs for vector.load/store (the 16-byte copies) carry
/// no flags (vector.load itself may read out of bounds), but fa's kernels
/// form every global index as sums and products of non-negative values
/// (the descriptor's offset, batch, head, row, column, strides) below 2^31
/// (the runtime's limit), so those are non-negative too: a flagless GEP
/// qualifies where every use is the address of a vector load or store, or
/// the base of a qualifying GEP (the descriptor's offset, then the index).
static bool nonNegativeIndex(LLVM::GEPOp op, int depth = 0) {
  if (bitEnumContainsAll(op.getNoWrapFlags(), LLVM::GEPNoWrapFlags::nuw))
    return true;
  if (depth > 2 || op->use_empty())
    return false;
  return llvm::all_of(op->getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto load = dyn_cast<LLVM::LoadOp>(user))
      return isa<VectorType>(load.getType());
    if (auto store = dyn_cast<LLVM::StoreOp>(user))
      return use.getOperandNumber() == 1 &&
             isa<VectorType>(store.getValue().getType());
    auto next = dyn_cast<LLVM::GEPOp>(user);
    return next && next.getBase() == op.getResult() &&
           nonNegativeIndex(next, depth + 1);
  });
}

static void useByteOffsets(Operation *root) {
  SmallVector<LLVM::GEPOp> geps;
  root->walk([&](LLVM::GEPOp op) {
    auto ptr = dyn_cast<LLVM::LLVMPointerType>(op.getType());
    if (!ptr || (ptr.getAddressSpace() != 0 && ptr.getAddressSpace() != 1))
      return;
    auto raw = op.getRawConstantIndices();
    if (raw.size() != 1 || raw[0] != LLVM::GEPOp::kDynamicIndex)
      return;
    Value index = op.getDynamicIndices()[0];
    if (!index.getType().isInteger(32) || !nonNegativeIndex(op))
      return;
    geps.push_back(op);
  });
  for (LLVM::GEPOp op : geps) {
    uint64_t size = DataLayout::closest(op).getTypeSize(op.getElemType());
    if (size == 0 || !llvm::isPowerOf2_64(size))
      continue;
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value index = op.getDynamicIndices()[0];
    Value bytes = index;
    if (size > 1)
      bytes = LLVM::ShlOp::create(
          b, loc, index,
          LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                   llvm::Log2_64(size)),
          LLVM::IntegerOverflowFlags::nuw);
    Value wide = LLVM::ZExtOp::create(b, loc, b.getI64Type(), bytes);
    Value addr = LLVM::GEPOp::create(b, loc, op.getType(), b.getI8Type(),
                                     op.getBase(), ValueRange{wide},
                                     op.getNoWrapFlags());
    op.replaceAllUsesWith(addr);
    op.erase();
  }
}

FailureOr<OwningOpRef<ModuleOp>>
fa::lowerToRocdl(ModuleOp module, unsigned indexBits, bool dot2) {
  OwningOpRef<ModuleOp> work = module.clone();
  for (auto gm : work->getOps<gpu::GPUModuleOp>()) {
    if (dot2)
      useDot2(gm);
    useDpp(gm);
    // Ask the register allocator for the seed's occupancy, 2 waves per SIMD
    // (at most 128 VGPRs), where LDS allows it (two workgroups per CU) and
    // the kernel is 16-bit: f32 kernels need more registers than that and
    // would spill. Whether it got there without spilling is read back from
    // the code object; elsewhere occupancy is left to the backend.
    gm.walk([&](gpu::GPUFuncOp f) {
      auto first = f.getNumArguments()
                       ? dyn_cast<MemRefType>(f.getArgumentTypes()[0])
                       : MemRefType();
      SmallVector<int64_t> offsets;
      int64_t lds = layoutLds(f, offsets);
      auto threads = f.getKnownBlockSize();
      bool ldsAllows =
          lds == 0 || ldsWavesPerSimd(*lookupTarget("gfx906"), lds,
                                      threads ? (*threads)[0] : 256) >= 2;
      // A split-KV combine kernel holds BLOCK_M x D f32 of O over its
      // threads, twice (the sum and a split's partial): above 32 per
      // thread (D=256 at 64 rows) 128 VGPRs spill, so the backend chooses.
      bool combineFits = true;
      if (f->hasAttr("fa.combine")) {
        auto tile = f->getAttrOfType<TileConfigAttr>("fa.tile");
        auto headDim = f->getAttrOfType<IntegerAttr>("fa.head_dim");
        combineFits = tile && headDim && tile.getThreads() > 0 &&
                      tile.getBlockM() * headDim.getInt() <=
                          32 * tile.getThreads();
      }
      if (f.isKernel() && first && first.getElementTypeBitWidth() == 16 &&
          ldsAllows && combineFits)
        f->setAttr("rocdl.waves_per_eu",
                   IntegerAttr::get(IntegerType::get(f.getContext(), 32), 2));
    });
    replaceF32PerElement<math::Exp2Op>(gm, rocdl<ROCDL::ROCDLExp2>);
    replaceF32PerElement<math::Log2Op>(gm, rocdl<ROCDL::ROCDLLog>);
  }
  PassManager pm(module.getContext());
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToROCDLOpsOptions rocdl;
  rocdl.chipset = "gfx906";
  rocdl.indexBitwidth = indexBits;
  // The dialects a Level 2 kernel uses, each lowered by its ConvertToLLVM
  // interface (registered in registerFaDialects).
  rocdl.allowedDialects = {"arith",  "cf",     "func", "math",
                           "memref", "vector", "ub"};
  gpu.addPass(createConvertGpuOpsToROCDLOps(rocdl));
  gpu.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(*work)))
    return failure();
  if (indexBits == 32)
    useByteOffsets(*work);
  // IEEE mode off (the kernel descriptor's IEEE_MODE bit): v_max_f32 then
  // takes a NaN operand as missing (llvm.maxnum's semantics) without
  // quieting it first, so the backend no longer canonicalises (v_max_f32
  // x, x, x) every value that did not come from a float instruction: each
  // shuffled partial of a row max (gfx906: 16 VALU per K/V block of the
  // D=128 default). fa's kernels raise no FP exceptions and read no
  // signalling NaNs on purpose; nothing else in them depends on the mode.
  work->walk([&](LLVM::LLVMFuncOp f) {
    SmallVector<Attribute> pass;
    if (ArrayAttr old = f.getPassthroughAttr())
      pass.append(old.begin(), old.end());
    pass.push_back(ArrayAttr::get(
        f.getContext(), {StringAttr::get(f.getContext(), "amdgpu-ieee"),
                         StringAttr::get(f.getContext(), "false")}));
    f.setPassthroughAttr(ArrayAttr::get(f.getContext(), pass));
  });

  return extractDeviceModule(*work, module, "gfx906");
}
