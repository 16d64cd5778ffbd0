//===- PassDetail.h - what the transforms passes' definitions need -*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The dialects the transforms passes create ops of and declare as dependent
// (Passes.td), for the pass .cpp files (GEN_PASS_DEF needs them complete).
// Passes.h itself declares the passes only, so that a tool that builds a
// pipeline does not parse every dialect's headers (make test's build time,
// issue 29).
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TRANSFORMS_PASSDETAIL_H
#define FA_COMPILER_TRANSFORMS_PASSDETAIL_H

#include "compiler/Transforms/Passes.h"
#include "dialect/FaOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#endif // FA_COMPILER_TRANSFORMS_PASSDETAIL_H
