//===- HostBackend.cpp - The host device: emulator and dlopen loader ------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the host device. Memory is ordinary aligned host
// memory. A host code object is an ELF shared object for this machine: its
// header is checked first (magic, class, machine, tables within the file) so
// a damaged file gets a precise message, then the verified bytes are loaded
// with dlopen from a private temporary copy, so what runs is exactly what was
// hashed. Each kernel's
// `<name>_host` symbol (the manifest's `symbol`) is resolved at load time.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "fa/HostEmulator.h"

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
                const LaunchOptions &options) override {
    HostLaunch l;
    l.entry = entries[index];
    l.args = words;
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
  }

  const std::string &name() const override { return name_; }
  const std::vector<std::string> &targets() const override { return targets_; }
  const DeviceLimits &limits() const override { return limits_; }
  bool isHostEmulator() const override { return true; }

  Expected<uint64_t> allocate(size_t bytes) override {
    // Rounding up to 256 must not wrap around to a tiny block.
    if (bytes > SIZE_MAX - 255)
      return Status::error(ErrorCode::OutOfMemory,
                           "cannot allocate " + std::to_string(bytes) +
                               " bytes of host memory (more than the address "
                               "space holds)");
    size_t rounded = (bytes + 255) / 256 * 256;
    void *p = std::aligned_alloc(256, rounded);
    if (!p)
      return Status::error(ErrorCode::OutOfMemory, "cannot allocate " +
                                                       std::to_string(bytes) +
                                                       " bytes of host memory");
    std::memset(p, 0, rounded);
    return uint64_t(reinterpret_cast<uintptr_t>(p));
  }
  void release(uint64_t addr) override {
    std::free(reinterpret_cast<void *>(uintptr_t(addr)));
  }
  Status copyToDevice(uint64_t dst, const void *src, size_t bytes) override {
    std::memcpy(reinterpret_cast<void *>(uintptr_t(dst)), src, bytes);
    return Status::success();
  }
  Status copyToHost(void *dst, uint64_t src, size_t bytes) override {
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
  // The loop below reads whole Elf64_Phdr entries at e_phentsize strides.
  if (h.e_phnum && h.e_phentsize != sizeof(Elf64_Phdr))
    return corrupt("code object has program header entries of " +
                   std::to_string(h.e_phentsize) + " bytes, expected " +
                   std::to_string(sizeof(Elf64_Phdr)) + " (e_phentsize)");
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
    std::memcpy(&ph, b.data() + h.e_phoff + uint64_t(i) * h.e_phentsize,
                sizeof(ph));
    if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > b.size())
      return corrupt(
          "code object is truncated: segment " + std::to_string(i) +
          " ends at byte " + std::to_string(ph.p_offset + ph.p_filesz) +
          " but the file has " + std::to_string(b.size()) + " bytes");
  }
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
