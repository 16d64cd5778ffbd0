//===- SimDevice.h - Opening the gfx906-sim device --------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The entry points of the `gfx906-sim` device (SimBackend.cpp) for
// the top of fa::runtime (Device.cpp) and the tests.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_SIMDEVICE_H
#define FA_LIB_SIM_SIMDEVICE_H

#include "core/Backend.h"
#include "sim/Simulator.h"

namespace fa {
namespace detail {

/// The one gfx906-sim backend (made on first use, shared while held).
Expected<std::shared_ptr<Backend>> openSimBackend();

/// Totals over every gfx906-sim launch of the process so far (exported for
/// the tests and the speed measurement; not API).
__attribute__((visibility("default"))) sim::SimStats simStatsTotal();

} // namespace detail
} // namespace fa

#endif // FA_LIB_SIM_SIMDEVICE_H
