//===- LdsLayout.cpp - Where the AMDGPU backend puts a kernel's LDS -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// amdgpu-lower-module-lds replaces every use of an LDS global by an address
// in the kernel's packed block. For each attribution one instruction that
// uses it (directly or through a constant expression) is noted with the
// constant offset its operand adds to the global; after the pass, the same
// operand's constant offset from the block is the global's offset plus it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Gfx906/LdsLayout.h"
#include "compiler/Targets/Codegen.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <optional>

using namespace mlir;

namespace {
/// An operand that addresses an LDS global.
struct LdsUse {
  llvm::Instruction *user = nullptr;
  unsigned operand = 0;
  int64_t before = 0; ///< its constant offset from the global
};
} // namespace

/// `v`'s constant byte offset from the global it strips to, or nullopt.
static std::optional<int64_t> offsetFrom(const llvm::DataLayout &dl,
                                         llvm::Value *v,
                                         const llvm::GlobalVariable *&base) {
  llvm::APInt offset(dl.getIndexSizeInBits(3), 0);
  llvm::Value *stripped = v->stripAndAccumulateConstantOffsets(
      dl, offset, /*AllowNonInbounds=*/true);
  base = llvm::dyn_cast<llvm::GlobalVariable>(stripped);
  if (!base)
    return std::nullopt;
  return offset.getSExtValue();
}

/// An instruction operand that reaches `gv` through constants only.
static std::optional<LdsUse> findUse(const llvm::DataLayout &dl,
                                     llvm::GlobalVariable *gv) {
  llvm::SmallVector<llvm::Value *> work = {gv};
  while (!work.empty()) {
    llvm::Value *v = work.pop_back_val();
    for (llvm::User *u : v->users()) {
      if (auto *c = llvm::dyn_cast<llvm::ConstantExpr>(u)) {
        work.push_back(c);
        continue;
      }
      auto *i = llvm::dyn_cast<llvm::Instruction>(u);
      if (!i)
        continue;
      for (unsigned o = 0; o < i->getNumOperands(); ++o) {
        if (i->getOperand(o) != v)
          continue;
        const llvm::GlobalVariable *base = nullptr;
        std::optional<int64_t> off = offsetFrom(dl, i->getOperand(o), base);
        if (off && base == gv)
          return LdsUse{i, o, *off};
      }
    }
  }
  return std::nullopt;
}

llvm::Expected<std::vector<int64_t>>
mlir::fa::amdgpuLdsOffsets(const llvm::Module &optimized,
                           llvm::TargetMachine &tm, llvm::StringRef kernel,
                           size_t attributions) {
  std::unique_ptr<llvm::Module> m = llvm::CloneModule(optimized);
  const llvm::DataLayout &dl = m->getDataLayout();
  std::vector<std::optional<LdsUse>> uses(attributions);
  for (size_t i = 0; i < attributions; ++i) {
    std::string name = ("__wg_" + kernel + "_" + llvm::Twine(i)).str();
    if (llvm::GlobalVariable *gv = m->getNamedGlobal(name))
      uses[i] = findUse(dl, gv);
  }

  if (llvm::Error e = fa::runModulePipeline(*m, tm, "amdgpu-lower-module-lds"))
    return std::move(e);

  std::vector<int64_t> offsets(attributions, -1);
  for (size_t i = 0; i < attributions; ++i) {
    if (!uses[i])
      continue;
    const llvm::GlobalVariable *base = nullptr;
    std::optional<int64_t> after =
        offsetFrom(dl, uses[i]->user->getOperand(uses[i]->operand), base);
    if (!after || !base || base->getAddressSpace() != 3)
      return llvm::createStringError(
          "amdgpu-lower-module-lds left LDS attribution " + llvm::Twine(i) +
          " of " + kernel + " at no constant offset of a block");
    offsets[i] = *after - uses[i]->before;
  }
  return offsets;
}
