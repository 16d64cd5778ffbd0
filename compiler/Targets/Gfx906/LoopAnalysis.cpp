//===- LoopAnalysis.cpp - gfx906 assembly: mix and KV loop ----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file reads the AMDGPU backend's assembly text statically: the
// `.amdhsa_*` directives, the instruction classes of each kernel, and its
// KV loop, found as a natural loop of the kernel's control-flow graph
// (rebuilt from labels and branches) with inner loops' trip counts
// recovered from their scalar counters. The report's per-iteration mix and
// the MI50 estimate (Mi50Model.h) are built on these counts.
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Gfx906/LoopAnalysis.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <tuple>

using namespace mlir;

/// The integer after `key` on a line `<key><spaces><value>`.
static bool readField(llvm::StringRef line, llvm::StringRef key, int64_t &out) {
  line = line.trim();
  if (!line.consume_front(key))
    return false;
  return !line.trim().getAsInteger(10, out);
}

/// Instruction classes of the reports' mixes: name and mnemonic prefix.
/// v_fma_mix_f32 multiplies and accumulates; v_fma_mixlo/hi_f16 write an
/// f16 half, which fa's kernels use to convert P (x * 1 + 0), so they are a
/// class of their own and no MAC.
static const std::pair<const char *, const char *> instructionClasses[] = {
    {"v_dot2", "v_dot2_f32_f16"},
    {"v_fma_mix", "v_fma_mix_f32"},
    {"v_fma_mixlo/hi (f16 conversion)", "v_fma_mixlo"},
    {"v_fma_mixlo/hi (f16 conversion)", "v_fma_mixhi"},
    {"v_fma_f32", "v_fma_f32"},
    {"v_fmac_f32", "v_fmac_f32"},
    {"v_pk_fma", "v_pk_fma"},
    {"v_exp_f32", "v_exp_f32"},
    {"ds_read", "ds_read"},
    {"ds_write", "ds_write"},
    {"ds_swizzle", "ds_swizzle"},
    {"global_load", "global_load"},
    {"global_store", "global_store"},
    {"scratch (buffer_*)", "buffer_"},
    {"s_barrier", "s_barrier"},
};

static void countClasses(llvm::StringRef mnemonic,
                         std::map<std::string, int64_t> &mix) {
  for (const auto &[name, prefix] : instructionClasses)
    if (mnemonic.starts_with(prefix))
      ++mix[name];
}

/// FLOP per lane of a multiply-accumulate instruction (v_dot2_f32_f16 and
/// v_pk_fma_f16: 2 MACs; v_fma_mix_f32, v_fmac, v_mac: 1), or 0: these mark
/// the loop of the two GEMMs. v_fma_mixlo/hi_f16 are conversions here.
static int64_t macFlopsPerLane(llvm::StringRef m) {
  if (m.starts_with("v_dot2") || m.starts_with("v_pk_fma"))
    return 4;
  if (m.starts_with("v_fma_mix_f32") || m.starts_with("v_fmac_") ||
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
