//===- RawKernel.cpp - Launching code compiled at run time ----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements RawKernel (fa/Module.h) over the backend entries for
// run-time compiled code, Backend::loadRawCode and LoadedCode::launchRaw.
// It is the public door to them, so that fa::validate's device reference
// needs no internal header of fa::runtime.
//
//===----------------------------------------------------------------------===//

#include "core/Backend.h"
#include "fa/Module.h"

using namespace fa;
using namespace fa::detail;

/// The loaded code and the backend it was loaded on; the code is declared
/// last so that it is unloaded before the backend can go away.
struct fa::detail::RawKernelState {
  std::shared_ptr<Backend> backend;
  std::unique_ptr<LoadedCode> code;
};

Expected<RawKernel> RawKernel::load(const Device &device,
                                    const std::vector<uint8_t> &bytes,
                                    const std::string &format,
                                    const std::string &symbol,
                                    int64_t maxThreads) {
  auto state = std::make_shared<RawKernelState>();
  state->backend = backendOf(device);
  Expected<std::unique_ptr<LoadedCode>> code =
      state->backend->loadRawCode(bytes, format, symbol, maxThreads);
  if (!code)
    return code.takeStatus();
  state->code = code.take();
  return RawKernel(std::move(state));
}

Status RawKernel::launch(const LaunchGeometry &geometry, const uint64_t *params,
                         size_t count) const {
  return state->code->launchRaw(0, geometry, params, count);
}
