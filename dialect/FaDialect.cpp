//===- FaDialect.cpp - fa dialect registration ----------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file registers the fa dialect's operations, attributes and enums.
//
//===----------------------------------------------------------------------===//

#include "dialect/FaOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fa;

#include "dialect/FaOpsDialect.cpp.inc"
#include "dialect/FaOpsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/FaOpsAttrDefs.cpp.inc"

void FaDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/FaOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/FaOpsAttrDefs.cpp.inc"
      >();
}
