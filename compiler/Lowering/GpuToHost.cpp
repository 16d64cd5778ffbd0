//===- GpuToHost.cpp - fa-gpu-to-host: gpu kernels -> host functions ------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements `fa-gpu-to-host`, the host emulation target. The same
// gpu.func that gfx906 gets becomes an x86-64 function that the runtime's
// emulator calls once per (workgroup, thread):
//
//   1. each kernel's body moves into `func.func @<kernel>_body(<ABI args>,
//      %lds: memref<?xi8>, %env: !llvm.ptr)`; workgroup attributions become
//      `memref.view`s of %lds at the offsets KernelInfo.h lays out;
//   2. thread/block ids and dims are loaded from the fa_host_env (see
//      runtime/include/fa/KernelAbi.h); gpu.barrier and gpu.shuffle become
//      indirect calls through the env's callbacks; every LDS load and store
//      is preceded by a call to env->lds_access (the race checker's hook);
//   3. the module is lowered to the LLVM dialect;
//   4. an exported entry `void <kernel>_host(const uint64_t *args,
//      fa_host_env *env)` unpacks the ABI's 44 words and calls the body
//      (whose parameter list is checked first), and an exported constant
//      `fa_host_info <kernel>_host_info` records what the kernel was compiled
//      with, so that the runtime need not trust the manifest.
//
// KernelAbi.h is the one definition of the ABI: env fields are addressed by
// offsetof, the suffixes and word counts are its constants.
//
// The gpu.module and the host-side launch functions are removed: the
// resulting module holds only the emulation entry points.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/KernelInfo.h"
#include "compiler/Lowering/PassDetail.h"

#include "fa/KernelAbi.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <cstddef>
#include <cstring>

namespace mlir::fa {
#define GEN_PASS_DEF_FAGPUTOHOSTPASS
#include "compiler/Lowering/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
/// The fa_host_env fields the kernel reads, by byte offset: KernelAbi.h is
/// the one definition of the layout (LP64, static_asserted there).
enum EnvField : int32_t {
  kEmu = offsetof(fa_host_env, emu),
  kLds = offsetof(fa_host_env, lds),
  kBarrier = offsetof(fa_host_env, barrier),
  kShuffle = offsetof(fa_host_env, shuffle),
  kLdsAccess = offsetof(fa_host_env, lds_access),
  kThreadId = offsetof(fa_host_env, thread_id),
  kBlockId = offsetof(fa_host_env, block_id),
  kBlockDim = offsetof(fa_host_env, block_dim),
  kGridDim = offsetof(fa_host_env, grid_dim),
  kWaveSize = offsetof(fa_host_env, wave_size),
  kMisaligned = offsetof(fa_host_env, misaligned),
};
// The loads below read pointers as !llvm.ptr and the dim3 and wave size
// fields as i32.
static_assert(sizeof(fa_host_env::thread_id[0]) == 4 &&
                  sizeof(fa_host_env::block_id[0]) == 4 &&
                  sizeof(fa_host_env::block_dim[0]) == 4 &&
                  sizeof(fa_host_env::grid_dim[0]) == 4 &&
                  sizeof(fa_host_env::wave_size) == 4,
              "fa_host_env's id fields are read as i32");

class HostKernelBuilder {
public:
  HostKernelBuilder(MLIRContext *ctx) : ctx(ctx), b(ctx) {}

  LogicalResult outline(gpu::GPUFuncOp kernel, ModuleOp module);

private:
  Value envField(Location loc, Value env, EnvField f, Type type,
                 std::optional<int> element = std::nullopt) {
    int32_t offset = f + (element ? *element * int32_t(sizeof(uint32_t)) : 0);
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    Value addr = LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), env,
                                     ArrayRef<LLVM::GEPArg>{offset});
    return LLVM::LoadOp::create(b, loc, type, addr);
  }
  Value callback(Location loc, Value env, EnvField f, Type result,
                 ArrayRef<Type> argTypes, ValueRange args) {
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    Value fn = envField(loc, env, f, ptrType);
    Value emu = envField(loc, env, kEmu, ptrType);
    SmallVector<Type> params = {ptrType};
    params.append(argTypes.begin(), argTypes.end());
    auto fnType = LLVM::LLVMFunctionType::get(
        result ? result : LLVM::LLVMVoidType::get(ctx), params);
    SmallVector<Value> operands = {fn, emu};
    operands.append(args.begin(), args.end());
    auto call = LLVM::CallOp::create(b, loc, fnType, operands);
    return result ? call.getResult() : Value();
  }
  Value i32(Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  void instrument(Operation *op, Value memref, ValueRange indices,
                  int64_t bytes, bool isWrite, Value env);
  Value byteAddress(Location loc, Value memref, ValueRange indices);
  void checkAlignment(Operation *op, Value memref, ValueRange indices,
                      int64_t bytes, int64_t claimed, bool isWrite, Value env);

  MLIRContext *ctx;
  OpBuilder b;
};
} // namespace

/// The byte address (as an index) of element `indices` of `memref`: its
/// aligned pointer plus (offset + sum of index * stride) elements.
Value HostKernelBuilder::byteAddress(Location loc, Value memref,
                                     ValueRange indices) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t eltBytes = type.getElementType().getIntOrFloatBitWidth() / 8;
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value linear = meta.getOffset();
  for (auto [index, stride] : llvm::zip(indices, meta.getStrides()))
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  return arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, linear,
                            arith::ConstantIndexOp::create(b, loc, eltBytes)));
}

/// Calls env->lds_access(emu, address, bytes, is_write) before `op`.
void HostKernelBuilder::instrument(Operation *op, Value memref,
                                   ValueRange indices, int64_t bytes,
                                   bool isWrite, Value env) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  Value addr = byteAddress(loc, memref, indices);
  Value addr64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), addr);
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  Value ptr = LLVM::IntToPtrOp::create(b, loc, ptrType, addr64);
  auto i32Type = b.getI32Type();
  callback(loc, env, kLdsAccess, Type(), {ptrType, i32Type, i32Type},
           {ptr, i32(loc, bytes), i32(loc, isWrite ? 1 : 0)});
}

/// Before `op`, a vector access claimed `claimed`-byte aligned: if its
/// address is not, calls env->misaligned(emu, address, bytes, claimed,
/// is_write). The caller then drops the claim, so that the access runs
/// (x86's aligned moves would fault) and the emulator reports it.
void HostKernelBuilder::checkAlignment(Operation *op, Value memref,
                                       ValueRange indices, int64_t bytes,
                                       int64_t claimed, bool isWrite,
                                       Value env) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  Value addr = byteAddress(loc, memref, indices);
  Value low = arith::AndIOp::create(
      b, loc, addr, arith::ConstantIndexOp::create(b, loc, claimed - 1));
  Value bad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, low,
                                    arith::ConstantIndexOp::create(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, bad, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value addr64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), addr);
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  Value ptr = LLVM::IntToPtrOp::create(b, loc, ptrType, addr64);
  auto i32Type = b.getI32Type();
  callback(
      loc, env, kMisaligned, Type(), {ptrType, i32Type, i32Type, i32Type},
      {ptr, i32(loc, bytes), i32(loc, claimed), i32(loc, isWrite ? 1 : 0)});
}

LogicalResult HostKernelBuilder::outline(gpu::GPUFuncOp kernel,
                                         ModuleOp module) {
  Location loc = kernel.getLoc();
  SmallVector<int64_t> offsets;
  int64_t ldsBytes = layoutLds(kernel, offsets);

  auto ldsType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  inputs.append({ldsType, ptrType});
  b.setInsertionPointToEnd(module.getBody());
  auto body = func::FuncOp::create(b, loc, (kernel.getName() + "_body").str(),
                                   b.getFunctionType(inputs, {}));
  body.setPrivate();
  // Not exported from the shared object: only `<kernel>_host` is the ABI.
  body->setAttr("llvm.linkage",
                LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  body->setAttr("fa.lds_bytes", b.getI64IntegerAttr(ldsBytes));
  body.getBody().takeBody(kernel.getBody());
  Block &entry = body.getBody().front();
  unsigned numArgs = kernel.getNumArguments();
  Value lds = entry.insertArgument(numArgs, ldsType, loc);
  Value env = entry.insertArgument(numArgs + 1, ptrType, loc);

  // Workgroup attributions -> views of the LDS block.
  b.setInsertionPointToStart(&entry);
  DenseSet<Value> ldsViews;
  unsigned first = numArgs + 2;
  for (auto [i, offset] : llvm::enumerate(offsets)) {
    BlockArgument attribution = entry.getArgument(first + i);
    auto t = cast<MemRefType>(attribution.getType());
    auto plain = MemRefType::get(t.getShape(), t.getElementType());
    Value view = memref::ViewOp::create(
        b, loc, plain, lds, arith::ConstantIndexOp::create(b, loc, offset),
        ValueRange{});
    attribution.replaceAllUsesWith(view);
    ldsViews.insert(view);
  }
  for (unsigned i = 0; i < offsets.size(); ++i)
    entry.eraseArgument(first);

  // gpu ops -> env loads and callbacks.
  auto i32Type = b.getI32Type();
  SmallVector<Operation *> toErase;
  WalkResult result = body.walk([&](Operation *op) -> WalkResult {
    Location l = op->getLoc();
    auto idField = [&](EnvField f, gpu::Dimension d) {
      b.setInsertionPoint(op);
      Value v = envField(l, env, f, i32Type, static_cast<int>(d));
      Value i = arith::IndexCastUIOp::create(b, l, b.getIndexType(), v);
      op->getResult(0).replaceAllUsesWith(i);
      toErase.push_back(op);
    };
    if (auto o = dyn_cast<gpu::ThreadIdOp>(op))
      idField(kThreadId, o.getDimension());
    else if (auto o = dyn_cast<gpu::BlockIdOp>(op))
      idField(kBlockId, o.getDimension());
    else if (auto o = dyn_cast<gpu::BlockDimOp>(op))
      idField(kBlockDim, o.getDimension());
    else if (auto o = dyn_cast<gpu::GridDimOp>(op))
      idField(kGridDim, o.getDimension());
    else if (isa<gpu::BarrierOp>(op)) {
      b.setInsertionPoint(op);
      callback(l, env, kBarrier, Type(), {}, {});
      toErase.push_back(op);
    } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      b.setInsertionPoint(op);
      Value v = shuffle.getValue();
      Value bits = v.getType().isF32()
                       ? Value(arith::BitcastOp::create(b, l, i32Type, v))
                       : v;
      Value r = callback(l, env, kShuffle, i32Type,
                         {i32Type, i32Type, i32Type, i32Type},
                         {bits, shuffle.getOffset(), shuffle.getWidth(),
                          i32(l, static_cast<int>(shuffle.getMode()))});
      if (v.getType().isF32())
        r = arith::BitcastOp::create(b, l, v.getType(), r);
      // The emulator returns the caller's own value for an out-of-range
      // lane, as the hardware does; `valid` says whether that happened.
      Value lane = envField(l, env, kThreadId, i32Type, 0);
      Value wave = envField(l, env, kWaveSize, i32Type);
      lane = arith::RemUIOp::create(b, l, lane, wave);
      Value src;
      switch (shuffle.getMode()) {
      case gpu::ShuffleMode::XOR:
        src = arith::XOrIOp::create(b, l, lane, shuffle.getOffset());
        break;
      case gpu::ShuffleMode::DOWN:
        src = arith::AddIOp::create(b, l, lane, shuffle.getOffset());
        break;
      case gpu::ShuffleMode::UP:
        src = arith::SubIOp::create(b, l, lane, shuffle.getOffset());
        break;
      case gpu::ShuffleMode::IDX:
        src = shuffle.getOffset();
        break;
      }
      Value valid = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, src,
                                          shuffle.getWidth());
      shuffle.getShuffleResult().replaceAllUsesWith(r);
      shuffle.getValid().replaceAllUsesWith(valid);
      toErase.push_back(op);
    } else if (isa<gpu::ReturnOp>(op)) {
      b.setInsertionPoint(op);
      func::ReturnOp::create(b, l);
      toErase.push_back(op);
    } else if (op->getDialect() && isa<gpu::GPUDialect>(op->getDialect())) {
      op->emitOpError() << "is not supported by the host emulation target";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  for (Operation *op : toErase)
    op->erase();

  // LDS access hooks.
  auto bytesOf = [](Type t) -> int64_t {
    if (auto v = dyn_cast<VectorType>(t))
      return v.getNumElements() * v.getElementTypeBitWidth() / 8;
    return t.getIntOrFloatBitWidth() / 8;
  };
  body.walk([&](Operation *op) {
    if (auto l = dyn_cast<memref::LoadOp>(op);
        l && ldsViews.count(l.getMemref()))
      instrument(op, l.getMemref(), l.getIndices(), bytesOf(l.getType()), false,
                 env);
    else if (auto s = dyn_cast<memref::StoreOp>(op);
             s && ldsViews.count(s.getMemref()))
      instrument(op, s.getMemref(), s.getIndices(),
                 bytesOf(s.getValueToStore().getType()), true, env);
    else if (auto l = dyn_cast<vector::LoadOp>(op);
             l && ldsViews.count(l.getBase()))
      instrument(op, l.getBase(), l.getIndices(), bytesOf(l.getType()), false,
                 env);
    else if (auto s = dyn_cast<vector::StoreOp>(op);
             s && ldsViews.count(s.getBase()))
      instrument(op, s.getBase(), s.getIndices(),
                 bytesOf(s.getValueToStore().getType()), true, env);
  });

  // Alignment claims: every vector access that claims more alignment than
  // its element's is checked, then runs unaligned.
  body.walk([&](Operation *op) {
    auto check = [&](auto access, Value base, Type value, bool isWrite) {
      std::optional<uint64_t> claimed = access.getAlignment();
      int64_t elt =
          cast<MemRefType>(base.getType()).getElementTypeBitWidth() / 8;
      if (!claimed || int64_t(*claimed) <= elt)
        return;
      checkAlignment(op, base, access.getIndices(), bytesOf(value),
                     int64_t(*claimed), isWrite, env);
      access.setAlignment(uint64_t(elt));
    };
    if (auto l = dyn_cast<vector::LoadOp>(op))
      check(l, l.getBase(), l.getType(), false);
    else if (auto s = dyn_cast<vector::StoreOp>(op))
      check(s, s.getBase(), s.getValueToStore().getType(), true);
  });
  return success();
}

/// Checks that the lowered body takes what buildEntry passes: the ABI words
/// (each buffer as allocated and aligned pointer, offset, size, stride; then
/// the sizes and strides), the LDS block as one more such memref, and env.
static LogicalResult checkBodyParameters(LLVM::LLVMFuncOp body,
                                         int64_t abiVersion, bool trace,
                                         bool headParams) {
  auto params = body.getFunctionType().getParams();
  MLIRContext *ctx = body.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx), i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> expected;
  auto memref = [&] { expected.append({ptr, ptr, i64, i64, i64}); };
  for (int i = 0; i < FA_ABI_NUM_BUFFERS; ++i)
    memref();
  expected.append(FA_ABI_NUM_SIZES + FA_ABI_NUM_STRIDES, i64);
  static_assert(FA_ABI_NUM_BUFFERS * 5 + FA_ABI_NUM_SIZES +
                        FA_ABI_NUM_STRIDES ==
                    FA_ABI_NUM_WORDS,
                "a buffer is one memref descriptor of 5 words");
  if (abiVersion >= 2) { // the split-KV workspace O and LSE, then S
    memref();
    memref();
    expected.push_back(i64);
  }
  if (abiVersion >= 3) { // block table, cache lengths, page size, stride
    memref();
    memref();
    expected.append({i64, i64});
  }
  if (abiVersion >= 4) { // cu_seqlens_q, cu_seqlens_k
    memref();
    memref();
  }
  if (headParams) { // ALiBi slopes, sinks
    memref();
    memref();
  }
  if (trace) { // the trace buffer; traced batch, head, row
    memref();
    expected.append({i64, i64, i64});
  }
  const unsigned words =
      fa_kernel_abi_words(uint32_t(abiVersion), trace, headParams);
  memref(); // the LDS block
  expected.push_back(ptr);
  if (params.size() != expected.size())
    return body.emitError()
           << "internal error: lowered kernel body takes " << params.size()
           << " parameters, the host ABI passes " << expected.size() << " ("
           << words << " ABI words, the LDS descriptor's 5, env)";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(params, expected)))
    if (std::get<0>(pair) != std::get<1>(pair))
      return body.emitError()
             << "internal error: lowered kernel body's parameter " << i
             << " is " << std::get<0>(pair) << ", the host ABI passes "
             << std::get<1>(pair);
  return success();
}

/// The fa_host_info record of `k` (KernelAbi.h), whose LDS size is what the
/// body addresses.
static fa_host_info hostInfo(const KernelInfo &k, int64_t ldsBytes) {
  fa_host_info info = {};
  info.abi_version = uint32_t(k.abiVersion);
  info.info_bytes = sizeof(fa_host_info);
  info.num_words = fa_kernel_abi_words(uint32_t(k.abiVersion), k.trace,
                                       k.hasHeadParams());
  info.env_bytes = sizeof(fa_host_env);
  info.lds_bytes = uint64_t(ldsBytes);
  info.threads = uint32_t(k.threads);
  info.wave_size = uint32_t(k.waveSize);
  info.dtype = k.dtype == "f16"    ? FA_HOST_DTYPE_F16
               : k.dtype == "bf16" ? FA_HOST_DTYPE_BF16
                                   : FA_HOST_DTYPE_F32;
  info.head_dim = uint32_t(k.headDim);
  info.block_m = uint32_t(k.blockM);
  info.block_n = uint32_t(k.blockN);
  info.has_lse = k.hasLse ? 1 : 0;
  info.index_bits = 64; // the host lowering keeps 64-bit indices
  for (int i = 0; i < 5; ++i)
    info.static_sizes[i] =
        i < int(k.staticSizes.size()) ? k.staticSizes[i] : int64_t(-1);
  return info;
}

/// Exports `info` as `const fa_host_info <name>`: sizeof(fa_host_info) / 8
/// 64-bit words, laid out as this (LP64, little-endian) host lays it out.
static void buildInfo(OpBuilder &b, ModuleOp module, Location loc,
                      StringRef name, const fa_host_info &info) {
  constexpr size_t kWords = sizeof(fa_host_info) / sizeof(uint64_t);
  uint64_t words[kWords];
  std::memcpy(words, &info, sizeof(info));
  SmallVector<APInt> values;
  for (uint64_t w : words)
    values.push_back(APInt(64, w));
  auto i64 = b.getI64Type();
  auto attr = DenseElementsAttr::get(
      RankedTensorType::get({int64_t(kWords)}, i64), values);
  b.setInsertionPointToEnd(module.getBody());
  LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(i64, kWords),
                         /*isConstant=*/true, LLVM::Linkage::External, name,
                         attr, /*alignment=*/8);
}

/// After lowering to LLVM: `void <kernel>_host(const uint64_t *args,
/// fa_host_env *env)` unpacking the ABI words and the LDS descriptor.
static void buildEntry(OpBuilder &b, LLVM::LLVMFuncOp body, StringRef entryName,
                       int64_t ldsBytes, unsigned numWords) {
  MLIRContext *ctx = b.getContext();
  Location loc = body.getLoc();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                            {ptrType, ptrType});
  b.setInsertionPointAfter(body);
  auto entry = LLVM::LLVMFuncOp::create(b, loc, entryName, fnType);
  Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  Value args = block->getArgument(0), env = block->getArgument(1);
  auto paramTypes = body.getFunctionType().getParams();
  SmallVector<Value> operands;
  // The ABI words, in order; then the LDS descriptor; then env.
  for (unsigned i = 0; i < numWords; ++i) {
    Value addr = LLVM::GEPOp::create(b, loc, ptrType, i64, args,
                                     ArrayRef<LLVM::GEPArg>{(int32_t)i});
    Value word = LLVM::LoadOp::create(b, loc, i64, addr);
    if (isa<LLVM::LLVMPointerType>(paramTypes[i]))
      word = LLVM::IntToPtrOp::create(b, loc, ptrType, word);
    operands.push_back(word);
  }
  Value ldsAddr = LLVM::GEPOp::create(
      b, loc, ptrType, b.getI8Type(), env,
      ArrayRef<LLVM::GEPArg>{int32_t(offsetof(fa_host_env, lds))});
  Value lds = LLVM::LoadOp::create(b, loc, ptrType, ldsAddr);
  auto c = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  operands.append({lds, lds, c(0), c(ldsBytes), c(1), env});
  LLVM::CallOp::create(b, loc, body, operands);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

namespace {
struct FaGpuToHostPass
    : public mlir::fa::impl::FaGpuToHostPassBase<FaGpuToHostPass> {
  using FaGpuToHostPassBase::FaGpuToHostPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUFuncOp> kernels;
    module.walk([&](gpu::GPUFuncOp f) {
      if (f.isKernel())
        kernels.push_back(f);
    });
    if (kernels.empty()) {
      module.emitError() << "no gpu kernels to lower to the host target "
                            "(run fa-lower-to-gpu first)";
      return signalPassFailure();
    }
    // What the manifest will say about each kernel (fac reads it with the
    // same function), for the fa_host_info records.
    FailureOr<std::vector<KernelInfo>> infos = collectKernels(module);
    if (failed(infos))
      return signalPassFailure();
    struct Entry {
      std::string body, entry;
      KernelInfo info;
    };
    std::vector<Entry> entries;
    HostKernelBuilder builder(&getContext());
    for (gpu::GPUFuncOp kernel : kernels) {
      const KernelInfo *info = nullptr;
      for (const KernelInfo &k : *infos)
        if (k.name == kernel.getName())
          info = &k;
      assert(info && "collectKernels reads every kernel");
      if (failed(builder.outline(kernel, module)))
        return signalPassFailure();
      entries.push_back({(kernel.getName() + "_body").str(),
                         (kernel.getName() + FA_HOST_ENTRY_SUFFIX).str(),
                         *info});
    }
    // Only the emulation entry points remain: drop the device modules and
    // the host-side launch functions that refer to them.
    for (auto gm :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>()))
      gm.erase();
    for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      bool launches = false;
      f.walk([&](gpu::LaunchFuncOp) { launches = true; });
      if (launches)
        f.erase();
    }
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());

    DenseMap<StringRef, int64_t> ldsBytes;
    for (auto f : module.getOps<func::FuncOp>())
      if (auto a = f->getAttrOfType<IntegerAttr>("fa.lds_bytes"))
        ldsBytes[f.getName()] = a.getInt();
    SmallVector<int64_t> sizes;
    for (const Entry &e : entries)
      sizes.push_back(ldsBytes.lookup(e.body));

    OpPassManager pm("builtin.module");
    // bf16 <-> f32 conversions as integer ops: x86-64 has no bf16
    // instructions and Debian 12's libgcc_s lacks __truncsfbf2.
    arith::ArithExpandOpsPassOptions expand;
    expand.includeBf16 = true;
    pm.addPass(arith::createArithExpandOpsPass(expand));
    pm.addPass(createSCFToControlFlowPass());
    pm.addPass(memref::createExpandStridedMetadataPass());
    pm.addPass(createConvertVectorToLLVMPass());
    pm.addPass(createConvertMathToLLVMPass());
    pm.addPass(createArithToLLVMConversionPass());
    pm.addPass(createConvertIndexToLLVMPass());
    pm.addPass(createFinalizeMemRefToLLVMConversionPass());
    pm.addPass(createConvertControlFlowToLLVMPass());
    pm.addPass(createConvertFuncToLLVMPass());
    pm.addPass(createUBToLLVMConversionPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    pm.addPass(createCanonicalizerPass());
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();

    OpBuilder b(&getContext());
    for (auto [i, e] : llvm::enumerate(entries)) {
      auto body = module.lookupSymbol<LLVM::LLVMFuncOp>(e.body);
      if (!body) {
        module.emitError() << "lowered kernel body '" << e.body
                           << "' is missing";
        return signalPassFailure();
      }
      if (failed(checkBodyParameters(body, e.info.abiVersion, e.info.trace,
                                     e.info.hasHeadParams())))
        return signalPassFailure();
      buildEntry(
          b, body, e.entry, sizes[i],
          fa_kernel_abi_words(uint32_t(e.info.abiVersion), e.info.trace,
                              e.info.hasHeadParams()));
      buildInfo(b, module, body.getLoc(), e.entry + FA_HOST_INFO_SUFFIX,
                hostInfo(e.info, sizes[i]));
    }
  }
};
} // namespace
