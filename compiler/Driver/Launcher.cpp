//===- Launcher.cpp - AOT C launchers of compiled kernels -----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements renderLauncher (`fac --emit=launcher`):
//
//   1. the manifest fa::compile rendered is read back with the runtime's
//      parser, so the launcher sees the kernel exactly as the runtime does;
//      what the launcher does not implement (host target, paged and varlen
//      ABI versions, modules of several attentions) is refused here;
//   2. the facts a launch needs (block and thread counts, LDS, index width,
//      GQA packing, static sizes, the combine kernel, the workgroups one
//      compute unit holds, the HIP kernarg layout) become C constants;
//   3. the C text below is expanded for HIP or CUDA: the same checks, word
//      packing, split count and grids as the runtime (runtime/lib/core/
//      Kernel.cpp packAttentionArgs, SplitKv.cpp planKvSplits; runtime/lib/
//      gpu/VendorBackends.cpp packKernargSegment and packKernelParams),
//      written again in C; test/runtime/gpu/LauncherTest.cpp proves the two
//      give the same kernel arguments byte for byte.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Launcher.h"

#include "fa/KernelAbi.h"
#include "fa/Manifest.h"
#include "fa/Module.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace mlir;

static llvm::Error launcherError(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

//===----------------------------------------------------------------------===//
// Text expansion
//===----------------------------------------------------------------------===//

namespace {
using Vars = llvm::StringMap<std::string>;
} // namespace

/// `text` with every `${name}` replaced by vars[name].
static std::string expand(llvm::StringRef text, const Vars &vars) {
  std::string out;
  out.reserve(text.size() * 2);
  while (!text.empty()) {
    size_t at = text.find("${");
    out += text.take_front(at).str();
    if (at == llvm::StringRef::npos)
      break;
    text = text.drop_front(at + 2);
    size_t end = text.find('}');
    llvm::StringRef name = text.take_front(end);
    auto it = vars.find(name);
    assert(it != vars.end() && "launcher template names an unknown variable");
    if (it != vars.end())
      out += it->second;
    text = text.drop_front(end + 1);
  }
  return out;
}

/// `name` made a C identifier: other characters become '_', and a leading
/// digit gets a '_' before it.
static std::string cIdentifier(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) || c == '_' ? c : '_';
  if (out.empty() || llvm::isDigit(out.front()))
    out.insert(out.begin(), '_');
  return out;
}

static bool isCIdentifier(llvm::StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// `bytes` as C initializer lines, 12 bytes each.
static std::string byteArrayText(llvm::StringRef bytes) {
  std::string out;
  llvm::raw_string_ostream os(out);
  for (size_t i = 0; i < bytes.size(); ++i) {
    os << (i % 12 == 0 ? "  " : " ")
       << llvm::format("0x%02x", unsigned(uint8_t(bytes[i])))
       << (i + 1 < bytes.size() ? "," : "");
    if (i % 12 == 11 || i + 1 == bytes.size())
      os << "\n";
  }
  return out;
}

/// `text` as C string literal lines, one per line of the text (octal
/// escapes, which take at most three digits; '?' escaped against
/// trigraphs), or, past the 4095 characters ISO C promises a literal, a
/// brace-enclosed list of its bytes ending in 0.
static std::string stringInitializerText(llvm::StringRef text) {
  if (text.size() > 4000)
    return "{\n" + byteArrayText(text.str() + std::string(1, '\0')) + "}";
  std::string out;
  llvm::raw_string_ostream os(out);
  bool first = true;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    bool newline = line.size() < text.size();
    os << (first ? "    \"" : "\n    \"");
    for (char c : line) {
      if (c == '"' || c == '\\' || c == '?')
        os << '\\' << c;
      else if (c >= 0x20 && c < 0x7f)
        os << c;
      else
        os << llvm::format("\\%03o", unsigned(uint8_t(c)));
    }
    os << (newline ? "\\n\"" : "\"");
    first = false;
    text = rest;
  }
  if (first)
    os << "    \"\"";
  return out;
}

//===----------------------------------------------------------------------===//
// The kernarg segment (HIP)
//===----------------------------------------------------------------------===//

/// ABI word `i` is a buffer descriptor's offset, size or stride: a 4-byte
/// kernel argument with 32-bit index arithmetic (runtime/lib/gpu/Vendor.h,
/// isDescriptorIndexWord).
static bool isDescriptorIndexWord(unsigned i) {
  auto fieldOf = [&](unsigned first, unsigned buffers) {
    return i >= first && i < first + buffers * FA_ABI_WORDS_PER_BUFFER &&
           (i - first) % FA_ABI_WORDS_PER_BUFFER >= 2;
  };
  return fieldOf(FA_ABI_Q, FA_ABI_NUM_BUFFERS) || fieldOf(FA_ABI_WS_O, 2) ||
         fieldOf(FA_ABI_BLOCK_TABLE, 2) || fieldOf(FA_ABI_CU_SEQLENS_Q, 2);
}

/// Each word's offset and size in the kernarg segment, and the segment's
/// size: every argument at its natural alignment, as the AMDGPU backend
/// lays out the kernel's `.args`.
static unsigned kernargLayout(unsigned numWords, int64_t indexBits,
                              std::vector<unsigned> &offsets,
                              std::vector<unsigned> &sizes) {
  unsigned end = 0;
  for (unsigned i = 0; i < numWords; ++i) {
    unsigned size = indexBits == 32 && isDescriptorIndexWord(i) ? 4 : 8;
    unsigned at = (end + size - 1) / size * size;
    offsets.push_back(at);
    sizes.push_back(size);
    end = at + size;
  }
  return end;
}

/// A C block comment of `paragraphs`, each wrapped at 78 columns.
static std::string commentBlock(llvm::ArrayRef<std::string> paragraphs) {
  std::string out = "/*";
  for (size_t p = 0; p < paragraphs.size(); ++p) {
    if (p)
      out += "\n *";
    llvm::SmallVector<llvm::StringRef> words;
    llvm::StringRef(paragraphs[p]).split(words, ' ', -1, /*KeepEmpty=*/false);
    size_t column = 78;
    for (llvm::StringRef word : words) {
      if (column + 1 + word.size() > 78) {
        out += p || column != 78 ? "\n * " : " ";
        column = 3;
      } else {
        out += " ";
        ++column;
      }
      out += word.str();
      column += word.size();
    }
  }
  return out + "\n */\n";
}

static std::string joinNumbers(const std::vector<unsigned> &values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? (i % 14 == 0 ? ",\n    " : ", ") : "    ") +
           std::to_string(values[i]);
  return out;
}

//===----------------------------------------------------------------------===//
// The C text
//===----------------------------------------------------------------------===//

// What differs between the vendors' driver APIs.
namespace {
struct Vendor {
  const char *name;
  const char *include;
  const char *library;
  const char *moduleType;
  const char *functionType;
  const char *streamType;
  const char *errorType;
  const char *inPointer;  ///< a device pointer parameter read by the kernel
  const char *outPointer; ///< one written by it
  const char *address;    ///< the expression of a pointer `p` as uint64_t
  const char *load;       ///< the body of <p>_load
  const char *unload;
  const char *vendorError; ///< <p>_error_string's return for a positive code
  const char *launch;      ///< the tail of <p>_launch
};
} // namespace

static const char *const kHipLoad = R"C(  int device = 0, rc;
  if (!m)
    return ${P}_ERROR_NOT_LOADED;
  memset(m, 0, sizeof *m);
  if ((rc = (int)hipGetDevice(&device)) != 0 ||
      (rc = (int)hipDeviceGetAttribute(&m->compute_units,
                                       hipDeviceAttributeMultiprocessorCount,
                                       device)) != 0 ||
      (rc = (int)hipDeviceGetAttribute(&m->max_grid[0],
                                       hipDeviceAttributeMaxGridDimX,
                                       device)) != 0 ||
      (rc = (int)hipDeviceGetAttribute(&m->max_grid[1],
                                       hipDeviceAttributeMaxGridDimY,
                                       device)) != 0 ||
      (rc = (int)hipDeviceGetAttribute(&m->max_grid[2],
                                       hipDeviceAttributeMaxGridDimZ,
                                       device)) != 0)
    return rc;
  if ((rc = (int)hipModuleLoadData(&m->module, ${p}_code_object)) != 0) {
    m->module = NULL;
    return rc;
  }
  if ((rc = (int)hipModuleGetFunction(&m->kernel, m->module,
                                      "${symbol}")) != 0${get_combine_hip}) {
    (void)hipModuleUnload(m->module);
    memset(m, 0, sizeof *m);
    return rc;
  }
  return 0;
)C";

static const char *const kCudaLoad = R"C(  CUdevice device = 0;
  int rc;
  if (!m)
    return ${P}_ERROR_NOT_LOADED;
  memset(m, 0, sizeof *m);
  if ((rc = (int)cuCtxGetDevice(&device)) != 0 ||
      (rc = (int)cuDeviceGetAttribute(&m->compute_units,
                                      CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                      device)) != 0 ||
      (rc = (int)cuDeviceGetAttribute(&m->max_grid[0],
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                                      device)) != 0 ||
      (rc = (int)cuDeviceGetAttribute(&m->max_grid[1],
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                      device)) != 0 ||
      (rc = (int)cuDeviceGetAttribute(&m->max_grid[2],
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
                                      device)) != 0)
    return rc;
  if ((rc = (int)cuModuleLoadData(&m->module, ${p}_code_object)) != 0) {
    m->module = NULL;
    return rc;
  }
  /* The functions, each allowed the dynamic shared memory its manifest
   * entry gives (above 48 KiB, the opt-in). */
  if ((rc = (int)cuModuleGetFunction(&m->kernel, m->module,
                                     "${symbol}")) != 0${set_dynamic_shared}${get_combine_cuda}) {
    (void)cuModuleUnload(m->module);
    memset(m, 0, sizeof *m);
    return rc;
  }
  return 0;
)C";

static const char *const kHipLaunch =
    R"C(  /* The explicit kernel arguments, laid out as the code object's .args say
   * (the runtime's packKernargSegment): each word's low bytes at its
   * offset, on a little-endian host; HIP appends the hidden arguments and
   * copies the segment before it returns. */
  {
    union {
      uint64_t align;
      unsigned char bytes[FA_KERNARG_BYTES];
    } segment;
    size_t segment_bytes = FA_KERNARG_BYTES;
    void *extra[5];
    int i;
    memset(&segment, 0, sizeof segment);
    for (i = 0; i < FA_NUM_WORDS; ++i)
      memcpy(segment.bytes + fa_kernarg_offset[i], &plan.words[i],
             fa_kernarg_size[i]);
    extra[0] = HIP_LAUNCH_PARAM_BUFFER_POINTER;
    extra[1] = segment.bytes;
    extra[2] = HIP_LAUNCH_PARAM_BUFFER_SIZE;
    extra[3] = &segment_bytes;
    extra[4] = HIP_LAUNCH_PARAM_END;
    rc = (int)hipModuleLaunchKernel(m->kernel, plan.grid[0], plan.grid[1],
                                    plan.grid[2], FA_THREADS, 1, 1,
                                    FA_DYNAMIC_LDS, stream, NULL, extra);${launch_combine_hip}
  }
  return rc;
)C";

static const char *const kCudaLaunch =
    R"C(  /* One parameter per word (the runtime's packKernelParams); with 32-bit
   * index arithmetic the driver reads the low half of a descriptor's
   * offset, size and stride words, on a little-endian host. The driver
   * copies the values before it returns. */
  {
    void *params[FA_NUM_WORDS];
    int i;
    for (i = 0; i < FA_NUM_WORDS; ++i)
      params[i] = &plan.words[i];
    rc = (int)cuLaunchKernel(m->kernel, plan.grid[0], plan.grid[1],
                             plan.grid[2], FA_THREADS, 1, 1,
                             FA_DYNAMIC_LDS, stream, params, NULL);${launch_combine_cuda}
  }
  return rc;
)C";

static const Vendor kHip = {
    "HIP",
    "#include <hip/hip_runtime_api.h>",
    "libamdhip64",
    "hipModule_t",
    "hipFunction_t",
    "hipStream_t",
    "hipError_t",
    "const void *",
    "void *",
    "((uint64_t)(uintptr_t)(p))",
    kHipLoad,
    "  int rc = m && m->module ? (int)hipModuleUnload(m->module) : 0;\n",
    "return hipGetErrorString((hipError_t)rc);",
    kHipLaunch,
};

static const Vendor kCuda = {
    "CUDA",
    "#include <cuda.h>",
    "libcuda",
    "CUmodule",
    "CUfunction",
    "CUstream",
    "CUresult",
    "CUdeviceptr ",
    "CUdeviceptr ",
    "((uint64_t)(p))",
    kCudaLoad,
    "  int rc = m && m->module ? (int)cuModuleUnload(m->module) : 0;\n",
    "return cuGetErrorString((CUresult)rc, &text) == 0 ? text\n"
    "                                                     : \"unknown CUDA "
    "error\";",
    kCudaLaunch,
};

static const char *const kHeader = R"C(${banner}
#ifndef ${P}_LAUNCHER_H
#define ${P}_LAUNCHER_H

${vendor_include}
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the kernel was compiled for (its manifest). */
#define ${P}_HEAD_DIM ${head_dim}
#define ${P}_ELEMENT_BYTES ${element_bytes} /* ${dtype} */
#define ${P}_CAUSAL ${causal}
#define ${P}_SCALE ${scale}
#define ${P}_HAS_LSE ${has_lse}
#define ${P}_SPLIT_KV ${split_kv}
/* Sizes the kernel was compiled for; -1: any. */
#define ${P}_STATIC_B ${static_b}
#define ${P}_STATIC_HQ ${static_hq}
#define ${P}_STATIC_HKV ${static_hkv}
#define ${P}_STATIC_LQ ${static_lq}
#define ${P}_STATIC_LK ${static_lk}
/* The most K/V splits a launch may ask for. */
#define ${P}_MAX_KV_SPLITS ${max_kv_splits}

/* Why a launch was refused (nothing was launched). */
enum {
  /* The module is null or not loaded. */
  ${P}_ERROR_NOT_LOADED = -1,
  /* A size below 1, Hq not a multiple of Hkv, or a split-KV workspace
   * whose size does not fit in 64 bits. */
  ${P}_ERROR_INVALID_SHAPE = -2,
  /* A size other than the one the kernel was compiled for. */
  ${P}_ERROR_STATIC_SIZE = -3,
  /* A negative stride, strides that map two elements of O or LSE to one
   * address, or a view whose bytes do not fit in 64 bits. */
  ${P}_ERROR_INVALID_STRIDES = -4,
  /* Q, K, V or O null; LSE null for a kernel that writes it, or given to
   * one that does not; O or LSE also passed as another operand. */
  ${P}_ERROR_INVALID_BUFFER = -5,
  /* 32-bit index arithmetic: an element offset past INT32_MAX, or a byte
   * offset past UINT32_MAX (FA_INDEX_LIMIT, FA_INDEX_LIMIT_F32). */
  ${P}_ERROR_INDEX_OVERFLOW = -6,
  /* kv_splits outside [0, MAX_KV_SPLITS] (1 for a kernel that is not
   * split-KV). */
  ${P}_ERROR_INVALID_KV_SPLITS = -7,
  /* Split-KV: the workspace is null, not 16-byte aligned, smaller than
   * workspace_size gives for the launch's split count, or also passed as
   * another operand. */
  ${P}_ERROR_WORKSPACE = -8,
  /* The grid exceeds the device's limits. */
  ${P}_ERROR_GRID = -9
};

/* The loaded code object; filled by _load. */
typedef struct ${p}_module {
  ${module_type} module;
  ${function_type} kernel;  /* '${symbol}' */
  ${function_type} combine; /* split-KV: '${combine_symbol}'; else null */
  int compute_units;        /* for the automatic K/V split count */
  int max_grid[3];
} ${p}_module;

${load_doc}
int ${p}_load(${p}_module *m);

/* Unloads the code object and zeroes `m`. */
int ${p}_unload(${p}_module *m);

/* The K/V split count a launch with kv_splits = 0 uses on m's device (the
 * runtime's automatic rule); 1 for a kernel that is not split-KV; or a
 * negative error. */
int64_t ${p}_kv_splits(const ${p}_module *m,
    int64_t B, int64_t Hq, int64_t Hkv, int64_t Lq, int64_t Lk);

/* Bytes of the workspace a split-KV launch of kv_splits splits S needs:
 * f32 O [S*B, Hq, Lq, D], then, at its size rounded up to 256 bytes, f32
 * LSE [S*B, Hq, Lq]. kv_splits = 0: enough for any count the automatic
 * rule may choose for this shape on any device. 0 for a kernel that is
 * not split-KV, at S = 1 (the split kernel writes O itself), and for
 * arguments a launch refuses. */
uint64_t ${p}_workspace_size(
    int64_t B, int64_t Hq, int64_t Hkv, int64_t Lq, int64_t Lk,
    int64_t kv_splits);

/* Checks the call and launches the kernel (split-KV: then its combine
 * kernel) on `stream`. Device pointers: Q [B, Hq, Lq, D], K and V
 * [B, Hkv, Lk, D], O [B, Hq, Lq, D] of ${dtype}; LSE [B, Hq, Lq] of f32,
 * null for a kernel without LSE output. `strides`: the 14 strides in
 * elements in the kernel ABI's order (q, k, v, o: batch, head, row; lse:
 * batch, head; the innermost stride is 1), or null for contiguous
 * tensors. The workspace (split-KV at S > 1; ignored otherwise) holds
 * workspace_bytes; a launch may use it until the launches before it on
 * its stream are done, so concurrent streams need one each. kv_splits: 0
 * for the automatic count (one split without a workspace: the split
 * kernel writes O itself), or 1 to MAX_KV_SPLITS. */
int ${p}_launch(const ${p}_module *m, ${stream_type} stream,
    ${in}q, ${in}k, ${in}v,
    ${out}o, ${out}lse,
    int64_t B, int64_t Hq, int64_t Hkv, int64_t Lq, int64_t Lk,
    const int64_t *strides, ${out}workspace, uint64_t workspace_bytes,
    int64_t kv_splits);

/* What a return value means. */
const char *${p}_error_string(int rc);

/* The code object and its manifest (docs/manifest.md). */
extern const unsigned char ${p}_code_object[];
extern const size_t ${p}_code_object_size;
extern const char ${p}_manifest[];

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ${P}_LAUNCHER_H */
)C";

static const char *const kSourceTop = R"C(${source_banner}
#include "${header}"

#include <string.h>

/* A device pointer as a descriptor word. */
#define FA_ADDRESS(p) ${address}

#if defined(__GNUC__) || defined(__clang__)
#define FA_ALIGNED __attribute__((aligned(64)))
#else
#define FA_ALIGNED
#endif

/* The code object fac wrote (${format}, ${bytes} bytes, ${hash})${nul_note}. */
FA_ALIGNED const unsigned char ${p}_code_object[${array_bytes}] = {
${code_object_bytes}};
const size_t ${p}_code_object_size = ${bytes};

const char ${p}_manifest[] =
${manifest_text};

/* The launch (fa/KernelAbi.h, the manifest). */
enum {
  FA_NUM_WORDS = ${num_words}, /* ABI version ${abi_version} */
  FA_INDEX_BITS = ${index_bits},
  /* With 32-bit index arithmetic, the largest element offset into Q, K,
   * V and O, and into f32 LSE and workspace: INT32_MAX, and UINT32_MAX in
   * bytes (gfx906 addresses a buffer as a base plus a 32-bit byte
   * offset). */
  FA_INDEX_LIMIT = ${index_limit},
  FA_INDEX_LIMIT_F32 = 1073741823,
  FA_BLOCK_M = ${block_m},
  FA_BLOCK_N = ${block_n},
  FA_THREADS = ${threads},
  FA_DYNAMIC_LDS = ${dynamic_lds},
  /* 1: a Q tile's rows are the Hq/Hkv heads of a KV head (grid y: Hkv). */
  FA_GQA_PACKED = ${gqa_packed}${split_constants}
};
${kernarg_layout}
/* The checked and packed launch. */
typedef struct fa_plan {
  uint64_t words[FA_NUM_WORDS];
  unsigned grid[3];${combine_grid_field}
} fa_plan;

/* Arithmetic on sizes, saturating at UINT64_MAX: a size that does not fit
 * is refused, never wrapped. */
static uint64_t fa_mul(uint64_t a, uint64_t b) {
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static uint64_t fa_add(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

static uint64_t fa_ceil_div(uint64_t a, uint64_t b) {
  return a / b + (a % b != 0);
}

static int64_t fa_stride(uint64_t value) {
  return value > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)value;
}

/* Elements from the first to one past the last of an [n0, n1, n2, inner]
 * view with strides (s0, s1, s2, 1), sizes >= 1: a descriptor's size word
 * (the runtime's for a buffer of exactly this extent). */
static uint64_t fa_extent(uint64_t n0, uint64_t n1, uint64_t n2, uint64_t inner,
                          int64_t s0, int64_t s1, int64_t s2) {
  uint64_t last =
      fa_add(fa_mul(n0 - 1, (uint64_t)s0), fa_mul(n1 - 1, (uint64_t)s1));
  last = fa_add(last, fa_mul(n2 - 1, (uint64_t)s2));
  return fa_add(last, inner);
}

/* Whether two elements of a view (extents n, strides s, innermost first)
 * may share an address: sorted by stride, each dimension of extent > 1 must
 * step over all that the dimensions inside it span. */
static int fa_overlaps(int count, const int64_t *n, const int64_t *s) {
  int64_t en[4], es[4];
  uint64_t span = 0;
  int kept = 0, i, j;
  for (i = 0; i < count; ++i) {
    if (n[i] <= 1)
      continue;
    for (j = kept; j > 0 && es[j - 1] > s[i]; --j) {
      en[j] = en[j - 1];
      es[j] = es[j - 1];
    }
    en[j] = n[i];
    es[j] = s[i];
    ++kept;
  }
  for (i = 0; i < kept; ++i) {
    if ((uint64_t)es[i] < fa_add(span, 1))
      return 1;
    span = fa_add(span, fa_mul((uint64_t)es[i], (uint64_t)(en[i] - 1)));
  }
  return 0;
}

/* Sizes >= 1, Hq a multiple of Hkv. */
static int fa_check_shape(int64_t B, int64_t Hq, int64_t Hkv, int64_t Lq,
                          int64_t Lk) {
  if (B < 1 || Hq < 1 || Hkv < 1 || Lq < 1 || Lk < 1 || Hq % Hkv != 0)
    return ${P}_ERROR_INVALID_SHAPE;
  return 0;
}

/* Q tiles of one split: ceil(R / block_m), R = Lq (or Lq * Hq/Hkv when
 * GQA-packed). */
static uint64_t fa_tiles(int64_t Hq, int64_t Hkv, int64_t Lq) {
  uint64_t rows =
      FA_GQA_PACKED ? fa_mul((uint64_t)Lq, (uint64_t)(Hq / Hkv)) : (uint64_t)Lq;
  return fa_ceil_div(rows, FA_BLOCK_M);
}
${split_functions}
int64_t ${p}_kv_splits(const ${p}_module *m,
    int64_t B, int64_t Hq, int64_t Hkv, int64_t Lq, int64_t Lk) {
  int rc;
  if (!m || !m->kernel)
    return ${P}_ERROR_NOT_LOADED;
  if ((rc = fa_check_shape(B, Hq, Hkv, Lq, Lk)) != 0)
    return rc;
  return ${kv_splits_body};
}

uint64_t ${p}_workspace_size(
    int64_t B, int64_t Hq, int64_t Hkv, int64_t Lq, int64_t Lk,
    int64_t kv_splits) {
${workspace_size_body}}

/* The runtime's checks, in its order, then the words and grids. */
static int fa_pack(const ${p}_module *m,
    ${in}q, ${in}k, ${in}v,
    ${out}o, ${out}lse,
    int64_t B, int64_t Hq, int64_t Hkv, int64_t Lq, int64_t Lk,
    const int64_t *strides, ${out}workspace, uint64_t workspace_bytes,
    int64_t kv_splits, fa_plan *plan) {
  const int64_t sizes[5] = {B, Hq, Hkv, Lq, Lk};
  const int64_t fixed[5] = {${P}_STATIC_B,
                            ${P}_STATIC_HQ,
                            ${P}_STATIC_HKV,
                            ${P}_STATIC_LQ,
                            ${P}_STATIC_LK};
  const int64_t D = ${P}_HEAD_DIM;
  uint64_t *w = plan->words;
  uint64_t grid[3];
  int64_t st[14];
  int i, rc;
  if (!m || !m->kernel${combine_loaded})
    return ${P}_ERROR_NOT_LOADED;
  for (i = 0; i < 5; ++i)
    if (sizes[i] < 1)
      return ${P}_ERROR_INVALID_SHAPE;
  for (i = 0; i < 5; ++i)
    if (fixed[i] >= 0 && sizes[i] != fixed[i])
      return ${P}_ERROR_STATIC_SIZE;
  if ((rc = fa_check_shape(B, Hq, Hkv, Lq, Lk)) != 0)
    return rc;

  /* Strides: given, or the contiguous [B, H, L, D] ones. */
  if (strides) {
    memcpy(st, strides, sizeof st);
  } else {
    const int64_t rows[4] = {Lq, Lk, Lk, Lq}, heads[4] = {Hq, Hkv, Hkv, Hq};
    for (i = 0; i < 4; ++i) {
      st[3 * i + 2] = D;
      st[3 * i + 1] = fa_stride(fa_mul((uint64_t)rows[i], (uint64_t)D));
      st[3 * i] =
          fa_stride(fa_mul((uint64_t)heads[i], (uint64_t)st[3 * i + 1]));
    }
    st[13] = Lq;
    st[12] = fa_stride(fa_mul((uint64_t)Hq, (uint64_t)Lq));
  }
  for (i = 0; i < 14; ++i)
    if (st[i] < 0)
      return ${P}_ERROR_INVALID_STRIDES;
  {
    /* No two elements of an output at one address. */
    const int64_t n[4] = {D, Lq, Hq, B}, s[4] = {1, st[11], st[10], st[9]};
    if (fa_overlaps(4, n, s))
      return ${P}_ERROR_INVALID_STRIDES;
  }${lse_overlap}${index_check}

  /* Q, K, V, O: pointer twice, offset 0, size in elements, stride 1. */
  if (!q || !k || !v || !o)
    return ${P}_ERROR_INVALID_BUFFER;
  {
    const uint64_t address[4] = {FA_ADDRESS(q), FA_ADDRESS(k),
                                 FA_ADDRESS(v), FA_ADDRESS(o)};
    const int64_t heads[4] = {Hq, Hkv, Hkv, Hq}, rows[4] = {Lq, Lk, Lk, Lq};
    for (i = 0; i < 4; ++i) {
      uint64_t *desc = w + 5 * i;
      uint64_t elements = fa_extent(B, heads[i], rows[i], D, st[3 * i],
                                    st[3 * i + 1], st[3 * i + 2]);
      if (fa_mul(elements, ${P}_ELEMENT_BYTES) == UINT64_MAX)
        return ${P}_ERROR_INVALID_STRIDES;
      desc[0] = desc[1] = address[i];
      desc[2] = 0;
      desc[3] = elements;
      desc[4] = 1;
    }
  }
${lse_words}
  /* An output shares memory with no other operand. */
  if (o == q || o == k || o == v ||
      (lse && (lse == q || lse == k || lse == v || lse == o)))
    return ${P}_ERROR_INVALID_BUFFER;

  for (i = 0; i < 5; ++i)
    w[25 + i] = (uint64_t)sizes[i];
  for (i = 0; i < 14; ++i)
    w[30 + i] = (uint64_t)st[i];${clamp_sizes}
${splits_and_grid}
  return 0;
}

int ${p}_load(${p}_module *m) {
${load_body}}

int ${p}_unload(${p}_module *m) {
${unload_body}  if (m)
    memset(m, 0, sizeof *m);
  return rc;
}

int ${p}_launch(const ${p}_module *m, ${stream_type} stream,
    ${in}q, ${in}k, ${in}v,
    ${out}o, ${out}lse,
    int64_t B, int64_t Hq, int64_t Hkv, int64_t Lq, int64_t Lk,
    const int64_t *strides, ${out}workspace, uint64_t workspace_bytes,
    int64_t kv_splits) {
  fa_plan plan;
  int rc = fa_pack(m, q, k, v, o, lse, B, Hq, Hkv, Lq, Lk, strides,
                   workspace, workspace_bytes, kv_splits, &plan);
  if (rc != 0)
    return rc;
${launch_body}}

const char *${p}_error_string(int rc) {${error_string_locals}
  switch (rc) {
  case 0:
    return "success";
  case ${P}_ERROR_NOT_LOADED:
    return "the module is not loaded";
  case ${P}_ERROR_INVALID_SHAPE:
    return "invalid shape: a size below 1, Hq not a multiple of Hkv, or a "
           "workspace past 64 bits";
  case ${P}_ERROR_STATIC_SIZE:
    return "a size other than the kernel was compiled for";
  case ${P}_ERROR_INVALID_STRIDES:
    return "invalid strides: negative, overlapping output elements, or a "
           "view past 64 bits";
  case ${P}_ERROR_INVALID_BUFFER:
    return "invalid buffer: a null pointer, an LSE pointer the kernel does "
           "not take or lacks, or an output passed as another operand";
  case ${P}_ERROR_INDEX_OVERFLOW:
    return "the offsets exceed the kernel's 32-bit index arithmetic";
  case ${P}_ERROR_INVALID_KV_SPLITS:
    return "invalid K/V split count";
  case ${P}_ERROR_WORKSPACE:
    return "the split-KV workspace is null, misaligned, too small or "
           "another operand";
  case ${P}_ERROR_GRID:
    return "the grid exceeds the device's limits";
  default:
    if (rc < 0)
      return "unknown error";
    ${vendor_error}
  }
}
)C";

// Split-KV: the automatic split count and the workspace's layout.
static const char *const kSplitFunctions = R"C(
/* The runtime's automatic split count (fa::planKvSplits): W workgroups per
 * split, n K/V blocks, slots = resident workgroups per CU x CUs; the S in
 * [1, min(128, n)] of least 16 * ceil(W * S / slots) * (ceil(n / S) + 1) + S,
 * the smaller on a tie. */
static int64_t fa_auto_kv_splits(int compute_units, int64_t B, int64_t Hq,
                                 int64_t Hkv, int64_t Lq, int64_t Lk) {
  uint64_t workgroups = fa_mul(
      fa_mul(fa_tiles(Hq, Hkv, Lq), (uint64_t)(FA_GQA_PACKED ? Hkv : Hq)),
      (uint64_t)B);
  uint64_t slots = fa_mul(FA_RESIDENT_PER_CU,
                          (uint64_t)(compute_units > 1 ? compute_units : 1));
  uint64_t blocks = fa_ceil_div((uint64_t)Lk, FA_BLOCK_N);
  uint64_t most =
      blocks < FA_MAX_AUTO_KV_SPLITS ? blocks : FA_MAX_AUTO_KV_SPLITS;
  uint64_t best = 0, s;
  int64_t chosen = 1;
  for (s = 1; s <= most; ++s) {
    uint64_t rounds = fa_ceil_div(fa_mul(workgroups, s), slots);
    uint64_t cost =
        fa_add(fa_mul(fa_mul(16, rounds), fa_ceil_div(blocks, s) + 1), s);
    if (s == 1 || cost < best) {
      best = cost;
      chosen = (int64_t)s;
    }
  }
  return chosen;
}

/* The workspace of S splits: f32 O [S*B, Hq, Lq, D], then f32 LSE
 * [S*B, Hq, Lq] at the O part's size rounded up to 256 bytes. 0 when it
 * does not fit in 64 bits. */
static int fa_workspace(int64_t S, int64_t B, int64_t Hq, int64_t Lq,
                        uint64_t *o_bytes, uint64_t *lse_offset,
                        uint64_t *lse_bytes) {
  uint64_t lse = fa_mul(fa_mul(fa_mul((uint64_t)S, (uint64_t)B), (uint64_t)Hq),
                        fa_mul((uint64_t)Lq, 4));
  uint64_t o = fa_mul(lse, ${P}_HEAD_DIM);
  uint64_t offset = fa_mul(fa_ceil_div(o, 256), 256);
  if (o == UINT64_MAX || offset == UINT64_MAX ||
      fa_add(offset, lse) == UINT64_MAX)
    return 0;
  *o_bytes = o;
  *lse_offset = offset;
  *lse_bytes = lse;
  return 1;
}
)C";

static const char *const kSplitWorkspaceSize =
    R"C(  uint64_t o_bytes, lse_offset, lse_bytes;
  if (fa_check_shape(B, Hq, Hkv, Lq, Lk) != 0 || kv_splits < 0 ||
      kv_splits > ${P}_MAX_KV_SPLITS)
    return 0;
  if (kv_splits == 0) {
    /* The automatic rule chooses at most min(128, K/V blocks). */
    uint64_t blocks = fa_ceil_div((uint64_t)Lk, FA_BLOCK_N);
    kv_splits = blocks < FA_MAX_AUTO_KV_SPLITS ? (int64_t)blocks
                                               : FA_MAX_AUTO_KV_SPLITS;
  }
  if (kv_splits == 1) /* the split kernel writes O itself */
    return 0;
  if (!fa_workspace(kv_splits, B, Hq, Lq, &o_bytes, &lse_offset, &lse_bytes))
    return 0;
  return lse_offset + lse_bytes;
)C";

static const char *const kDenseWorkspaceSize =
    R"C(  (void)B, (void)Hq, (void)Hkv, (void)Lq, (void)Lk, (void)kv_splits;
  return 0; /* not a split-KV kernel */
)C";

static const char *const kSplitTail = R"C(
  /* Split-KV: S, the workspace (f32 O, then f32 LSE at 256 bytes past
   * it), the split kernel's grid (ceil(R / block_m) * S, Hg, B) and the
   * combine kernel's (ceil(Lq / its block_m), Hq, B), launched at S > 1
   * only: at S = 1 the split kernel writes O and LSE itself. */
  {
    uint64_t o_bytes, lse_offset, lse_bytes, combine_grid[3];
    int64_t S;
    if (kv_splits < 0 || kv_splits > ${P}_MAX_KV_SPLITS)
      return ${P}_ERROR_INVALID_KV_SPLITS;
    /* Without a workspace the automatic count is one split. */
    S = kv_splits   ? kv_splits
        : workspace ? fa_auto_kv_splits(m->compute_units, B, Hq, Hkv, Lq, Lk)
                    : 1;
    if (!fa_workspace(S, B, Hq, Lq, &o_bytes, &lse_offset, &lse_bytes))
      return ${P}_ERROR_INVALID_SHAPE;${workspace_index_check}
    grid[0] = fa_mul(fa_tiles(Hq, Hkv, Lq), (uint64_t)S);
    grid[1] = (uint64_t)(FA_GQA_PACKED ? Hkv : Hq);
    grid[2] = (uint64_t)B;
    for (i = 0; i < 3; ++i)
      if (grid[i] > (uint64_t)m->max_grid[i] || grid[i] > UINT32_MAX)
        return ${P}_ERROR_GRID;
    combine_grid[0] = fa_ceil_div((uint64_t)Lq, FA_COMBINE_BLOCK_M);
    combine_grid[1] = (uint64_t)Hq;
    combine_grid[2] = (uint64_t)B;
    for (i = 0; i < 3 && S > 1; ++i) /* launched at S > 1 only */
      if (combine_grid[i] > (uint64_t)m->max_grid[i] ||
          combine_grid[i] > UINT32_MAX)
        return ${P}_ERROR_GRID;
    for (i = 0; i < 3; ++i) {
      plan->grid[i] = (unsigned)grid[i];
      plan->combine_grid[i] = (unsigned)combine_grid[i];
    }
    /* At S = 1 the split kernel writes O and LSE itself: null workspace
     * descriptors. Else one caller buffer, as Kernel::enqueue binds it: O
     * over [0, lse_offset), LSE over the rest. */
    w[54] = (uint64_t)S;
    if (S == 1) {
      for (i = 44; i < 54; ++i)
        w[i] = 0;
      w[48] = w[53] = 1;
    } else {
      if (!workspace || FA_ADDRESS(workspace) % 16 != 0 ||
          workspace_bytes < lse_offset + lse_bytes ||
          FA_ADDRESS(workspace) == FA_ADDRESS(q) ||
          FA_ADDRESS(workspace) == FA_ADDRESS(k) ||
          FA_ADDRESS(workspace) == FA_ADDRESS(v) ||
          FA_ADDRESS(workspace) == FA_ADDRESS(o) ||
          FA_ADDRESS(workspace) == FA_ADDRESS(lse))
        return ${P}_ERROR_WORKSPACE;
      w[44] = w[45] = FA_ADDRESS(workspace);
      w[46] = 0;
      w[47] = lse_offset / 4;
      w[48] = 1;
      w[49] = w[50] = FA_ADDRESS(workspace) + lse_offset;
      w[51] = 0;
      w[52] = (workspace_bytes - lse_offset) / 4;
      w[53] = 1;${clamp_workspace}
    }
  }
)C";

static const char *const kDenseTail = R"C(
  /* The grid (ceil(R / block_m), Hg, B); no workspace. */
  (void)workspace;
  (void)workspace_bytes;
  if (kv_splits != 0 && kv_splits != 1)
    return ${P}_ERROR_INVALID_KV_SPLITS;
  grid[0] = fa_tiles(Hq, Hkv, Lq);
  grid[1] = (uint64_t)(FA_GQA_PACKED ? Hkv : Hq);
  grid[2] = (uint64_t)B;
  for (i = 0; i < 3; ++i) {
    if (grid[i] > (uint64_t)m->max_grid[i] || grid[i] > UINT32_MAX)
      return ${P}_ERROR_GRID;
    plan->grid[i] = (unsigned)grid[i];
  }
)C";

static const char *const kLseWords = R"C(
  /* LSE: written by the kernel; [B, Hq, Lq] with strides (batch, head, 1). */
  if (!lse)
    return ${P}_ERROR_INVALID_BUFFER;
  {
    uint64_t elements = fa_extent(B, Hq, 1, Lq, st[12], st[13], 0);
    if (fa_mul(elements, 4) == UINT64_MAX)
      return ${P}_ERROR_INVALID_STRIDES;
    w[20] = w[21] = FA_ADDRESS(lse);
    w[22] = 0;
    w[23] = elements;
    w[24] = 1;
  }
)C";

static const char *const kNoLseWords = R"C(
  /* LSE: the kernel has no LSE output; a null descriptor. */
  if (lse)
    return ${P}_ERROR_INVALID_BUFFER;
  w[20] = w[21] = w[22] = w[23] = 0;
  w[24] = 1;
)C";

static const char *const kLseOverlap = R"C(
  {
    const int64_t n[3] = {Lq, Hq, B}, s[3] = {1, st[13], st[12]};
    if (fa_overlaps(3, n, s))
      return ${P}_ERROR_INVALID_STRIDES;
  })C";

static const char *const kIndexCheck = R"C(
  {
    /* 32-bit index arithmetic: every offset the kernel forms, up to the
     * last row of the last (partial) block, fits in int32, and in uint32
     * as bytes. */
    const uint64_t block = FA_BLOCK_M > FA_BLOCK_N ? FA_BLOCK_M : FA_BLOCK_N;
    const uint64_t lq = fa_mul(fa_ceil_div((uint64_t)Lq, block), block);
    const uint64_t lk = fa_mul(fa_ceil_div((uint64_t)Lk, block), block);
    if (fa_extent(B, Hq, lq, D, st[0], st[1], st[2]) > FA_INDEX_LIMIT ||
        fa_extent(B, Hkv, lk, D, st[3], st[4], st[5]) > FA_INDEX_LIMIT ||
        fa_extent(B, Hkv, lk, D, st[6], st[7], st[8]) > FA_INDEX_LIMIT ||
        fa_extent(B, Hq, lq, D, st[9], st[10], st[11]) > FA_INDEX_LIMIT${lse_index})
      return ${P}_ERROR_INDEX_OVERFLOW;
  })C";

//===----------------------------------------------------------------------===//
// renderLauncher
//===----------------------------------------------------------------------===//

/// Where residentPerComputeUnit found its figure, for a comment.
static std::string residentSource(const ::fa::KernelInfo &k) {
  for (const auto &[name, value] : k.resources)
    if (name == "blocks_per_sm_estimate" ||
        name == "workgroups_per_cu_estimate")
      return "the manifest's\n   * " + name;
  for (const auto &[name, value] : k.resources)
    if (name == "waves_per_simd_estimate")
      return "the manifest's\n   * waves_per_simd_estimate";
  return "the runtime's default:\n   * the manifest has no estimate";
}

static std::string formatScale(double scale) {
  std::string out;
  llvm::raw_string_ostream(out) << llvm::format("%.9g", scale);
  return out;
}

llvm::Expected<mlir::fa::LauncherFiles>
mlir::fa::renderLauncher(llvm::StringRef codeObject,
                         llvm::StringRef manifestJson,
                         const LauncherOptions &options) {
  ::fa::Expected<::fa::Manifest> parsed = ::fa::parseManifest(manifestJson);
  if (!parsed)
    return launcherError("the manifest does not load: " +
                         parsed.status().message());
  const ::fa::Manifest &manifest = *parsed;
  const Vendor *vendor = nullptr;
  llvm::StringRef target = manifest.target;
  if (target.starts_with("gfx") && manifest.codeObjectFormat == "hsaco")
    vendor = &kHip;
  else if (target.starts_with("sm_") && (manifest.codeObjectFormat == "cubin" ||
                                         manifest.codeObjectFormat == "ptx"))
    vendor = &kCuda;
  if (!vendor)
    return launcherError(
        "--emit=launcher is for GPU targets (gfx906: HIP; sm_80, sm_90: "
        "CUDA), not " +
        target +
        ": its kernels run on fa's host emulator, through the "
        "runtime");

  // One attention kernel, with its combine kernel if it is split-KV.
  const ::fa::KernelInfo *kernel = nullptr;
  std::vector<std::string> names;
  for (const ::fa::KernelInfo &k : manifest.kernels)
    if (!k.isCombine()) {
      kernel = &k;
      names.push_back("'" + k.name + "'");
    }
  if (names.size() != 1)
    return launcherError(
        "--emit=launcher writes the launcher of one "
        "attention kernel; the module has " +
        llvm::Twine(names.size()) +
        (names.empty() ? "" : " (" + llvm::join(names, ", ") + ")") +
        ": compile each attention on its own");
  const ::fa::KernelInfo &k = *kernel;
  if (k.paged || k.varlen)
    return launcherError(
        "--emit=launcher supports dense and split-KV kernels (ABI versions "
        "1 and 2); kernel '" +
        k.name + "' is " +
        (k.paged && k.varlen ? "a mixed batch (paged and varlen, ABI version 4)"
         : k.paged           ? "paged (ABI version 3)"
                             : "varlen (ABI version 4)") +
        ": launch it through the runtime (fa::Kernel::launch)");
  if (k.hasHeadParams())
    return launcherError(
        "--emit=launcher does not pass ALiBi slopes or sinks yet; kernel '" +
        k.name + "' takes " +
        (k.alibi && k.sinks ? "both" : k.alibi ? "alibi_slopes" : "sinks") +
        ": launch it through the runtime (fa::Kernel::launch)");
  const ::fa::KernelInfo *combine = nullptr;
  if (k.splitKv)
    for (const ::fa::KernelInfo &c : manifest.kernels)
      if (c.isCombine() && c.name == k.combine)
        combine = &c;
  if (k.splitKv != (combine != nullptr) ||
      (k.abiVersion != (k.splitKv ? 2 : 1)))
    return launcherError("kernel '" + k.name + "' has ABI version " +
                         llvm::Twine(k.abiVersion) +
                         (k.splitKv ? " and combine kernel '" + k.combine + "'"
                                    : std::string()) +
                         ", which the launcher does not implement");
  if (k.indexBits != 32 && k.indexBits != 64)
    return launcherError("kernel '" + k.name + "' has index_bits " +
                         llvm::Twine(k.indexBits) + ", not 32 or 64");
  if (codeObject.size() != manifest.codeObjectBytes)
    return launcherError(
        "the code object has " + llvm::Twine(codeObject.size()) +
        " bytes, its manifest says " + llvm::Twine(manifest.codeObjectBytes));

  std::string prefix =
      options.prefix.empty() ? cIdentifier(k.name) : options.prefix;
  if (!isCIdentifier(prefix))
    return launcherError("--launcher-prefix '" + prefix +
                         "' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)");
  const bool hip = vendor == &kHip;
  const bool split = combine != nullptr;
  const unsigned numWords = fa_abi_num_words(uint32_t(k.abiVersion));

  Vars v;
  v["p"] = prefix;
  v["P"] = llvm::StringRef(prefix).upper();
  v["kernel"] = k.name;
  v["symbol"] = k.symbol;
  v["combine_symbol"] = split ? combine->symbol : "";
  v["header"] = options.headerName.empty() ? prefix + ".h" : options.headerName;
  v["compiler"] = manifest.compiler;
  v["target"] = manifest.target;
  v["format"] = manifest.codeObjectFormat;
  v["bytes"] = std::to_string(codeObject.size());
  v["hash"] = manifest.codeObjectHash;
  v["vendor"] = vendor->name;
  v["vendor_include"] = vendor->include;
  v["vendor_header"] = llvm::StringRef(vendor->include).drop_front(9).str();
  v["library"] = vendor->library;
  v["module_type"] = vendor->moduleType;
  v["function_type"] = vendor->functionType;
  v["stream_type"] = vendor->streamType;
  v["error_type"] = vendor->errorType;
  v["in"] = vendor->inPointer;
  v["out"] = vendor->outPointer;
  v["load_doc"] =
      hip ? "/* Loads the code object on the current device (hipGetDevice) "
            "and gets\n * its kernels; nothing stays loaded when it fails. */"
          : "/* Loads the code object on the device of the calling thread's "
            "current\n * context and gets its kernels; nothing stays loaded "
            "when it fails. */";
  v["vendor_error"] = vendor->vendorError;
  v["error_string_locals"] = hip ? "" : "\n  const char *text = NULL;";

  // The kernel's facts.
  const char *dtype = ::fa::dtypeName(k.dtype);
  std::string summary = std::string(dtype) +
                        ", D=" + std::to_string(k.headDim) +
                        (k.causal ? ", causal" : ", not causal") + ", scale " +
                        formatScale(k.scale) +
                        (k.hasLse ? ", with" : ", without") + " LSE output";
  if (split)
    summary += ", split-KV (combine kernel '" + combine->name + "')";
  if (k.gqaPacked)
    summary += ", GQA-packed";
  const char *sizeNames[] = {"B", "Hq", "Hkv", "Lq", "Lk"};
  for (int i = 0; i < 5; ++i)
    if (k.staticSizes[i] >= 0)
      summary += std::string(", ") + sizeNames[i] + "=" +
                 std::to_string(k.staticSizes[i]);
  v["summary"] = summary;
  v["dtype"] = dtype;
  v["head_dim"] = std::to_string(k.headDim);
  v["element_bytes"] = std::to_string(::fa::dtypeBytes(k.dtype));
  v["index_limit"] = std::to_string(std::min<uint64_t>(
      INT32_MAX, UINT32_MAX / ::fa::dtypeBytes(k.dtype)));
  v["causal"] = k.causal ? "1" : "0";
  v["scale"] = formatScale(k.scale);
  v["has_lse"] = k.hasLse ? "1" : "0";
  v["split_kv"] = split ? "1" : "0";
  const char *staticNames[] = {"static_b", "static_hq", "static_hkv",
                               "static_lq", "static_lk"};
  for (int i = 0; i < 5; ++i)
    v[staticNames[i]] = k.staticSizes[i] >= 0 ? std::to_string(k.staticSizes[i])
                                              : std::string("(-1)");
  v["max_kv_splits"] = std::to_string(split ? ::fa::maxKvSplits : 1);
  v["max_auto_kv_splits"] = std::to_string(::fa::maxAutoKvSplits);
  v["num_words"] = std::to_string(numWords);
  v["abi_version"] = std::to_string(k.abiVersion);
  v["index_bits"] = std::to_string(k.indexBits);
  v["block_m"] = std::to_string(k.blockM);
  v["block_n"] = std::to_string(k.blockN);
  v["threads"] = std::to_string(k.threads);
  v["dynamic_lds"] = std::to_string(k.dynamicLdsBytes);
  v["gqa_packed"] = k.gqaPacked ? "1" : "0";
  v["resident"] = std::to_string(::fa::residentPerComputeUnit(k));
  v["resident_from"] = residentSource(k);

  // The code object (PTX with the NUL the driver reads it up to) and the
  // manifest.
  bool ptx = manifest.codeObjectFormat == "ptx";
  std::string image = codeObject.str();
  if (ptx)
    image.push_back('\0');
  v["array_bytes"] = std::to_string(image.size());
  v["nul_note"] = ptx ? ", and the NUL that ends PTX text" : "";
  v["code_object_bytes"] = byteArrayText(image);
  v["manifest_text"] = stringInitializerText(manifestJson);

  // The C text of each part, for this kernel.
  v["split_constants"] =
      split ? expand(",\n  /* Workgroups one compute unit holds at a time "
                     "(${resident_from}). */\n"
                     "  FA_RESIDENT_PER_CU = ${resident},\n"
                     "  FA_MAX_AUTO_KV_SPLITS = ${max_auto_kv_splits},\n"
                     "  FA_COMBINE_BLOCK_M = " +
                         std::to_string(combine->blockM) +
                         ",\n  FA_COMBINE_THREADS = " +
                         std::to_string(combine->threads) +
                         ",\n  FA_COMBINE_DYNAMIC_LDS = " +
                         std::to_string(combine->dynamicLdsBytes),
                     v)
            : "";
  v["combine_grid_field"] = split ? "\n  unsigned combine_grid[3];" : "";
  v["combine_loaded"] = split ? " || !m->combine" : "";
  v["lse_index"] = k.hasLse
                       ? expand(" ||\n        fa_extent(B, Hq, 1, lq, st[12], "
                                "st[13], 0) > FA_INDEX_LIMIT_F32",
                                v)
                       : "";
  v["lse_overlap"] = k.hasLse ? expand(kLseOverlap, v) : "";
  v["index_check"] = k.indexBits == 32 ? expand(kIndexCheck, v) : "";
  v["lse_words"] = expand(k.hasLse ? kLseWords : kNoLseWords, v);
  v["clamp_sizes"] =
      k.indexBits == 32
          ? "\n  /* The size words are 32-bit arguments there too. */\n"
            "  for (i = 0; i < 5; ++i)\n"
            "    if (w[5 * i + 3] > INT32_MAX)\n"
            "      w[5 * i + 3] = INT32_MAX;"
          : "";
  v["workspace_index_check"] =
      split && k.indexBits == 32
          ? expand("\n    if (o_bytes / 4 > FA_INDEX_LIMIT_F32)\n"
                   "      return ${P}_ERROR_INDEX_OVERFLOW;",
                   v)
          : "";
  v["clamp_workspace"] = split && k.indexBits == 32
                             ? "\n      if (w[47] > INT32_MAX)\n"
                               "        w[47] = INT32_MAX;\n"
                               "      if (w[52] > INT32_MAX)\n"
                               "        w[52] = INT32_MAX;"
                             : "";
  v["split_functions"] = split ? expand(kSplitFunctions, v) : "";
  v["kv_splits_body"] =
      split ? expand("fa_auto_kv_splits(m->compute_units, B, Hq, Hkv, Lq, "
                     "Lk)",
                     v)
            : "1";
  v["workspace_size_body"] =
      expand(split ? kSplitWorkspaceSize : kDenseWorkspaceSize, v);
  v["splits_and_grid"] = expand(split ? kSplitTail : kDenseTail, v);

  // The vendor's part.
  if (hip) {
    std::vector<unsigned> offsets, sizes;
    unsigned bytes = kernargLayout(numWords, k.indexBits, offsets, sizes);
    v["kernarg_layout"] =
        expand("\n/* The kernarg segment: each word's offset and size (the "
               "code object's\n * .args; with 32-bit index arithmetic a "
               "descriptor's offset, size and\n * stride are 4 bytes). */\n"
               "enum { FA_KERNARG_BYTES = " +
                   std::to_string(bytes) +
                   " };\nstatic const unsigned short "
                   "fa_kernarg_offset[FA_NUM_WORDS] = {\n" +
                   joinNumbers(offsets) +
                   "};\nstatic const unsigned char "
                   "fa_kernarg_size[FA_NUM_WORDS] = {\n" +
                   joinNumbers(sizes) + "};\n",
               v);
  } else {
    v["kernarg_layout"] = "";
  }
  v["get_combine_hip"] =
      split ? expand(" ||\n      (rc = (int)hipModuleGetFunction(&m->combine, "
                     "m->module,\n                                      "
                     "\"${combine_symbol}\")) != 0",
                     v)
            : "";
  auto setShared = [&](const char *function, int64_t bytes) -> std::string {
    if (bytes <= 0)
      return "";
    return std::string(" ||\n      (rc = (int)cuFuncSetAttribute(\n"
                       "           m->") +
           function +
           ", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,\n"
           "           " +
           std::to_string(bytes) + ")) != 0";
  };
  v["set_dynamic_shared"] = setShared("kernel", k.dynamicLdsBytes);
  v["get_combine_cuda"] =
      split ? expand(" ||\n      (rc = (int)cuModuleGetFunction(&m->combine, "
                     "m->module,\n                                     "
                     "\"${combine_symbol}\")) != 0",
                     v) +
                  setShared("combine", combine->dynamicLdsBytes)
            : "";
  v["launch_combine_hip"] =
      split ? expand("\n    if (rc == 0 && plan.words[54] > 1)\n"
                     "      rc = (int)hipModuleLaunchKernel(\n"
                     "          m->combine, plan.combine_grid[0], "
                     "plan.combine_grid[1],\n"
                     "          plan.combine_grid[2], FA_COMBINE_THREADS, "
                     "1, 1,\n"
                     "          FA_COMBINE_DYNAMIC_LDS, stream, NULL, "
                     "extra);",
                     v)
            : "";
  v["launch_combine_cuda"] =
      split ? expand("\n    if (rc == 0 && plan.words[54] > 1)\n"
                     "      rc = (int)cuLaunchKernel(\n"
                     "          m->combine, plan.combine_grid[0], "
                     "plan.combine_grid[1],\n"
                     "          plan.combine_grid[2], FA_COMBINE_THREADS, "
                     "1, 1,\n"
                     "          FA_COMBINE_DYNAMIC_LDS, stream, params, "
                     "NULL);",
                     v)
            : "";
  v["load_body"] = expand(vendor->load, v);
  v["unload_body"] = vendor->unload;
  v["launch_body"] = expand(vendor->launch, v);

  v["address"] = vendor->address;
  v["banner"] = commentBlock(
      {expand("${header}: the ahead-of-time launcher of fa kernel "
              "'${kernel}'.",
              v),
       expand("Generated by ${compiler} (fac --emit=launcher) from a "
              "${target} code object (${format}, ${bytes} bytes, ${hash}); "
              "do not edit, regenerate it. The kernel: ${summary}.",
              v),
       expand("It needs the ${vendor} driver API only (${vendor_header}, "
              "${library}), not fa's runtime: load once, then launch on any "
              "stream of the device as often as needed; a launch allocates "
              "nothing and does not synchronise. Functions return 0, a "
              "negative ${P}_ERROR_* code of the checks below (nothing was "
              "launched), or the failing call's ${error_type} (positive). "
              "docs/aot-launcher.md of the fa project describes it.",
              v)});
  v["source_banner"] = commentBlock(
      {expand("The ahead-of-time launcher of fa kernel '${kernel}' "
              "(${header}). Generated by ${compiler} (fac --emit=launcher); "
              "do not edit.",
              v),
       "The checks, argument words, split count and grids are the "
       "runtime's (fa's runtime/lib/core/Kernel.cpp and SplitKv.cpp, the "
       "kernel ABI of fa/KernelAbi.h), written for this one kernel."});

  LauncherFiles files;
  files.header = expand(kHeader, v);
  files.source = expand(kSourceTop, v);
  return files;
}
