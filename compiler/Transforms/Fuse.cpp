//===- FuseAttention.cpp - fa-fuse: standard attention -> fa.attention ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements `fa-fuse`. It recognises
//
//   1. %s = fa.matmul %q, %k transpose_rhs        (scores, f32)
//   2. %p = fa.softmax %s [causal] [scale(c)]     (probabilities, Q's type)
//                         [window(l, r)] [softcap(c)]
//   3. %o = fa.matmul %p, %v                      (f32)
//   4. optionally %h = arith.truncf %o to Q's type
//
// and replaces the chain with one fa.attention. The intermediate S and P must
// have no other use: fusing would otherwise recompute or drop them. Every
// declined chain can be explained with a remark.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/PassDetail.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FAFUSEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
/// A matched chain, or the reason it does not form attention.
struct Chain {
  MatmulOp qk;
  SoftmaxOp softmax;
  MatmulOp pv;
  arith::TruncFOp trunc; // may be null (f32 attention)
  std::string whyNot;
};
} // namespace

/// A dimension as printed in types: the number, or `?`.
static std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

/// Matches the chain that ends in `pv` (the P·V product).
static Chain matchChain(MatmulOp pv) {
  Chain c;
  c.pv = pv;
  auto fail = [&](const Twine &why) {
    c.whyNot = why.str();
    return c;
  };
  c.softmax = pv.getLhs().getDefiningOp<SoftmaxOp>();
  if (!c.softmax)
    return fail("lhs of the second matmul is not an fa.softmax");
  c.qk = c.softmax.getInput().getDefiningOp<MatmulOp>();
  if (!c.qk)
    return fail("softmax input is not an fa.matmul");
  if (!c.qk.getTransposeRhs())
    return fail("first matmul does not transpose its rhs (Q·Kᵀ expected)");
  if (pv.getTransposeRhs())
    return fail("second matmul transposes its rhs (P·V expected)");
  if (!c.qk.getResult().hasOneUse())
    return fail("scores S have another use");
  if (!c.softmax.getResult().hasOneUse())
    return fail("probabilities P have another use");

  auto q = c.qk.getLhs().getType(), k = c.qk.getRhs().getType(),
       v = pv.getRhs().getType();
  Type elt = q.getElementType();
  // The matmul verifier gives K Q's type and V P's type, so this one check
  // also rules out mixed Q/K/V types.
  Type pElt = c.softmax.getResult().getType().getElementType();
  if (pElt != elt)
    return fail(
        llvm::formatv("P is rounded to {0}, not the query's {1}", pElt, elt));
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  const int64_t d = qs[3];
  if (ShapedType::isDynamic(d) || ks[3] != d || vs[3] != d)
    return fail(llvm::formatv("head dimensions differ or are dynamic: query "
                              "D={0}, key D={1}, value D={2}",
                              dimStr(qs[3]), dimStr(ks[3]), dimStr(vs[3])));
  if (failed(verifyCompatibleShape(ks, vs)))
    return fail(
        llvm::formatv("key and value shapes differ: key is '{0}', value "
                      "is '{1}'",
                      k, v));

  // A narrower attention result must be what the program uses: the f32
  // product rounded to Q's type, once.
  if (!elt.isF32()) {
    if (pv.getResult().hasOneUse())
      if (auto trunc = dyn_cast<arith::TruncFOp>(*pv.getResult().user_begin()))
        if (getElementTypeOrSelf(trunc.getType()) == elt)
          c.trunc = trunc;
    if (!c.trunc)
      return fail("the f32 product is used unrounded; fa.attention yields the "
                  "query's element type");
  }
  // S and P may be dynamic where Q and O are static, so O's shape is only
  // tied to Q's through them: check it as fa.attention's verifier will.
  auto out = cast<RankedTensorType>(c.trunc ? c.trunc.getType() : pv.getType());
  if (failed(verifyCompatibleShape(out.getShape(), qs)) ||
      out.getShape()[3] != d)
    return fail(
        llvm::formatv("result '{0}' does not match the query '{1}'", out, q));
  return c;
}

unsigned mlir::fa::fuseAttentionChains(RewriterBase &rewriter, Operation *root,
                                       bool remarks) {
  SmallVector<MatmulOp> candidates;
  root->walk([&](MatmulOp op) {
    if (op.getLhs().getDefiningOp<SoftmaxOp>())
      candidates.push_back(op);
  });
  unsigned fused = 0;
  for (MatmulOp pv : candidates) {
    Chain c = matchChain(pv);
    if (!c.whyNot.empty()) {
      if (remarks)
        pv.emitRemark() << "not fused: " << c.whyNot;
      continue;
    }
    Operation *last = c.trunc ? c.trunc.getOperation() : pv.getOperation();
    rewriter.setInsertionPoint(last);
    float scale =
        c.softmax.getScale() ? c.softmax.getScale()->convertToFloat() : 1.0f;
    auto attn = AttentionOp::create(
        rewriter, pv.getLoc(), last->getResult(0).getType(), /*lse=*/Type(),
        c.qk.getLhs(), c.qk.getRhs(), pv.getRhs(), /*block_table=*/Value(),
        /*cache_seqlens=*/Value(), /*cu_seqlens_q=*/Value(),
        /*cu_seqlens_k=*/Value(), /*alibi_slopes=*/Value(), /*sinks=*/Value(),
        rewriter.getF32FloatAttr(scale),
        c.softmax.getCausal(), c.softmax.getWindowLeftAttr(),
        c.softmax.getWindowRightAttr(), c.softmax.getSoftcapAttr());
    rewriter.replaceOp(last, attn.getOutput());
    if (c.trunc)
      rewriter.eraseOp(pv);
    rewriter.eraseOp(c.softmax);
    rewriter.eraseOp(c.qk);
    ++fused;
  }
  return fused;
}

namespace {
struct FaFusePass : public mlir::fa::impl::FaFusePassBase<FaFusePass> {
  using FaFusePassBase::FaFusePassBase;
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    fuseAttentionChains(rewriter, getOperation(), remarks);
  }
};
} // namespace
