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

namespace mlir::fa {

/// The layout of an LDS buffer (fa.lds_buffer): a logical rows x cols tile,
/// row-major with `pad` elements after each row, or pair-interleaved (rows
/// 2i and 2i+1 share 32-bit words; `pad` elements after each pair-row's
/// cols, counted in element pairs).
struct LdsLayout {
  int64_t rows = 0, cols = 0, pad = 0;
  bool pairs = false;
  Type elementType;

  int64_t rowStride() const { return cols + pad; }
  /// Elements the buffer occupies.
  int64_t elements() const { return rows * (cols + pad); }
  int64_t bytes() const {
    return elements() * (elementType.getIntOrFloatBitWidth() / 8);
  }
  /// The memref type that spells this layout.
  MemRefType type(MLIRContext *ctx) const;
};

/// The layout a memref type spells, or failure with the reason in `why`.
FailureOr<LdsLayout> getLdsLayout(MemRefType type, std::string *why = nullptr);

} // namespace mlir::fa

#define GET_OP_CLASSES
#include "dialect/FaOps.h.inc"

#endif // FA_DIALECT_FAOPS_H
