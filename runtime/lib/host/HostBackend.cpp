//===- HostBackend.cpp - The host device: emulator and dlopen loader ------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the host device. Each buffer is a mapping of its own
// between inaccessible pages (GuardedMemory.h), so that a kernel's access
// outside it faults and the emulator names it. A host code object is an ELF
// shared object for this machine: its header is checked first (magic, class,
// machine, tables within the file) so a damaged file gets a precise message,
// then the verified bytes are loaded with dlopen from a private temporary copy,
// so what runs is exactly what was hashed. Each kernel's
// `<name>_host` symbol (the manifest's `symbol`) is resolved at load time,
// with the `<name>_host_info` record next to it: the manifest is a sidecar
// anyone can edit, so every field of it that memory safety depends on (LDS
// size, threads, element type, head dimension, ...) must match the record
// the compiler put into the code object, or the load is refused.
//
//===----------------------------------------------------------------------===//

#include "core/Backend.h"
#include "fa/HostEmulator.h"
#include "host/GuardedMemory.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <mutex>
#include <unistd.h>

using namespace fa;
using namespace fa::detail;

namespace {

#if defined(__x86_64__)
constexpr uint16_t hostMachine = EM_X86_64;
constexpr const char *hostMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr uint16_t hostMachine = EM_AARCH64;
constexpr const char *hostMachineName = "aarch64";
#else
#error "the host emulator supports x86-64 and aarch64 hosts"
#endif

class HostCode : public LoadedCode {
public:
  HostCode(HostEmulator &emulator, void *handle,
           std::vector<fa_host_kernel_fn> entries,
           std::vector<KernelInfo> kernels)
      : emulator(emulator), handle(handle), entries(std::move(entries)),
        kernels(std::move(kernels)) {}
  ~HostCode() override { ::dlclose(handle); }

  Status launch(size_t index, const LaunchGeometry &g, const uint64_t *words,
                const LaunchOptions &options, LaunchStep,
                LaunchQueue) override {
    HostLaunch l;
    l.entry = entries[index];
    l.args = words;
    l.numWords = fa_kernel_abi_words(uint32_t(kernels[index].abiVersion),
                                     kernels[index].trace,
                                     kernels[index].hasHeadParams());
    l.kernelName = kernels[index].name;
    for (int i = 0; i < 3; ++i) {
      l.grid[i] = g.grid[i];
      l.block[i] = g.block[i];
    }
    l.waveSize = uint32_t(kernels[index].waveSize);
    l.ldsBytes = g.ldsBytes;
    return emulator.run(l, options);
  }

private:
  HostEmulator &emulator;
  void *handle;
  std::vector<fa_host_kernel_fn> entries;
  std::vector<KernelInfo> kernels;
};

class HostBackend : public Backend {
public:
  HostBackend() {
    limits_.maxThreadsPerWorkgroup = 1024;
    limits_.maxLdsBytes = 1 << 20;
    limits_.maxGrid[0] = 0x7fffffff;
    limits_.maxGrid[1] = 65535;
    limits_.maxGrid[2] = 65535;
    // The emulator has no compute units of its own; it claims an MI50's 60,
    // gfx906-sim's, so that the automatic K/V split count is the same on
    // both and a split-KV kernel is tested on the host as it runs there.
    limits_.computeUnits = 60;
  }

  const std::string &name() const override { return name_; }
  const std::vector<std::string> &targets() const override { return targets_; }
  const DeviceLimits &limits() const override { return limits_; }
  bool isHostEmulator() const override { return true; }

  Expected<uint64_t> allocate(size_t bytes) override {
    return GuardedMemory::get().allocate(bytes, 0);
  }
  Expected<uint64_t> allocateGuarded(size_t bytes, size_t guardBytes) override {
    return GuardedMemory::get().allocate(bytes, guardBytes);
  }
  void release(uint64_t addr) override { GuardedMemory::get().release(addr); }
  // A copy into or out of a guard zone waits for a running launch, which
  // has the zones protected. An empty copy may come with a null pointer
  // (an empty vector's data()), which memcpy must not be given.
  Status copyToDevice(uint64_t dst, const void *src, size_t bytes) override {
    if (bytes == 0)
      return Status::success();
    auto lock = GuardedMemory::get().lockForCopy(uintptr_t(dst), bytes);
    std::memcpy(reinterpret_cast<void *>(uintptr_t(dst)), src, bytes);
    return Status::success();
  }
  Status copyToHost(void *dst, uint64_t src, size_t bytes) override {
    if (bytes == 0)
      return Status::success();
    auto lock = GuardedMemory::get().lockForCopy(uintptr_t(src), bytes);
    std::memcpy(dst, reinterpret_cast<const void *>(uintptr_t(src)), bytes);
    return Status::success();
  }
  Status synchronize() override { return Status::success(); }

  Expected<std::unique_ptr<LoadedCode>>
  loadCode(const Manifest &manifest, const std::vector<uint8_t> &bytes,
           const std::string &displayName) override;

private:
  std::string name_ = "host";
  std::vector<std::string> targets_ = {"host"};
  DeviceLimits limits_;
  HostEmulator emulator;
};

} // namespace

static Status corrupt(const std::string &message) {
  return Status::error(ErrorCode::CorruptCodeObject, message);
}

/// Checks that `b` is a complete ELF shared object for this machine.
static Status checkElf(const std::vector<uint8_t> &b) {
  if (b.size() < 4 || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0) {
    std::string head;
    for (size_t i = 0; i < std::min<size_t>(4, b.size()); ++i) {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%02x", b[i]);
      head += (i ? " " : "") + std::string(hex);
    }
    return corrupt("code object is not an ELF file (starts with bytes '" +
                   head + "', expected '7f 45 4c 46')");
  }
  if (b.size() < sizeof(Elf64_Ehdr))
    return corrupt("code object is truncated: " + std::to_string(b.size()) +
                   " bytes, shorter than an ELF header (" +
                   std::to_string(sizeof(Elf64_Ehdr)) + ")");
  Elf64_Ehdr h;
  std::memcpy(&h, b.data(), sizeof(h));
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB)
    return corrupt("code object is not a 64-bit little-endian ELF file");
  if (h.e_type != ET_DYN)
    return corrupt("code object is an ELF file of type " +
                   std::to_string(h.e_type) +
                   ", not a shared object (ET_DYN = 3)");
  if (h.e_machine != hostMachine)
    return corrupt("code object is for ELF machine " +
                   std::to_string(h.e_machine) + ", this host is " +
                   hostMachineName + " (" + std::to_string(hostMachine) + ")");
  // The tables are read as arrays of Elf64_Phdr / Elf64_Shdr: an entry size
  // other than theirs would read past each entry (or past the table).
  auto entrySize = [&](const char *table, uint64_t n, uint64_t entry,
                       uint64_t expected) -> Status {
    if (n && entry != expected)
      return corrupt("code object's " + std::string(table) + " entries are " +
                     std::to_string(entry) + " bytes, ELF64 " + table +
                     " entries are " + std::to_string(expected));
    return Status::success();
  };
  if (Status s = entrySize("program header", h.e_phnum, h.e_phentsize,
                           sizeof(Elf64_Phdr));
      !s.ok())
    return s;
  if (Status s = entrySize("section header", h.e_shnum, h.e_shentsize,
                           sizeof(Elf64_Shdr));
      !s.ok())
    return s;
  auto within = [&](const char *table, uint64_t off, uint64_t n,
                    uint64_t entry) -> Status {
    uint64_t end = off + n * entry;
    if (n && (end < off || end > b.size()))
      return corrupt("code object is truncated: its " + std::string(table) +
                     " ends at byte " + std::to_string(end) +
                     " but the file has " + std::to_string(b.size()) +
                     " bytes");
    return Status::success();
  };
  if (Status s =
          within("program header table", h.e_phoff, h.e_phnum, h.e_phentsize);
      !s.ok())
    return s;
  if (Status s =
          within("section header table", h.e_shoff, h.e_shnum, h.e_shentsize);
      !s.ok())
    return s;
  // Every loadable segment's file bytes must be present.
  for (uint16_t i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, b.data() + h.e_phoff + uint64_t(i) * sizeof(ph),
                sizeof(ph));
    uint64_t end = ph.p_offset + ph.p_filesz;
    if (ph.p_type == PT_LOAD && (end < ph.p_offset || end > b.size()))
      return corrupt("code object is truncated: segment " + std::to_string(i) +
                     " ends at byte " + std::to_string(end) +
                     " but the file has " + std::to_string(b.size()) +
                     " bytes");
  }
  return Status::success();
}

static const char *hostDTypeName(uint32_t dtype) {
  switch (dtype) {
  case FA_HOST_DTYPE_F32:
    return "f32";
  case FA_HOST_DTYPE_F16:
    return "f16";
  case FA_HOST_DTYPE_BF16:
    return "bf16";
  }
  return nullptr;
}

Status fa::detail::checkHostInfo(const KernelInfo &k,
                                 const fa_host_info &info) {
  auto abi = [&](const std::string &what, uint64_t code,
                 const std::string &runtime) {
    return Status::error(ErrorCode::Unsupported,
                         "kernel '" + k.name + "': the code object's " + what +
                             " is " + std::to_string(code) + ", " + runtime +
                             " (compiled for another kernel ABI; rebuild it "
                             "with this fac)");
  };
  auto ours = [](uint64_t value) {
    return "this runtime's is " + std::to_string(value);
  };
  // The ABI first: the rest of the record means nothing without it.
  const uint32_t words = fa_abi_num_words(info.abi_version);
  if (words == 0)
    return abi("kernel ABI version", info.abi_version,
               "this runtime implements versions 1 to " +
                   std::to_string(FA_ABI_VERSION));
  if (info.info_bytes != sizeof(fa_host_info))
    return abi("fa_host_info size", info.info_bytes,
               ours(sizeof(fa_host_info)));
  // A trace kernel (KernelAbi.h, "Trace") takes the trace words too, a
  // kernel with alibi or sinks the head words ("Head parameters").
  const uint32_t traced = fa_kernel_abi_words(info.abi_version, 1, 0);
  const uint32_t headed = fa_kernel_abi_words(info.abi_version, 0, 1);
  if (info.num_words != words && (traced == 0 || info.num_words != traced) &&
      info.num_words != headed)
    return abi("ABI word count", info.num_words,
               "ABI version " + std::to_string(info.abi_version) + " has " +
                   std::to_string(words));
  if (info.env_bytes != sizeof(fa_host_env))
    return abi("fa_host_env size", info.env_bytes, ours(sizeof(fa_host_env)));

  auto mismatch = [&](const std::string &field, const std::string &manifest,
                      const std::string &code) {
    return Status::error(ErrorCode::ManifestError,
                         "kernel '" + k.name + "': the manifest says " + field +
                             " " + manifest + ", the code object says " + code +
                             " (the manifest does not describe this code "
                             "object)");
  };
  auto number = [&](const char *field, int64_t manifest,
                    int64_t code) -> Status {
    if (manifest != code)
      return mismatch(field, std::to_string(manifest), std::to_string(code));
    return Status::success();
  };
  const char *dtype = hostDTypeName(info.dtype);
  if (!dtype)
    return Status::error(ErrorCode::CorruptCodeObject,
                         "kernel '" + k.name +
                             "': the code object's fa_host_info has unknown "
                             "element type " +
                             std::to_string(info.dtype));
  if (dtypeName(k.dtype) != std::string(dtype))
    return mismatch("dtype", dtypeName(k.dtype), dtype);
  if (k.trace != (traced != 0 && info.num_words == traced))
    return mismatch("trace", k.trace ? "true" : "false",
                    std::to_string(info.num_words) + " argument words (" +
                        (k.trace ? "no trace" : "a trace") + ")");
  if (k.hasHeadParams() != (info.num_words == headed))
    return mismatch(
        "alibi " + std::string(k.alibi ? "true" : "false") + " and sinks",
        k.sinks ? "true" : "false",
        std::to_string(info.num_words) + " argument words (" +
            (k.hasHeadParams() ? "no head parameters" : "head parameters") +
            ")");
  const std::pair<const char *, std::pair<int64_t, int64_t>> fields[] = {
      {"abi_version", {k.abiVersion, info.abi_version}},
      {"lds_bytes", {k.ldsBytes, int64_t(info.lds_bytes)}},
      {"threads", {k.threads, info.threads}},
      {"wave_size", {k.waveSize, info.wave_size}},
      {"head_dim", {k.headDim, info.head_dim}},
      {"block_m", {k.blockM, info.block_m}},
      {"block_n", {k.blockN, info.block_n}},
      {"index_bits", {k.indexBits, info.index_bits}},
  };
  for (const auto &[field, values] : fields)
    if (Status s = number(field, values.first, values.second); !s.ok())
      return s;
  if (k.hasLse != (info.has_lse != 0))
    return mismatch("has_lse", k.hasLse ? "true" : "false",
                    info.has_lse ? "true" : "false");
  auto sizes = [](const int64_t *s) {
    std::string text = "[";
    for (int i = 0; i < 5; ++i)
      text += (i ? ", " : "") + std::to_string(s[i]);
    return text + "]";
  };
  for (int i = 0; i < 5; ++i)
    if (k.staticSizes[i] != info.static_sizes[i])
      return mismatch("static_sizes", sizes(k.staticSizes),
                      sizes(info.static_sizes));
  if (k.dynamicLdsBytes != 0)
    return number("dynamic_lds_bytes", k.dynamicLdsBytes, 0);
  return Status::success();
}

/// Writes `bytes` to a temporary file with a name never used before in this
/// process, and returns its path. glibc's dlopen returns an already loaded
/// object when the path string matches, so names must not repeat (which
/// rules out reusing /proc/self/fd/N of a memfd).
static Status writeLoadableCopy(const std::vector<uint8_t> &bytes,
                                std::string &path) {
  static std::atomic<uint64_t> counter{0};
  const char *tmp = std::getenv("TMPDIR");
  std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/fa-code-" +
                     std::to_string(::getpid()) + "-" +
                     std::to_string(counter++) + "-XXXXXX";
  std::vector<char> buf(name.begin(), name.end());
  buf.push_back(0);
  int fd = ::mkstemp(buf.data());
  if (fd < 0) {
    int err = errno;
    return Status::error(ErrorCode::IoError,
                         "cannot create a temporary copy of the code object "
                         "in '" +
                             name.substr(0, name.rfind('/')) +
                             "': " + std::strerror(err))
        .withCall("mkstemp", std::strerror(err));
  }
  path = buf.data();
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(path.c_str());
      return Status::error(ErrorCode::IoError,
                           "cannot write the temporary copy of the code "
                           "object: " +
                               std::string(std::strerror(err)))
          .withCall("write", std::strerror(err));
    }
    done += size_t(n);
  }
  ::close(fd);
  return Status::success();
}

Expected<std::unique_ptr<LoadedCode>>
HostBackend::loadCode(const Manifest &manifest,
                      const std::vector<uint8_t> &bytes,
                      const std::string &displayName) {
  if (manifest.codeObjectFormat != "elf-shared-object")
    return Status::error(ErrorCode::Unsupported,
                         "the host device loads 'elf-shared-object' code "
                         "objects, the manifest says '" +
                             manifest.codeObjectFormat + "'");
  for (const KernelInfo &k : manifest.kernels) {
    int64_t w = k.waveSize;
    if (w > 64 || (w & (w - 1)) != 0)
      return Status::error(ErrorCode::Unsupported,
                           "kernel '" + k.name + "' has wave size " +
                               std::to_string(w) +
                               "; the host emulator runs powers of two up "
                               "to 64")
          .withKernel(k.name);
  }
  if (Status s = checkElf(bytes); !s.ok())
    return s;
#if defined(__x86_64__)
  // fac compiles host code objects for x86-64-v3 (Codegen.cpp): the
  // emulator's f16 conversions are then single instructions (F16C), not
  // library calls.
  if (!__builtin_cpu_supports("x86-64-v3"))
    return Status::error(ErrorCode::Unsupported,
                         "host code objects are compiled for x86-64-v3 "
                         "(AVX2, FMA, F16C, BMI2: Haswell, Excavator or "
                         "later) and this CPU lacks one of them");
#endif

  std::string path;
  if (Status s = writeLoadableCopy(bytes, path); !s.ok())
    return s;
  ::dlerror();
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string dlopenError = handle ? "" : ::dlerror();
  ::unlink(path.c_str()); // the mapping stays valid
  if (!handle) {
    // Name the user's file, not our anonymous copy.
    size_t at = dlopenError.find(path);
    if (at != std::string::npos)
      dlopenError.replace(at, path.size(), displayName);
    return Status::error(ErrorCode::LoadFailed,
                         "cannot load code object: " + dlopenError)
        .withCall("dlopen", "")
        .withLog("dlopen: " + dlopenError);
  }

  std::vector<fa_host_kernel_fn> entries;
  for (const KernelInfo &k : manifest.kernels) {
    ::dlerror();
    void *sym = ::dlsym(handle, k.symbol.c_str());
    if (!sym) {
      const char *err = ::dlerror();
      std::string why = err ? err : "symbol is null";
      ::dlclose(handle);
      return Status::error(ErrorCode::NotFound,
                           "kernel '" + k.name + "': symbol '" + k.symbol +
                               "' not found in the code object")
          .withCall("dlsym", "")
          .withKernel(k.name)
          .withLog("dlsym: " + why);
    }
    // What the code was compiled with, checked before it can run.
    std::string infoSymbol = k.symbol + FA_HOST_INFO_SUFFIX;
    ::dlerror();
    const auto *info =
        static_cast<const fa_host_info *>(::dlsym(handle, infoSymbol.c_str()));
    if (!info) {
      const char *err = ::dlerror();
      std::string why = err ? err : "symbol is null";
      ::dlclose(handle);
      return Status::error(ErrorCode::CorruptCodeObject,
                           "code object has no fa_host_info for kernel '" +
                               k.name + "' (symbol '" + infoSymbol +
                               "'); rebuild it with this fac")
          .withCall("dlsym", "")
          .withKernel(k.name)
          .withLog("dlsym: " + why);
    }
    if (Status s = checkHostInfo(k, *info); !s.ok()) {
      ::dlclose(handle);
      return std::move(s).withKernel(k.name);
    }
    entries.push_back(reinterpret_cast<fa_host_kernel_fn>(sym));
  }
  return std::unique_ptr<LoadedCode>(std::make_unique<HostCode>(
      emulator, handle, std::move(entries), manifest.kernels));
}

Expected<std::shared_ptr<Backend>> fa::detail::openHostBackend() {
  // One emulator (and worker pool) per process: every host Device handle
  // shares it, so opening "host" repeatedly starts no new threads.
  static std::weak_ptr<Backend> shared;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (std::shared_ptr<Backend> existing = shared.lock())
    return existing;
  auto backend = std::make_shared<HostBackend>();
  shared = backend;
  return std::shared_ptr<Backend>(backend);
}
