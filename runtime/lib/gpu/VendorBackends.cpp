//===- VendorBackends.cpp - What the HIP and CUDA backends share ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements Vendor.h: opening a vendor runtime with dlopen, error
// statuses for failed vendor calls, and the GPU-independent decisions of the
// backends (kernel parameter packing, target matching, launch limits), kept
// here so they are tested on machines without a GPU.
//
// Vendor libraries stay loaded once opened: unloading a GPU runtime after
// initializing it is not reliably safe.
//
//===----------------------------------------------------------------------===//

#include "gpu/Vendor.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>

using namespace fa;
using namespace fa::detail;

std::vector<const char *>
fa::detail::vendorLibraryNames(const char *variable,
                               const std::vector<const char *> &defaults) {
  if (const char *path = std::getenv(variable); path && *path)
    return {path};
  return defaults;
}

Status fa::detail::noGpuError(const char *kind, const char *vendor) {
  return Status::error(ErrorCode::Unavailable,
                       std::string("device '") + kind + "' unavailable: the " +
                           kind + " runtime loaded but found no " + vendor +
                           " GPU")
      .withDevice(kind);
}

Status fa::detail::noSuchOrdinalError(const char *kind, const char *vendor,
                                      int ordinal, int count) {
  std::string spec = std::string(kind) + ":" + std::to_string(ordinal);
  return Status::error(ErrorCode::InvalidArgument,
                       "device '" + spec +
                           "' does not exist: " + std::to_string(count) + " " +
                           vendor + " GPU" + (count == 1 ? "" : "s") + " found")
      .withDevice(spec);
}

std::string fa::detail::hexPointer(const void *pointer) {
  char text[32];
  std::snprintf(text, sizeof(text), "%#llx",
                (unsigned long long)reinterpret_cast<uintptr_t>(pointer));
  return text;
}

size_t fa::detail::packKernelParams(const uint64_t *words, size_t numWords,
                                    void **params) {
  for (size_t i = 0; i < numWords; ++i)
    params[i] = const_cast<void *>(static_cast<const void *>(words + i));
  return numWords;
}

bool fa::detail::isDescriptorIndexWord(size_t i) {
  auto fieldOf = [&](size_t first, size_t buffers) {
    return i >= first && i < first + buffers * FA_ABI_WORDS_PER_BUFFER &&
           (i - first) % FA_ABI_WORDS_PER_BUFFER >= 2;
  };
  return fieldOf(FA_ABI_Q, FA_ABI_NUM_BUFFERS) ||
         fieldOf(FA_ABI_WS_O, 2) ||         // version 2's workspace O and LSE
         fieldOf(FA_ABI_BLOCK_TABLE, 2) ||  // version 3's table and lengths
         fieldOf(FA_ABI_CU_SEQLENS_Q, 2) || // version 4's cu_seqlens_q and _k
         // The head words (alibi_slopes and sinks) follow the version's
         // words: at 44, 55 and 67 they are where versions 2, 3 and 4 have
         // two descriptors too; after version 4's they are their own.
         fieldOf(FA_ABI_V4_NUM_WORDS, 2);
}

std::vector<uint8_t> fa::detail::packKernargSegment(const uint64_t *words,
                                                    size_t numWords,
                                                    int indexBits) {
  std::vector<uint8_t> out;
  auto put = [&](uint64_t value, size_t bytes) {
    size_t at = (out.size() + bytes - 1) / bytes * bytes; // natural alignment
    out.resize(at + bytes, 0);
    std::memcpy(out.data() + at, &value, bytes); // little-endian target
  };
  // A trace kernel (ABI version 1 and the trace words, 52: no version has
  // that many) has its trace descriptor where version 2's workspace O
  // would be, and its traced batch, head and row (8 bytes each) after it.
  const size_t traceAt = numWords == FA_ABI_V1_NUM_WORDS + FA_ABI_TRACE_WORDS
                             ? size_t(FA_ABI_V1_NUM_WORDS)
                             : numWords;
  for (size_t i = 0; i < numWords; ++i) {
    const bool index = i < traceAt
                           ? isDescriptorIndexWord(i)
                           : i - traceAt < FA_ABI_WORDS_PER_BUFFER &&
                                 (i - traceAt) % FA_ABI_WORDS_PER_BUFFER >= 2;
    put(words[i], indexBits == 32 && index ? 4 : 8);
  }
  return out;
}

bool fa::detail::parseSmTarget(std::string_view target, int &cc,
                               bool &archSpecific) {
  if (target.substr(0, 3) != "sm_")
    return false;
  std::string_view rest = target.substr(3);
  archSpecific = !rest.empty() && rest.back() == 'a';
  if (archSpecific)
    rest.remove_suffix(1);
  if (rest.size() < 2 || rest.size() > 3)
    return false;
  cc = 0;
  for (char c : rest) {
    if (c < '0' || c > '9')
      return false;
    cc = cc * 10 + (c - '0');
  }
  return true;
}

static std::string capability(int cc) {
  return std::to_string(cc / 10) + "." + std::to_string(cc % 10);
}

std::string fa::detail::cudaTargetProblem(std::string_view target,
                                          std::string_view format, int major,
                                          int minor) {
  int code;
  bool archSpecific;
  std::string t(target);
  if (!parseSmTarget(target, code, archSpecific))
    return "a CUDA device runs targets spelled sm_XY, not '" + t + "'";
  int device = major * 10 + minor;
  std::string have = "this device has compute capability " +
                     std::to_string(major) + "." + std::to_string(minor);
  if (format == "cubin" || archSpecific) {
    if (code == device)
      return "";
    return std::string(format == "cubin" ? "a cubin" : "arch-specific code") +
           " for " + t + " runs only on compute capability " +
           capability(code) + "; " + have;
  }
  if (code <= device)
    return ""; // the driver JIT-compiles PTX for newer devices
  return "PTX for " + t + " needs compute capability " + capability(code) +
         " or newer; " + have;
}

std::string fa::detail::gcnArchBase(std::string_view arch) {
  return std::string(arch.substr(0, arch.find(':')));
}

/// The ":feature+" / ":feature-" settings after the processor name.
static std::vector<std::string> gcnFeatures(std::string_view arch) {
  std::vector<std::string> out;
  size_t at = arch.find(':');
  while (at != std::string_view::npos) {
    size_t next = arch.find(':', at + 1);
    out.emplace_back(arch.substr(at + 1, next == std::string_view::npos
                                             ? std::string_view::npos
                                             : next - at - 1));
    at = next;
  }
  return out;
}

std::string fa::detail::hipTargetProblem(std::string_view codeTarget,
                                         std::string_view deviceArch) {
  std::string code = gcnArchBase(codeTarget), device = gcnArchBase(deviceArch);
  if (code != device)
    return "code for " + code + " does not run on " + device +
           " (the device's gcnArchName is '" + std::string(deviceArch) + "')";
  for (const std::string &want : gcnFeatures(codeTarget)) {
    if (want.empty())
      continue;
    std::string feature = want.substr(0, want.size() - 1);
    for (const std::string &have : gcnFeatures(deviceArch))
      if (have.size() == want.size() &&
          have.compare(0, feature.size(), feature) == 0 &&
          have.back() != want.back())
        return "the code object was built with " + want +
               " but the device runs " + have + " (gcnArchName '" +
               std::string(deviceArch) + "')";
  }
  return "";
}

std::string fa::detail::findGcnArchName(const void *props, size_t bytes) {
  const auto *p = static_cast<const char *>(props);
  auto isHex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  };
  std::string first;
  for (size_t i = 0; i + 4 < bytes; ++i) {
    if (std::memcmp(p + i, "gfx", 3) != 0 || !isHex(p[i + 3]))
      continue;
    size_t end = i;
    while (end < bytes && p[end] != 0)
      ++end;
    if (end == bytes || end - i > 255)
      continue; // not NUL-terminated within a char[256]: not the field
    std::string found(p + i, end - i);
    // Prefer the full name with target features ("gfx906:sramecc+:xnack-")
    // over a bare processor name another field may hold.
    if (found.find(':') != std::string::npos)
      return found;
    if (first.empty())
      first = std::move(found);
    i = end;
  }
  return first;
}

Status fa::detail::checkKernelFits(const KernelInfo &k,
                                   const std::string &device,
                                   uint64_t staticLds, uint64_t maxThreads,
                                   uint64_t maxLdsBytes,
                                   const std::string &threadsWhy,
                                   const std::string &ldsWhy) {
  auto fail = [&](const std::string &message) {
    return Status::error(ErrorCode::Unsupported, message)
        .withKernel(k.name)
        .withDevice(device);
  };
  if (uint64_t(k.threads) > maxThreads)
    return fail("kernel '" + k.name + "' needs " + std::to_string(k.threads) +
                " threads per workgroup, device '" + device + "' allows " +
                std::to_string(maxThreads) +
                (threadsWhy.empty() ? "" : " (" + threadsWhy + ")"));
  uint64_t dynamic = uint64_t(k.dynamicLdsBytes);
  uint64_t total = staticLds + dynamic;
  if (total > maxLdsBytes)
    return fail("kernel '" + k.name + "' needs " + std::to_string(total) +
                " bytes of LDS (" + std::to_string(staticLds) + " static + " +
                std::to_string(dynamic) + " dynamic), device '" + device +
                "' allows " + std::to_string(maxLdsBytes) +
                (ldsWhy.empty() ? "" : " (" + ldsWhy + ")"));
  return Status::success();
}

Status fa::detail::checkGpuElf(const std::vector<uint8_t> &b, uint16_t machine,
                               const char *machineName) {
  if (b.size() < sizeof(Elf64_Ehdr) ||
      std::memcmp(b.data(), ELFMAG, SELFMAG) != 0)
    return Status::error(ErrorCode::CorruptCodeObject,
                         std::string("code object is not an ELF file (a ") +
                             machineName + " code object is one)");
  Elf64_Ehdr h;
  std::memcpy(&h, b.data(), sizeof(h));
  if (h.e_machine != machine)
    return Status::error(
        ErrorCode::CorruptCodeObject,
        "code object is for ELF machine " + std::to_string(h.e_machine) +
            ", not " + machineName + " (" + std::to_string(machine) + ")");
  return Status::success();
}
