//===- CodeObject.cpp - An hsaco as the simulator loads it ----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file reads an AMDGPU code object for the simulator: the PT_LOAD
// segments are copied to one image at their virtual addresses (what the
// ROCm loader does with the file, minus relocation: fa's kernels and the
// device reference have none that code reads), the symbol table is searched
// for `<kernel>.kd` objects, and each descriptor's 64 bytes are decoded.
// Nothing read from the file is trusted before it is bounds-checked.
//
//===----------------------------------------------------------------------===//

#include "sim/CodeObject.h"

#include <cstring>
#include <elf.h>

using namespace fa;
using namespace fa::sim;

/// Code objects are small; a segment claiming more is damage, and refusing it
/// keeps a corrupt memsz from allocating gigabytes.
static constexpr uint64_t kMaxImageBytes = 64ull << 20;

static Status corrupt(const std::string &message) {
  return Status::error(ErrorCode::CorruptCodeObject, "code object: " + message);
}

/// `count` entries of `entrySize` bytes at `offset` lie inside `size`.
static bool tableFits(uint64_t offset, uint64_t count, uint64_t entrySize,
                      uint64_t size) {
  if (offset > size || entrySize == 0)
    return count == 0 && offset <= size;
  return count <= (size - offset) / entrySize;
}

template <typename T>
static T readAt(const std::vector<uint8_t> &b, size_t at) {
  T value;
  std::memcpy(&value, b.data() + at, sizeof(T));
  return value;
}

unsigned KernelDescriptor::enabledUserSgprs() const {
  return 4 * privateSegmentBuffer() + 2 * dispatchPtr() + 2 * queuePtr() +
         2 * kernargSegmentPtr() + 2 * dispatchId() + 2 * flatScratchInit() +
         privateSegmentSize();
}

const CodeObjectKernel *CodeObject::find(const std::string &name) const {
  for (const CodeObjectKernel &k : kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

Status fa::sim::checkDescriptor(const std::string &kernel,
                                const KernelDescriptor &kd) {
  auto unsupported = [&](const std::string &why) {
    return Status::error(ErrorCode::Unsupported,
                         "kernel '" + kernel + "': " + why +
                             " (the gfx906 simulator runs wave64 code as "
                             "gfx906 executes it)")
        .withKernel(kernel);
  };
  if (kd.wave32())
    return unsupported("its descriptor asks for wave32");
  if (kd.usesDynamicStack())
    return unsupported("it uses a dynamic stack");
  // The hardware loads USER_SGPR_COUNT user SGPRs; the enable bits say what
  // they hold. A count below the enabled set would leave the kernel reading
  // the wrong registers.
  if (kd.userSgprCount() < kd.enabledUserSgprs())
    return Status::error(ErrorCode::CorruptCodeObject,
                         "kernel '" + kernel + "': USER_SGPR_COUNT is " +
                             std::to_string(kd.userSgprCount()) +
                             " but the enabled user SGPRs need " +
                             std::to_string(kd.enabledUserSgprs()))
        .withKernel(kernel);
  if (kd.floatRoundMode32() != 0 || kd.floatRoundMode1664() != 0)
    return unsupported("it asks for a rounding mode other than round to "
                       "nearest even");
  // Sizes the hardware cannot honour are refused before anything is
  // allocated for them: gfx9's scratch wave size (COMPUTE_TMPRING_SIZE.
  // WAVESIZE) is 13 bits of 1 KiB, so a lane has at most 8191 * 1024 / 64
  // bytes of private segment.
  constexpr uint32_t kMaxPrivatePerLane = 8191 * 1024 / 64;
  if (kd.privateSegmentFixedSize > kMaxPrivatePerLane)
    return Status::error(ErrorCode::CorruptCodeObject,
                         "kernel '" + kernel + "': private segment of " +
                             std::to_string(kd.privateSegmentFixedSize) +
                             " bytes per work-item, gfx906 has at most " +
                             std::to_string(kMaxPrivatePerLane))
        .withKernel(kernel);
  // The kernarg segment is copied for each launch; HIP passes a few KiB.
  constexpr uint32_t kMaxKernargBytes = 65536;
  if (kd.kernargSize > kMaxKernargBytes)
    return Status::error(ErrorCode::CorruptCodeObject,
                         "kernel '" + kernel + "': kernarg segment of " +
                             std::to_string(kd.kernargSize) +
                             " bytes, the simulator takes at most " +
                             std::to_string(kMaxKernargBytes))
        .withKernel(kernel);
  return Status::success();
}

Expected<CodeObject> fa::sim::readCodeObject(const std::vector<uint8_t> &b) {
  if (b.size() < sizeof(Elf64_Ehdr) || std::memcmp(b.data(), ELFMAG, SELFMAG))
    return corrupt("not an ELF file");
  auto h = readAt<Elf64_Ehdr>(b, 0);
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB)
    return corrupt("not a little-endian 64-bit ELF file");
  if (h.e_machine != /*EM_AMDGPU=*/224)
    return corrupt("ELF machine " + std::to_string(h.e_machine) +
                   " is not AMDGPU (224)");
  if (h.e_phentsize != sizeof(Elf64_Phdr) ||
      !tableFits(h.e_phoff, h.e_phnum, sizeof(Elf64_Phdr), b.size()))
    return corrupt("program header table outside the file");
  if (h.e_shnum &&
      (h.e_shentsize != sizeof(Elf64_Shdr) ||
       !tableFits(h.e_shoff, h.e_shnum, sizeof(Elf64_Shdr), b.size())))
    return corrupt("section header table outside the file");

  CodeObject co;
  co.abiVersion = h.e_ident[EI_ABIVERSION];
  uint64_t imageEnd = 0;
  std::vector<Elf64_Phdr> loads;
  for (unsigned i = 0; i < h.e_phnum; ++i) {
    auto p = readAt<Elf64_Phdr>(b, h.e_phoff + i * sizeof(Elf64_Phdr));
    if (p.p_type != PT_LOAD)
      continue;
    if (p.p_filesz > p.p_memsz || p.p_offset > b.size() ||
        p.p_filesz > b.size() - p.p_offset)
      return corrupt("segment " + std::to_string(i) +
                     " has file bytes outside the file");
    if (p.p_vaddr > kMaxImageBytes || p.p_memsz > kMaxImageBytes - p.p_vaddr)
      return corrupt("segment " + std::to_string(i) + " at address " +
                     std::to_string(p.p_vaddr) + " of " +
                     std::to_string(p.p_memsz) + " bytes is larger than " +
                     std::to_string(kMaxImageBytes) + " bytes");
    imageEnd = std::max<uint64_t>(imageEnd, p.p_vaddr + p.p_memsz);
    loads.push_back(p);
  }
  if (loads.empty())
    return corrupt("no loadable segment");
  co.image.assign(imageEnd, 0);
  co.codeBegin = imageEnd;
  for (const Elf64_Phdr &p : loads) {
    std::memcpy(co.image.data() + p.p_vaddr, b.data() + p.p_offset, p.p_filesz);
    if (p.p_flags & PF_X) {
      co.codeBegin = std::min<uint64_t>(co.codeBegin, p.p_vaddr);
      co.codeEnd = std::max<uint64_t>(co.codeEnd, p.p_vaddr + p.p_memsz);
    }
  }
  if (co.codeEnd <= co.codeBegin)
    return corrupt("no executable segment");

  // The symbol table: .symtab if the file has one, else .dynsym (what the
  // ROCm loader reads).
  Elf64_Shdr symtab{}, strtab{};
  bool found = false;
  for (unsigned pass = 0; pass < 2 && !found; ++pass)
    for (unsigned i = 0; i < h.e_shnum; ++i) {
      auto s = readAt<Elf64_Shdr>(b, h.e_shoff + i * sizeof(Elf64_Shdr));
      if (s.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
        continue;
      if (s.sh_link >= h.e_shnum)
        return corrupt("symbol table links to section " +
                       std::to_string(s.sh_link) + " of " +
                       std::to_string(h.e_shnum));
      symtab = s;
      strtab =
          readAt<Elf64_Shdr>(b, h.e_shoff + s.sh_link * sizeof(Elf64_Shdr));
      found = true;
      break;
    }
  if (!found)
    return corrupt("no symbol table");
  if (symtab.sh_entsize != sizeof(Elf64_Sym) ||
      !tableFits(symtab.sh_offset, symtab.sh_size / sizeof(Elf64_Sym),
                 sizeof(Elf64_Sym), b.size()) ||
      strtab.sh_offset > b.size() ||
      strtab.sh_size > b.size() - strtab.sh_offset)
    return corrupt("symbol or string table outside the file");

  size_t count = symtab.sh_size / sizeof(Elf64_Sym);
  for (size_t i = 0; i < count; ++i) {
    auto sym = readAt<Elf64_Sym>(b, symtab.sh_offset + i * sizeof(Elf64_Sym));
    if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT ||
        sym.st_name >= strtab.sh_size)
      continue;
    const char *begin = reinterpret_cast<const char *>(
        b.data() + strtab.sh_offset + sym.st_name);
    size_t maxLen = strtab.sh_size - sym.st_name;
    size_t len = strnlen(begin, maxLen);
    if (len == maxLen)
      return corrupt("symbol name runs past its string table");
    std::string name(begin, len);
    if (name.size() <= 3 || name.compare(name.size() - 3, 3, ".kd") != 0)
      continue;
    CodeObjectKernel k;
    k.name = name.substr(0, name.size() - 3);
    k.descriptorAddr = sym.st_value;
    if (sym.st_value > co.image.size() || co.image.size() - sym.st_value < 64)
      return corrupt("kernel descriptor '" + name + "' at " +
                     std::to_string(sym.st_value) + " lies outside the image");
    const uint8_t *d = co.image.data() + sym.st_value;
    KernelDescriptor &kd = k.kd;
    std::memcpy(&kd.groupSegmentFixedSize, d + 0, 4);
    std::memcpy(&kd.privateSegmentFixedSize, d + 4, 4);
    std::memcpy(&kd.kernargSize, d + 8, 4);
    std::memcpy(&kd.entryByteOffset, d + 16, 8);
    std::memcpy(&kd.rsrc3, d + 44, 4);
    std::memcpy(&kd.rsrc1, d + 48, 4);
    std::memcpy(&kd.rsrc2, d + 52, 4);
    std::memcpy(&kd.codeProperties, d + 56, 2);
    // The entry is relative to the descriptor; it must land on code, aligned
    // (256 bytes on hardware; 4 is what the simulator needs to decode).
    int64_t entry = int64_t(sym.st_value) + kd.entryByteOffset;
    if (kd.entryByteOffset < -int64_t(kMaxImageBytes) ||
        kd.entryByteOffset > int64_t(kMaxImageBytes) ||
        entry < int64_t(co.codeBegin) || entry >= int64_t(co.codeEnd) ||
        entry % 4)
      return corrupt("kernel '" + k.name + "': entry point " +
                     std::to_string(entry) + " is not in the code (" +
                     std::to_string(co.codeBegin) + ".." +
                     std::to_string(co.codeEnd) + ")");
    k.entry = uint64_t(entry);
    co.kernels.push_back(std::move(k));
  }
  if (co.kernels.empty())
    return corrupt("no kernel descriptor (no '<kernel>.kd' symbol)");
  return co;
}
