//===- FaOps.h - fa dialect declarations ------------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FAOPS_H
#define FA_DIALECT_FAOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/FaOpsDialect.h.inc"
#include "dialect/FaOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/FaOpsAttrDefs.h.inc"

#define GET_OP_CLASSES
#include "dialect/FaOps.h.inc"

#endif // FA_DIALECT_FAOPS_H
