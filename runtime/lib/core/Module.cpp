//===- Module.cpp - Loading code objects with their manifests -------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements Module loading. The checks run from the cheapest and
// most telling to the backend's own loader:
//   1. both files readable, manifest well-formed;
//   2. the code object is the one the manifest describes (bytes, FNV-1a 64);
//   3. the device runs the manifest's target (in its code object format);
//   4. every kernel uses an ABI version this runtime implements (1, dense;
//      2, split-KV) and fits the device (threads, static + dynamic LDS);
//   5. the backend loads the bytes and resolves every kernel symbol.
// A half-built module is destroyed on failure.
//
//===----------------------------------------------------------------------===//

#include "core/Backend.h"
#include "core/Files.h"

using namespace fa;
using namespace fa::detail;

static bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

/// Reads and parses the manifest at `manifestPath`.
static Expected<Manifest> readManifestFile(const std::string &manifestPath) {
  Expected<std::vector<uint8_t>> text = readFileBytes(manifestPath, "manifest");
  if (!text) {
    Status s = text.takeStatus();
    if (s.code() == ErrorCode::NotFound)
      return std::move(s).prepend("missing manifest (fac writes "
                                  "<code object>.json next to the code "
                                  "object)");
    return s;
  }
  Expected<Manifest> parsed = parseManifest(std::string_view(
      reinterpret_cast<const char *>(text->data()), text->size()));
  if (!parsed)
    return parsed.takeStatus().withFile(manifestPath);
  return parsed;
}

Expected<Manifest> Module::readManifest(const std::string &path) {
  return readManifestFile(endsWith(path, ".json") ? path : path + ".json");
}

Expected<Module> Module::load(const Device &device, const std::string &path) {
  std::string codePath = path, manifestPath = path + ".json";
  Manifest manifest;
  auto readManifest = [&]() -> Status {
    Expected<Manifest> parsed = readManifestFile(manifestPath);
    if (!parsed)
      return parsed.takeStatus();
    manifest = parsed.take();
    return Status::success();
  };

  if (endsWith(path, ".json")) {
    manifestPath = path;
    if (Status s = readManifest(); !s.ok())
      return s;
    codePath = parentFolder(path) + manifest.codeObjectFile;
  }
  // Read the code object first: "no such file" is the more useful message
  // when both are missing.
  Expected<std::vector<uint8_t>> bytes = readFileBytes(codePath, "code object");
  if (!bytes)
    return bytes.takeStatus();
  if (manifestPath != path)
    if (Status s = readManifest(); !s.ok())
      return s;
  return loadBytes(device, std::move(manifest), bytes.take(), codePath);
}

Expected<Module> Module::loadFromMemory(const Device &device,
                                        const void *codeObject, size_t bytes,
                                        std::string_view manifestJson,
                                        std::string displayName) {
  Expected<Manifest> manifest = parseManifest(manifestJson);
  if (!manifest)
    return manifest.takeStatus().withFile(displayName + ".json");
  const auto *p = static_cast<const uint8_t *>(codeObject);
  std::vector<uint8_t> copy(p, p + (p ? bytes : 0));
  return loadBytes(device, manifest.take(), std::move(copy),
                   std::move(displayName));
}

Expected<Module> Module::loadBytes(const Device &device, Manifest manifest,
                                   std::vector<uint8_t> bytes,
                                   std::string displayName) {
  if (Status s = checkCodeObjectIdentity(manifest, bytes); !s.ok())
    return std::move(s).withFile(displayName);

  if (std::optional<std::string> problem = device.backend->targetProblem(
          manifest.target, manifest.codeObjectFormat)) {
    std::string runs;
    for (const std::string &t : device.targets())
      runs += (runs.empty() ? "'" : ", '") + t + "'";
    return Status::error(ErrorCode::Unsupported,
                         "code object is for target '" + manifest.target +
                             "' but device '" + device.name() + "' runs " +
                             runs + (problem->empty() ? "" : ": " + *problem))
        .withFile(displayName)
        .withTarget(manifest.target)
        .withDevice(device.name());
  }

  const DeviceLimits &limits = device.limits();
  for (const KernelInfo &k : manifest.kernels) {
    auto fail = [&](const std::string &message) {
      return Status::error(ErrorCode::Unsupported, message)
          .withFile(displayName)
          .withKernel(k.name)
          .withTarget(manifest.target)
          .withDevice(device.name());
    };
    if (k.abiVersion < 1 || k.abiVersion > FA_ABI_VERSION)
      return fail("kernel '" + k.name + "' uses kernel ABI version " +
                  std::to_string(k.abiVersion) +
                  ", this runtime implements versions 1 to " +
                  std::to_string(FA_ABI_VERSION));
    if (uint64_t(k.threads) > limits.maxThreadsPerWorkgroup)
      return fail("kernel '" + k.name + "' needs " + std::to_string(k.threads) +
                  " threads per workgroup, device '" + device.name() +
                  "' allows " + std::to_string(limits.maxThreadsPerWorkgroup));
    uint64_t lds = uint64_t(k.ldsBytes) + uint64_t(k.dynamicLdsBytes);
    if (lds > limits.maxLdsBytes)
      return fail("kernel '" + k.name + "' needs " + std::to_string(lds) +
                  " bytes of LDS" +
                  (k.dynamicLdsBytes
                       ? " (" + std::to_string(k.ldsBytes) + " static + " +
                             std::to_string(k.dynamicLdsBytes) + " dynamic)"
                       : std::string()) +
                  ", device '" + device.name() + "' has " +
                  std::to_string(limits.maxLdsBytes));
  }

  auto state = std::make_shared<ModuleState>();
  state->backend = device.backend;
  state->path = displayName;
  Expected<std::unique_ptr<LoadedCode>> code =
      device.backend->loadCode(manifest, bytes, displayName);
  if (!code)
    return code.takeStatus()
        .withFile(displayName)
        .withTarget(manifest.target)
        .withDevice(device.name());
  state->code = code.take();
  state->manifest = std::move(manifest);
  // parseManifest checked that each `combine` names a combine kernel.
  const std::vector<KernelInfo> &kernels = state->manifest.kernels;
  state->combineIndex.assign(kernels.size(), -1);
  state->workspaces.resize(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i].splitKv)
      continue;
    for (size_t j = 0; j < kernels.size(); ++j)
      if (kernels[j].name == kernels[i].combine)
        state->combineIndex[i] = int(j);
    state->workspaces[i] = std::make_unique<WorkspacePool>();
  }
  return Module(std::move(state));
}

const Manifest &Module::manifest() const { return state->manifest; }

const std::string &Module::path() const { return state->path; }

Expected<Kernel> Module::kernel(std::string_view name) const {
  const std::vector<KernelInfo> &kernels = state->manifest.kernels;
  // The first attention: a combine kernel is launched by its split kernel.
  if (name.empty()) {
    for (size_t i = 0; i < kernels.size(); ++i)
      if (!kernels[i].isCombine())
        return Kernel(state, i);
    return Kernel(state, 0);
  }
  std::string known;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i].name == name)
      return Kernel(state, i);
    known += (i ? ", " : "") + kernels[i].name;
  }
  return Status::error(ErrorCode::NotFound,
                       "no kernel '" + std::string(name) +
                           "' in the module (it has: " + known + ")")
      .withFile(state->path);
}
