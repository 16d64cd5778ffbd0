//===- Device.cpp - Opening devices by name -------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements device selection (`auto`, `host`, `hip[:N]`,
// `cuda[:N]`, `gfx906-sim`): the top of fa::runtime, the one place that
// knows every backend (host/, gpu/ and sim/). `auto` with a gfx906 code
// object takes a real AMD GPU that runs it, else the simulator. The Device and
// Buffer handles over an opened backend are core's (core/DeviceHandle.cpp).
//
//===----------------------------------------------------------------------===//

#include "core/Backend.h"
#include "sim/SimDevice.h"

#include <algorithm>

using namespace fa;
using namespace fa::detail;

const char *Device::knownDevices() {
  return "auto, host, hip[:N], cuda[:N], gfx906-sim";
}

/// Splits "kind[:N]"; ordinal -1 when absent. False if N is not a number.
static bool splitSpec(std::string_view spec, std::string_view &kind,
                      int &ordinal) {
  size_t colon = spec.find(':');
  kind = spec.substr(0, colon);
  ordinal = -1;
  if (colon == std::string_view::npos)
    return true;
  std::string_view digits = spec.substr(colon + 1);
  if (digits.empty() || digits.size() > 6)
    return false;
  ordinal = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return false;
    ordinal = ordinal * 10 + (c - '0');
  }
  return true;
}

Expected<Device> Device::open(std::string_view spec, std::string_view target) {
  std::string_view kind;
  int ordinal;
  if (!splitSpec(spec, kind, ordinal))
    return Status::error(ErrorCode::InvalidArgument,
                         "bad device '" + std::string(spec) +
                             "': the ordinal after ':' must be a number "
                             "(known devices: " +
                             knownDevices() + ")");
  if (kind == "host") {
    if (ordinal > 0)
      return Status::error(ErrorCode::InvalidArgument,
                           "device 'host:" + std::to_string(ordinal) +
                               "' does not exist: there is one host device");
    Expected<std::shared_ptr<Backend>> host = openHostBackend();
    if (!host)
      return host.takeStatus();
    return Device(host.take());
  }
  if (spec == "gfx906-sim") {
    Expected<std::shared_ptr<Backend>> sim = openSimBackend();
    if (!sim)
      return sim.takeStatus();
    return Device(sim.take());
  }
  if (kind == "hip" || kind == "cuda") {
    Expected<std::shared_ptr<Backend>> gpu =
        kind == "hip" ? openHipBackend(std::max(ordinal, 0))
                      : openCudaBackend(std::max(ordinal, 0));
    if (!gpu)
      return gpu.takeStatus();
    return Device(gpu.take());
  }
  if (kind == "auto" && ordinal < 0) {
    std::string log, wanted(target);
    auto note = [&](const std::string &why) {
      log += (log.empty() ? "" : "; ") + why;
    };
    for (const char *gpuKind : {"hip", "cuda"}) {
      bool hip = gpuKind[0] == 'h';
      // Each vendor runs its own spelling of targets; don't initialize a
      // GPU runtime for code it cannot run.
      if (!wanted.empty() && wanted.rfind(hip ? "gfx" : "sm_", 0) != 0) {
        note(std::string(gpuKind) + " skipped: target '" + wanted +
             "' is not " + (hip ? "an AMD" : "an NVIDIA") + " GPU target");
        continue;
      }
      for (int i = 0;; ++i) {
        Expected<std::shared_ptr<Backend>> gpu =
            hip ? openHipBackend(i) : openCudaBackend(i);
        if (!gpu) {
          // Past the last GPU is the normal end of the scan, not news.
          if (i == 0 || gpu.status().code() != ErrorCode::InvalidArgument)
            note(gpu.status().message());
          break;
        }
        std::optional<std::string> problem;
        if (!wanted.empty())
          problem = (*gpu)->targetProblem(wanted, "");
        if (!problem) {
          Device device(gpu.take());
          device.selectionLog_ = std::move(log);
          return device;
        }
        note((*gpu)->description() + " does not run target '" + wanted + "'" +
             (problem->empty() ? "" : ": " + *problem));
      }
    }
    // gfx906 code without an AMD GPU that runs it: the simulator executes
    // the same code object.
    if (!wanted.empty() && wanted.rfind("gfx", 0) == 0) {
      Expected<std::shared_ptr<Backend>> sim = openSimBackend();
      if (sim && !(*sim)->targetProblem(wanted, "")) {
        note("gfx906-sim: no AMD GPU runs target '" + wanted +
             "', so its machine code runs in the gfx906 simulator");
        Device device(sim.take());
        device.selectionLog_ = std::move(log);
        return device;
      }
    }
    Expected<std::shared_ptr<Backend>> host = openHostBackend();
    if (!host)
      return host.takeStatus().withLog(log);
    Device device(host.take());
    device.selectionLog_ = std::move(log);
    return device;
  }
  return Status::error(ErrorCode::InvalidArgument,
                       "unknown device '" + std::string(spec) +
                           "' (known devices: " + knownDevices() + ")");
}
