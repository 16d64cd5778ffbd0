//===- Dispatch.cpp - One kernel dispatch, as HIP hands it over -----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements sim/Dispatch.h: loading a code object for the
// simulator and the part of a dispatch the GPU's command processor does
// (kernarg segment, dispatch packet, queue, memory map) before the
// workgroups run (runLaunch).
//
//===----------------------------------------------------------------------===//

#include "sim/Dispatch.h"

#include <algorithm>
#include <cstring>

using namespace fa;
using namespace fa::sim;

Expected<std::unique_ptr<SimModule>>
SimModule::load(const std::vector<uint8_t> &elf) {
  Expected<CodeObject> co = readCodeObject(elf);
  if (!co)
    return co.status();
  auto m = std::make_unique<SimModule>();
  m->co = co.take();
  m->program = Program::decode(m->co);
  return m;
}

/// The hidden kernel arguments of code object v5 after the explicit ones
/// (AMDGPUUsage, "Code Object V5 Metadata": block counts, group sizes,
/// remainders, global offsets, grid dimensions), what HIP appends: kernels
/// compiled from HIP read blockDim from here. Pointers (printf buffer,
/// heap, ...) stay null.
static void fillHiddenArgsV5(uint8_t *at, const SimDispatch &d) {
  for (int i = 0; i < 3; ++i) {
    uint32_t count = d.grid[i];
    uint16_t size = uint16_t(d.block[i]);
    std::memcpy(at + 4 * i, &count, 4);
    std::memcpy(at + 12 + 2 * i, &size, 2);
    // Remainders (18 + 2i) are 0: the grid is whole workgroups; global
    // offsets (40 + 8i) are 0.
  }
  uint16_t dims = d.grid[2] > 1 || d.block[2] > 1   ? 3
                  : d.grid[1] > 1 || d.block[1] > 1 ? 2
                                                    : 1;
  std::memcpy(at + 64, &dims, 2);
}

Status fa::sim::dispatch(const SimDispatch &d) {
  const KernelDescriptor &kd = d.kernel->kd;
  // Also here, for callers that load without the device's checks (the fake
  // HIP runtime): nothing is sized from a descriptor it refuses.
  if (Status s = checkDescriptor(d.kernelName, kd); !s.ok())
    return s;
  // The segment as the GPU sees it: at least the descriptor's kernarg size
  // (the part beyond the arguments given is zero), 16-byte aligned like
  // HIP's kernarg buffers.
  size_t kernargBytes = std::max<size_t>(d.kernarg.size(), kd.kernargSize);
  std::vector<uint64_t> kernargStore((kernargBytes + 7) / 8 + 2, 0);
  if (!d.kernarg.empty())
    std::memcpy(kernargStore.data(), d.kernarg.data(), d.kernarg.size());
  if (d.hiddenArgsV5 && d.module->co.abiVersion >= 3 &&
      kd.kernargSize >= d.kernarg.size() + 66)
    fillHiddenArgsV5(reinterpret_cast<uint8_t *>(kernargStore.data()) +
                         (d.kernarg.size() + 7) / 8 * 8,
                     d);
  uint64_t kernargAddr =
      uint64_t(reinterpret_cast<uintptr_t>(kernargStore.data()));

  // hsa_kernel_dispatch_packet_t, for kernels that read their geometry
  // from it (dispatch ptr).
  uint8_t packet[64] = {};
  uint16_t wgSize[3] = {uint16_t(d.block[0]), uint16_t(d.block[1]),
                        uint16_t(d.block[2])};
  uint16_t setup = 3;
  std::memcpy(packet + 2, &setup, 2);
  std::memcpy(packet + 4, wgSize, 6);
  for (int i = 0; i < 3; ++i) {
    uint32_t gridItems = d.grid[i] * d.block[i];
    std::memcpy(packet + 12 + 4 * i, &gridItems, 4);
  }
  std::memcpy(packet + 24, &kd.privateSegmentFixedSize, 4);
  uint32_t lds = kd.groupSegmentFixedSize + d.dynamicLdsBytes;
  std::memcpy(packet + 28, &lds, 4);
  std::memcpy(packet + 40, &kernargAddr, 8);
  uint8_t queue[256] = {};

  SimLaunch L;
  L.program = &d.module->program;
  L.kernel = d.kernel;
  L.kernelName = d.kernelName;
  for (int i = 0; i < 3; ++i) {
    L.grid[i] = d.grid[i];
    L.block[i] = d.block[i];
  }
  L.ldsBytes = lds;
  L.kernargAddr = kernargAddr;
  L.dispatchPacketAddr = uint64_t(reinterpret_cast<uintptr_t>(packet));
  L.queueAddr = uint64_t(reinterpret_cast<uintptr_t>(queue));
  std::vector<Region> regions = d.memory;
  regions.push_back(Region{kernargAddr, kernargAddr + kernargBytes, false,
                           "kernarg segment"});
  regions.push_back(Region{L.dispatchPacketAddr, L.dispatchPacketAddr + 64,
                           false, "dispatch packet"});
  regions.push_back(Region{L.queueAddr, L.queueAddr + 256, false, "queue"});
  L.memory = MemoryMap(std::move(regions));
  L.checks = d.checks;
  L.workers = d.workers;
  L.poisonLds = d.poisonLds;
  L.stats = d.stats;
  L.profile = d.profile;
  L.timing = d.timing;
  return runLaunch(L);
}
