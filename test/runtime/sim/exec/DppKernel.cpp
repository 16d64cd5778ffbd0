//===- DppKernel.cpp - LLVM's DPP code on gfx906-sim ----------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa-sim-dpp-kernel DPP_KERNEL.hsaco: runs dpp_kernel.cl, built for gfx906 by
// LLVM 22's clang (dpp_kernel.sh), on gfx906-sim through the public
// RawKernel, and checks each lane's results against the DPP_CTRL rules
// written out here per pattern (row sums and maxima, the inclusive scan,
// quad_perm under a bank mask, wave_shr, the mirrors, row_shl with
// bound_ctrl, row_ror as a value and as src1 of a subtraction). The
// instructions are what LLVM's DPP combiner makes of llvm.amdgcn.update.dpp, so
// a form gfx906-sim refuses or gets wrong fails here. Exit 0 when every lane
// matches.
//
//===----------------------------------------------------------------------===//

#include "fa/Runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace fa;

static int fail(const std::string &why) {
  std::fprintf(stderr, "fa-sim-dpp-kernel: %s\n", why.c_str());
  return 1;
}

static int32_t bitsOf(float f) {
  int32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return fail("usage: fa-sim-dpp-kernel DPP_KERNEL.hsaco");
  std::ifstream f(argv[1], std::ios::binary);
  std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(f), {});
  Expected<Device> device = Device::open("gfx906-sim");
  if (!device)
    return fail(device.status().toString());
  Expected<RawKernel> kernel =
      RawKernel::load(*device, bytes, "hsaco", "dpp_kernel", 64);
  if (!kernel)
    return fail(kernel.status().toString());

  const unsigned waves = 3, n = 64 * waves, outs = 10;
  std::vector<int32_t> in(n);
  for (unsigned i = 0; i < n; ++i)
    in[i] = int32_t((i * 37 + 11) % 101) - 40;
  Expected<Buffer> bin = device->allocate(n * 4);
  Expected<Buffer> bout = device->allocate(n * outs * 4);
  if (!bin || !bout)
    return fail((bin ? bout : bin).status().toString());
  if (Status s = bin->copyFromHost(in.data(), n * 4); !s.ok())
    return fail(s.toString());
  uint64_t params[2] = {bout->address(), bin->address()};
  LaunchGeometry g;
  g.grid[0] = waves;
  g.block[0] = 64;
  if (Status s = kernel->launch(g, params, 2); !s.ok())
    return fail(s.toString());
  std::vector<int32_t> out(n * outs);
  if (Status s = bout->copyToHost(out.data(), out.size() * 4); !s.ok())
    return fail(s.toString());

  unsigned bad = 0;
  for (unsigned w = 0; w < waves; ++w) {
    const int32_t *x = &in[64 * w];
    int32_t prefix = 0;
    for (unsigned l = 0; l < 64; ++l) {
      unsigned row = l / 16 * 16;
      // Rotating through row_ror:8, 4, 2, 1 visits all 16 lanes of the
      // row: every lane ends with the row's sum (exact in f32) and max.
      float sum = 0, mx = float(x[row]);
      for (unsigned j = 0; j < 16; ++j) {
        sum += float(x[row + j]);
        mx = std::max(mx, float(x[row + j]));
      }
      prefix += x[l];
      int32_t want[10] = {
          bitsOf(sum), bitsOf(mx), prefix,
          // quad_perm:[1,0,3,2] (lane l ^ 1) in banks 0 and 2 (lanes 0-3,
          // 8-11 of a row), elsewhere the old value -x.
          (l % 16) / 4 % 2 == 0 ? x[l ^ 1] : -x[l],
          // wave_shr:1: lane l - 1; lane 0 keeps the old 0.
          l ? x[l - 1] : 0,
          x[row + 15 - l % 16],                    // row_mirror
          x[l / 8 * 8 + 7 - l % 8],                // row_half_mirror
          (l % 16 + 3 < 16 ? x[l + 3] : 0) + x[l], // row_shl:3, bound_ctrl
          x[row + (l % 16 + 11) % 16],             // row_ror:5
          x[l] - x[row + (l % 16 + 13) % 16],      // x - row_ror:3
      };
      for (unsigned k = 0; k < outs; ++k) {
        int32_t got = out[(64 * w + l) * outs + k];
        if (got != want[k] && ++bad <= 10)
          std::fprintf(stderr,
                       "fa-sim-dpp-kernel: wave %u lane %u result %u: got "
                       "0x%08x, want 0x%08x\n",
                       w, l, k, unsigned(got), unsigned(want[k]));
      }
    }
  }
  if (bad)
    return fail(std::to_string(bad) + " results differ");
  std::printf("fa-sim-dpp-kernel: %u lanes x %u results match\n", n, outs);
  return 0;
}
