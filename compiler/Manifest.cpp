//===- Manifest.cpp - The code object's sidecar manifest ------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/Manifest.h"

#include "fa/KernelAbi.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

#ifndef FA_VERSION_STRING
#define FA_VERSION_STRING "0.0.0"
#endif

std::string fa::fnv1a64(llvm::StringRef bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  std::string out;
  llvm::raw_string_ostream(out)
      << "fnv1a64:" << llvm::format_hex_no_prefix(h, 16);
  return out;
}

std::string fa::renderResourcesJson(int64_t vgprs, int64_t sgprs,
                                    int64_t vgprSpills, int64_t sgprSpills,
                                    int64_t scratchBytes,
                                    int64_t wavesPerSimd) {
  std::string out;
  llvm::raw_string_ostream(out)
      << "{\"vgprs\": " << vgprs << ", \"sgprs\": " << sgprs
      << ", \"vgpr_spills\": " << vgprSpills
      << ", \"sgpr_spills\": " << sgprSpills
      << ", \"scratch_bytes\": " << scratchBytes
      << ", \"waves_per_simd_estimate\": " << wavesPerSimd << "}";
  return out;
}

std::string fa::renderManifest(llvm::StringRef target,
                               llvm::StringRef codeObjectFile,
                               llvm::StringRef format,
                               llvm::StringRef codeObjectBytes,
                               llvm::StringRef sourceText,
                               const std::vector<KernelInfo> &kernels,
                               llvm::StringRef symbolSuffix) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "{\n";
  os << "  \"fa_manifest_version\": 1,\n";
  os << "  \"compiler\": \"fac " << FA_VERSION_STRING << "\",\n";
  os << "  \"source_hash\": \"" << fnv1a64(sourceText) << "\",\n";
  os << "  \"target\": \"" << target << "\",\n";
  os << "  \"code_object\": {\n";
  os << "    \"file\": \"" << codeObjectFile << "\",\n";
  os << "    \"format\": \"" << format << "\",\n";
  os << "    \"bytes\": " << codeObjectBytes.size() << ",\n";
  os << "    \"hash\": \"" << fnv1a64(codeObjectBytes) << "\"\n";
  os << "  },\n";
  os << "  \"kernels\": [";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelInfo &k = kernels[i];
    os << (i ? ",\n" : "\n") << "    {\n";
    os << "      \"name\": \"" << k.name << "\",\n";
    os << "      \"symbol\": \"" << k.name << symbolSuffix << "\",\n";
    os << "      \"abi_version\": " << FA_ABI_VERSION << ",\n";
    os << "      \"dtype\": \"" << k.dtype << "\",\n";
    os << "      \"head_dim\": " << k.headDim << ",\n";
    os << "      \"causal\": " << (k.causal ? "true" : "false") << ",\n";
    os << "      \"scale\": " << llvm::format("%.9g", k.scale) << ",\n";
    os << "      \"has_lse\": " << (k.hasLse ? "true" : "false") << ",\n";
    os << "      \"block_m\": " << k.blockM << ",\n";
    os << "      \"block_n\": " << k.blockN << ",\n";
    os << "      \"threads\": " << k.threads << ",\n";
    os << "      \"wave_size\": " << k.waveSize << ",\n";
    os << "      \"lds_bytes\": " << k.ldsBytes << ",\n";
    os << "      \"dynamic_lds_bytes\": " << k.dynamicLdsBytes << ",\n";
    os << "      \"index_bits\": " << k.indexBits << ",\n";
    os << "      \"lds_pad\": " << k.ldsPad << ",\n";
    os << "      \"stages\": " << k.stages << ",\n";
    os << "      \"static_sizes\": {";
    const char *names[] = {"B", "Hq", "Hkv", "Lq", "Lk"};
    for (size_t d = 0; d < k.staticSizes.size(); ++d)
      os << (d ? ", " : "") << "\"" << names[d] << "\": " << k.staticSizes[d];
    os << "}";
    if (!k.resourcesJson.empty())
      os << ",\n      \"resources\": " << k.resourcesJson;
    os << "\n";
    os << "    }";
  }
  os << "\n  ]\n}\n";
  return out;
}
