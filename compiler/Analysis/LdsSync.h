//===- LdsSync.h - Barriers between LDS accesses -------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The one place where the memory level gets its barriers: fa-promote runs it
// after creating the buffers, fa-double-buffer again after moving the
// copies. The scan treats the slot (fa.lds_buffer's storage) as one location.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_ANALYSIS_LDS_SYNC_H
#define FA_COMPILER_ANALYSIS_LDS_SYNC_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"

#include <cstdint>

namespace mlir::fa {

/// The storage (slot, or own name) of an fa.lds_buffer value; "" otherwise.
StringRef ldsStorageOf(Value buffer);

/// The LDS slots `op` itself reads and writes (not those of nested ops):
/// copies, stages and register-tile writes write; products read.
void ldsAccesses(Operation *op, SmallVectorImpl<StringRef> &reads,
                 SmallVectorImpl<StringRef> &writes);

/// Places a gpu.barrier before every LDS access in `block` (and the blocks
/// nested in it) that could race with an access since the previous barrier.
/// Existing barriers are kept. Returns the number placed.
int64_t placeLdsBarriers(Block &block);

} // namespace mlir::fa

#endif // FA_COMPILER_ANALYSIS_LDS_SYNC_H
