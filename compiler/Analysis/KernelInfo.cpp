//===- KernelInfo.cpp - What a runtime needs to know about a kernel -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/KernelInfo.h"

#include "dialect/FaOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::fa;

int64_t mlir::fa::layoutLds(gpu::GPUFuncOp kernel,
                            SmallVectorImpl<int64_t> &offsets) {
  int64_t offset = 0;
  for (BlockArgument a : kernel.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(a.getType());
    offset = (offset + 15) / 16 * 16;
    offsets.push_back(offset);
    offset += type.getNumElements() *
              (type.getElementType().getIntOrFloatBitWidth() / 8);
  }
  return (offset + 15) / 16 * 16;
}

/// `fa.lds_buffers` (fa-lower-to-gpu) into `k`, at layoutLds's `offsets`.
static void collectLdsBuffers(gpu::GPUFuncOp f, ArrayRef<int64_t> offsets,
                              KernelInfo &k) {
  auto buffers = f->getAttrOfType<ArrayAttr>("fa.lds_buffers");
  if (!buffers)
    return;
  auto integer = [](DictionaryAttr d, StringRef name) -> int64_t {
    auto a = d.getAs<IntegerAttr>(name);
    return a ? a.getInt() : 0;
  };
  auto flag = [](DictionaryAttr d, StringRef name) {
    auto a = d.getAs<BoolAttr>(name);
    return a && a.getValue();
  };
  auto string = [](DictionaryAttr d, StringRef name) {
    auto a = d.getAs<StringAttr>(name);
    return a ? a.str() : std::string();
  };
  auto attributions = f.getWorkgroupAttributions();
  for (auto d : buffers.getAsRange<DictionaryAttr>()) {
    LdsBufferInfo b;
    b.name = string(d, "name");
    b.slot = string(d, "slot");
    b.attribution = integer(d, "attribution");
    b.rows = integer(d, "rows");
    b.cols = integer(d, "cols");
    b.pad = integer(d, "pad");
    b.elementBytes = integer(d, "element_bytes");
    b.pairs = flag(d, "pairs");
    if (b.attribution >= 0 && b.attribution < int64_t(offsets.size())) {
      b.offset = offsets[b.attribution];
      auto type = cast<MemRefType>(attributions[b.attribution].getType());
      b.slotBytes = type.getNumElements() *
                    (type.getElementType().getIntOrFloatBitWidth() / 8);
    }
    if (auto accesses = d.getAs<ArrayAttr>("accesses"))
      for (auto a : accesses.getAsRange<DictionaryAttr>()) {
        LdsAccessInfo i;
        i.what = string(a, "what");
        i.write = flag(a, "write");
        i.bytes = integer(a, "bytes");
        if (auto lanes = a.getAs<DenseI64ArrayAttr>("lanes");
            lanes && lanes.size() == 5) {
          i.q = lanes[0];
          i.rowI = lanes[1];
          i.rowJ = lanes[2];
          i.colI = lanes[3];
          i.colJ = lanes[4];
        }
        i.unpadded = integer(a, "unpadded");
        i.degree = integer(a, "degree");
        b.accesses.push_back(std::move(i));
      }
    k.ldsBuffers.push_back(std::move(b));
  }
}

FailureOr<std::vector<KernelInfo>> mlir::fa::collectKernels(ModuleOp module) {
  std::vector<KernelInfo> kernels;
  WalkResult result = module.walk([&](gpu::GPUFuncOp f) {
    if (!f.isKernel())
      return WalkResult::advance();
    auto tile = f->getAttrOfType<TileConfigAttr>("fa.tile");
    auto scale = f->getAttrOfType<FloatAttr>("fa.scale");
    auto headDim = f->getAttrOfType<IntegerAttr>("fa.head_dim");
    auto sizes = f->getAttrOfType<DenseI64ArrayAttr>("fa.static_sizes");
    if (!tile || !scale || !headDim || !sizes) {
      f.emitOpError() << "is not an fa kernel (missing fa.* attributes)";
      return WalkResult::interrupt();
    }
    KernelInfo k;
    k.name = f.getName().str();
    k.target = tile.getTarget().str();
    Type elt = cast<MemRefType>(f.getArgumentTypes()[0]).getElementType();
    k.dtype = elt.isF16() ? "f16" : elt.isBF16() ? "bf16" : "f32";
    k.headDim = headDim.getInt();
    k.blockM = tile.getBlockM();
    k.blockN = tile.getBlockN();
    k.threads = tile.getThreads();
    k.waveSize = tile.getWaveSize();
    k.ldsPad = tile.getLdsPad();
    k.stages = tile.getStages();
    if (auto ahead = f->getAttrOfType<StringAttr>("fa.fetch_ahead"))
      k.fetchAhead = ahead.str();
    SmallVector<int64_t> offsets;
    k.ldsBytes = layoutLds(f, offsets);
    collectLdsBuffers(f, offsets, k);
    k.scale = scale.getValueAsDouble();
    k.causal = f->hasAttr("fa.causal");
    if (auto window = f->getAttrOfType<DenseI64ArrayAttr>("fa.window");
        window && window.size() == 2) {
      k.windowLeft = window[0];
      k.windowRight = window[1];
    }
    if (auto cap = f->getAttrOfType<FloatAttr>("fa.softcap"))
      k.softcap = cap.getValueAsDouble();
    auto hasLse = f->getAttrOfType<BoolAttr>("fa.has_lse");
    k.hasLse = hasLse && hasLse.getValue();
    k.staticSizes.assign(sizes.asArrayRef().begin(), sizes.asArrayRef().end());
    if (auto abi = f->getAttrOfType<IntegerAttr>("fa.abi_version"))
      k.abiVersion = abi.getInt();
    k.splitKv = f->hasAttr("fa.kv_splits");
    k.splitDirect = f->hasAttr("fa.split_direct");
    k.gqaPacked = f->hasAttr("fa.gqa_packed");
    k.paged = f->hasAttr("fa.paged");
    k.varlen = f->hasAttr("fa.varlen");
    k.trace = f->hasAttr("fa.trace");
    k.alibi = f->hasAttr("fa.alibi");
    k.sinks = f->hasAttr("fa.sinks");
    if (auto combine = f->getAttrOfType<FlatSymbolRefAttr>("fa.combine"))
      k.combine = combine.getValue().str();
    else
      k.isCombine = f->hasAttr("fa.combine");
    kernels.push_back(std::move(k));
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  return kernels;
}
