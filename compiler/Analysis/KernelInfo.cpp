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
    k.scale = scale.getValueAsDouble();
    k.causal = f->hasAttr("fa.causal");
    auto hasLse = f->getAttrOfType<BoolAttr>("fa.has_lse");
    k.hasLse = hasLse && hasLse.getValue();
    k.staticSizes.assign(sizes.asArrayRef().begin(), sizes.asArrayRef().end());
    kernels.push_back(std::move(k));
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  return kernels;
}
