//===- AmdgpuMetadataTest.cpp - The hsaco metadata the HIP loader checks --===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// lib/gpu/AmdgpuMetadata.h (internal) on a real gfx906 code object and its
// manifest, made by
//   fac examples/attention.mlir --target=gfx906 --block-m=64 --block-n=64 \
//       -o test/runtime/data/attention_gfx906.hsaco
// (test/tools/fac-gfx906.test pins the same metadata on fac's current
// output), and on corrupted variants of it; then on small hand-made ELF
// files for what a compiler never writes. No GPU needed.
//
//===----------------------------------------------------------------------===//

#include "gpu/AmdgpuMetadata.h"
#include "TestUtil.h"

#include <algorithm>
#include <cstring>
#include <elf.h>

using namespace fa;
using namespace fa::detail;

namespace {

const std::string kHsaco =
    std::string(FA_TEST_DATA_DIR) + "/attention_gfx906.hsaco";

std::vector<uint8_t> hsaco() { return test::readBytes(kHsaco); }

Manifest hsacoManifest() {
  std::vector<uint8_t> json = test::readBytes(kHsaco + ".json");
  Expected<Manifest> m = parseManifest(std::string_view(
      reinterpret_cast<const char *>(json.data()), json.size()));
  EXPECT_TRUE(m.ok()) << m.status().toString();
  return m ? m.take() : Manifest();
}

/// Offset of the first occurrence of `text` in `bytes` (fails the test if
/// there is none).
size_t find(const std::vector<uint8_t> &bytes, const std::string &text) {
  auto at = std::search(bytes.begin(), bytes.end(), text.begin(), text.end());
  EXPECT_NE(at, bytes.end()) << "'" << text << "' not in the code object";
  return size_t(at - bytes.begin());
}

Status check(const std::vector<uint8_t> &bytes, void (*edit)(Manifest &)) {
  Manifest m = hsacoManifest();
  edit(m);
  return checkAmdgpuCodeObject(m, bytes);
}

TEST(AmdgpuMetadataTest, ReadsFacsCodeObject) {
  Expected<std::vector<AmdgpuKernelMetadata>> kernels =
      readAmdgpuMetadata(hsaco());
  FA_ASSERT_OK(kernels);
  ASSERT_EQ(kernels->size(), 1u);
  const AmdgpuKernelMetadata &k = kernels->front();
  EXPECT_EQ(k.name, "attention_kernel");
  EXPECT_EQ(k.symbol, "attention_kernel.kd");
  Manifest m = hsacoManifest();
  EXPECT_EQ(k.groupSegmentFixedSize, uint64_t(m.kernels[0].ldsBytes));
  EXPECT_EQ(k.wavefrontSize, 64u);
  EXPECT_EQ(k.maxFlatWorkgroupSize, uint64_t(m.kernels[0].threads));
  // 32-bit index arithmetic: 5 descriptors of 32 bytes, 19 words.
  EXPECT_EQ(m.kernels[0].indexBits, 32);
  EXPECT_EQ(k.explicitKernargBytes, 312u);
  FA_ASSERT_OK(checkAmdgpuCodeObject(m, hsaco()));
}

TEST(AmdgpuMetadataTest, ManifestThatDisagrees) {
  std::vector<uint8_t> b = hsaco();
  uint64_t lds = uint64_t(hsacoManifest().kernels[0].ldsBytes);
  Status s = check(b, [](Manifest &m) { m.kernels[0].ldsBytes = 0; });
  EXPECT_EQ(s.code(), ErrorCode::ManifestError);
  EXPECT_EQ(s.message(),
            "kernel 'attention_kernel': the manifest says lds_bytes 0, the "
            "code object's .group_segment_fixed_size is " +
                std::to_string(lds) +
                " (the manifest does not describe this code object)");
  EXPECT_EQ(s.kernel(), "attention_kernel");
  s = check(b, [](Manifest &m) { m.kernels[0].waveSize = 32; });
  EXPECT_EQ(s.message(),
            "kernel 'attention_kernel': the manifest says wave_size 32, the "
            "code object's .wavefront_size is 64 (the manifest does not "
            "describe this code object)");
  s = check(b, [](Manifest &m) { m.kernels[0].threads = 512; });
  EXPECT_EQ(s.message(),
            "kernel 'attention_kernel': the manifest says threads 512, the "
            "code object's .max_flat_workgroup_size is 256 (the manifest "
            "does not describe this code object)");
  s = check(b, [](Manifest &m) { m.kernels[0].indexBits = 64; });
  EXPECT_EQ(s.message(),
            "kernel 'attention_kernel': the manifest's abi_version 1 (44 "
            "words) and index_bits 64 give 352 bytes of kernel arguments, "
            "the code object's .args take 312 (the manifest does not "
            "describe this code object)");
  // A dense kernel described as split-KV would be passed 11 words more.
  s = check(b, [](Manifest &m) { m.kernels[0].abiVersion = 2; });
  EXPECT_EQ(s.message(),
            "kernel 'attention_kernel': the manifest's abi_version 2 (55 "
            "words) and index_bits 32 give 384 bytes of kernel arguments, "
            "the code object's .args take 312 (the manifest does not "
            "describe this code object)");
  // A paged kernel (version 3) would be passed 23 words more than a dense
  // one.
  s = check(b, [](Manifest &m) {
    m.kernels[0].abiVersion = 3;
    m.kernels[0].paged = true;
  });
  EXPECT_EQ(s.message(),
            "kernel 'attention_kernel': the manifest's abi_version 3 (67 "
            "words) and index_bits 32 give 464 bytes of kernel arguments, "
            "the code object's .args take 312 (the manifest does not "
            "describe this code object)");
  // A varlen kernel (version 4): 33 words more than a dense one, its last
  // descriptor's stride ending the segment (524 bytes).
  s = check(b, [](Manifest &m) {
    m.kernels[0].abiVersion = 4;
    m.kernels[0].varlen = true;
  });
  EXPECT_EQ(s.message(),
            "kernel 'attention_kernel': the manifest's abi_version 4 (77 "
            "words) and index_bits 32 give 524 bytes of kernel arguments, "
            "the code object's .args take 312 (the manifest does not "
            "describe this code object)");
  s = check(b,
            [](Manifest &m) { m.kernels[0].abiVersion = FA_ABI_VERSION + 1; });
  EXPECT_EQ(s.code(), ErrorCode::Unsupported);
  const std::string next = std::to_string(FA_ABI_VERSION + 1);
  EXPECT_EQ(s.message(), "kernel 'attention_kernel' uses kernel ABI version " +
                             next +
                             ", this runtime implements versions 1 "
                             "to " +
                             std::to_string(FA_ABI_VERSION));
  s = check(b, [](Manifest &m) { m.kernels[0].symbol = "other_kernel"; });
  EXPECT_EQ(s.code(), ErrorCode::ManifestError);
  EXPECT_EQ(s.message(), "kernel 'attention_kernel': the code object has no "
                         "kernel 'other_kernel' in its AMDGPU metadata (it "
                         "has: attention_kernel)");
}

/// Offset of the MessagePack value that follows the key `key`.
size_t valueOf(const std::vector<uint8_t> &b, const std::string &key) {
  return find(b, key) + key.size();
}

TEST(AmdgpuMetadataTest, CorruptedMetadataValues) {
  // The LDS size rewritten in the note: the code object now disagrees with
  // its (unchanged) manifest.
  std::vector<uint8_t> b = hsaco();
  size_t at = valueOf(b, ".group_segment_fixed_size");
  ASSERT_EQ(b[at], 0xcd); // uint16
  b[at + 1] = 0x01, b[at + 2] = 0x00;
  Status s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_EQ(s.code(), ErrorCode::ManifestError);
  EXPECT_TRUE(s.message().find("the code object's "
                               ".group_segment_fixed_size is 256") !=
              std::string::npos)
      << s.message();

  // A negative size.
  b = hsaco();
  at = valueOf(b, ".wavefront_size");
  b[at] = 0xff; // negative fixint -1
  s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_EQ(s.code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(s.message(), "code object's AMDGPU metadata: kernel "
                         "'attention_kernel': .wavefront_size is not a "
                         "non-negative integer");

  // A type byte MessagePack does not define.
  b = hsaco();
  at = valueOf(b, ".max_flat_workgroup_size");
  b[at] = 0xc1;
  s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_EQ(s.code(), ErrorCode::CorruptCodeObject);
  EXPECT_TRUE(s.message().find("invalid MessagePack type byte 0xc1 at "
                               "offset") != std::string::npos)
      << s.message();

  // A key renamed away.
  b = hsaco();
  b[find(b, ".private_segment_fixed_size") + 1] = 'q';
  s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_EQ(s.message(), "code object's AMDGPU metadata: kernel "
                         "'attention_kernel' has no "
                         ".private_segment_fixed_size");
}

TEST(AmdgpuMetadataTest, LengthsThatLie) {
  // The kernels array claims 2^32 - 1 entries: refused before any
  // allocation, as more than the bytes left could hold.
  std::vector<uint8_t> b = hsaco();
  size_t at = valueOf(b, "amdhsa.kernels");
  ASSERT_EQ(b[at], 0x91); // fixarray of 1
  // Overwrite with array32 0xffffffff; the 4 bytes after it are clobbered,
  // which does not matter: the count is refused first.
  b[at] = 0xdd;
  b[at + 1] = b[at + 2] = b[at + 3] = b[at + 4] = 0xff;
  Status s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_EQ(s.code(), ErrorCode::CorruptCodeObject);
  EXPECT_TRUE(s.message().find("needs 4294967295 bytes") != std::string::npos)
      << s.message();

  // A string running past the note.
  b = hsaco();
  at = find(b, ".name") - 1;
  ASSERT_EQ(b[at], 0xa5); // fixstr of 5
  b[at] = 0xdb;           // str32: the next 4 bytes are a huge length
  s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_EQ(s.code(), ErrorCode::CorruptCodeObject);
  EXPECT_TRUE(s.message().find("are left") != std::string::npos) << s.message();
}

/// The PT_NOTE program header of `b`.
Elf64_Phdr *noteSegment(std::vector<uint8_t> &b) {
  Elf64_Ehdr h;
  std::memcpy(&h, b.data(), sizeof(h));
  for (int i = 0; i < h.e_phnum; ++i) {
    auto *ph = reinterpret_cast<Elf64_Phdr *>(b.data() + h.e_phoff +
                                              i * sizeof(Elf64_Phdr));
    if (ph->p_type == PT_NOTE)
      return ph;
  }
  ADD_FAILURE() << "no PT_NOTE segment";
  return nullptr;
}

TEST(AmdgpuMetadataTest, CorruptedElfStructure) {
  std::vector<uint8_t> b = hsaco();
  reinterpret_cast<Elf64_Ehdr *>(b.data())->e_phentsize = 1;
  Status s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_EQ(s.code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(s.message(), "code object's program header entries are 1 bytes, "
                         "ELF64 program header entries are 56");

  b = hsaco();
  reinterpret_cast<Elf64_Ehdr *>(b.data())->e_phoff = b.size() - 8;
  s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_TRUE(s.message().find("its program header table ends at byte") !=
              std::string::npos)
      << s.message();

  b = hsaco();
  Elf64_Phdr *note = noteSegment(b);
  ASSERT_TRUE(note);
  note->p_filesz = b.size(); // from p_offset: past the end of the file
  s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_TRUE(s.message().find("code object is truncated: note segment") !=
              std::string::npos)
      << s.message();

  // The metadata note's descriptor size runs past its segment.
  b = hsaco();
  size_t name = find(b, std::string("AMDGPU\0", 7));
  auto *nhdr = reinterpret_cast<Elf64_Nhdr *>(b.data() + name - 12);
  ASSERT_EQ(nhdr->n_type, 32u);
  nhdr->n_descsz = 0x7fffffff;
  s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_TRUE(s.message().find("runs past its segment's end") !=
              std::string::npos)
      << s.message();

  // No metadata note at all.
  b = hsaco();
  nhdr = reinterpret_cast<Elf64_Nhdr *>(b.data() + name - 12);
  nhdr->n_type = 33;
  s = checkAmdgpuCodeObject(hsacoManifest(), b);
  EXPECT_EQ(s.message(), "code object has no AMDGPU metadata note "
                         "(NT_AMDGPU_METADATA); is it a code object v3+ "
                         "hsaco?");
}

/// A minimal ELF64 file with one PT_NOTE segment holding an AMDGPU
/// metadata note with `msgpack` as its descriptor.
std::vector<uint8_t> noteElf(const std::vector<uint8_t> &msgpack) {
  std::vector<uint8_t> b(sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr));
  Elf64_Ehdr h = {};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_machine = 224;
  h.e_phoff = sizeof(Elf64_Ehdr);
  h.e_phentsize = sizeof(Elf64_Phdr);
  h.e_phnum = 1;
  std::memcpy(b.data(), &h, sizeof(h));
  Elf64_Nhdr n = {7, uint32_t(msgpack.size()), 32};
  size_t noteAt = b.size();
  b.resize(b.size() + sizeof(n));
  std::memcpy(b.data() + noteAt, &n, sizeof(n));
  b.insert(b.end(), {'A', 'M', 'D', 'G', 'P', 'U', 0, 0});
  b.insert(b.end(), msgpack.begin(), msgpack.end());
  while (b.size() % 4)
    b.push_back(0);
  Elf64_Phdr ph = {};
  ph.p_type = PT_NOTE;
  ph.p_offset = noteAt;
  ph.p_filesz = b.size() - noteAt;
  std::memcpy(b.data() + sizeof(Elf64_Ehdr), &ph, sizeof(ph));
  return b;
}

void str(std::vector<uint8_t> &out, const std::string &s) {
  out.push_back(uint8_t(0xa0 | s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

TEST(AmdgpuMetadataTest, HandMadeDocuments) {
  // 1000 nested arrays: refused at depth 16, not a stack overflow.
  std::vector<uint8_t> deep(1000, 0x91);
  deep.push_back(0xc0);
  Expected<std::vector<AmdgpuKernelMetadata>> r =
      readAmdgpuMetadata(noteElf(deep));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "code object's AMDGPU metadata: "
                                  "MessagePack nesting deeper than 16");

  // A document without amdhsa.kernels.
  std::vector<uint8_t> empty = {0x80};
  r = readAmdgpuMetadata(noteElf(empty));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "code object's AMDGPU metadata: no amdhsa.kernels array");

  // Every integer width and the kinds the reader skips, in one kernel.
  std::vector<uint8_t> doc = {0x82}; // map of 2
  str(doc, "amdhsa.version");
  doc.insert(doc.end(), {0x92, 0x01, 0x02});
  str(doc, "amdhsa.kernels");
  doc.push_back(0x91);
  doc.push_back(0x89); // map of 9
  str(doc, ".name");
  str(doc, "k");
  str(doc, ".symbol");
  str(doc, "k.kd");
  str(doc, ".group_segment_fixed_size");
  doc.insert(doc.end(), {0xce, 0x00, 0x01, 0x00, 0x00}); // uint32 65536
  str(doc, ".private_segment_fixed_size");
  doc.insert(doc.end(), {0xd0, 0x10}); // int8 16
  str(doc, ".kernarg_segment_size");
  doc.insert(doc.end(), {0xcf, 0, 0, 0, 0, 0, 0, 0, 8}); // uint64 8
  str(doc, ".max_flat_workgroup_size");
  doc.insert(doc.end(), {0xcc, 0xff}); // uint8 255
  str(doc, ".wavefront_size");
  doc.push_back(0x40);
  str(doc, ".args");
  doc.insert(doc.end(), {0x92, 0x83});
  str(doc, ".offset");
  doc.push_back(0x00);
  str(doc, ".size");
  doc.push_back(0x08);
  str(doc, ".value_kind");
  str(doc, "global_buffer");
  doc.push_back(0x83);
  str(doc, ".offset");
  doc.push_back(0x08);
  str(doc, ".size");
  doc.push_back(0x08);
  str(doc, ".value_kind");
  str(doc, "hidden_block_count_x");
  str(doc, ".unknown");
  doc.insert(doc.end(), {0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xc4, 0x02, 'a', 'b'});
  // The map held 9 pairs: the last value is the float, the bin is trailing
  // data after the document (ignored).
  r = readAmdgpuMetadata(noteElf(doc));
  FA_ASSERT_OK(r);
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].name, "k");
  EXPECT_EQ((*r)[0].groupSegmentFixedSize, 65536u);
  EXPECT_EQ((*r)[0].privateSegmentFixedSize, 16u);
  EXPECT_EQ((*r)[0].kernargSegmentSize, 8u);
  EXPECT_EQ((*r)[0].maxFlatWorkgroupSize, 255u);
  EXPECT_EQ((*r)[0].wavefrontSize, 64u);
  EXPECT_EQ((*r)[0].explicitKernargBytes, 8u); // the hidden argument is not
}

} // namespace
