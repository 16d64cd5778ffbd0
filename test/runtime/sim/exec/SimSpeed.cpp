//===- SimSpeed.cpp - Lane-instructions per second of gfx906-sim ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa-sim-speed CODE_OBJECT B,Hq,Hkv,Lq,Lk [WORKERS]: validates the kernel
// once on gfx906-sim and prints the simulator's totals: wave-instructions,
// lane-instructions (EXEC lanes summed), seconds inside the simulator and
// lane-instructions per second (the figure runtime/README.md quotes). Not a
// test: a measurement.
//
//===----------------------------------------------------------------------===//

#include "fa/Runtime.h"
#include "fa/Validate.h"
#include "sim/SimDevice.h"

#include <cstdio>
#include <cstdlib>

using namespace fa;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fa-sim-speed CODE_OBJECT B,Hq,Hkv,Lq,Lk "
                         "[WORKERS]\n");
    return 2;
  }
  long long s[5];
  if (std::sscanf(argv[2], "%lld,%lld,%lld,%lld,%lld", &s[0], &s[1], &s[2],
                  &s[3], &s[4]) != 5) {
    std::fprintf(stderr, "fa-sim-speed: bad shape '%s'\n", argv[2]);
    return 2;
  }
  Expected<Device> device = Device::open("gfx906-sim");
  if (!device) {
    std::fprintf(stderr, "fa-sim-speed: %s\n",
                 device.status().toString().c_str());
    return 2;
  }
  Expected<Module> module = Module::load(*device, argv[1]);
  if (!module) {
    std::fprintf(stderr, "fa-sim-speed: %s\n",
                 module.status().toString().c_str());
    return 2;
  }
  Expected<Kernel> kernel = module->kernel("");
  if (!kernel) {
    std::fprintf(stderr, "fa-sim-speed: %s\n",
                 kernel.status().toString().c_str());
    return 2;
  }
  ValidationOptions o;
  o.shape = {s[0], s[1], s[2], s[3], s[4]};
  o.reference = ReferenceKind::Cpu;
  if (argc > 3)
    o.launch.workers = unsigned(std::atoi(argv[3]));
  Expected<ValidationReport> r = validateKernel(*kernel, o);
  if (!r) {
    std::fprintf(stderr, "fa-sim-speed: %s\n", r.status().toString().c_str());
    return 1;
  }
  sim::SimStats t = detail::simStatsTotal();
  std::printf("%s %s: %s, %llu wave-instructions, %llu lane-instructions in "
              "%.3f s: %.3g lane-instructions/s\n",
              argv[1], o.shape.toString().c_str(),
              r->verdict.pass ? "PASS" : "FAIL",
              (unsigned long long)t.instructions, (unsigned long long)t.laneOps,
              t.seconds, t.seconds > 0 ? double(t.laneOps) / t.seconds : 0.0);
  return r->verdict.pass ? 0 : 1;
}
