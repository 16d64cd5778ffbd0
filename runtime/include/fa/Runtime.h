//===- Runtime.h - Umbrella header of fa::runtime ---------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Umbrella header of fa::runtime for applications: devices, buffers,
// modules, kernels, manifests, the host emulator. The runtime links no LLVM
// or MLIR. The validation harness (references, inputs, metrics, golden
// vectors, validateKernel) is the separate library fa::validate, whose
// umbrella is fa/Validate.h.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_H
#define FA_RUNTIME_H

#include "fa/AttentionShape.h"
#include "fa/DType.h"
#include "fa/Device.h"
#include "fa/Half.h"
#include "fa/HostEmulator.h"
#include "fa/Json.h"
#include "fa/Manifest.h"
#include "fa/Module.h"
#include "fa/Status.h"

#endif // FA_RUNTIME_H
