//===- AmdgpuMetadata.cpp - What an hsaco says about its kernels ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements reading the NT_AMDGPU_METADATA note of an hsaco:
//   1. the ELF header and program header table (entries of exactly
//      sizeof(Elf64_Phdr), within the file);
//   2. each PT_NOTE segment's notes, for the one named "AMDGPU" of type 32;
//   3. its MessagePack document, with a reader limited to what the metadata
//      uses (maps, arrays, strings, integers; other kinds are skipped), every
//      length checked against the bytes left and nesting limited;
//   4. `amdhsa.kernels`: the fields fa checks.
// The code object is only read; nothing is trusted before it is checked.
//
//===----------------------------------------------------------------------===//

#include "gpu/AmdgpuMetadata.h"
#include "gpu/Vendor.h"

#include <cstring>
#include <elf.h>
#include <string_view>

using namespace fa;
using namespace fa::detail;

namespace {

constexpr uint32_t kNtAmdgpuMetadata = 32;
constexpr int kMaxDepth = 16;

Status corrupt(const std::string &message) {
  return Status::error(ErrorCode::CorruptCodeObject,
                       "code object's AMDGPU metadata: " + message);
}

/// A MessagePack value. Maps keep keys and values alternating in `items`.
struct MsgValue {
  enum Kind { Nil, Bool, Int, Str, Array, Map, Other } kind = Nil;
  bool negative = false; ///< Int: `integer` is an int64 below 0
  uint64_t integer = 0;
  std::string_view str;
  std::vector<MsgValue> items;

  const MsgValue *find(std::string_view key) const {
    if (kind != Map)
      return nullptr;
    for (size_t i = 0; i + 1 < items.size(); i += 2)
      if (items[i].kind == Str && items[i].str == key)
        return &items[i + 1];
    return nullptr;
  }
};

/// A bounds-checked MessagePack reader over [data, data + size).
class MsgReader {
public:
  MsgReader(const uint8_t *data, size_t size) : data(data), size(size) {}

  Status read(MsgValue &out, int depth = 0) {
    if (depth > kMaxDepth)
      return corrupt("MessagePack nesting deeper than " +
                     std::to_string(kMaxDepth));
    uint8_t tag = 0;
    if (Status s = byte(tag); !s.ok())
      return s;
    uint64_t n = 0;
    if (tag <= 0x7f) {
      out.kind = MsgValue::Int;
      out.integer = tag;
      return Status::success();
    }
    if (tag >= 0xe0) {
      out.kind = MsgValue::Int;
      out.negative = true;
      out.integer = uint64_t(int64_t(int8_t(tag)));
      return Status::success();
    }
    if (tag >= 0x80 && tag <= 0x8f)
      return container(out, MsgValue::Map, tag & 0x0f, depth);
    if (tag >= 0x90 && tag <= 0x9f)
      return container(out, MsgValue::Array, tag & 0x0f, depth);
    if (tag >= 0xa0 && tag <= 0xbf)
      return string(out, tag & 0x1f);
    switch (tag) {
    case 0xc0:
      out.kind = MsgValue::Nil;
      return Status::success();
    case 0xc2:
    case 0xc3:
      out.kind = MsgValue::Bool;
      out.integer = tag & 1;
      return Status::success();
    case 0xc4: // bin 8, 16, 32
    case 0xc5:
    case 0xc6:
      if (Status s = bigEndian(1u << (tag - 0xc4), n); !s.ok())
        return s;
      out.kind = MsgValue::Other;
      return skip(n);
    case 0xc7: // ext 8, 16, 32: length, type, data
    case 0xc8:
    case 0xc9:
      if (Status s = bigEndian(1u << (tag - 0xc7), n); !s.ok())
        return s;
      out.kind = MsgValue::Other;
      return skip(n + 1);
    case 0xca: // float 32, 64
    case 0xcb:
      out.kind = MsgValue::Other;
      return skip(tag == 0xca ? 4 : 8);
    case 0xcc: // uint 8, 16, 32, 64
    case 0xcd:
    case 0xce:
    case 0xcf:
      out.kind = MsgValue::Int;
      return bigEndian(1u << (tag - 0xcc), out.integer);
    case 0xd0: // int 8, 16, 32, 64
    case 0xd1:
    case 0xd2:
    case 0xd3: {
      unsigned bytes = 1u << (tag - 0xd0);
      if (Status s = bigEndian(bytes, n); !s.ok())
        return s;
      if (bytes < 8 && (n >> (bytes * 8 - 1)) & 1) // sign-extend
        n |= ~uint64_t(0) << (bytes * 8);
      out.kind = MsgValue::Int;
      out.negative = int64_t(n) < 0;
      out.integer = n;
      return Status::success();
    }
    case 0xd4: // fixext 1, 2, 4, 8, 16: type, data
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8:
      out.kind = MsgValue::Other;
      return skip(1 + (uint64_t(1) << (tag - 0xd4)));
    case 0xd9: // str 8, 16, 32
    case 0xda:
    case 0xdb:
      if (Status s = bigEndian(1u << (tag - 0xd9), n); !s.ok())
        return s;
      return string(out, n);
    case 0xdc: // array 16, 32
    case 0xdd:
      if (Status s = bigEndian(tag == 0xdc ? 2 : 4, n); !s.ok())
        return s;
      return container(out, MsgValue::Array, n, depth);
    case 0xde: // map 16, 32
    case 0xdf:
      if (Status s = bigEndian(tag == 0xde ? 2 : 4, n); !s.ok())
        return s;
      return container(out, MsgValue::Map, n, depth);
    }
    return corrupt("invalid MessagePack type byte 0x" + hex(tag) +
                   " at offset " + std::to_string(at - 1));
  }

  size_t offset() const { return at; }

private:
  static std::string hex(uint8_t b) {
    const char *digits = "0123456789abcdef";
    return {digits[b >> 4], digits[b & 15]};
  }
  Status truncated(uint64_t need) const {
    return corrupt("MessagePack value at offset " + std::to_string(at) +
                   " needs " + std::to_string(need) + " bytes, " +
                   std::to_string(size - at) + " are left");
  }
  Status byte(uint8_t &b) {
    if (at >= size)
      return truncated(1);
    b = data[at++];
    return Status::success();
  }
  Status skip(uint64_t n) {
    if (n > size - at)
      return truncated(n);
    at += size_t(n);
    return Status::success();
  }
  Status bigEndian(unsigned bytes, uint64_t &v) {
    if (bytes > size - at)
      return truncated(bytes);
    v = 0;
    for (unsigned i = 0; i < bytes; ++i)
      v = v << 8 | data[at++];
    return Status::success();
  }
  Status string(MsgValue &out, uint64_t n) {
    if (n > size - at)
      return truncated(n);
    out.kind = MsgValue::Str;
    out.str = std::string_view(reinterpret_cast<const char *>(data + at), n);
    at += size_t(n);
    return Status::success();
  }
  Status container(MsgValue &out, MsgValue::Kind kind, uint64_t n, int depth) {
    uint64_t count = kind == MsgValue::Map ? 2 * n : n;
    // Every value takes at least one byte: a count above the bytes left is
    // a lie (and must not size an allocation).
    if (count > size - at)
      return truncated(count);
    out.kind = kind;
    out.items.resize(size_t(count));
    for (MsgValue &item : out.items)
      if (Status s = read(item, depth + 1); !s.ok())
        return s;
    return Status::success();
  }

  const uint8_t *data;
  size_t size;
  size_t at = 0;
};

/// Finds the NT_AMDGPU_METADATA note's descriptor in `b`.
Status findMetadataNote(const std::vector<uint8_t> &b, const uint8_t *&desc,
                        size_t &descBytes) {
  if (b.size() < sizeof(Elf64_Ehdr) ||
      std::memcmp(b.data(), ELFMAG, SELFMAG) != 0 ||
      b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB)
    return Status::error(ErrorCode::CorruptCodeObject,
                         "code object is not a 64-bit little-endian ELF file "
                         "(an hsaco is one)");
  Elf64_Ehdr h;
  std::memcpy(&h, b.data(), sizeof(h));
  if (h.e_phnum && h.e_phentsize != sizeof(Elf64_Phdr))
    return Status::error(ErrorCode::CorruptCodeObject,
                         "code object's program header entries are " +
                             std::to_string(h.e_phentsize) +
                             " bytes, ELF64 program header entries are " +
                             std::to_string(sizeof(Elf64_Phdr)));
  uint64_t tableEnd = h.e_phoff + uint64_t(h.e_phnum) * sizeof(Elf64_Phdr);
  if (h.e_phnum && (tableEnd < h.e_phoff || tableEnd > b.size()))
    return Status::error(ErrorCode::CorruptCodeObject,
                         "code object is truncated: its program header table "
                         "ends at byte " +
                             std::to_string(tableEnd) + " but the file has " +
                             std::to_string(b.size()) + " bytes");
  for (uint16_t i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, b.data() + h.e_phoff + uint64_t(i) * sizeof(ph),
                sizeof(ph));
    if (ph.p_type != PT_NOTE)
      continue;
    uint64_t end = ph.p_offset + ph.p_filesz;
    if (end < ph.p_offset || end > b.size())
      return Status::error(ErrorCode::CorruptCodeObject,
                           "code object is truncated: note segment " +
                               std::to_string(i) + " ends at byte " +
                               std::to_string(end) + " but the file has " +
                               std::to_string(b.size()) + " bytes");
    uint64_t at = ph.p_offset;
    auto align4 = [](uint64_t n) { return (n + 3) & ~uint64_t(3); };
    while (end - at >= sizeof(Elf64_Nhdr)) {
      Elf64_Nhdr n;
      std::memcpy(&n, b.data() + at, sizeof(n));
      uint64_t name = at + sizeof(n);
      uint64_t descAt = name + align4(n.n_namesz);
      uint64_t next = descAt + align4(n.n_descsz);
      if (descAt > end || next > end)
        return Status::error(
            ErrorCode::CorruptCodeObject,
            "code object's note at byte " + std::to_string(at) + " (name " +
                std::to_string(n.n_namesz) + " bytes, descriptor " +
                std::to_string(n.n_descsz) +
                " bytes) runs past its segment's end at "
                "byte " +
                std::to_string(end));
      if (n.n_type == kNtAmdgpuMetadata && n.n_namesz == 7 &&
          std::memcmp(b.data() + name, "AMDGPU", 7) == 0) {
        desc = b.data() + descAt;
        descBytes = n.n_descsz;
        return Status::success();
      }
      at = next;
    }
  }
  return Status::error(ErrorCode::CorruptCodeObject,
                       "code object has no AMDGPU metadata note "
                       "(NT_AMDGPU_METADATA); is it a code object v3+ hsaco?");
}

Status unsigned64(const MsgValue &kernel, const std::string &name,
                  const char *key, uint64_t &out) {
  const MsgValue *v = kernel.find(key);
  if (!v)
    return corrupt("kernel '" + name + "' has no " + key);
  if (v->kind != MsgValue::Int || v->negative)
    return corrupt("kernel '" + name + "': " + key +
                   " is not a non-negative integer");
  out = v->integer;
  return Status::success();
}

} // namespace

Expected<std::vector<AmdgpuKernelMetadata>>
fa::detail::readAmdgpuMetadata(const std::vector<uint8_t> &elf) {
  const uint8_t *desc = nullptr;
  size_t bytes = 0;
  if (Status s = findMetadataNote(elf, desc, bytes); !s.ok())
    return s;
  MsgReader reader(desc, bytes);
  MsgValue root;
  if (Status s = reader.read(root); !s.ok())
    return s;
  const MsgValue *kernels = root.find("amdhsa.kernels");
  if (!kernels || kernels->kind != MsgValue::Array)
    return corrupt("no amdhsa.kernels array");
  std::vector<AmdgpuKernelMetadata> out;
  for (const MsgValue &k : kernels->items) {
    if (k.kind != MsgValue::Map)
      return corrupt("an amdhsa.kernels entry is not a map");
    AmdgpuKernelMetadata m;
    const MsgValue *name = k.find(".name");
    const MsgValue *symbol = k.find(".symbol");
    if (!name || name->kind != MsgValue::Str || !symbol ||
        symbol->kind != MsgValue::Str)
      return corrupt("a kernel has no .name or .symbol string");
    m.name = std::string(name->str);
    m.symbol = std::string(symbol->str);
    const std::pair<const char *, uint64_t *> fields[] = {
        {".group_segment_fixed_size", &m.groupSegmentFixedSize},
        {".private_segment_fixed_size", &m.privateSegmentFixedSize},
        {".kernarg_segment_size", &m.kernargSegmentSize},
        {".max_flat_workgroup_size", &m.maxFlatWorkgroupSize},
        {".wavefront_size", &m.wavefrontSize}};
    for (const auto &[key, field] : fields)
      if (Status s = unsigned64(k, m.name, key, *field); !s.ok())
        return s;
    if (const MsgValue *args = k.find(".args")) {
      if (args->kind != MsgValue::Array)
        return corrupt("kernel '" + m.name + "': .args is not an array");
      for (const MsgValue &a : args->items) {
        const MsgValue *kind = a.find(".value_kind");
        if (!kind || kind->kind != MsgValue::Str)
          return corrupt("kernel '" + m.name +
                         "': an argument has no .value_kind");
        if (kind->str.substr(0, 7) == "hidden_")
          continue;
        uint64_t offset = 0, size = 0;
        if (Status s = unsigned64(a, m.name, ".offset", offset); !s.ok())
          return s;
        if (Status s = unsigned64(a, m.name, ".size", size); !s.ok())
          return s;
        if (offset + size < offset)
          return corrupt("kernel '" + m.name + "': an argument's offset " +
                         std::to_string(offset) + " + size " +
                         std::to_string(size) + " overflows");
        m.explicitKernargBytes =
            std::max(m.explicitKernargBytes, offset + size);
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

Status fa::detail::checkAmdgpuCodeObject(const Manifest &manifest,
                                         const std::vector<uint8_t> &elf) {
  Expected<std::vector<AmdgpuKernelMetadata>> kernels = readAmdgpuMetadata(elf);
  if (!kernels)
    return kernels.takeStatus();
  for (const KernelInfo &k : manifest.kernels) {
    const AmdgpuKernelMetadata *m = nullptr;
    std::string names;
    for (const AmdgpuKernelMetadata &c : *kernels) {
      if (c.name == k.symbol)
        m = &c;
      names += (names.empty() ? "" : ", ") + c.name;
    }
    auto mismatch = [&](const std::string &field, uint64_t manifestValue,
                        const std::string &metadataField, uint64_t codeValue) {
      return Status::error(ErrorCode::ManifestError,
                           "kernel '" + k.name + "': the manifest says " +
                               field + " " + std::to_string(manifestValue) +
                               ", the code object's " + metadataField + " is " +
                               std::to_string(codeValue) +
                               " (the manifest does not describe this code "
                               "object)")
          .withKernel(k.name);
    };
    if (!m)
      return Status::error(ErrorCode::ManifestError,
                           "kernel '" + k.name +
                               "': the code object has no "
                               "kernel '" +
                               k.symbol + "' in its AMDGPU metadata (it has: " +
                               names + ")")
          .withKernel(k.name);
    if (m->symbol != m->name + ".kd")
      return corrupt("kernel '" + m->name + "' has descriptor symbol '" +
                     m->symbol + "', expected '" + m->name + ".kd'")
          .withKernel(k.name);
    if (uint64_t(k.ldsBytes) != m->groupSegmentFixedSize)
      return mismatch("lds_bytes", uint64_t(k.ldsBytes),
                      ".group_segment_fixed_size", m->groupSegmentFixedSize);
    if (uint64_t(k.waveSize) != m->wavefrontSize)
      return mismatch("wave_size", uint64_t(k.waveSize), ".wavefront_size",
                      m->wavefrontSize);
    if (uint64_t(k.threads) > m->maxFlatWorkgroupSize)
      return Status::error(ErrorCode::ManifestError,
                           "kernel '" + k.name + "': the manifest says " +
                               "threads " + std::to_string(k.threads) +
                               ", the code object's .max_flat_workgroup_size "
                               "is " +
                               std::to_string(m->maxFlatWorkgroupSize) +
                               " (the manifest does not describe this code "
                               "object)")
          .withKernel(k.name);
    // The kernarg buffer the runtime packs for the manifest's index_bits
    // must be the one the kernel reads, or it reads pointers from the wrong
    // offsets.
    uint64_t words[FA_ABI_MAX_WORDS] = {};
    const uint32_t numWords =
        fa_kernel_abi_words(uint32_t(k.abiVersion), k.trace, k.hasHeadParams());
    if (numWords == 0)
      return Status::error(ErrorCode::Unsupported,
                           "kernel '" + k.name + "' uses kernel ABI version " +
                               std::to_string(k.abiVersion) +
                               ", this runtime implements versions 1 to " +
                               std::to_string(FA_ABI_VERSION))
          .withKernel(k.name);
    uint64_t packed =
        packKernargSegment(words, numWords, int(k.indexBits)).size();
    if (packed != m->explicitKernargBytes)
      return Status::error(
                 ErrorCode::ManifestError,
                 "kernel '" + k.name + "': the manifest's " + "abi_version " +
                     std::to_string(k.abiVersion) +
                     (k.trace ? " with trace" : "") +
                     (k.hasHeadParams() ? " with head parameters" : "") + " (" +
                     std::to_string(numWords) + " words) and index_bits " +
                     std::to_string(k.indexBits) + " give " +
                     std::to_string(packed) +
                     " bytes of kernel arguments, the code "
                     "object's .args take " +
                     std::to_string(m->explicitKernargBytes) +
                     " (the manifest does not describe this code "
                     "object)")
          .withKernel(k.name);
  }
  return Status::success();
}
