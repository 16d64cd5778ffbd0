//===- FakeHip.cpp - A fake HIP runtime: one gfx906 in host memory --------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file is libfa-fake-hip.so, a test double for libamdhip64.so. No AMD
// GPU exists where the tests run, so without it the HIP half of the GPU
// backend (runtime/lib/gpu/HipVendor.cpp) would never run; pointed at this
// library (FA_HIP_LIBRARY), the runtime opens device "hip" on it, loads real
// gfx906 code objects and launches them.
//
// It exports the entry points of the backend's symbol table, defined against
// ROCm's own HIP 5.2 declarations (hip/hip_runtime_api.h), so a signature
// that differs from HIP's does not compile, and answers with the header's
// values (enum numbers, the hipDeviceProp_t layout), not the backend's: the
// backend is checked against HIP, not against itself. It also exports
// hipGetDevice, which the AOT launchers fac writes (--emit=launcher,
// LauncherTest.cpp) call where the backend names its device.
//
// It pretends to be one gfx906 ("gfx906:sramecc+:xnack-", 64 KiB LDS, 1024
// threads, 60 CUs, wave 64); "device memory" is host memory from malloc. It
// records every call, fails a call on request (FakeHip.h), and on
// hipModuleLaunchKernel checks the packed kernarg segment against the
// AMDGPU metadata note of the code object given to hipModuleLoadData: the
// segment's size, every explicit argument's offset, size and value kind,
// pointers that must point into hipMalloc'ed memory, padding that must be
// zero. It reads the note with its own small MessagePack reader (not the
// runtime's AmdgpuMetadata.cpp, which is what is being tested).
//
// A launch that passes the checks runs: the gfx906 simulator's engine
// (runtime/lib/sim/Dispatch.h, reached through libfa_runtime.so, which is
// loaded in the process anyway) executes the kernel on the kernarg buffer
// exactly as the backend packed it, over the fake's allocations. So a
// packing error is a wrong result, a fault is reported by
// hipDeviceSynchronize (as HIP reports one), and `fa-run --device hip`
// validates a kernel through the whole HIP backend against a simulated MI50.
//
//===----------------------------------------------------------------------===//

#include "FakeHip.h"

#include "sim/Dispatch.h"

#include <hip/hip_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <elf.h>

//===----------------------------------------------------------------------===//
// The code object's metadata, read independently of the runtime
//===----------------------------------------------------------------------===//

namespace {

/// A MessagePack value: what the AMDGPU metadata uses (maps, arrays,
/// strings, integers, booleans).
struct Msg {
  enum Kind { Nil, Bool, Int, Str, Array, Map } kind = Nil;
  int64_t i = 0;
  std::string s;
  std::vector<Msg> items;                       // Array
  std::vector<std::pair<std::string, Msg>> map; // Map (string keys only)

  const Msg *get(const char *key) const {
    for (const auto &kv : map)
      if (kv.first == key)
        return &kv.second;
    return nullptr;
  }
};

/// Reads one MessagePack value at `p`; false on anything malformed or not
/// expected in AMDGPU metadata.
bool readMsg(const uint8_t *&p, const uint8_t *end, Msg &out, int depth = 0) {
  if (p >= end || depth > 16)
    return false;
  auto be = [&](int n, uint64_t &v) {
    if (end - p < n)
      return false;
    v = 0;
    for (int k = 0; k < n; ++k)
      v = v << 8 | *p++;
    return true;
  };
  uint8_t b = *p++;
  uint64_t n = 0;
  auto str = [&](uint64_t len) {
    if (uint64_t(end - p) < len)
      return false;
    out.kind = Msg::Str;
    out.s.assign(reinterpret_cast<const char *>(p), len);
    p += len;
    return true;
  };
  auto array = [&](uint64_t count) {
    out.kind = Msg::Array;
    out.items.resize(count);
    for (Msg &m : out.items)
      if (!readMsg(p, end, m, depth + 1))
        return false;
    return true;
  };
  auto map = [&](uint64_t count) {
    out.kind = Msg::Map;
    for (uint64_t k = 0; k < count; ++k) {
      Msg key, value;
      if (!readMsg(p, end, key, depth + 1) || key.kind != Msg::Str ||
          !readMsg(p, end, value, depth + 1))
        return false;
      out.map.emplace_back(key.s, std::move(value));
    }
    return true;
  };
  if (b <= 0x7f) {
    out.kind = Msg::Int;
    out.i = b;
    return true;
  }
  if (b >= 0xe0) {
    out.kind = Msg::Int;
    out.i = int8_t(b);
    return true;
  }
  if ((b & 0xe0) == 0xa0)
    return str(b & 0x1f);
  if ((b & 0xf0) == 0x90)
    return array(b & 0x0f);
  if ((b & 0xf0) == 0x80)
    return map(b & 0x0f);
  switch (b) {
  case 0xc0:
    out.kind = Msg::Nil;
    return true;
  case 0xc2:
  case 0xc3:
    out.kind = Msg::Bool;
    out.i = b == 0xc3;
    return true;
  case 0xcc:
  case 0xcd:
  case 0xce:
  case 0xcf:
    out.kind = Msg::Int;
    if (!be(1 << (b - 0xcc), n))
      return false;
    out.i = int64_t(n);
    return true;
  case 0xd0:
  case 0xd1:
  case 0xd2:
  case 0xd3: {
    int bytes = 1 << (b - 0xd0);
    out.kind = Msg::Int;
    if (!be(bytes, n))
      return false;
    out.i = bytes == 8 ? int64_t(n)
                       : int64_t(n << (64 - 8 * bytes)) >> (64 - 8 * bytes);
    return true;
  }
  case 0xd9:
  case 0xda:
  case 0xdb:
    return be(1 << (b - 0xd9), n) && str(n);
  case 0xdc:
  case 0xdd:
    return be(2 << (b - 0xdc), n) && array(n);
  case 0xde:
  case 0xdf:
    return be(2 << (b - 0xde), n) && map(n);
  default:
    return false;
  }
}

struct FakeArg {
  uint32_t offset = 0, size = 0;
  std::string valueKind;
};

struct FakeKernel {
  std::string name;
  uint64_t kernargSegmentSize = 0;
  uint64_t groupSegmentFixedSize = 0;
  uint64_t maxFlatWorkgroupSize = 0;
  uint64_t vgprCount = 0;
  std::vector<FakeArg> args;
};

/// The NT_AMDGPU_METADATA note's kernels, and `target` (amdhsa.target),
/// from an AMDGPU ELF file; false if there is none to read.
bool readKernels(const std::vector<uint8_t> &elf, std::string &target,
                 std::vector<FakeKernel> &kernels) {
  if (elf.size() < sizeof(Elf64_Ehdr) || std::memcmp(elf.data(), ELFMAG, 4))
    return false;
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof(eh));
  if (eh.e_machine != EM_AMDGPU || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff > elf.size() ||
      uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > elf.size() - eh.e_shoff)
    return false;
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, elf.data() + eh.e_shoff + i * sizeof(sh), sizeof(sh));
    if (sh.sh_type != SHT_NOTE || sh.sh_offset > elf.size() ||
        sh.sh_size > elf.size() - sh.sh_offset)
      continue;
    const uint8_t *p = elf.data() + sh.sh_offset, *end = p + sh.sh_size;
    while (end - p >= 12) {
      uint32_t nameSize, descSize, type;
      std::memcpy(&nameSize, p, 4);
      std::memcpy(&descSize, p + 4, 4);
      std::memcpy(&type, p + 8, 4);
      p += 12;
      uint64_t nameAligned = (uint64_t(nameSize) + 3) & ~uint64_t(3);
      uint64_t descAligned = (uint64_t(descSize) + 3) & ~uint64_t(3);
      if (uint64_t(end - p) < nameAligned + descSize)
        return false;
      bool amdgpu = nameSize == 7 && std::memcmp(p, "AMDGPU", 7) == 0;
      const uint8_t *desc = p + nameAligned;
      p += nameAligned + std::min<uint64_t>(descAligned, end - desc);
      if (!amdgpu || type != 32 /*NT_AMDGPU_METADATA*/)
        continue;
      Msg root;
      const uint8_t *q = desc;
      if (!readMsg(q, desc + descSize, root) || root.kind != Msg::Map)
        return false;
      if (const Msg *t = root.get("amdhsa.target"))
        target = t->s;
      const Msg *list = root.get("amdhsa.kernels");
      if (!list || list->kind != Msg::Array)
        return false;
      for (const Msg &k : list->items) {
        FakeKernel fk;
        auto num = [&](const char *key) {
          const Msg *m = k.get(key);
          return m && m->kind == Msg::Int ? uint64_t(m->i) : 0;
        };
        if (const Msg *m = k.get(".name"))
          fk.name = m->s;
        fk.kernargSegmentSize = num(".kernarg_segment_size");
        fk.groupSegmentFixedSize = num(".group_segment_fixed_size");
        fk.maxFlatWorkgroupSize = num(".max_flat_workgroup_size");
        fk.vgprCount = num(".vgpr_count");
        if (const Msg *args = k.get(".args"))
          for (const Msg &a : args->items) {
            FakeArg fa;
            const Msg *off = a.get(".offset"), *size = a.get(".size"),
                      *kind = a.get(".value_kind");
            if (!off || !size || !kind)
              return false;
            fa.offset = uint32_t(off->i);
            fa.size = uint32_t(size->i);
            fa.valueKind = kind->s;
            fk.args.push_back(fa);
          }
        kernels.push_back(std::move(fk));
      }
      return true;
    }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// The fake device's state
//===----------------------------------------------------------------------===//

constexpr const char *kDefaultArch = "gfx906:sramecc+:xnack-";

struct State {
  std::mutex mutex;
  std::map<std::string, int> failNext;
  std::vector<std::string> calls;
  std::string callsText;
  std::string arch = kDefaultArch;
  std::map<uintptr_t, size_t> allocations;
  fake_hip_launch last{};
  fake_hip_launch previous{}; ///< the launch before `last`
  /// One line per launch and synchronisation since the last reset
  /// (fake_hip_stream_log).
  std::string streamLog;
  std::string streamLogCopy; ///< what fake_hip_stream_log returned
  int streamsCreated = 0;
  /// A fault of the last kernel run, for the next hipDeviceSynchronize.
  hipError_t pendingFault = hipSuccess;
  bool initialized = false;
  int current = -1;

  State() {
    // Failures planted before the runtime's first (once per process) calls.
    if (const char *plant = std::getenv("FA_FAKE_HIP_FAIL"))
      if (const char *eq = std::strchr(plant, '='))
        failNext[std::string(plant, eq)] = std::atoi(eq + 1);
  }
};

State &state() {
  static State s;
  return s;
}

/// Records `call`; its planted failure, or 0.
int enter(const char *call) {
  State &s = state();
  s.calls.push_back(call);
  auto it = s.failNext.find(call);
  if (it == s.failNext.end())
    return 0;
  int rc = it->second;
  s.failNext.erase(it);
  return rc;
}

// Each entry point: lock, record, return a planted failure.
#define FAKE_ENTER(NAME)                                                       \
  std::lock_guard<std::mutex> lock(state().mutex);                             \
  if (int planted = enter(#NAME))                                              \
    return hipError_t(planted);

/// Whether [p, p + bytes) lies in one live allocation.
bool inAllocation(const void *p, size_t bytes) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto &all = state().allocations;
  auto it = all.upper_bound(a);
  if (it == all.begin())
    return false;
  --it;
  return a >= it->first && a - it->first <= it->second &&
         bytes <= it->second - (a - it->first);
}

} // namespace

/// A stream of the fake: launches on it run at once (the simulator is
/// synchronous); what it records is which stream each launch named.
struct ihipStream_t {
  int device = 0;
  int id = 0; ///< 1, 2, ... in creation order since the last reset
};

struct ihipModule_t {
  std::vector<uint8_t> bytes;
  std::vector<FakeKernel> kernels;
  std::unique_ptr<fa::sim::SimModule> sim; ///< what the launches execute
};
struct ihipModuleSymbol_t {
  ihipModule_t *module;
  const FakeKernel *kernel;
  const fa::sim::CodeObjectKernel *simKernel; ///< its `.kd` descriptor
};

namespace {

/// "null stream", "stream 2" (ids in creation order since the last reset).
std::string streamName(hipStream_t stream) {
  return stream ? "stream " + std::to_string(stream->id) : "null stream";
}

/// Runs a launch that passed the checks on the simulator; a failure is
/// kept for hipDeviceSynchronize and its message in `l.fault`.
void execute(const ihipModuleSymbol_t &f, fake_hip_launch &l,
             const uint8_t *kernargs) {
  State &s = state();
  fa::sim::SimDispatch d;
  d.module = f.module->sim.get();
  d.kernel = f.simKernel;
  d.kernelName = f.kernel->name;
  for (int i = 0; i < 3; ++i) {
    d.grid[i] = l.grid[i];
    d.block[i] = l.block[i];
  }
  d.dynamicLdsBytes = l.shared_mem_bytes;
  d.kernarg.assign(kernargs, kernargs + l.kernarg_bytes);
  // Device memory is every live allocation, whole: HIP knows nothing of
  // the runtime's guard zones.
  for (const auto &[addr, size] : s.allocations)
    d.memory.push_back(fa::sim::Region{addr, addr + size, true, "buffer"});
  fa::Status status = fa::sim::dispatch(d);
  l.executed = 1;
  if (!status.ok()) {
    std::snprintf(l.fault, sizeof(l.fault), "%s", status.toString().c_str());
    // No Status crosses the HIP API: say why where a test log shows it.
    std::fprintf(stderr, "fake HIP: kernel '%s' faulted on the simulator: %s\n",
                 f.kernel->name.c_str(), l.fault);
    s.pendingFault = hipErrorLaunchFailure;
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// The HIP entry points
//===----------------------------------------------------------------------===//

extern "C" {

hipError_t hipInit(unsigned int flags) {
  FAKE_ENTER(hipInit)
  if (flags != 0)
    return hipErrorInvalidValue;
  state().initialized = true;
  return hipSuccess;
}

hipError_t hipGetDeviceCount(int *count) {
  FAKE_ENTER(hipGetDeviceCount)
  if (!state().initialized)
    return hipErrorNotInitialized;
  *count = 1;
  return hipSuccess;
}

const char *hipGetErrorName(hipError_t rc) {
  switch (rc) {
  case hipSuccess:
    return "hipSuccess";
  case hipErrorInvalidValue:
    return "hipErrorInvalidValue";
  case hipErrorOutOfMemory:
    return "hipErrorOutOfMemory";
  case hipErrorNotInitialized:
    return "hipErrorNotInitialized";
  case hipErrorInvalidDevice:
    return "hipErrorInvalidDevice";
  case hipErrorInvalidImage:
    return "hipErrorInvalidImage";
  case hipErrorNoBinaryForGpu:
    return "hipErrorNoBinaryForGpu";
  case hipErrorNotFound:
    return "hipErrorNotFound";
  case hipErrorIllegalAddress:
    return "hipErrorIllegalAddress";
  case hipErrorLaunchFailure:
    return "hipErrorLaunchFailure";
  default:
    return "hipErrorUnknown";
  }
}

const char *hipGetErrorString(hipError_t rc) {
  switch (rc) {
  case hipSuccess:
    return "no error";
  case hipErrorInvalidValue:
    return "invalid argument";
  case hipErrorOutOfMemory:
    return "out of memory";
  case hipErrorNotInitialized:
    return "initialization error";
  case hipErrorInvalidDevice:
    return "invalid device ordinal";
  case hipErrorInvalidImage:
    return "device kernel image is invalid";
  case hipErrorNoBinaryForGpu:
    return "no kernel image is available for execution on the device";
  case hipErrorNotFound:
    return "named symbol not found";
  case hipErrorIllegalAddress:
    return "an illegal memory access was encountered";
  case hipErrorLaunchFailure:
    return "unspecified launch failure";
  default:
    return "unknown error";
  }
}

hipError_t hipSetDevice(int deviceId) {
  FAKE_ENTER(hipSetDevice)
  if (deviceId != 0)
    return hipErrorInvalidDevice;
  state().current = deviceId;
  return hipSuccess;
}

hipError_t hipGetDevice(int *deviceId) {
  FAKE_ENTER(hipGetDevice)
  if (!deviceId)
    return hipErrorInvalidValue;
  *deviceId = 0; // the current device: the only one
  return hipSuccess;
}

hipError_t hipDeviceGet(hipDevice_t *device, int ordinal) {
  FAKE_ENTER(hipDeviceGet)
  if (ordinal != 0)
    return hipErrorInvalidDevice;
  *device = 0;
  return hipSuccess;
}

hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device) {
  FAKE_ENTER(hipDeviceGetName)
  if (device != 0 || len <= 0)
    return hipErrorInvalidValue;
  std::snprintf(name, size_t(len), "%s", "AMD Radeon VII (fake)");
  return hipSuccess;
}

hipError_t hipDeviceGetAttribute(int *pi, hipDeviceAttribute_t attr,
                                 int deviceId) {
  FAKE_ENTER(hipDeviceGetAttribute)
  if (deviceId != 0)
    return hipErrorInvalidDevice;
  switch (attr) {
  case hipDeviceAttributeMaxThreadsPerBlock:
  case hipDeviceAttributeMaxBlockDimX:
  case hipDeviceAttributeMaxBlockDimY:
    *pi = 1024;
    return hipSuccess;
  case hipDeviceAttributeMaxBlockDimZ:
    *pi = 1024;
    return hipSuccess;
  case hipDeviceAttributeMaxGridDimX:
    *pi = 2147483647;
    return hipSuccess;
  case hipDeviceAttributeMaxGridDimY:
  case hipDeviceAttributeMaxGridDimZ:
    *pi = 65536;
    return hipSuccess;
  case hipDeviceAttributeMaxSharedMemoryPerBlock:
    *pi = 65536;
    return hipSuccess;
  case hipDeviceAttributeWarpSize:
    *pi = 64;
    return hipSuccess;
  case hipDeviceAttributeMultiprocessorCount:
    *pi = 60;
    return hipSuccess;
  default:
    return hipErrorInvalidValue;
  }
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *prop, int deviceId) {
  FAKE_ENTER(hipGetDeviceProperties)
  if (deviceId != 0)
    return hipErrorInvalidDevice;
  // The ROCm 5.2 layout, as the header declares it.
  std::memset(prop, 0, sizeof(*prop));
  std::snprintf(prop->name, sizeof(prop->name), "%s", "AMD Radeon VII (fake)");
  prop->totalGlobalMem = size_t(16) << 30;
  prop->sharedMemPerBlock = 65536;
  prop->warpSize = 64;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = prop->maxThreadsDim[2] =
      1024;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65536;
  prop->multiProcessorCount = 60;
  prop->major = 9;
  prop->gcnArch = 906;
  std::snprintf(prop->gcnArchName, sizeof(prop->gcnArchName), "%s",
                state().arch.c_str());
  return hipSuccess;
}

hipError_t hipDeviceSynchronize(void) {
  FAKE_ENTER(hipDeviceSynchronize)
  state().streamLog += "synchronize device\n";
  hipError_t fault = state().pendingFault;
  state().pendingFault = hipSuccess;
  return fault;
}

// ROCm 5.6's hipStreamGetDevice, which the 5.2 header lacks.
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device);
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device) {
  FAKE_ENTER(hipStreamGetDevice)
  if (!device)
    return hipErrorInvalidValue;
  *device = stream ? stream->device : (state().current < 0 ? 0 : state().current);
  return hipSuccess;
}

hipError_t hipStreamCreate(hipStream_t *stream) {
  FAKE_ENTER(hipStreamCreate)
  if (!stream)
    return hipErrorInvalidValue;
  *stream = new ihipStream_t{state().current < 0 ? 0 : state().current,
                             ++state().streamsCreated};
  return hipSuccess;
}

hipError_t hipStreamDestroy(hipStream_t stream) {
  FAKE_ENTER(hipStreamDestroy)
  if (!stream)
    return hipErrorInvalidHandle;
  delete stream;
  return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t stream) {
  FAKE_ENTER(hipStreamSynchronize)
  state().streamLog += "synchronize " + streamName(stream) + "\n";
  // Kernels ran when launched: a fault of the last one shows here.
  hipError_t fault = state().pendingFault;
  state().pendingFault = hipSuccess;
  return fault;
}

hipError_t hipMalloc(void **ptr, size_t size) {
  FAKE_ENTER(hipMalloc)
  if (!ptr)
    return hipErrorInvalidValue;
  // 256-byte aligned like a real device allocation; never the null pointer.
  void *p = std::aligned_alloc(
      256, std::max<size_t>(256, (size + 255) & ~size_t(255)));
  if (!p)
    return hipErrorOutOfMemory;
  std::memset(p, 0xcd, size); // not zero: the runtime must zero it itself
  state().allocations[reinterpret_cast<uintptr_t>(p)] = size;
  *ptr = p;
  return hipSuccess;
}

hipError_t hipFree(void *ptr) {
  FAKE_ENTER(hipFree)
  auto &all = state().allocations;
  auto it = all.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == all.end())
    return hipErrorInvalidValue;
  all.erase(it);
  std::free(ptr);
  return hipSuccess;
}

hipError_t hipMemset(void *dst, int value, size_t sizeBytes) {
  FAKE_ENTER(hipMemset)
  if (!inAllocation(dst, sizeBytes))
    return hipErrorInvalidValue;
  std::memset(dst, value, sizeBytes);
  return hipSuccess;
}

hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t sizeBytes) {
  FAKE_ENTER(hipMemcpyHtoD)
  if (!inAllocation(dst, sizeBytes))
    return hipErrorInvalidValue;
  std::memcpy(dst, src, sizeBytes);
  return hipSuccess;
}

hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t sizeBytes) {
  FAKE_ENTER(hipMemcpyDtoH)
  if (!inAllocation(src, sizeBytes))
    return hipErrorInvalidValue;
  std::memcpy(dst, src, sizeBytes);
  return hipSuccess;
}

hipError_t hipModuleLoadData(hipModule_t *module, const void *image) {
  FAKE_ENTER(hipModuleLoadData)
  if (!module || !image)
    return hipErrorInvalidValue;
  // The image comes without a size: read the ELF header's extent (the
  // section headers are last in the files the compiler writes).
  Elf64_Ehdr eh;
  std::memcpy(&eh, image, sizeof(eh));
  if (std::memcmp(eh.e_ident, ELFMAG, 4) || eh.e_machine != EM_AMDGPU)
    return hipErrorInvalidImage;
  size_t size = size_t(eh.e_shoff) + size_t(eh.e_shnum) * eh.e_shentsize;
  auto m = std::make_unique<ihipModule_t>();
  m->bytes.assign(static_cast<const uint8_t *>(image),
                  static_cast<const uint8_t *>(image) + size);
  std::string target;
  if (!readKernels(m->bytes, target, m->kernels))
    return hipErrorInvalidImage;
  // "amdgcn-amd-amdhsa--gfx906[:features]" must name this device's processor.
  std::string arch = state().arch.substr(0, state().arch.find(':'));
  std::string processor = target.substr(target.rfind('-') + 1);
  if (processor.substr(0, processor.find(':')) != arch)
    return hipErrorNoBinaryForGpu;
  fa::Expected<std::unique_ptr<fa::sim::SimModule>> sim =
      fa::sim::SimModule::load(m->bytes);
  if (!sim) {
    std::fprintf(stderr, "fake HIP: the simulator cannot load the image: %s\n",
                 sim.status().toString().c_str());
    return hipErrorInvalidImage;
  }
  m->sim = sim.take();
  *module = m.release();
  return hipSuccess;
}

hipError_t hipModuleUnload(hipModule_t module) {
  FAKE_ENTER(hipModuleUnload)
  delete module;
  return hipSuccess;
}

hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module,
                                const char *kname) {
  FAKE_ENTER(hipModuleGetFunction)
  if (!function || !module || !kname)
    return hipErrorInvalidValue;
  for (const FakeKernel &k : module->kernels)
    if (k.name == kname) {
      const fa::sim::CodeObjectKernel *kd = module->sim->co.find(k.name);
      if (!kd)
        return hipErrorNotFound;
      // Leaked with the module's lifetime in mind: functions are few.
      *function = new ihipModuleSymbol_t{module, &k, kd};
      return hipSuccess;
    }
  return hipErrorNotFound;
}

hipError_t hipFuncGetAttribute(int *value, hipFunction_attribute attrib,
                               hipFunction_t hfunc) {
  FAKE_ENTER(hipFuncGetAttribute)
  if (!value || !hfunc)
    return hipErrorInvalidValue;
  switch (attrib) {
  case HIP_FUNC_ATTRIBUTE_NUM_REGS:
    *value = int(hfunc->kernel->vgprCount);
    return hipSuccess;
  case HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *value = int(hfunc->kernel->groupSegmentFixedSize);
    return hipSuccess;
  case HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = int(hfunc->kernel->maxFlatWorkgroupSize);
    return hipSuccess;
  default:
    return hipErrorInvalidValue;
  }
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX,
                                 unsigned int gridDimY, unsigned int gridDimZ,
                                 unsigned int blockDimX, unsigned int blockDimY,
                                 unsigned int blockDimZ,
                                 unsigned int sharedMemBytes,
                                 hipStream_t stream, void **kernelParams,
                                 void **extra) {
  FAKE_ENTER(hipModuleLaunchKernel)
  if (!f)
    return hipErrorInvalidValue;
  fake_hip_launch &l = state().last;
  state().previous = l;
  int launches = l.launches + 1;
  l = fake_hip_launch{};
  l.launches = launches;
  const FakeKernel &k = *f->kernel;
  std::snprintf(l.kernel, sizeof(l.kernel), "%s", k.name.c_str());
  l.grid[0] = gridDimX, l.grid[1] = gridDimY, l.grid[2] = gridDimZ;
  l.block[0] = blockDimX, l.block[1] = blockDimY, l.block[2] = blockDimZ;
  l.shared_mem_bytes = sharedMemBytes;
  l.used_kernel_params = kernelParams != nullptr;
  l.kernarg_segment_size = k.kernargSegmentSize;
  auto problem = [&](const std::string &why) {
    std::snprintf(l.problem, sizeof(l.problem), "%s", why.c_str());
    return hipErrorInvalidValue;
  };
  l.stream = stream;
  state().streamLog += std::string("launch ") + k.name + " on " +
                       streamName(stream) + "\n";
  if (kernelParams)
    return problem("kernelParams was passed; expected the packed kernarg "
                   "buffer in `extra`");
  if (!extra || extra[0] != HIP_LAUNCH_PARAM_BUFFER_POINTER ||
      extra[2] != HIP_LAUNCH_PARAM_BUFFER_SIZE ||
      extra[4] != HIP_LAUNCH_PARAM_END || !extra[1] || !extra[3])
    return problem("extra is not {BUFFER_POINTER, p, BUFFER_SIZE, &n, END}");
  const uint8_t *kernargs = static_cast<const uint8_t *>(extra[1]);
  l.kernarg_bytes = *static_cast<size_t *>(extra[3]);
  if (gridDimX == 0 || gridDimY == 0 || gridDimZ == 0 || blockDimX == 0 ||
      blockDimY == 0 || blockDimZ == 0)
    return problem("a zero grid or block dimension");
  if (uint64_t(blockDimX) * blockDimY * blockDimZ > k.maxFlatWorkgroupSize)
    return problem("more threads than .max_flat_workgroup_size " +
                   std::to_string(k.maxFlatWorkgroupSize));
  if (k.groupSegmentFixedSize + sharedMemBytes > 65536)
    return problem("static + dynamic LDS above 65536");

  // The explicit arguments: what the GPU reads from the segment.
  uint64_t explicitEnd = 0;
  for (const FakeArg &a : k.args)
    if (a.valueKind.rfind("hidden_", 0) != 0)
      explicitEnd = std::max<uint64_t>(explicitEnd, a.offset + a.size);
  if (l.kernarg_bytes != explicitEnd)
    return problem("kernarg buffer of " + std::to_string(l.kernarg_bytes) +
                   " bytes; the metadata's explicit arguments end at " +
                   std::to_string(explicitEnd));
  std::vector<bool> covered(l.kernarg_bytes, false);
  for (const FakeArg &a : k.args) {
    if (a.valueKind.rfind("hidden_", 0) == 0)
      continue;
    if (l.num_args == int(sizeof(l.args) / sizeof(l.args[0])))
      return problem("more than " +
                     std::to_string(sizeof(l.args) / sizeof(l.args[0])) +
                     " explicit arguments");
    fake_hip_arg &out = l.args[l.num_args++];
    out.offset = a.offset;
    out.size = a.size;
    std::snprintf(out.value_kind, sizeof(out.value_kind), "%s",
                  a.valueKind.c_str());
    if (a.size != 4 && a.size != 8)
      return problem("argument at " + std::to_string(a.offset) + " has size " +
                     std::to_string(a.size));
    if (a.offset % a.size != 0)
      return problem("argument at " + std::to_string(a.offset) +
                     " is not aligned to its size");
    std::memcpy(&out.value, kernargs + a.offset, a.size); // little-endian
    for (uint32_t b = 0; b < a.size; ++b)
      covered[a.offset + b] = true;
    if (a.valueKind == "global_buffer") {
      if (a.size != 8)
        return problem("a pointer of " + std::to_string(a.size) + " bytes");
      // Inside an allocation, not only its start: the runtime may point
      // past guard zones (Buffer::kDefaultGuardBytes).
      void *p = reinterpret_cast<void *>(uintptr_t(out.value));
      out.is_allocation = p && inAllocation(p, 1);
      if (p && !out.is_allocation)
        return problem("pointer argument at offset " +
                       std::to_string(a.offset) + " is " +
                       std::to_string(out.value) +
                       ", not inside memory hipMalloc returned");
    } else if (a.valueKind != "by_value") {
      return problem("unexpected value kind '" + a.valueKind + "'");
    }
  }
  for (size_t b = 0; b < covered.size(); ++b)
    if (!covered[b] && kernargs[b] != 0)
      return problem("padding byte " + std::to_string(b) +
                     " of the kernarg buffer is not zero");
  execute(*f, l, kernargs);
  return hipSuccess;
}

//===----------------------------------------------------------------------===//
// Control (FakeHip.h)
//===----------------------------------------------------------------------===//

void fake_hip_reset(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.failNext.clear();
  s.calls.clear();
  s.streamLog.clear();
  s.streamsCreated = 0;
  s.arch = kDefaultArch;
  s.last = s.previous = fake_hip_launch{};
  s.pendingFault = hipSuccess;
}

void fake_hip_fail_next(const char *call, int rc) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().failNext[call] = rc;
}

void fake_hip_set_arch(const char *gcn_arch_name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().arch = gcn_arch_name;
}

int fake_hip_call_count(const char *call) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return int(std::count(state().calls.begin(), state().calls.end(), call));
}

const char *fake_hip_calls(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.callsText.clear();
  for (const std::string &c : s.calls)
    s.callsText += c + "\n";
  return s.callsText.c_str();
}

const fake_hip_launch *fake_hip_last_launch(void) { return &state().last; }

const fake_hip_launch *fake_hip_previous_launch(void) {
  return &state().previous;
}

const char *fake_hip_stream_log(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.streamLogCopy = s.streamLog;
  return s.streamLogCopy.c_str();
}

hipStream_t fake_hip_stream_of_device(int device) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return new ihipStream_t{device, ++s.streamsCreated};
}

int fake_hip_live_allocations(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return int(state().allocations.size());
}

} // extern "C"
