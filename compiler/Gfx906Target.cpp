//===- Gfx906Target.cpp - The gfx906 backend ------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file lowers Level 2 kernels for gfx906 and reads the backend's
// resource figures back:
//
//   1. in each gpu.module: f32 exp2 and log2 become the hardware's v_exp_f32
//      and v_log_f32 (rocdl.exp2 / rocdl.log, per element), not ocml calls,
//      so no device library is needed; scf -> cf; convert-gpu-to-rocdl
//      (chipset gfx906);
//   2. the gpu.module's contents become a builtin.module for translation;
//   3. after the AMDGPU backend ran (Codegen.h), its assembly is parsed for
//      the code object metadata and instruction classes, and its KV loop is
//      found (natural loops of the kernel's control-flow graph) and counted
//      for the report's per-iteration mix and MI50 throughput estimate
//      (docs/mi50-throughput-model.md).
//
//===----------------------------------------------------------------------===//

#include "compiler/Gfx906Target.h"
#include "compiler/DeviceModule.h"
#include "compiler/KernelInfo.h"
#include "compiler/LdsBudget.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <tuple>

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

/// The f16 sources of every element of `v` = vector.from_elements(extf ...),
/// or false.
static bool f16Elements(Value v, SmallVectorImpl<Value> &out) {
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

FailureOr<OwningOpRef<ModuleOp>>
fa::lowerToRocdl(ModuleOp module, unsigned indexBits, bool dot2) {
  OwningOpRef<ModuleOp> work = module.clone();
  for (auto gm : work->getOps<gpu::GPUModuleOp>()) {
    if (dot2)
      useDot2(gm);
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
      if (f.isKernel() && first && first.getElementTypeBitWidth() == 16 &&
          ldsAllows)
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

  return extractDeviceModule(*work, module, "gfx906");
}

/// The integer after `key` on a line `<key><spaces><value>`.
static bool readField(llvm::StringRef line, llvm::StringRef key, int64_t &out) {
  line = line.trim();
  if (!line.consume_front(key))
    return false;
  return !line.trim().getAsInteger(10, out);
}

/// Instruction classes of the reports' mixes: name and mnemonic prefix.
static const std::pair<const char *, const char *> instructionClasses[] = {
    {"v_dot2", "v_dot2_f32_f16"},     {"v_fma_mix", "v_fma_mix"},
    {"v_fma_f32", "v_fma_f32"},       {"v_fmac_f32", "v_fmac_f32"},
    {"v_pk_fma", "v_pk_fma"},         {"v_exp_f32", "v_exp_f32"},
    {"ds_read", "ds_read"},           {"ds_write", "ds_write"},
    {"ds_swizzle", "ds_swizzle"},     {"global_load", "global_load"},
    {"global_store", "global_store"}, {"scratch (buffer_*)", "buffer_"},
    {"s_barrier", "s_barrier"},
};

static void countClasses(llvm::StringRef mnemonic,
                         std::map<std::string, int64_t> &mix) {
  for (const auto &[name, prefix] : instructionClasses)
    if (mnemonic.starts_with(prefix))
      ++mix[name];
}

/// FLOP per lane of a multiply-accumulate instruction (v_dot2_f32_f16 and
/// v_pk_fma_f16: 2 MACs; v_fma_mix, v_fmac, v_mac: 1), or 0: these mark the
/// loop of the two GEMMs.
static int64_t macFlopsPerLane(llvm::StringRef m) {
  if (m.starts_with("v_dot2") || m.starts_with("v_pk_fma"))
    return 4;
  if (m.starts_with("v_fma_mix") || m.starts_with("v_fmac_") ||
      m.starts_with("v_mac_"))
    return 2;
  return 0;
}

int64_t fa::ldsBytesPerLane(llvm::StringRef mnemonic) {
  bool read =
      mnemonic.starts_with("ds_read") || mnemonic.starts_with("ds_load");
  bool write =
      mnemonic.starts_with("ds_write") || mnemonic.starts_with("ds_store");
  if (!read && !write)
    return 0;
  // ds_read2_b32 / ds_read2st64_b64 / ds_write2_b64: two elements.
  bool two =
      mnemonic.starts_with("ds_read2") || mnemonic.starts_with("ds_write2") ||
      mnemonic.starts_with("ds_load_2") || mnemonic.starts_with("ds_store_2");
  static const std::pair<const char *, int64_t> widths[] = {
      {"_b128", 16}, {"_b96", 12}, {"_b64", 8}, {"_b32", 4}, {"_b16", 2},
      {"_u16", 2},   {"_i16", 2},  {"_b8", 1},  {"_u8", 1},  {"_i8", 1}};
  for (const auto &[suffix, bytes] : widths)
    if (mnemonic.contains(suffix))
      return two ? 2 * bytes : bytes;
  return 0;
}

namespace {
/// A basic block of a kernel's assembly: its instructions' mnemonics, the
/// label its last instruction branches to, if any, and whether control
/// falls through to the next block.
struct AsmBlock {
  llvm::StringRef label;
  std::vector<llvm::StringRef> mnemonics, operands;
  llvm::StringRef target;
  bool fallsThrough = true, closed = false;
  llvm::SmallVector<unsigned, 2> succs, preds;
};
} // namespace

/// Registers `lo`..`hi` of an SGPR operand (`s12`, `s[12:13]`).
static bool sgprRange(llvm::StringRef op, unsigned &lo, unsigned &hi) {
  op = op.trim();
  if (!op.consume_front("s"))
    return false;
  if (op.consume_front("[")) {
    auto [first, last] = op.split(':');
    return !first.getAsInteger(10, lo) && last.consume_back("]") &&
           !last.getAsInteger(10, hi);
  }
  if (op.getAsInteger(10, lo))
    return false;
  hi = lo;
  return true;
}

/// The single SGPR `op` names, if it names one.
static std::optional<unsigned> sgpr(llvm::StringRef op) {
  unsigned lo, hi;
  if (sgprRange(op, lo, hi) && lo == hi)
    return lo;
  return std::nullopt;
}

/// An integer literal operand, as the 32 bits an SALU instruction sees.
static std::optional<uint32_t> literal(llvm::StringRef op) {
  int64_t v;
  if (op.trim().getAsInteger(0, v))
    return std::nullopt;
  return static_cast<uint32_t>(v);
}

/// Whether an instruction writes SGPR `reg`: its first operand (not for
/// compares and stores, which read it), or a VALU carry-out or second
/// destination (`v_add_co_u32_e64 v1, s[2:3], ...`, v_div_scale, v_mad_u64).
static bool writesSgpr(llvm::StringRef m, llvm::StringRef operands,
                       unsigned reg) {
  if (m.starts_with("s_cmp") || m.starts_with("s_bitcmp") ||
      m.starts_with("s_store") || m.starts_with("s_buffer_store"))
    return false;
  llvm::SmallVector<llvm::StringRef, 4> ops;
  operands.split(ops, ',');
  auto names = [&](llvm::StringRef op) {
    unsigned lo, hi;
    return sgprRange(op, lo, hi) && lo <= reg && reg <= hi;
  };
  if (!ops.empty() && names(ops[0]))
    return true;
  bool secondDest =
      m.starts_with("v_") && (m.contains("_co_") || m.contains("div_scale") ||
                              m.contains("mad_u64") || m.contains("mad_i64"));
  return secondDest && ops.size() > 1 && names(ops[1]);
}

/// The basic blocks of a kernel body (its lines from the kernel's label to
/// .Lfunc_end): a block starts at a label or after a branch.
static std::vector<AsmBlock> buildBlocks(llvm::ArrayRef<llvm::StringRef> body) {
  std::vector<AsmBlock> blocks(1);
  llvm::StringMap<unsigned> labels;
  for (llvm::StringRef line : body) {
    line = line.split(';').first.trim();
    if (line.empty())
      continue;
    if (line.ends_with(":")) {
      AsmBlock &last = blocks.back();
      if (!last.mnemonics.empty() || last.closed || !last.label.empty())
        blocks.emplace_back();
      blocks.back().label = line.drop_back();
      labels[blocks.back().label] = blocks.size() - 1;
      continue;
    }
    if (line[0] == '.')
      continue; // a directive
    if (blocks.back().closed)
      blocks.emplace_back(); // reached only by falling through
    size_t space = line.find_first_of(" \t");
    llvm::StringRef mnemonic = line.take_front(space);
    llvm::StringRef operands = line.drop_front(mnemonic.size());
    AsmBlock &b = blocks.back();
    b.mnemonics.push_back(mnemonic);
    b.operands.push_back(operands.trim());
    if (mnemonic.starts_with("s_cbranch_") || mnemonic == "s_branch") {
      b.target = operands.trim();
      b.fallsThrough = mnemonic != "s_branch";
      b.closed = true;
    } else if (mnemonic == "s_endpgm" || mnemonic.starts_with("s_setpc")) {
      b.fallsThrough = false;
      b.closed = true;
    }
  }
  for (unsigned i = 0; i < blocks.size(); ++i) {
    AsmBlock &b = blocks[i];
    if (!b.target.empty()) {
      auto it = labels.find(b.target);
      if (it != labels.end())
        b.succs.push_back(it->second);
    }
    if (b.fallsThrough && i + 1 < blocks.size())
      b.succs.push_back(i + 1);
    for (unsigned s : b.succs)
      blocks[s].preds.push_back(i);
  }
  return blocks;
}

/// The trip count of the loop `loop` with header `header`, or 0 where it is
/// not static. It is where the backend counts with an SGPR: one latch that
/// ends in `s_cbranch_scc0/1 <header>` after `s_cmp[k]_<pred>_<i32|u32> sX,
/// <literal>` (only instructions that leave SCC alone in between), the
/// counter's one write in the loop `s_add/s_sub_<i32|u32> sX, sX, <literal>`
/// (or s_addk_i32) before the compare in the latch, and `s_mov[k]_b32 sX,
/// <literal>` on the one way in, before the header:
///
///   s_mov_b32 s2, -2          ; 8 trips: s2 = 6, 14, ..., 62
/// .LBB0_20:
///   ...
///   s_add_i32 s2, s2, 8
///   s_cmp_lt_u32 s2, 62
///   s_cbranch_scc1 .LBB0_20
static int64_t tripCount(const std::vector<AsmBlock> &blocks, unsigned header,
                         const llvm::BitVector &loop) {
  llvm::SmallVector<unsigned> latches, entries;
  for (unsigned p : blocks[header].preds)
    (loop.test(p) ? latches : entries).push_back(p);
  if (latches.size() != 1 || entries.size() != 1)
    return 0;
  const AsmBlock &latch = blocks[latches[0]];
  size_t n = latch.mnemonics.size();
  if (n == 0 || latch.target != blocks[header].label)
    return 0;
  llvm::StringRef branch = latch.mnemonics[n - 1];
  if (branch != "s_cbranch_scc1" && branch != "s_cbranch_scc0")
    return 0;
  // The compare: the last scalar instruction before the branch that is not
  // s_waitcnt, s_nop or s_barrier (those leave SCC alone; VALU, LDS and
  // memory instructions do too).
  size_t cmp = n - 1;
  while (cmp-- > 0) {
    llvm::StringRef m = latch.mnemonics[cmp];
    if (m.starts_with("s_") && !m.starts_with("s_waitcnt") && m != "s_nop" &&
        m != "s_barrier")
      break;
  }
  if (cmp >= n)
    return 0;
  llvm::StringRef predicate = latch.mnemonics[cmp];
  if (!predicate.consume_front("s_cmpk_") && !predicate.consume_front("s_cmp_"))
    return 0;
  // Plain locals, not structured bindings: the lambda below uses them.
  llvm::StringRef pred, type;
  std::tie(pred, type) = predicate.split('_');
  if (type != "u32" && type != "i32")
    return 0;
  auto [lhs, rhs] = latch.operands[cmp].split(',');
  std::optional<unsigned> reg = sgpr(lhs);
  std::optional<uint32_t> bound = literal(rhs);
  if (!reg || !bound) {
    // `s_cmp_gt_u32 62, s2` is `s2 < 62`.
    reg = sgpr(rhs);
    bound = literal(lhs);
    static const std::pair<llvm::StringRef, llvm::StringRef> swapped[] = {
        {"lt", "gt"}, {"gt", "lt"}, {"le", "ge"}, {"ge", "le"}};
    for (const auto &[from, to] : swapped)
      if (pred == from) {
        pred = to;
        break;
      }
  }
  if (!reg || !bound)
    return 0;
  // The counter's one write in the loop: a step before the compare.
  std::optional<uint32_t> step;
  for (unsigned b : loop.set_bits())
    for (size_t i = 0; i < blocks[b].mnemonics.size(); ++i) {
      llvm::StringRef m = blocks[b].mnemonics[i];
      if (!writesSgpr(m, blocks[b].operands[i], *reg))
        continue;
      if (step || b != latches[0] || i > cmp)
        return 0;
      llvm::SmallVector<llvm::StringRef, 3> ops;
      blocks[b].operands[i].split(ops, ',');
      std::optional<uint32_t> imm;
      if (m == "s_addk_i32" && ops.size() == 2)
        imm = literal(ops[1]);
      else if (ops.size() == 3 && sgpr(ops[1]) == reg)
        imm = literal(ops[2]);
      else if (ops.size() == 3 && sgpr(ops[2]) == reg &&
               m.starts_with("s_add_"))
        imm = literal(ops[1]);
      if (!imm)
        return 0;
      if (m == "s_add_i32" || m == "s_add_u32" || m == "s_addk_i32")
        step = *imm;
      else if (m == "s_sub_i32" || m == "s_sub_u32")
        step = 0u - *imm;
      else
        return 0;
    }
  if (!step)
    return 0;
  // Its start: the last write before the header, on a chain of blocks with
  // one predecessor each (so it is the value of every entry).
  std::optional<uint32_t> start;
  unsigned b = entries[0];
  for (int hops = 0; !start && hops < 16; ++hops) {
    const AsmBlock &block = blocks[b];
    for (size_t i = block.mnemonics.size(); i-- > 0;) {
      llvm::StringRef m = block.mnemonics[i];
      if (!writesSgpr(m, block.operands[i], *reg))
        continue;
      if (m != "s_mov_b32" && m != "s_movk_i32")
        return 0;
      start = literal(block.operands[i].split(',').second);
      if (!start)
        return 0;
      break;
    }
    if (!start && block.preds.size() != 1)
      return 0;
    if (!start)
      b = block.preds[0];
  }
  if (!start)
    return 0;
  // Run the counter: the body runs once, then again while the branch goes
  // back to the header.
  auto holds = [&](uint32_t v) {
    bool s = type == "i32";
    int64_t x = s ? int64_t(int32_t(v)) : int64_t(v);
    int64_t y = s ? int64_t(int32_t(*bound)) : int64_t(*bound);
    if (pred == "lt")
      return x < y;
    if (pred == "le")
      return x <= y;
    if (pred == "gt")
      return x > y;
    if (pred == "ge")
      return x >= y;
    if (pred == "eq")
      return x == y;
    return x != y; // lg
  };
  if (pred != "lt" && pred != "le" && pred != "gt" && pred != "ge" &&
      pred != "eq" && pred != "lg")
    return 0;
  uint32_t v = *start;
  for (int64_t trips = 1; trips <= (1 << 20); ++trips) {
    v += *step;
    if (holds(v) != (branch == "s_cbranch_scc1"))
      return trips;
  }
  return 0;
}

/// The outermost loops of a kernel body that hold multiply-accumulate
/// instructions, the KV loop (around the two GEMMs) first and other versions
/// of it after. Loops are the natural loops of the control-flow graph (a
/// branch to a block that dominates it closes a loop), so a block placed
/// after a loop that jumps back into the kernel is not mistaken for one.
/// Loops still nested in a candidate (dot and copy loops the backend did not
/// unroll) count their trip count times where tripCount finds it, else once;
/// they are listed in `inner`.
static std::vector<fa::AmdgpuLoopStats>
findMacLoops(llvm::ArrayRef<llvm::StringRef> body) {
  std::vector<AsmBlock> blocks = buildBlocks(body);
  unsigned n = blocks.size();
  // Reachability from the entry, then dominators (iterative data flow).
  llvm::BitVector reachable(n);
  llvm::SmallVector<unsigned> work = {0};
  reachable.set(0);
  while (!work.empty()) {
    unsigned b = work.pop_back_val();
    for (unsigned s : blocks[b].succs)
      if (!reachable.test(s)) {
        reachable.set(s);
        work.push_back(s);
      }
  }
  std::vector<llvm::BitVector> dom(n, reachable);
  dom[0] = llvm::BitVector(n);
  dom[0].set(0);
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned b = 1; b < n; ++b) {
      if (!reachable.test(b))
        continue;
      llvm::BitVector d = reachable;
      for (unsigned p : blocks[b].preds)
        if (reachable.test(p))
          d &= dom[p];
      d.set(b);
      if (d != dom[b]) {
        dom[b] = std::move(d);
        changed = true;
      }
    }
  }
  // Natural loops, merged per header: the header and every block that
  // reaches a back edge's source without passing through the header.
  std::map<unsigned, llvm::BitVector> loops;
  for (unsigned b = 0; b < n; ++b) {
    if (!reachable.test(b))
      continue;
    for (unsigned h : blocks[b].succs) {
      if (!dom[b].test(h))
        continue;
      llvm::BitVector &loop =
          loops.try_emplace(h, llvm::BitVector(n)).first->second;
      loop.set(h);
      llvm::SmallVector<unsigned> stack;
      if (!loop.test(b)) {
        loop.set(b);
        stack.push_back(b);
      }
      while (!stack.empty()) {
        unsigned x = stack.pop_back_val();
        for (unsigned p : blocks[x].preds)
          if (reachable.test(p) && !loop.test(p)) {
            loop.set(p);
            stack.push_back(p);
          }
      }
    }
  }
  auto macs = [&](const llvm::BitVector &loop) {
    int64_t count = 0;
    for (unsigned b : loop.set_bits())
      count += llvm::count_if(blocks[b].mnemonics, macFlopsPerLane);
    return count;
  };
  // Whether `inner` is a loop nested in `outer`.
  auto contains = [](const llvm::BitVector &outer,
                     const llvm::BitVector &inner) {
    return outer != inner && !inner.test(outer);
  };
  // The candidates: outermost loops with MACs, in the order of the code.
  llvm::SmallVector<unsigned> candidates;
  for (const auto &[header, loop] : loops) {
    bool nested = llvm::any_of(
        loops, [&](const auto &other) { return contains(other.second, loop); });
    if (macs(loop) > 0 && !nested)
      candidates.push_back(header);
  }

  std::vector<fa::AmdgpuLoopStats> result;
  for (unsigned header : candidates) {
    const llvm::BitVector &loop = loops.at(header);
    fa::AmdgpuLoopStats &stats = result.emplace_back();
    stats.header = blocks[header].label.str();
    // Each block counts as often as it runs per iteration: the product of
    // the trip counts of the inner loops around it (1 where not static).
    std::vector<int64_t> runs(n, 1);
    for (const auto &[innerHeader, inner] : loops) {
      if (!contains(loop, inner))
        continue;
      int64_t trips = tripCount(blocks, innerHeader, inner);
      stats.inner.push_back({blocks[innerHeader].label.str(), trips});
      for (unsigned b : inner.set_bits())
        runs[b] *= std::max<int64_t>(trips, 1);
    }
    for (unsigned b : loop.set_bits()) {
      int64_t w = runs[b];
      for (llvm::StringRef m : blocks[b].mnemonics) {
        std::map<std::string, int64_t> once;
        countClasses(m, once);
        for (const auto &[name, count] : once)
          stats.mix[name] += w * count;
        stats.macFlopsPerLane += w * macFlopsPerLane(m);
        if (m.starts_with("v_")) {
          stats.valu += w;
          stats.dot2 += m.starts_with("v_dot2") ? w : 0;
        } else if (m.starts_with("s_")) {
          stats.salu += w;
          stats.barriers += m == "s_barrier" ? w : 0;
        } else if (m.starts_with("ds_")) {
          stats.lds += w;
          int64_t bytes = fa::ldsBytesPerLane(m);
          bool read = m.starts_with("ds_read") || m.starts_with("ds_load");
          (read ? stats.ldsReads : stats.ldsWrites) += bytes > 0 ? w : 0;
          (read ? stats.ldsReadBytes : stats.ldsWriteBytes) += w * bytes;
        } else if (m.starts_with("global_") || m.starts_with("buffer_") ||
                   m.starts_with("flat_")) {
          stats.global += w;
        }
      }
    }
  }
  // The KV loop first: the most MAC FLOP per iteration; of versions of one
  // loop (fa versions the KV loop on copy alignment; a causal kernel may
  // have one for the diagonal blocks), the one counted most completely
  // (fewest inner loops without a static trip count: the vector copies',
  // not the scalar fallback's), then the one with the fewest VALU (the
  // unmasked one); then the first in the code.
  auto unknownTrips = [](const fa::AmdgpuLoopStats &l) {
    return llvm::count_if(l.inner, [](const auto &i) { return i.trips == 0; });
  };
  llvm::stable_sort(result, [&](const auto &x, const auto &y) {
    if (x.macFlopsPerLane != y.macFlopsPerLane)
      return x.macFlopsPerLane > y.macFlopsPerLane;
    if (unknownTrips(x) != unknownTrips(y))
      return unknownTrips(x) < unknownTrips(y);
    return x.valu < y.valu;
  });
  return result;
}

std::vector<fa::AmdgpuResources>
fa::parseAmdgpuResources(llvm::StringRef assembly) {
  std::vector<AmdgpuResources> kernels;
  // The code object metadata (YAML inside .amdgpu_metadata) lists each
  // kernel as `- .args: ...` with `.name:` and the resource fields.
  llvm::SmallVector<llvm::StringRef> lines;
  assembly.split(lines, '\n');
  AmdgpuResources *current = nullptr;
  bool inMetadata = false;
  for (llvm::StringRef raw : lines) {
    llvm::StringRef line = raw.trim();
    if (line.starts_with(".amdgpu_metadata"))
      inMetadata = true;
    if (line.starts_with(".end_amdgpu_metadata"))
      inMetadata = false;
    if (!inMetadata)
      continue;
    if (line.starts_with("- .agpr_count") || line.starts_with("- .args")) {
      kernels.emplace_back();
      current = &kernels.back();
    }
    if (!current)
      continue;
    if (line.consume_front(".name:"))
      current->kernel = line.trim().str();
    readField(line, ".vgpr_count:", current->vgprs);
    readField(line, ".sgpr_count:", current->sgprs);
    readField(line, ".vgpr_spill_count:", current->vgprSpills);
    readField(line, ".sgpr_spill_count:", current->sgprSpills);
    readField(line, ".group_segment_fixed_size:", current->ldsBytes);
    readField(line, ".private_segment_fixed_size:", current->scratchBytes);
    readField(line, ".wavefront_size:", current->wavefrontSize);
  }
  // Per kernel body (from its label to .Lfunc_end): the instruction classes
  // of the whole kernel, and those of its KV loop.
  for (AmdgpuResources &k : kernels) {
    llvm::SmallVector<llvm::StringRef> body;
    bool inBody = false;
    for (llvm::StringRef raw : lines) {
      llvm::StringRef line = raw.trim();
      if (line == (k.kernel + ":")) {
        inBody = true;
        continue;
      }
      if (inBody && line.starts_with(".Lfunc_end"))
        break;
      if (!inBody)
        continue;
      body.push_back(line);
      if (line.empty() || line[0] == ';' || line[0] == '.')
        continue;
      countClasses(line, k.mix);
    }
    std::vector<AmdgpuLoopStats> loops = findMacLoops(body);
    if (!loops.empty()) {
      k.kvLoop = loops.front();
      k.otherMacLoops.assign(loops.begin() + 1, loops.end());
    }
  }
  return kernels;
}

llvm::Expected<std::vector<fa::AmdgpuResources>>
fa::readAmdgpuCodeObject(llvm::StringRef elf) {
  auto file = llvm::object::ELF64LEFile::create(elf);
  if (!file)
    return file.takeError();
  if (file->getHeader().e_machine != llvm::ELF::EM_AMDGPU)
    return llvm::createStringError("not an AMDGPU code object (e_machine " +
                                   std::to_string(file->getHeader().e_machine) +
                                   ")");
  auto sections = file->sections();
  if (!sections)
    return sections.takeError();
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    llvm::Error err = llvm::Error::success();
    for (const auto &note : file->notes(section, err)) {
      if (note.getName() != "AMDGPU" ||
          note.getType() != llvm::ELF::NT_AMDGPU_METADATA)
        continue;
      llvm::msgpack::Document doc;
      if (!doc.readFromBlob(note.getDescAsStringRef(section.sh_addralign),
                            /*Multi=*/false))
        return llvm::createStringError(
            "the AMDGPU metadata note is not valid msgpack");
      auto &root = doc.getRoot();
      if (!root.isMap())
        return llvm::createStringError("the AMDGPU metadata is not a map");
      auto kernelsIt = root.getMap().find(doc.getNode("amdhsa.kernels"));
      if (kernelsIt == root.getMap().end() || !kernelsIt->second.isArray())
        return llvm::createStringError(
            "the AMDGPU metadata has no amdhsa.kernels");
      std::vector<AmdgpuResources> kernels;
      for (auto &node : kernelsIt->second.getArray()) {
        if (!node.isMap())
          continue;
        auto &map = node.getMap();
        auto field = [&](llvm::StringRef key) -> int64_t {
          auto it = map.find(doc.getNode(key));
          if (it == map.end())
            return 0;
          auto &v = it->second;
          if (v.getKind() == llvm::msgpack::Type::UInt)
            return static_cast<int64_t>(v.getUInt());
          if (v.getKind() == llvm::msgpack::Type::Int)
            return v.getInt();
          return 0;
        };
        AmdgpuResources r;
        auto name = map.find(doc.getNode(".name"));
        if (name != map.end() && name->second.isString())
          r.kernel = name->second.getString().str();
        r.vgprs = field(".vgpr_count");
        r.sgprs = field(".sgpr_count");
        r.vgprSpills = field(".vgpr_spill_count");
        r.sgprSpills = field(".sgpr_spill_count");
        r.ldsBytes = field(".group_segment_fixed_size");
        r.scratchBytes = field(".private_segment_fixed_size");
        r.wavefrontSize = field(".wavefront_size");
        kernels.push_back(std::move(r));
      }
      return kernels;
    }
    if (err)
      return std::move(err);
  }
  return llvm::createStringError("no AMDGPU metadata note in the code object");
}

int64_t fa::gfx906WavesPerSimd(const AmdgpuResources &r, int64_t threads,
                               std::string *limitedBy) {
  // gfx906: 256 VGPRs (granule 4) and 800 SGPRs (granule 16) per SIMD lane
  // file, 64 KiB LDS per CU shared by its 4 SIMDs, at most 10 waves/SIMD.
  auto roundUp = [](int64_t x, int64_t g) { return (x + g - 1) / g * g; };
  int64_t byVgpr = r.vgprs ? 256 / roundUp(r.vgprs, 4) : 10;
  int64_t bySgpr = r.sgprs ? 800 / roundUp(r.sgprs, 16) : 10;
  int64_t wavesPerGroup = std::max<int64_t>(1, (threads + 63) / 64);
  int64_t groupsByLds = r.ldsBytes ? 65536 / r.ldsBytes : 40;
  int64_t byLds = groupsByLds * wavesPerGroup / 4;
  int64_t waves = std::min<int64_t>({10, byVgpr, bySgpr, byLds});
  if (limitedBy) {
    *limitedBy = waves == byVgpr   ? "VGPRs"
                 : waves == byLds  ? "LDS"
                 : waves == bySgpr ? "SGPRs"
                                   : "the 10-wave limit";
  }
  return waves;
}

fa::Mi50Estimate fa::estimateMi50Throughput(const AmdgpuLoopStats &loop,
                                            int64_t blockM, int64_t blockN,
                                            int64_t headDim, int64_t threads,
                                            int64_t wavesPerSimd) {
  Mi50Estimate e;
  e.wavesPerGroup = std::max<int64_t>(1, (threads + 63) / 64);
  // With at least one wave on every SIMD all four issue; otherwise (fewer
  // than 4 waves resident per CU) one workgroup's waves are all there is.
  e.simdsBusy = wavesPerSimd >= 1
                    ? Mi50Estimate::simdsPerCu
                    : std::min(Mi50Estimate::simdsPerCu, e.wavesPerGroup);
  // Two GEMMs (S = Q·Kᵀ, O += P·V) of BLOCK_M x BLOCK_N x D MACs each.
  e.flopsPerIteration = 4 * blockM * blockN * headDim;
  if (e.flopsPerIteration > 0)
    e.macCoverage = double(loop.macFlopsPerLane * 64 * e.wavesPerGroup) /
                    e.flopsPerIteration;
  e.valuCycles =
      double(e.wavesPerGroup * loop.valu * Mi50Estimate::valuCyclesPerOp) /
      e.simdsBusy;
  e.ldsCycles =
      double(e.wavesPerGroup * 64 * (loop.ldsReadBytes + loop.ldsWriteBytes)) /
      Mi50Estimate::ldsBytesPerCycle;
  auto tflops = [&](double cycles) {
    return cycles > 0 ? Mi50Estimate::cus * Mi50Estimate::clockHz *
                            e.flopsPerIteration / cycles / 1e12
                      : 0.0;
  };
  e.valuBoundTflops = tflops(e.valuCycles);
  e.ldsBoundTflops = tflops(e.ldsCycles);
  e.ldsBound = e.ldsCycles > e.valuCycles;
  e.tflops = tflops(std::max(e.valuCycles, e.ldsCycles));
  return e;
}

std::string fa::formatAmdgpuResources(const AmdgpuResources &r, int64_t threads,
                                      int64_t blockM, int64_t blockN,
                                      int64_t headDim) {
  std::string out;
  llvm::raw_string_ostream os(out);
  std::string limit;
  int64_t waves = gfx906WavesPerSimd(r, threads, &limit);
  os << "gfx906 resources of " << r.kernel
     << " (from the AMDGPU backend, compile time):\n";
  os << "  VGPRs " << r.vgprs << " (spilled " << r.vgprSpills << "), SGPRs "
     << r.sgprs << " (spilled " << r.sgprSpills << "), LDS " << r.ldsBytes
     << " bytes, scratch " << r.scratchBytes << " bytes per lane\n";
  os << "  occupancy (estimate): " << waves << " waves per SIMD, limited by "
     << limit << "\n";
  os << "  instruction mix (whole kernel):";
  for (const auto &[name, count] : r.mix)
    os << " " << name << "=" << count;
  if (!r.kvLoop) {
    os << "\n  no KV loop found in the assembly";
    return out;
  }
  const AmdgpuLoopStats &l = *r.kvLoop;
  auto percent = [](int64_t part, int64_t whole) {
    return whole ? 100 * part / whole : 0;
  };
  // `.LBB0_20 x8, .LBB0_16 x?`: inner loops and their trip counts.
  auto innerLoops = [&](const AmdgpuLoopStats &loop) {
    int64_t unknown = 0;
    for (const AmdgpuInnerLoop &i : loop.inner) {
      os << (&i == &loop.inner.front() ? "" : ",") << " " << i.header << " x";
      if (i.trips)
        os << i.trips;
      else
        os << "?";
      unknown += i.trips == 0;
    }
    return unknown;
  };
  os << "\n  KV loop body (per iteration, loop " << l.header;
  int64_t unknownTrips = 0;
  if (!l.inner.empty()) {
    os << "; inner loops";
    unknownTrips = innerLoops(l);
    if (unknownTrips)
      os << "; x?: trip count not static, counted once";
  }
  os << "): VALU " << l.valu << " (v_dot2 " << l.dot2 << " = "
     << percent(l.dot2, l.valu) << "% of VALU issue slots), SALU " << l.salu
     << ", LDS " << l.lds << " (reads " << l.ldsReads << ": " << l.ldsReadBytes
     << " B per lane, writes " << l.ldsWrites << ": " << l.ldsWriteBytes
     << " B per lane), global " << l.global << ", s_barrier " << l.barriers
     << "\n";
  os << "  KV loop mix:";
  for (const auto &[name, count] : l.mix)
    os << " " << name << "=" << count;
  for (const AmdgpuLoopStats &o : r.otherMacLoops) {
    os << "\n  another loop with multiply-accumulates (not estimated): "
       << o.header << ": VALU " << o.valu << " (v_dot2 " << o.dot2 << " = "
       << percent(o.dot2, o.valu) << "%), LDS " << o.lds << ", s_barrier "
       << o.barriers;
    if (!o.inner.empty()) {
      os << "; inner loops";
      innerLoops(o);
    }
  }
  Mi50Estimate e =
      estimateMi50Throughput(l, blockM, blockN, headDim, threads, waves);
  os << "\n  MI50 throughput (static estimate, docs/mi50-throughput-model.md): "
     << e.flopsPerIteration << " FLOP per iteration per workgroup; VALU "
     << llvm::format("%.0f", e.valuCycles) << " cycles per CU -> "
     << llvm::format("%.2f", e.valuBoundTflops) << " TFLOP/s VALU-bound; LDS "
     << llvm::format("%.0f", e.ldsCycles) << " cycles -> "
     << llvm::format("%.2f", e.ldsBoundTflops) << " TFLOP/s LDS-bound; "
     << (e.ldsBound ? "LDS" : "VALU")
     << "-limited: " << llvm::format("%.2f", e.tflops) << " TFLOP/s ("
     << llvm::format("%.0f", 100 * e.tflops / Mi50Estimate::dot2PeakTflops)
     << "% of the " << llvm::format("%.1f", Mi50Estimate::dot2PeakTflops)
     << " TFLOP/s dot2 peak; fp32 FMA peak "
     << llvm::format("%.2f", Mi50Estimate::fp32PeakTflops)
     << "); an upper bound with latency hidden, occupancy (" << waves
     << " waves/SIMD) not modelled";
  if (e.macCoverage < 1)
    os << "; not valid: the loop's multiply-accumulate instructions, as "
          "counted, do "
       << llvm::format("%.0f", 100 * e.macCoverage)
       << "% of an iteration's FLOP (inner loops run more often than "
          "counted), so the bounds are too high";
  else if (unknownTrips)
    os << "; " << unknownTrips
       << " inner loops counted once: too high by their further trips";
  return out;
}
