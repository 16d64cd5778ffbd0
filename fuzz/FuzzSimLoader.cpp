//===- FuzzSimLoader.cpp - Fuzz target: gfx906 code objects on gfx906-sim -===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The input is a gfx906 code object as a corrupted file could hold it
// (seeds: fac's kernels). The gfx906 simulator must load it or refuse it
// with an error (ELF, note, kernel descriptor, decoding), and a launch of
// what it loads must end in a result or an error (an unimplemented
// instruction, an out-of-bounds access: its arguments are null buffers), never
// a crash or a hang: each wave runs under a small instruction budget.
//
//===----------------------------------------------------------------------===//

#include "fa/Device.h"
#include "fa/KernelAbi.h"
#include "fa/Module.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // A mutant that loops forever stops here instead of after 2^28
  // instructions per wave.
  setenv("FA_SIM_WAVE_BUDGET", "100000", /*overwrite=*/1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fa::Expected<fa::Device> device = fa::Device::open("gfx906-sim");
  if (!device)
    std::abort(); // the simulator is always there
  std::vector<uint8_t> bytes(data, data + size);
  fa::Expected<fa::RawKernel> kernel = fa::RawKernel::load(
      *device, bytes, "hsaco", "attention_kernel", /*maxThreads=*/256);
  if (!kernel) {
    (void)kernel.status().toString();
    return 0;
  }
  fa::LaunchGeometry g;
  g.block[0] = 64;
  std::vector<uint64_t> params(FA_ABI_NUM_WORDS, 0);
  fa::Status s = kernel->launch(g, params.data(), params.size());
  (void)s.toString();
  return 0;
}
