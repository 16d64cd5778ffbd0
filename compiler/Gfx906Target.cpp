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
//      the code object metadata and instruction classes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Gfx906Target.h"
#include "compiler/DeviceModule.h"

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

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

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
    auto inner = op.getC().getDefiningOp<math::FmaOp>();
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
  // Instruction classes, per kernel body (from its label to .Lfunc_end).
  static const std::pair<const char *, const char *> classes[] = {
      {"v_dot2", "v_dot2_f32_f16"},     {"v_fma_mix", "v_fma_mix"},
      {"v_fma_f32", "v_fma_f32"},       {"v_fmac_f32", "v_fmac_f32"},
      {"v_pk_fma", "v_pk_fma"},         {"v_exp_f32", "v_exp_f32"},
      {"ds_read", "ds_read"},           {"ds_write", "ds_write"},
      {"ds_swizzle", "ds_swizzle"},     {"global_load", "global_load"},
      {"global_store", "global_store"}, {"scratch (buffer_*)", "buffer_"},
      {"s_barrier", "s_barrier"},
  };
  for (AmdgpuResources &k : kernels) {
    bool inBody = false;
    for (llvm::StringRef raw : lines) {
      llvm::StringRef line = raw.trim();
      if (line == (k.kernel + ":"))
        inBody = true;
      else if (inBody && line.starts_with(".Lfunc_end"))
        break;
      if (!inBody || line.empty() || line[0] == ';' || line[0] == '.')
        continue;
      for (const auto &[name, prefix] : classes)
        if (line.starts_with(prefix))
          ++k.mix[name];
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

std::string fa::formatAmdgpuResources(const AmdgpuResources &r,
                                      int64_t threads) {
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
  os << "  instruction mix:";
  for (const auto &[name, count] : r.mix)
    os << " " << name << "=" << count;
  return out;
}
