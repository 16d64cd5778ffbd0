//===- DeviceReference.cpp - Reference attention on the GPU ---------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements DeviceReference.h: the reference kernel's source (a
// raw string in the common subset of CUDA and HIP C++, specialized with a
// few macros), its run-time compilation through NVRTC or hiprtc, each loaded
// with dlopen through one X-macro symbol table (validate/RtcLibrary.h), and
// the launch through fa::runtime's public RawKernel (fa/Module.h).
//
// The kernel runs one thread per output row (b, h, i); a block covers 128
// consecutive rows of one (b, h), so the threads of a warp read the same K
// and V element at the same time.
//
//===----------------------------------------------------------------------===//

#include "fa/DeviceReference.h"
#include "fa/Half.h"
#include "fa/Module.h"
#include "validate/RtcLibrary.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

using namespace fa;
using namespace fa::detail;

const char *fa::referenceKindName(ReferenceKind kind) {
  switch (kind) {
  case ReferenceKind::Auto:
    return "auto";
  case ReferenceKind::Cpu:
    return "cpu";
  case ReferenceKind::Device:
    return "device";
  }
  return "?";
}

std::optional<ReferenceKind> fa::parseReferenceKind(std::string_view name) {
  if (name == "auto")
    return ReferenceKind::Auto;
  if (name == "cpu")
    return ReferenceKind::Cpu;
  if (name == "device")
    return ReferenceKind::Device;
  return std::nullopt;
}

bool fa::useDeviceReference(ReferenceKind kind, const Device &device,
                            const AttentionProblem &p) {
  if (kind != ReferenceKind::Auto)
    return kind == ReferenceKind::Device;
  if (device.isHostEmulator())
    return false;
  const AttentionShape &s = p.shape;
  double flops = 4.0 * double(s.batch) * double(s.headsQ) * double(s.seqQ) *
                 double(s.seqK) * double(p.headDim);
  return flops > deviceReferenceMinFlops;
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

/// Threads per block of the reference kernel.
constexpr uint32_t kReferenceThreads = 128;

// Specialized by FA_DTYPE (0 f32, 1 f16, 2 bf16), FA_D (the head dimension)
// and FA_NAIVE (0: everything in double; 1: float, P and O rounded to the
// dtype like naiveAttention). Every parameter is 8 bytes, so the host passes
// one uint64_t per parameter on both vendors. No header is included: NVRTC
// and hiprtc both provide the built-in variables and the math functions.
static const char *kReferenceSource = R"FA_SRC(
typedef long long i64;
typedef unsigned int u32;
typedef unsigned short u16;

__device__ inline float bitsToFloat(u32 x) {
  union { u32 u; float f; } c;
  c.u = x;
  return c.f;
}
__device__ inline u32 floatToBits(float f) {
  union { u32 u; float f; } c;
  c.f = f;
  return c.u;
}

/// f16 bits -> float (exact).
__device__ inline float halfToFloat(u16 bits) {
  u32 sign = u32(bits & 0x8000) << 16;
  u32 exp = (bits >> 10) & 0x1f;
  u32 mant = bits & 0x3ff;
  if (exp == 0) {
    float v = float(mant) * 5.9604644775390625e-8f; // 2^-24
    return sign ? -v : v;
  }
  if (exp == 31)
    return bitsToFloat(sign | 0x7f800000u | (mant << 13));
  return bitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

/// float -> f16 bits, round to nearest even (as fa::floatToHalf).
__device__ inline u16 floatToHalf(float value) {
  u32 x = floatToBits(value);
  u32 sign = (x >> 16) & 0x8000;
  u32 absx = x & 0x7fffffff;
  if (absx >= 0x7f800000)
    return u16(sign | (absx > 0x7f800000 ? 0x7e00 | ((absx >> 13) & 0x3ff)
                                         : 0x7c00));
  if (absx >= 0x477ff000)
    return u16(sign | 0x7c00);
  if (absx < 0x38800000) {
    if (absx <= 0x33000000)
      return u16(sign);
    u32 exp = absx >> 23;
    u32 mant = (absx & 0x7fffff) | 0x800000;
    u32 shift = 126 - exp;
    u32 q = mant >> shift;
    u32 rem = mant & ((1u << shift) - 1);
    u32 half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q;
    return u16(sign | q);
  }
  u32 h = (absx - 0x38000000) >> 13;
  u32 rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    ++h;
  return u16(sign | h);
}

/// float rounded to bf16 (nearest even) and back (as fa::floatToBf16).
__device__ inline float roundBf16(float value) {
  u32 x = floatToBits(value);
  if ((x & 0x7fffffff) > 0x7f800000)
    return bitsToFloat(((x >> 16) | 0x40) << 16);
  x += 0x7fff + ((x >> 16) & 1);
  return bitsToFloat((x >> 16) << 16);
}

#if FA_DTYPE == 0
typedef float elem_t;
__device__ inline float load(const elem_t *p, i64 i) { return p[i]; }
__device__ inline float roundElem(float x) { return x; }
#elif FA_DTYPE == 1
typedef u16 elem_t;
__device__ inline float load(const elem_t *p, i64 i) {
  return halfToFloat(p[i]);
}
__device__ inline float roundElem(float x) {
  return halfToFloat(floatToHalf(x));
}
#else
typedef u16 elem_t;
__device__ inline float load(const elem_t *p, i64 i) {
  return bitsToFloat(u32(p[i]) << 16);
}
__device__ inline float roundElem(float x) { return roundBf16(x); }
#endif

#if FA_NAIVE
typedef float acc_t;
__device__ inline acc_t expAcc(acc_t x) { return expf(x); }
__device__ inline acc_t logAcc(acc_t x) { return logf(x); }
__device__ inline acc_t tanhAcc(acc_t x) { return tanhf(x); }
__device__ inline acc_t negInf() { return bitsToFloat(0xff800000u); }
#else
typedef double acc_t;
__device__ inline acc_t expAcc(acc_t x) { return exp(x); }
__device__ inline acc_t logAcc(acc_t x) { return log(x); }
__device__ inline acc_t tanhAcc(acc_t x) { return tanh(x); }
__device__ inline acc_t negInf() { return -(double)bitsToFloat(0x7f800000u); }
#endif

/// scale * (q . k_j), accumulated in acc_t over d in order, then capped to
/// softcap * tanh(s / softcap) when softcap > 0 (AttentionCore.h's
/// capScore).
__device__ inline acc_t score(const acc_t *qv, const elem_t *kRow,
                              acc_t scale, acc_t softcap) {
  acc_t dot = 0;
  for (int c = 0; c < FA_D; ++c)
    dot += qv[c] * acc_t(load(kRow, c));
  acc_t s = dot * scale;
  return softcap > 0 ? softcap * tanhAcc(s / softcap) : s;
}

/// ALiBi's bias slope * |distance| (0 without ALiBi), as attentionRows.
__device__ inline acc_t alibi(acc_t slope, i64 distance) {
  return slope * acc_t(distance < 0 ? -distance : distance);
}

extern "C" __global__ void fa_reference_attention(
    const elem_t *q, const elem_t *k, const elem_t *v, acc_t *o, acc_t *lse,
    acc_t *mag, i64 B, i64 Hq, i64 Hkv, i64 Lq, i64 Lk, i64 causal,
    i64 qsb, i64 qsh, i64 qsr, i64 ksb, i64 ksh, i64 ksr, i64 vsb, i64 vsh,
    i64 vsr, double scaleArg, i64 windowLeft, i64 windowRight,
    double softcapArg, const float *slopes, const float *sinks) {
  i64 i = i64(blockIdx.x) * i64(blockDim.x) + i64(threadIdx.x);
  i64 h = blockIdx.y, b = blockIdx.z;
  if (i >= Lq || h >= Hq || b >= B)
    return;
  i64 hk = h / (Hq / Hkv);
  const elem_t *qRow = q + b * qsb + h * qsh + i * qsr;
  const elem_t *kHead = k + b * ksb + hk * ksh;
  const elem_t *vHead = v + b * vsb + hk * vsh;
  i64 row = (b * Hq + h) * Lq + i;
  acc_t *oRow = o + row * FA_D;
  // Keys lo .. hi-1 are visible: the bottom-right aligned causal mask and
  // sliding window, exactly AttentionCore.h's visibleKeys.
  const i64 diagonal = i + Lk - Lq;
  i64 lo = 0, hi = Lk;
  if (windowLeft >= 0 && windowLeft < diagonal)
    lo = diagonal - windowLeft;
  const i64 right = causal ? 0 : windowRight;
  if (right >= 0 && right < Lq - i - 1)
    hi = diagonal + right + 1;
  // ALiBi's slope and the sink of head h (null pointers: none), as
  // AttentionCore.h's attentionRows: the sink enters the max and the sum
  // once, and a row that sees no key has LSE = the sink.
  const acc_t slope = slopes ? acc_t(slopes[h]) : acc_t(0);
  const acc_t sink = sinks ? acc_t(sinks[h]) : negInf();
  if (hi <= lo) {
    for (int c = 0; c < FA_D; ++c) {
      oRow[c] = 0;
      if (mag)
        mag[row * FA_D + c] = 0;
    }
    lse[row] = sink;
    return;
  }
  const acc_t scale = acc_t(scaleArg), softcap = acc_t(softcapArg);
  // The score of key j: capped, then ALiBi's bias.
#define FA_SCORE(j) (score(qv, kHead + (j)*ksr, scale, softcap) - alibi(slope, diagonal - (j)))
  acc_t qv[FA_D];
  for (int c = 0; c < FA_D; ++c)
    qv[c] = acc_t(load(qRow, c));

  acc_t rowMax = sink;
  for (i64 j = lo; j < hi; ++j) {
    acc_t s = FA_SCORE(j);
    rowMax = s > rowMax ? s : rowMax;
  }
  acc_t acc[FA_D];
  for (int c = 0; c < FA_D; ++c)
    acc[c] = 0;
  acc_t sum = sinks ? expAcc(sink - rowMax) : acc_t(0);
#if FA_NAIVE
  // As naiveAttention: the sum first, then P = e / sum rounded to the dtype,
  // P.V accumulated in float, O rounded to the dtype.
  for (i64 j = lo; j < hi; ++j)
    sum += expAcc(FA_SCORE(j) - rowMax);
  for (i64 j = lo; j < hi; ++j) {
    acc_t p = expAcc(FA_SCORE(j) - rowMax) / sum;
#if FA_DTYPE != 0
    p = roundElem(p);
#endif
    const elem_t *vRow = vHead + j * vsr;
    for (int c = 0; c < FA_D; ++c)
      acc[c] += p * acc_t(load(vRow, c));
  }
  for (int c = 0; c < FA_D; ++c)
#if FA_DTYPE != 0
    oRow[c] = roundElem(acc[c]);
#else
    oRow[c] = acc[c];
#endif
#else
  // Unnormalized e_j = exp(s_j - max): sum, sum e_j v_j and sum e_j |v_j|,
  // divided by the sum at the end.
  acc_t amag[FA_D];
  for (int c = 0; c < FA_D; ++c)
    amag[c] = 0;
  for (i64 j = lo; j < hi; ++j) {
    acc_t e = expAcc(FA_SCORE(j) - rowMax);
    sum += e;
    const elem_t *vRow = vHead + j * vsr;
    for (int c = 0; c < FA_D; ++c) {
      acc_t x = acc_t(load(vRow, c));
      acc[c] += e * x;
      amag[c] += e * (x < 0 ? -x : x);
    }
  }
  for (int c = 0; c < FA_D; ++c) {
    oRow[c] = acc[c] / sum;
    if (mag)
      mag[row * FA_D + c] = amag[c] / sum;
  }
#endif
  lse[row] = rowMax + logAcc(sum);
#undef FA_SCORE
}
)FA_SRC";

static int dtypeCode(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 0;
  case DType::F16:
    return 1;
  case DType::BF16:
    return 2;
  }
  return 0;
}

std::string fa::deviceReferenceSource(DType dtype, int64_t headDim,
                                      bool naive) {
  return "#define FA_DTYPE " + std::to_string(dtypeCode(dtype)) +
         "\n#define FA_D " + std::to_string(headDim) + "\n#define FA_NAIVE " +
         (naive ? "1" : "0") + "\n" + kReferenceSource;
}

//===----------------------------------------------------------------------===//
// NVRTC
//===----------------------------------------------------------------------===//

namespace {

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram *;

#define FA_NVRTC_REQUIRED(X)                                                   \
  X(nvrtcGetErrorString, const char *, (nvrtcResult))                          \
  X(nvrtcVersion, nvrtcResult, (int *, int *))                                 \
  X(nvrtcCreateProgram, nvrtcResult,                                           \
    (nvrtcProgram *, const char *, const char *, int, const char *const *,     \
     const char *const *))                                                     \
  X(nvrtcDestroyProgram, nvrtcResult, (nvrtcProgram *))                        \
  X(nvrtcCompileProgram, nvrtcResult,                                          \
    (nvrtcProgram, int, const char *const *))                                  \
  X(nvrtcGetProgramLogSize, nvrtcResult, (nvrtcProgram, size_t *))             \
  X(nvrtcGetProgramLog, nvrtcResult, (nvrtcProgram, char *))                   \
  X(nvrtcGetPTXSize, nvrtcResult, (nvrtcProgram, size_t *))                    \
  X(nvrtcGetPTX, nvrtcResult, (nvrtcProgram, char *))

// CUDA 11.1 and newer: SASS for a real architecture.
#define FA_NVRTC_OPTIONAL(X)                                                   \
  X(nvrtcGetCUBINSize, nvrtcResult, (nvrtcProgram, size_t *))                  \
  X(nvrtcGetCUBIN, nvrtcResult, (nvrtcProgram, char *))

struct NvrtcApi {
  FA_NVRTC_REQUIRED(FA_DECLARE_SYMBOL)
  FA_NVRTC_OPTIONAL(FA_DECLARE_SYMBOL)
};

using hiprtcResult = int;
using hiprtcProgram = struct _hiprtcProgram *;

#define FA_HIPRTC_REQUIRED(X)                                                  \
  X(hiprtcGetErrorString, const char *, (hiprtcResult))                        \
  X(hiprtcVersion, hiprtcResult, (int *, int *))                               \
  X(hiprtcCreateProgram, hiprtcResult,                                         \
    (hiprtcProgram *, const char *, const char *, int, const char **,          \
     const char **))                                                           \
  X(hiprtcDestroyProgram, hiprtcResult, (hiprtcProgram *))                     \
  X(hiprtcCompileProgram, hiprtcResult, (hiprtcProgram, int, const char **))   \
  X(hiprtcGetProgramLogSize, hiprtcResult, (hiprtcProgram, size_t *))          \
  X(hiprtcGetProgramLog, hiprtcResult, (hiprtcProgram, char *))                \
  X(hiprtcGetCodeSize, hiprtcResult, (hiprtcProgram, size_t *))                \
  X(hiprtcGetCode, hiprtcResult, (hiprtcProgram, char *))

struct HiprtcApi {
  FA_HIPRTC_REQUIRED(FA_DECLARE_SYMBOL)
};

/// A compiler library, loaded once per process.
template <typename Api> struct Compiler {
  Status status;
  Api api;
  int major = 0, minor = 0;
};

Status loadNvrtc(Compiler<NvrtcApi> &c) {
  const char *kind = "nvrtc";
  void *handle;
  if (Status s = openVendorLibrary(kind,
                                   {"libnvrtc.so.13", "libnvrtc.so.12",
                                    "libnvrtc.so.11.2", "libnvrtc.so",
                                    "/usr/local/cuda/lib64/libnvrtc.so"},
                                   handle);
      !s.ok())
    return s;
  NvrtcApi &api = c.api;
  FA_NVRTC_REQUIRED(FA_RESOLVE_REQUIRED)
  FA_NVRTC_OPTIONAL(FA_RESOLVE_OPTIONAL)
  if (nvrtcResult rc = api.nvrtcVersion(&c.major, &c.minor))
    return vendorCallError(ErrorCode::Unavailable, kind, "NVRTC unavailable",
                           "nvrtcVersion", rc, nullptr,
                           api.nvrtcGetErrorString(rc));
  return Status::success();
}

Status loadHiprtc(Compiler<HiprtcApi> &c) {
  const char *kind = "hiprtc";
  void *handle;
  // ROCm 5 has hiprtc inside libamdhip64; ROCm 6 has its own library.
  if (Status s = openVendorLibrary(kind,
                                   {"libhiprtc.so", "libhiprtc.so.6",
                                    "libhiprtc.so.5", "libamdhip64.so",
                                    "libamdhip64.so.6", "libamdhip64.so.5"},
                                   handle);
      !s.ok())
    return s;
  HiprtcApi &api = c.api;
  FA_HIPRTC_REQUIRED(FA_RESOLVE_REQUIRED)
  if (hiprtcResult rc = api.hiprtcVersion(&c.major, &c.minor))
    return vendorCallError(ErrorCode::Unavailable, kind, "hiprtc unavailable",
                           "hiprtcVersion", rc, nullptr,
                           api.hiprtcGetErrorString(rc));
  return Status::success();
}

template <typename Api>
const Compiler<Api> &probe(Status (*load)(Compiler<Api> &)) {
  static Compiler<Api> compiler;
  static std::once_flag once;
  std::call_once(once, [&] { compiler.status = load(compiler); });
  return compiler;
}

/// The failure of compiler call `call`; `log` is the program log.
Status compileError(const char *kind, const std::string &target,
                    const char *call, int rc, const char *description,
                    const std::string &log = {}) {
  return vendorCallError(
             ErrorCode::LoadFailed, kind,
             std::string("cannot compile the reference kernel for ") + target +
                 " with " + kind,
             call, rc, nullptr, description)
      .withLog(log);
}

Expected<DeviceReferenceCode> compileNvrtc(const std::string &target,
                                           const std::string &source) {
  const Compiler<NvrtcApi> &c = probe<NvrtcApi>(loadNvrtc);
  if (!c.status.ok())
    return c.status;
  const NvrtcApi &api = c.api;
  if (!isSmTarget(target))
    return Status::error(ErrorCode::InvalidArgument,
                         "NVRTC compiles for targets spelled sm_XY, not '" +
                             target + "'");
  // A cubin for the exact architecture when this NVRTC can write one, else
  // PTX for the virtual architecture (the driver JIT-compiles it).
  bool cubin = api.nvrtcGetCUBINSize && api.nvrtcGetCUBIN;
  std::string arch =
      "--gpu-architecture=" + std::string(cubin ? "sm_" : "compute_") +
      std::string(target.substr(3));
  auto fail = [&](const char *call, nvrtcResult rc, const std::string &log) {
    return compileError("NVRTC", target, call, rc, api.nvrtcGetErrorString(rc),
                        log);
  };
  nvrtcProgram prog = nullptr;
  if (nvrtcResult rc = api.nvrtcCreateProgram(
          &prog, source.c_str(), "fa_reference.cu", 0, nullptr, nullptr))
    return fail("nvrtcCreateProgram", rc, "");
  struct Destroy {
    const NvrtcApi &api;
    nvrtcProgram &prog;
    ~Destroy() { (void)api.nvrtcDestroyProgram(&prog); }
  } destroy{api, prog};
  const char *options[] = {arch.c_str(), "--std=c++14"};
  nvrtcResult compiled = api.nvrtcCompileProgram(prog, 2, options);
  std::string log;
  size_t logSize = 0;
  if (api.nvrtcGetProgramLogSize(prog, &logSize) == 0 && logSize > 1) {
    log.resize(logSize);
    if (api.nvrtcGetProgramLog(prog, &log[0]) == 0)
      log.resize(logSize - 1);
    else
      log.clear();
  }
  if (compiled)
    return fail("nvrtcCompileProgram", compiled, log);
  DeviceReferenceCode out;
  out.target = target;
  out.compiler = "NVRTC";
  out.log = log;
  size_t size = 0;
  if (cubin) {
    out.format = "cubin";
    if (nvrtcResult rc = api.nvrtcGetCUBINSize(prog, &size))
      return fail("nvrtcGetCUBINSize", rc, log);
    out.bytes.resize(size);
    if (nvrtcResult rc =
            api.nvrtcGetCUBIN(prog, reinterpret_cast<char *>(out.bytes.data())))
      return fail("nvrtcGetCUBIN", rc, log);
  } else {
    out.format = "ptx";
    if (nvrtcResult rc = api.nvrtcGetPTXSize(prog, &size))
      return fail("nvrtcGetPTXSize", rc, log);
    out.bytes.resize(size); // includes the terminating NUL
    if (nvrtcResult rc =
            api.nvrtcGetPTX(prog, reinterpret_cast<char *>(out.bytes.data())))
      return fail("nvrtcGetPTX", rc, log);
  }
  return out;
}

Expected<DeviceReferenceCode> compileHiprtc(const std::string &target,
                                            const std::string &source) {
  const Compiler<HiprtcApi> &c = probe<HiprtcApi>(loadHiprtc);
  if (!c.status.ok())
    return c.status;
  const HiprtcApi &api = c.api;
  auto fail = [&](const char *call, hiprtcResult rc, const std::string &log) {
    return compileError("hiprtc", target, call, rc,
                        api.hiprtcGetErrorString(rc), log);
  };
  hiprtcProgram prog = nullptr;
  if (hiprtcResult rc = api.hiprtcCreateProgram(
          &prog, source.c_str(), "fa_reference.hip", 0, nullptr, nullptr))
    return fail("hiprtcCreateProgram", rc, "");
  struct Destroy {
    const HiprtcApi &api;
    hiprtcProgram &prog;
    ~Destroy() { (void)api.hiprtcDestroyProgram(&prog); }
  } destroy{api, prog};
  std::string arch = "--offload-arch=" + target;
  const char *options[] = {arch.c_str(), "-O3"};
  hiprtcResult compiled = api.hiprtcCompileProgram(prog, 2, options);
  std::string log;
  size_t logSize = 0;
  if (api.hiprtcGetProgramLogSize(prog, &logSize) == 0 && logSize > 1) {
    log.resize(logSize);
    if (api.hiprtcGetProgramLog(prog, &log[0]) == 0)
      log.resize(log.find('\0') == std::string::npos ? logSize
                                                     : log.find('\0'));
    else
      log.clear();
  }
  if (compiled)
    return fail("hiprtcCompileProgram", compiled, log);
  DeviceReferenceCode out;
  out.target = target;
  out.compiler = "hiprtc";
  out.format = "hsaco";
  out.log = log;
  size_t size = 0;
  if (hiprtcResult rc = api.hiprtcGetCodeSize(prog, &size))
    return fail("hiprtcGetCodeSize", rc, log);
  out.bytes.resize(size);
  if (hiprtcResult rc =
          api.hiprtcGetCode(prog, reinterpret_cast<char *>(out.bytes.data())))
    return fail("hiprtcGetCode", rc, log);
  return out;
}

} // namespace

Expected<DeviceReferenceCode>
fa::compileDeviceReference(const std::string &target, DType dtype,
                           int64_t headDim, bool naive) {
  if (headDim < 1 || headDim > 1024)
    return Status::error(ErrorCode::InvalidArgument,
                         "the device reference supports head dimensions 1 to "
                         "1024, not " +
                             std::to_string(headDim));
  using Key = std::tuple<std::string, int, int64_t, bool>;
  static std::mutex mutex;
  static std::map<Key, DeviceReferenceCode> cache;
  Key key{target, dtypeCode(dtype), headDim, naive};
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  std::string source = deviceReferenceSource(dtype, headDim, naive);
  Expected<DeviceReferenceCode> code =
      target.compare(0, 3, "sm_") == 0 ? compileNvrtc(target, source)
      : target.compare(0, 3, "gfx") == 0
          ? compileHiprtc(target, source)
          : Expected<DeviceReferenceCode>(Status::error(
                ErrorCode::Unsupported, "no run-time compiler for "
                                        "target '" +
                                            target +
                                            "' (sm_XY: NVRTC, "
                                            "gfx...: hiprtc)"));
  if (code)
    cache.emplace(key, *code);
  return code;
}

//===----------------------------------------------------------------------===//
// Running it
//===----------------------------------------------------------------------===//

namespace {
/// The kernel's parameter words: 6 pointers, 6 sizes, 9 strides, the scale,
/// the window's two bounds, the softcap, the slopes and sinks (null: none).
std::vector<uint64_t>
referenceParams(const AttentionProblem &p, const Buffer &q, const Buffer &k,
                const Buffer &v, const Buffer &o, const Buffer &lse,
                const Buffer *mag, const AttentionStrides &st,
                const Buffer *slopes, const Buffer *sinks) {
  const AttentionShape &s = p.shape;
  uint64_t scaleBits, softcapBits;
  std::memcpy(&scaleBits, &p.scale, 8);
  std::memcpy(&softcapBits, &p.softcap, 8);
  return {q.address(),
          k.address(),
          v.address(),
          o.address(),
          lse.address(),
          mag ? mag->address() : 0,
          uint64_t(s.batch),
          uint64_t(s.headsQ),
          uint64_t(s.headsKv),
          uint64_t(s.seqQ),
          uint64_t(s.seqK),
          uint64_t(p.causal ? 1 : 0),
          uint64_t(st.q.batch),
          uint64_t(st.q.head),
          uint64_t(st.q.row),
          uint64_t(st.k.batch),
          uint64_t(st.k.head),
          uint64_t(st.k.row),
          uint64_t(st.v.batch),
          uint64_t(st.v.head),
          uint64_t(st.v.row),
          scaleBits,
          uint64_t(p.windowLeft),
          uint64_t(p.windowRight),
          softcapBits,
          slopes ? slopes->address() : 0,
          sinks ? sinks->address() : 0};
}

template <typename T>
Status readBack(const Buffer &buffer, std::vector<T> &out, size_t count) {
  out.resize(count);
  return buffer.copyToHost(out.data(), count * sizeof(T));
}
} // namespace

Expected<DeviceReferenceResult>
fa::deviceReferenceAttention(const Device &device, const AttentionProblem &p,
                             DType dtype, const Buffer &q, const Buffer &k,
                             const Buffer &v, const AttentionStrides &strides,
                             bool naive) {
  if (Status s = checkShape(p); !s.ok())
    return s;
  for (const Buffer *b : {&q, &k, &v})
    if (!b->belongsTo(device))
      return Status::error(ErrorCode::InvalidArgument,
                           "the device reference's inputs must be buffers of "
                           "device '" +
                               device.name() + "'");
  // The host emulator runs only fa's own host code objects; the gfx906
  // simulator runs any gfx906 code object, so hiprtc's reference kernel too.
  if (device.supportsTarget("host"))
    return Status::error(ErrorCode::Unsupported,
                         "the device reference needs a GPU device; '" +
                             device.name() +
                             "' is the host emulator (use the CPU reference)")
        .withDevice(device.name());
  const std::string &target = device.targets().front();
  const AttentionShape &s = p.shape;
  if (s.headsQ > int64_t(device.limits().maxGrid[1]) ||
      s.batch > int64_t(device.limits().maxGrid[2]))
    return Status::error(
        ErrorCode::Unsupported,
        "the device reference launches a grid of (Lq/" +
            std::to_string(kReferenceThreads) + ", Hq, B) = " + "(.., " +
            std::to_string(s.headsQ) + ", " + std::to_string(s.batch) +
            "), beyond the limit (.., " +
            std::to_string(device.limits().maxGrid[1]) + ", " +
            std::to_string(device.limits().maxGrid[2]) + ")");
  LaunchGeometry g;
  g.grid[0] = uint32_t((s.seqQ + kReferenceThreads - 1) / kReferenceThreads);
  g.grid[1] = uint32_t(s.headsQ);
  g.grid[2] = uint32_t(s.batch);
  g.block[0] = kReferenceThreads;

  // The slopes and sinks, f32 [Hq] as the kernel under test gets them.
  std::optional<Buffer> headParams[2];
  const std::vector<float> *headValues[2] = {&p.alibiSlopes, &p.sinks};
  for (int i = 0; i < 2; ++i) {
    if (headValues[i]->empty())
      continue;
    const size_t bytes = headValues[i]->size() * sizeof(float);
    Expected<Buffer> b = device.allocate(bytes);
    if (!b)
      return b.takeStatus();
    if (Status st = b->copyFromHost(headValues[i]->data(), bytes); !st.ok())
      return st;
    headParams[i].emplace(b.take());
  }
  DeviceReferenceResult r;
  const size_t nO = p.qElements(), nLse = p.lseElements();
  for (bool variant : {false, true}) {
    if (variant && !naive)
      break;
    Expected<DeviceReferenceCode> code =
        compileDeviceReference(target, dtype, p.headDim, variant);
    if (!code)
      return code.takeStatus();
    if (!variant)
      r.description = "fp64 on device (" + code->compiler + " " + target + ")";
    Expected<RawKernel> loaded =
        RawKernel::load(device, code->bytes, code->format,
                        deviceReferenceSymbol, kReferenceThreads);
    if (!loaded)
      return loaded.takeStatus();
    size_t elem = variant ? sizeof(float) : sizeof(double);
    Expected<Buffer> o = device.allocate(nO * elem);
    if (!o)
      return o.takeStatus();
    Expected<Buffer> lse = device.allocate(nLse * elem);
    if (!lse)
      return lse.takeStatus();
    std::optional<Buffer> mag;
    if (!variant) {
      Expected<Buffer> m = device.allocate(nO * elem);
      if (!m)
        return m.takeStatus();
      mag.emplace(m.take());
    }
    std::vector<uint64_t> params =
        referenceParams(p, q, k, v, *o, *lse, mag ? &*mag : nullptr, strides,
                        headParams[0] ? &*headParams[0] : nullptr,
                        headParams[1] ? &*headParams[1] : nullptr);
    if (Status st = loaded->launch(g, params.data(), params.size()); !st.ok())
      return st;
    Status st;
    if (variant) {
      if (!(st = readBack(*o, r.naive.o, nO)).ok() ||
          !(st = readBack(*lse, r.naive.lse, nLse)).ok())
        return st;
    } else if (!(st = readBack(*o, r.exact.o, nO)).ok() ||
               !(st = readBack(*lse, r.exact.lse, nLse)).ok() ||
               !(st = readBack(*mag, r.exact.magnitude, nO)).ok()) {
      return st;
    }
  }
  return r;
}

/// The dense device reference of one gathered sequence (paged or varlen):
/// its Q, K and V uploaded in `dtype`, contiguous.
static Expected<DeviceReferenceResult>
deviceSequenceReference(const Device &device, const DenseSequence &seq,
                        DType dtype, bool naive) {
  std::optional<Buffer> buffers[3];
  const std::vector<float> *values[3] = {&seq.data.q, &seq.data.k, &seq.data.v};
  for (int i = 0; i < 3; ++i) {
    std::vector<uint8_t> bytes = encodeElements(dtype, *values[i]);
    Expected<Buffer> buffer = device.allocate(bytes.size());
    if (!buffer)
      return buffer.takeStatus();
    if (Status st = buffer->copyFromHost(bytes.data(), bytes.size()); !st.ok())
      return st;
    buffers[i].emplace(buffer.take());
  }
  return deviceReferenceAttention(
      device, seq.problem, dtype, *buffers[0], *buffers[1], *buffers[2],
      AttentionStrides::contiguous(seq.problem.shape, seq.problem.headDim),
      naive);
}

/// Where no sequence had `what` (so nothing ran): an error on the host
/// emulator, as a run would have been, else the description says so.
static Status describeNothingRan(const Device &device, const char *what,
                                 DeviceReferenceResult &r) {
  if (device.supportsTarget("host"))
    return Status::error(ErrorCode::Unsupported,
                         "the device reference needs a GPU device; '" +
                             device.name() +
                             "' is the host emulator (use the CPU reference)")
        .withDevice(device.name());
  r.description = std::string("fp64 on device (no sequence has ") + what +
                  ": nothing ran on " + device.name() + ")";
  return Status::success();
}

Expected<DeviceReferenceResult>
fa::devicePagedReferenceAttention(const Device &device, const PagedProblem &p,
                                  DType dtype, const AttentionData &data,
                                  bool naive) {
  Expected<std::vector<DenseSequence>> sequences =
      gatherPagedSequences(p, data);
  if (!sequences)
    return sequences.takeStatus();
  const double inf = std::numeric_limits<double>::infinity();
  DeviceReferenceResult r;
  r.exact.o.assign(p.qElements(), 0.0);
  r.exact.magnitude.assign(p.qElements(), 0.0);
  r.exact.lse.assign(p.lseElements(), -inf);
  if (naive) {
    r.naive.o.assign(p.qElements(), 0.f);
    r.naive.lse.assign(p.lseElements(), -float(inf));
  }
  const size_t rowsO = size_t(p.headsQ * p.seqQ * p.headDim),
               rowsLse = size_t(p.headsQ * p.seqQ);
  for (size_t b = 0; b < sequences->size(); ++b) {
    const DenseSequence &seq = (*sequences)[b];
    if (seq.data.q.empty()) {
      // No keys: O = 0, LSE = -inf, or each head's sink.
      if (!p.sinks.empty())
        for (int64_t h = 0; h < p.headsQ; ++h)
          for (int64_t i = 0; i < p.seqQ; ++i) {
            const size_t at = b * rowsLse + size_t(h * p.seqQ + i);
            r.exact.lse[at] = p.sinks[size_t(h)];
            if (naive)
              r.naive.lse[at] = p.sinks[size_t(h)];
          }
      continue;
    }
    Expected<DeviceReferenceResult> one =
        deviceSequenceReference(device, seq, dtype, naive);
    if (!one)
      return one.takeStatus();
    r.description = one->description;
    std::copy(one->exact.o.begin(), one->exact.o.end(),
              r.exact.o.begin() + b * rowsO);
    std::copy(one->exact.magnitude.begin(), one->exact.magnitude.end(),
              r.exact.magnitude.begin() + b * rowsO);
    std::copy(one->exact.lse.begin(), one->exact.lse.end(),
              r.exact.lse.begin() + b * rowsLse);
    if (naive) {
      std::copy(one->naive.o.begin(), one->naive.o.end(),
                r.naive.o.begin() + b * rowsO);
      std::copy(one->naive.lse.begin(), one->naive.lse.end(),
                r.naive.lse.begin() + b * rowsLse);
    }
  }
  if (r.description.empty())
    if (Status st = describeNothingRan(device, "keys", r); !st.ok())
      return st;
  return r;
}

/// The device references of packed sequences (varlen or mixed): each
/// gathered sequence's dense reference, scattered into packed O, magnitude
/// [total_q, Hq, D] and LSE [Hq, total_q] at rows cuSeqlensQ[b].. . A
/// sequence without queries gives nothing; one without keys O = 0 and LSE
/// = -inf (each head's sink, with sinks) without a launch.
static Expected<DeviceReferenceResult>
packedReferences(const Device &device, const std::vector<DenseSequence> &seqs,
                 const std::vector<int32_t> &cuSeqlensQ, int64_t totalQ,
                 int64_t Hq, int64_t D, const std::vector<float> &sinks,
                 DType dtype, bool naive, const char *nothingRan) {
  const double inf = std::numeric_limits<double>::infinity();
  const size_t qElements = size_t(totalQ * Hq * D),
               lseElements = size_t(Hq * totalQ);
  DeviceReferenceResult r;
  r.exact.o.assign(qElements, 0.0);
  r.exact.magnitude.assign(qElements, 0.0);
  r.exact.lse.assign(lseElements, -inf);
  if (naive) {
    r.naive.o.assign(qElements, 0.f);
    r.naive.lse.assign(lseElements, -float(inf));
  }
  for (size_t b = 0; b < seqs.size(); ++b) {
    const DenseSequence &seq = seqs[b];
    if (seq.data.q.empty()) {
      // No queries: nothing; no keys: O = 0, LSE = -inf, or each head's
      // sink.
      const int64_t q0 = cuSeqlensQ[b], lq = cuSeqlensQ[b + 1] - q0;
      if (!sinks.empty())
        for (int64_t h = 0; h < Hq; ++h)
          for (int64_t i = 0; i < lq; ++i) {
            const size_t at = size_t(h * totalQ + q0 + i);
            r.exact.lse[at] = sinks[size_t(h)];
            if (naive)
              r.naive.lse[at] = sinks[size_t(h)];
          }
      continue;
    }
    Expected<DeviceReferenceResult> one =
        deviceSequenceReference(device, seq, dtype, naive);
    if (!one)
      return one.takeStatus();
    const AttentionShape &s = seq.problem.shape;
    r.description = one->description;
    // Dense [1, Hq, Lq_b, D] / [1, Hq, Lq_b] -> packed [total_q, Hq, D] /
    // [Hq, total_q].
    const int64_t q0 = cuSeqlensQ[b], lq = s.seqQ;
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < lq; ++i) {
        const size_t from = size_t((h * lq + i) * D),
                     to = size_t(((q0 + i) * Hq + h) * D);
        std::copy_n(one->exact.o.begin() + from, D, r.exact.o.begin() + to);
        std::copy_n(one->exact.magnitude.begin() + from, D,
                    r.exact.magnitude.begin() + to);
        const size_t lseFrom = size_t(h * lq + i),
                     lseTo = size_t(h * totalQ + q0 + i);
        r.exact.lse[lseTo] = one->exact.lse[lseFrom];
        if (naive) {
          std::copy_n(one->naive.o.begin() + from, D, r.naive.o.begin() + to);
          r.naive.lse[lseTo] = one->naive.lse[lseFrom];
        }
      }
  }
  if (r.description.empty())
    if (Status st = describeNothingRan(device, nothingRan, r); !st.ok())
      return st;
  return r;
}

Expected<DeviceReferenceResult>
fa::deviceVarlenReferenceAttention(const Device &device, const VarlenProblem &p,
                                   DType dtype, const AttentionData &data,
                                   bool naive) {
  Expected<std::vector<DenseSequence>> sequences =
      gatherVarlenSequences(p, data);
  if (!sequences)
    return sequences.takeStatus();
  return packedReferences(device, *sequences, p.cuSeqlensQ, p.totalQ, p.headsQ,
                          p.headDim, p.sinks, dtype, naive, "queries and keys");
}

Expected<DeviceReferenceResult>
fa::deviceMixedReferenceAttention(const Device &device, const MixedProblem &p,
                                  DType dtype, const AttentionData &data,
                                  bool naive) {
  Expected<std::vector<DenseSequence>> sequences =
      gatherMixedSequences(p, data);
  if (!sequences)
    return sequences.takeStatus();
  return packedReferences(device, *sequences, p.cuSeqlensQ, p.totalQ,
                          p.cache.headsQ, p.cache.headDim, p.cache.sinks, dtype,
                          naive, "queries and keys");
}
