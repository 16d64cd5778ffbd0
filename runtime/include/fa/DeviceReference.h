//===- DeviceReference.h - Reference attention on the GPU -------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The references of Reference.h computed on a GPU, for problems too large for
// the CPU: one naive attention kernel, written in the common subset of CUDA
// and HIP C++, compiled at run time with NVRTC (CUDA devices, libnvrtc loaded
// with dlopen) or hiprtc (HIP devices), one thread per output row (b, h, i).
// It reads Q, K and V in the kernel's dtype through the ABI's strides, so it
// runs on the very buffers the kernel under test reads, and follows the
// conventions of Reference.h (bottom-right causal mask and sliding window,
// softcap, GQA head mapping, -inf LSE and zero output for rows with no
// visible key). Two variants of one source:
//   - exact: every operation in double, softmax in two passes (max, then sum
//     with the P·V and sum_j p|v| accumulations); O, LSE and the
//     conditioning magnitude A_id = sum_j p_ij |v_jd|, as
//     referenceAttentionF64;
//   - naive: float arithmetic rounding P and O to the dtype, as
//     naiveAttention (the FA criterion's same-precision baseline).
// Results come back contiguous [B, Hq, Lq, D] / [B, Hq, Lq].
//
// Library: fa::validate (libfa_validate.so, over fa::runtime).
//
//===----------------------------------------------------------------------===//

#ifndef FA_DEVICEREFERENCE_H
#define FA_DEVICEREFERENCE_H

#include "fa/AttentionShape.h"
#include "fa/Device.h"
#include "fa/PagedVarlen.h"
#include "fa/Reference.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fa {

/// Which reference validation computes: `Auto` picks the device reference
/// on a GPU for large problems (useDeviceReference), else the CPU.
enum class ReferenceKind { Auto, Cpu, Device };

/// "auto", "cpu", "device".
const char *referenceKindName(ReferenceKind kind);
std::optional<ReferenceKind> parseReferenceKind(std::string_view name);

/// Under `auto`, problems of more than this many FLOPs (4·B·Hq·Lq·Lk·D, not
/// halved when causal) use the device reference on a GPU.
constexpr double deviceReferenceMinFlops = 2e10;

/// True if `kind` asks for the device reference on `device` for `problem`:
/// Device always, Cpu never, Auto on a GPU (not the host emulator) above
/// deviceReferenceMinFlops.
bool useDeviceReference(ReferenceKind kind, const Device &device,
                        const AttentionProblem &problem);

/// A reference kernel compiled at run time.
struct DeviceReferenceCode {
  std::vector<uint8_t> bytes;
  /// "cubin", "ptx" or "hsaco".
  std::string format;
  /// "sm_90", "gfx906".
  std::string target;
  /// "NVRTC" or "hiprtc".
  std::string compiler;
  /// The compiler's log (warnings), possibly empty.
  std::string log;
};

/// The kernel symbol of the reference source.
constexpr const char *deviceReferenceSymbol = "fa_reference_attention";

/// The CUDA/HIP source of the reference kernel for `dtype`, head dimension
/// `headDim`, and the exact (fp64) or naive (same-precision) variant.
std::string deviceReferenceSource(DType dtype, int64_t headDim, bool naive);

/// Compiles deviceReferenceSource for `target`: "sm_XY" with NVRTC (a cubin
/// when libnvrtc has nvrtcGetCUBIN, else PTX for compute_XY), "gfx..." with
/// hiprtc (an hsaco). Unavailable when the compiler library is missing;
/// LoadFailed with the compiler's log when the source does not compile.
/// Results are cached per (target, dtype, headDim, naive).
Expected<DeviceReferenceCode> compileDeviceReference(const std::string &target,
                                                     DType dtype,
                                                     int64_t headDim,
                                                     bool naive);

struct DeviceReferenceResult {
  /// fp64: o, lse and magnitude.
  AttentionResult<double> exact;
  /// Same precision as naiveAttention: o and lse (empty unless asked for).
  AttentionResult<float> naive;
  /// "fp64 on device (NVRTC sm_90)".
  std::string description;
};

/// Runs the reference kernels on `device` over Q, K and V already on it in
/// `dtype` with `strides` (batch, head and row strides in elements, as the
/// kernel ABI passes them). With `naive`, also the naive variant.
Expected<DeviceReferenceResult>
deviceReferenceAttention(const Device &device, const AttentionProblem &problem,
                         DType dtype, const Buffer &q, const Buffer &k,
                         const Buffer &v, const AttentionStrides &strides,
                         bool naive = true);

/// The references of a paged problem on `device`: each sequence gathered on
/// the host into a dense B = 1 problem (gatherPagedSequences), uploaded in
/// `dtype` and run through deviceReferenceAttention; a sequence without
/// keys has O = 0, LSE = -inf and magnitude 0 without a launch. Results as
/// referencePagedAttentionF64's: o, magnitude [B, Hq, Lq, D], lse [B, Hq,
/// Lq]. The data check's error, or deviceReferenceAttention's.
Expected<DeviceReferenceResult>
devicePagedReferenceAttention(const Device &device, const PagedProblem &problem,
                              DType dtype, const AttentionData &data,
                              bool naive = true);

/// The references of a varlen problem on `device`: each sequence cut out on
/// the host into a dense B = 1 problem (gatherVarlenSequences), uploaded in
/// `dtype` and run through deviceReferenceAttention; a sequence without
/// keys has O = 0, LSE = -inf and magnitude 0 without a launch, one without
/// queries gives nothing. Results as referenceVarlenAttentionF64's: o,
/// magnitude [total_q, Hq, D], lse [Hq, total_q]. The data check's error,
/// or deviceReferenceAttention's.
Expected<DeviceReferenceResult>
deviceVarlenReferenceAttention(const Device &device,
                               const VarlenProblem &problem, DType dtype,
                               const AttentionData &data, bool naive = true);

/// The references of a mixed problem on `device`: each sequence gathered on
/// the host into a dense B = 1 problem of Lq_b queries and cache_seqlens[b]
/// keys (gatherMixedSequences; the dense alignment puts the queries last),
/// uploaded in `dtype` and run through deviceReferenceAttention; as the
/// varlen form, a sequence without keys has O = 0, LSE = -inf and
/// magnitude 0 without a launch, one without queries gives nothing. Results
/// as referenceMixedAttentionF64's: o, magnitude [total_q, Hq, D], lse [Hq,
/// total_q].
Expected<DeviceReferenceResult>
deviceMixedReferenceAttention(const Device &device, const MixedProblem &problem,
                              DType dtype, const AttentionData &data,
                              bool naive = true);

} // namespace fa

#endif // FA_DEVICEREFERENCE_H
