//===- Runtime.h - The fa runtime, all of it --------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Umbrella header for applications: devices, buffers, modules, kernels and
// the validation library. The runtime links no LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_H
#define FA_RUNTIME_H

#include "fa/Device.h"
#include "fa/DeviceReference.h"
#include "fa/Half.h"
#include "fa/HostEmulator.h"
#include "fa/Json.h"
#include "fa/Manifest.h"
#include "fa/Module.h"
#include "fa/Status.h"
#include "fa/Validate.h"

#endif // FA_RUNTIME_H
