//===- FuzzLoader.cpp - Fuzz target: the host code-object loader ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The input is a manifest and a code object, separated by the first NUL
// byte: `<manifest JSON> \0 <code object bytes>` (JSON text holds no NUL).
// The seeds are fac's host .so files with their manifests
// (fuzz/make-seeds.sh).
//
// Each input is loaded on the host device with Module::loadFromMemory twice:
//   1. as given, which mostly exercises the manifest and identity checks;
//   2. if the manifest parses, with its code-object size and hash rewritten
//      to match the bytes, so that mutated code objects get past the hash
//      check into the loader's ELF checks and dlopen.
// Loading must return an error or a module, never crash. A crash inside
// dlopen on bytes the ELF checks let through is a finding (the loader
// must not trust its input that far). With FA_FUZZ_LAUNCH=1, a module that
// loads is also launched once on a tiny problem (the runtime must not trust
// the manifest's facts for memory safety).
//
//===----------------------------------------------------------------------===//

#include "fa/Runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

using namespace fa;

static const Device &hostDevice() {
  static Device *device = [] {
    Expected<Device> d = Device::open("host");
    if (!d)
      std::abort();
    return new Device(d.take());
  }();
  return *device;
}

/// One launch on a problem of a few rows, with the kernel's static sizes.
static void launchTiny(const Kernel &kernel) {
  const KernelInfo &k = kernel.info();
  if (k.headDim < 1 || k.headDim > 512)
    return;
  int64_t sizes[5] = {1, 1, 1, 3, 5};
  for (int i = 0; i < 5; ++i) {
    if (k.staticSizes[i] > 64)
      return;
    if (k.staticSizes[i] >= 1)
      sizes[i] = k.staticSizes[i];
  }
  AttentionShape shape{sizes[0], sizes[1], sizes[2], sizes[3], sizes[4]};
  size_t elem = dtypeBytes(k.dtype);
  size_t qBytes = size_t(shape.batch * shape.headsQ * shape.seqQ) *
                  size_t(k.headDim) * elem;
  size_t kvBytes = size_t(shape.batch * shape.headsKv * shape.seqK) *
                   size_t(k.headDim) * elem;
  size_t lseBytes = size_t(shape.batch * shape.headsQ * shape.seqQ) * 4;
  const Device &device = hostDevice();
  Expected<Buffer> q = device.allocate(qBytes), kb = device.allocate(kvBytes),
                   v = device.allocate(kvBytes), o = device.allocate(qBytes),
                   lse = device.allocate(lseBytes);
  if (!q || !kb || !v || !o || !lse)
    return;
  AttentionArgs args;
  args.q = &*q;
  args.k = &*kb;
  args.v = &*v;
  args.o = &*o;
  args.lse = k.hasLse ? &*lse : nullptr;
  args.shape = shape;
  (void)kernel.launch(args);
}

static void tryLoad(const uint8_t *code, size_t bytes, std::string_view json) {
  Expected<Module> module =
      Module::loadFromMemory(hostDevice(), code, bytes, json, "fuzz.so");
  if (!module) {
    (void)module.status().toString();
    return;
  }
  static bool launch = [] {
    const char *e = std::getenv("FA_FUZZ_LAUNCH");
    return e && *e == '1';
  }();
  for (const KernelInfo &info : module->manifest().kernels) {
    Expected<Kernel> kernel = module->kernel(info.name);
    if (kernel && launch)
      launchTiny(*kernel);
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = static_cast<const uint8_t *>(std::memchr(data, 0, size));
  size_t jsonBytes = nul ? size_t(nul - data) : size;
  std::string_view json(reinterpret_cast<const char *>(data), jsonBytes);
  const uint8_t *code = nul ? nul + 1 : data + size;
  size_t codeBytes = size - jsonBytes - (nul ? 1 : 0);
  // An owned copy of exactly the code object's bytes, so that reads past
  // its end are caught.
  std::vector<uint8_t> object(code, code + codeBytes);

  tryLoad(object.data(), object.size(), json);

  Expected<Manifest> manifest = parseManifest(json);
  if (!manifest)
    return 0;
  manifest->codeObjectBytes = object.size();
  manifest->codeObjectHash =
      formatFnv1a64(fnv1a64(object.data(), object.size()));
  tryLoad(object.data(), object.size(), formatManifest(*manifest));
  return 0;
}
