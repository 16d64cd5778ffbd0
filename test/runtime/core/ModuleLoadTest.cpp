//===- ModuleLoadTest.cpp - Loading code objects and what can go wrong ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "core/Backend.h"

#include <algorithm>
#include <cstring>
#include <elf.h>

using namespace fa;
using test::ScratchDir;

namespace {

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

TEST(ModuleLoadTest, LoadsAFixtureAndFindsKernels) {
  Device d = test::hostDevice();
  Expected<Module> m = Module::load(d, test::fixturePath("attn_f32"));
  FA_ASSERT_OK(m);
  EXPECT_EQ(m->manifest().target, "host");
  Expected<Kernel> first = m->kernel();
  FA_ASSERT_OK(first);
  EXPECT_EQ(first->name(), "attn_f32");
  EXPECT_EQ(first->device().name(), "host");
  FA_ASSERT_OK(m->kernel("attn_f32"));
  Expected<Kernel> none = m->kernel("attn_f64");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), ErrorCode::NotFound);
  EXPECT_EQ(none.status().message(),
            "no kernel 'attn_f64' in the module (it has: attn_f32)");
}

TEST(ModuleLoadTest, LoadsThroughTheManifestPath) {
  Device d = test::hostDevice();
  Expected<Module> m = Module::load(d, test::fixturePath("attn_f16") + ".json");
  FA_ASSERT_OK(m);
  EXPECT_EQ(m->path(), test::fixturePath("attn_f16"));
}

TEST(ModuleLoadTest, LoadsFromMemory) {
  Device d = test::hostDevice();
  std::vector<uint8_t> bytes = test::readBytes(test::fixturePath("attn_f32"));
  std::vector<uint8_t> json =
      test::readBytes(test::fixturePath("attn_f32") + ".json");
  Expected<Module> m = Module::loadFromMemory(
      d, bytes.data(), bytes.size(),
      std::string_view(reinterpret_cast<const char *>(json.data()),
                       json.size()),
      "attn_f32 (memory)");
  FA_ASSERT_OK(m);
  EXPECT_EQ(m->path(), "attn_f32 (memory)");
  // Loading the same bytes twice gives two independent modules.
  FA_ASSERT_OK(Module::loadFromMemory(
      d, bytes.data(), bytes.size(),
      std::string_view(reinterpret_cast<const char *>(json.data()),
                       json.size())));
}

TEST(ModuleLoadTest, MissingCodeObject) {
  Device d = test::hostDevice();
  Expected<Module> m = Module::load(d, "/nonexistent/attn.so");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::NotFound);
  EXPECT_EQ(m.status().message(), "cannot read code object "
                                  "'/nonexistent/attn.so': No such file or "
                                  "directory");
  EXPECT_EQ(m.status().file(), "/nonexistent/attn.so");
}

TEST(ModuleLoadTest, MissingManifest) {
  ScratchDir dir;
  test::writeBytes(dir.file("attn.so"),
                   test::readBytes(test::fixturePath("attn_f32")));
  Expected<Module> m = Module::load(test::hostDevice(), dir.file("attn.so"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::NotFound);
  EXPECT_TRUE(contains(m.status().message(), "missing manifest"));
  EXPECT_TRUE(contains(m.status().message(), dir.file("attn.so.json")));
}

TEST(ModuleLoadTest, MalformedManifest) {
  ScratchDir dir;
  test::writeBytes(dir.file("attn.so"),
                   test::readBytes(test::fixturePath("attn_f32")));
  test::writeText(dir.file("attn.so.json"), "{\"fa_manifest_version\": 1,,}");
  Expected<Module> m = Module::load(test::hostDevice(), dir.file("attn.so"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::ManifestError);
  EXPECT_EQ(m.status().message(),
            "malformed manifest JSON: line 1, column 27: syntax error while "
            "parsing object key - unexpected ','; expected string literal");
  EXPECT_EQ(m.status().file(), dir.file("attn.so.json"));
}

TEST(ModuleLoadTest, HashMismatch) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = test::readBytes(test::fixturePath("attn_f32"));
  bytes[bytes.size() / 2] ^= 0x40; // same size, different content
  test::writeBytes(dir.file("attn.so"), bytes);
  test::writeBytes(dir.file("attn.so.json"),
                   test::readBytes(test::fixturePath("attn_f32") + ".json"));
  Expected<Module> m = Module::load(test::hostDevice(), dir.file("attn.so"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::CorruptCodeObject);
  EXPECT_TRUE(contains(m.status().message(),
                       "does not match the manifest's " +
                           test::fixtureManifest("attn_f32").codeObjectHash));
}

TEST(ModuleLoadTest, TruncatedAgainstItsManifest) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = test::readBytes(test::fixturePath("attn_f32"));
  test::writeBytes(dir.file("attn.so"),
                   std::vector<uint8_t>(bytes.begin(), bytes.begin() + 1000));
  test::writeBytes(dir.file("attn.so.json"),
                   test::readBytes(test::fixturePath("attn_f32") + ".json"));
  Expected<Module> m = Module::load(test::hostDevice(), dir.file("attn.so"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "code object is 1000 bytes but the manifest says " +
                std::to_string(bytes.size()) +
                " (truncated, or not the file the manifest describes)");
}

// A truncated ELF whose manifest matches it (a manifest regenerated for the
// damaged file) is caught by the ELF checks before dlopen.
TEST(ModuleLoadTest, TruncatedElf) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = test::readBytes(test::fixturePath("attn_f32"));
  bytes.resize(bytes.size() / 2);
  std::string path = test::writeCodeObject(dir, "attn.so", bytes,
                                           test::fixtureManifest("attn_f32"));
  Expected<Module> m = Module::load(test::hostDevice(), path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::CorruptCodeObject);
  EXPECT_TRUE(contains(m.status().message(), "code object is truncated: its "
                                             "section header table ends at "
                                             "byte"))
      << m.status().message();
}

// Program header entries smaller than Elf64_Phdr: the table fits in the
// file, but reading whole entries at that stride would run past its end
// (found by fuzz-loader under ASan).
TEST(ModuleLoadTest, ShortProgramHeaderEntries) {
  std::vector<uint8_t> bytes = test::readBytes(test::fixturePath("attn_f32"));
  Elf64_Ehdr h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  h.e_phentsize = 1;
  h.e_phnum = 10;
  h.e_phoff = bytes.size() - 10;
  std::memcpy(bytes.data(), &h, sizeof(h));
  Manifest manifest = test::fixtureManifest("attn_f32");
  manifest.codeObjectBytes = bytes.size();
  manifest.codeObjectHash = formatFnv1a64(fnv1a64(bytes.data(), bytes.size()));
  Expected<Module> m =
      Module::loadFromMemory(test::hostDevice(), bytes.data(), bytes.size(),
                             formatManifest(manifest), "short-phdr");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(m.status().message(),
            "code object's program header entries are "
            "1 bytes, ELF64 program header entries are 56");
}

TEST(ModuleLoadTest, GarbageBytes) {
  std::vector<uint8_t> bytes(4096);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = uint8_t(i * 131 + 7);
  Manifest manifest = test::fixtureManifest("attn_f32");
  manifest.codeObjectBytes = bytes.size();
  manifest.codeObjectHash = formatFnv1a64(fnv1a64(bytes.data(), bytes.size()));
  Expected<Module> m =
      Module::loadFromMemory(test::hostDevice(), bytes.data(), bytes.size(),
                             formatManifest(manifest), "garbage");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(m.status().message(), "code object is not an ELF file (starts "
                                  "with bytes '07 8a 0d 90', expected '7f 45 "
                                  "4c 46')");
  EXPECT_EQ(m.status().file(), "garbage");
}

// Well-formed headers, broken contents: only dlopen can tell, and its
// message is passed on (with the user's file name, not our temporary copy).
TEST(ModuleLoadTest, DlopenErrorIsReported) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = test::readBytes(test::fixturePath("attn_f32"));
  Elf64_Ehdr h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  for (uint16_t i = 0; i < h.e_phnum; ++i) { // no loadable segment left
    Elf64_Phdr ph;
    uint8_t *at = bytes.data() + h.e_phoff + size_t(i) * h.e_phentsize;
    std::memcpy(&ph, at, sizeof(ph));
    if (ph.p_type == PT_LOAD)
      ph.p_type = PT_NULL;
    std::memcpy(at, &ph, sizeof(ph));
  }
  std::string path = test::writeCodeObject(dir, "attn.so", bytes,
                                           test::fixtureManifest("attn_f32"));
  Expected<Module> m = Module::load(test::hostDevice(), path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::LoadFailed);
  EXPECT_EQ(m.status().call(), "dlopen");
  EXPECT_TRUE(
      contains(m.status().message(), "cannot load code object: " + path))
      << m.status().message();
  EXPECT_TRUE(contains(m.status().log(), "dlopen: "));
}

Manifest withKernel(void (*edit)(Manifest &)) {
  Manifest m = test::fixtureManifest("attn_f32");
  edit(m);
  return m;
}

Status loadEdited(void (*edit)(Manifest &)) {
  ScratchDir dir;
  std::string path = test::writeCodeObject(
      dir, "attn.so", test::readBytes(test::fixturePath("attn_f32")),
      withKernel(edit));
  Expected<Module> m = Module::load(test::hostDevice(), path);
  return m ? Status::success() : m.takeStatus();
}

TEST(ModuleLoadTest, TargetNotSupportedByDevice) {
  Status s = loadEdited([](Manifest &m) { m.target = "gfx906"; });
  EXPECT_EQ(s.code(), ErrorCode::Unsupported);
  EXPECT_EQ(s.message(),
            "code object is for target 'gfx906' but device 'host' runs 'host'");
  EXPECT_EQ(s.target(), "gfx906");
}

TEST(ModuleLoadTest, AbiVersionMismatch) {
  Status s = loadEdited(
      [](Manifest &m) { m.kernels[0].abiVersion = FA_ABI_VERSION + 1; });
  EXPECT_EQ(s.code(), ErrorCode::Unsupported);
  EXPECT_EQ(s.message(), "kernel 'attn_f32' uses kernel ABI version " +
                             std::to_string(FA_ABI_VERSION + 1) +
                             ", this runtime implements versions 1 to " +
                             std::to_string(FA_ABI_VERSION));
  EXPECT_EQ(s.kernel(), "attn_f32");
  // Version 2 is the split-KV ABI, which a dense kernel's manifest cannot
  // claim.
  s = loadEdited([](Manifest &m) { m.kernels[0].abiVersion = 2; });
  EXPECT_EQ(s.code(), ErrorCode::ManifestError);
  EXPECT_EQ(s.message(), "manifest field 'kernels[0].abi_version': version 2 "
                         "is the split-KV ABI: an attention kernel of version "
                         "2 needs \"kv_splits\": \"runtime\" and a "
                         "\"combine\" kernel");
}

TEST(ModuleLoadTest, KernelExceedsDeviceLimits) {
  Status threads = loadEdited([](Manifest &m) { m.kernels[0].threads = 2048; });
  EXPECT_EQ(threads.message(), "kernel 'attn_f32' needs 2048 threads per "
                               "workgroup, device 'host' allows 1024");
  Status lds = loadEdited([](Manifest &m) { m.kernels[0].ldsBytes = 4 << 20; });
  EXPECT_EQ(lds.message(), "kernel 'attn_f32' needs 4194304 bytes of LDS, "
                           "device 'host' has 1048576");
}

TEST(ModuleLoadTest, MissingSymbol) {
  Status s = loadEdited([](Manifest &m) { m.kernels[0].symbol = "nope_host"; });
  EXPECT_EQ(s.code(), ErrorCode::NotFound);
  EXPECT_EQ(s.message(),
            "kernel 'attn_f32': symbol 'nope_host' not found in the code "
            "object");
  EXPECT_EQ(s.call(), "dlsym");
}

TEST(ModuleLoadTest, WrongFormatOrWaveSize) {
  Status format = loadEdited([](Manifest &m) { m.codeObjectFormat = "hsaco"; });
  EXPECT_EQ(format.code(), ErrorCode::Unsupported);
  EXPECT_TRUE(contains(format.message(), "the manifest says 'hsaco'"));
  Status wave = loadEdited([](Manifest &m) { m.kernels[0].waveSize = 48; });
  EXPECT_TRUE(contains(wave.message(), "has wave size 48"));
}

// The manifest is a sidecar anyone can edit (its hash covers the code
// object, not itself): every field memory safety depends on is checked
// against the code object's own fa_host_info. lds_bytes 0 used to make the
// kernel write past the emulator's LDS block (SIGSEGV).
TEST(ModuleLoadTest, ManifestDisagreesWithTheCodeObject) {
  Status lds = loadEdited([](Manifest &m) { m.kernels[0].ldsBytes = 0; });
  EXPECT_EQ(lds.code(), ErrorCode::ManifestError);
  EXPECT_EQ(lds.message(),
            "kernel 'attn_f32': the manifest says lds_bytes 0, the code "
            "object says 9216 (the manifest does not describe this code "
            "object)");
  EXPECT_EQ(lds.kernel(), "attn_f32");
  Status threads = loadEdited([](Manifest &m) { m.kernels[0].threads = 128; });
  EXPECT_EQ(threads.message(),
            "kernel 'attn_f32': the manifest says threads 128, the code "
            "object says 64 (the manifest does not describe this code "
            "object)");
  Status dtype =
      loadEdited([](Manifest &m) { m.kernels[0].dtype = DType::F16; });
  EXPECT_TRUE(contains(dtype.message(), "the manifest says dtype f16, the "
                                        "code object says f32"))
      << dtype.message();
  Status d = loadEdited([](Manifest &m) { m.kernels[0].headDim = 128; });
  EXPECT_TRUE(contains(d.message(), "the manifest says head_dim 128, the "
                                    "code object says 64"))
      << d.message();
  Status lse = loadEdited([](Manifest &m) { m.kernels[0].hasLse = false; });
  EXPECT_TRUE(contains(lse.message(), "the manifest says has_lse false, the "
                                      "code object says true"))
      << lse.message();
  Status wave = loadEdited([](Manifest &m) { m.kernels[0].waveSize = 64; });
  EXPECT_TRUE(contains(wave.message(), "the manifest says wave_size 64, the "
                                       "code object says 32"))
      << wave.message();
  Status sizes =
      loadEdited([](Manifest &m) { m.kernels[0].staticSizes[3] = 128; });
  EXPECT_TRUE(contains(sizes.message(),
                       "the manifest says static_sizes [-1, -1, -1, 128, -1], "
                       "the code object says [-1, -1, -1, -1, -1]"))
      << sizes.message();
}

// The record itself: from another ABI, or damaged.
TEST(ModuleLoadTest, HostInfoFromAnotherAbi) {
  Manifest manifest = test::fixtureManifest("attn_f32");
  const KernelInfo &k = manifest.kernels[0];
  fa_host_info good = {};
  good.abi_version = 1;
  good.info_bytes = sizeof(fa_host_info);
  good.num_words = FA_ABI_V1_NUM_WORDS;
  good.env_bytes = sizeof(fa_host_env);
  good.lds_bytes = uint64_t(k.ldsBytes);
  good.threads = uint32_t(k.threads);
  good.wave_size = uint32_t(k.waveSize);
  good.dtype = FA_HOST_DTYPE_F32;
  good.head_dim = uint32_t(k.headDim);
  good.block_m = uint32_t(k.blockM);
  good.block_n = uint32_t(k.blockN);
  good.has_lse = 1;
  good.index_bits = 64;
  for (int64_t &size : good.static_sizes)
    size = -1;
  FA_ASSERT_OK(detail::checkHostInfo(k, good));

  fa_host_info info = good;
  info.abi_version = FA_ABI_VERSION + 1;
  Status s = detail::checkHostInfo(k, info);
  EXPECT_EQ(s.code(), ErrorCode::Unsupported);
  EXPECT_EQ(s.message(), "kernel 'attn_f32': the code object's kernel ABI "
                         "version is " +
                             std::to_string(FA_ABI_VERSION + 1) +
                             ", this runtime implements versions 1 to " +
                             std::to_string(FA_ABI_VERSION) +
                             " (compiled for another kernel ABI; rebuild it "
                             "with this fac)");
  // A version-2 record must take version 2's words, and the manifest must
  // say the same version.
  info = good;
  info.abi_version = 2;
  EXPECT_EQ(detail::checkHostInfo(k, info).message(),
            "kernel 'attn_f32': the code object's ABI word count is 44, ABI "
            "version 2 has 55 (compiled for another kernel ABI; rebuild it "
            "with this fac)");
  info.num_words = FA_ABI_V2_NUM_WORDS;
  s = detail::checkHostInfo(k, info);
  EXPECT_EQ(s.code(), ErrorCode::ManifestError);
  EXPECT_EQ(s.message(), "kernel 'attn_f32': the manifest says abi_version "
                         "1, the code object says 2 (the manifest does not "
                         "describe this code object)");
  // Version 3 (paged K/V) takes 67 words.
  info = good;
  info.abi_version = 3;
  EXPECT_EQ(detail::checkHostInfo(k, info).message(),
            "kernel 'attn_f32': the code object's ABI word count is 44, ABI "
            "version 3 has 67 (compiled for another kernel ABI; rebuild it "
            "with this fac)");
  info.num_words = FA_ABI_V3_NUM_WORDS;
  EXPECT_EQ(detail::checkHostInfo(k, info).message(),
            "kernel 'attn_f32': the manifest says abi_version 1, the code "
            "object says 3 (the manifest does not describe this code "
            "object)");
  // Version 4 (variable-length batches) takes 77 words.
  info.abi_version = 4;
  EXPECT_EQ(detail::checkHostInfo(k, info).message(),
            "kernel 'attn_f32': the code object's ABI word count is 67, ABI "
            "version 4 has 77 (compiled for another kernel ABI; rebuild it "
            "with this fac)");
  info.num_words = FA_ABI_V4_NUM_WORDS;
  EXPECT_EQ(detail::checkHostInfo(k, info).message(),
            "kernel 'attn_f32': the manifest says abi_version 1, the code "
            "object says 4 (the manifest does not describe this code "
            "object)");
  info = good;
  info.info_bytes = 64;
  EXPECT_TRUE(contains(detail::checkHostInfo(k, info).message(),
                       "the code object's fa_host_info size is 64, this "
                       "runtime's is 96"));
  info = good;
  info.num_words = 24;
  EXPECT_TRUE(contains(detail::checkHostInfo(k, info).message(),
                       "the code object's ABI word count is 24, ABI "
                       "version 1 has 44"));
  info = good;
  info.env_bytes = 80;
  EXPECT_TRUE(contains(detail::checkHostInfo(k, info).message(),
                       "the code object's fa_host_env size is 80, this "
                       "runtime's is 104"));
  info = good;
  info.dtype = 9;
  s = detail::checkHostInfo(k, info);
  EXPECT_EQ(s.code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(s.message(), "kernel 'attn_f32': the code object's fa_host_info "
                         "has unknown element type 9");
  info = good;
  info.block_m = 32;
  EXPECT_TRUE(contains(detail::checkHostInfo(k, info).message(),
                       "the manifest says block_m 16, the code object says "
                       "32"));
  info = good;
  info.index_bits = 32;
  EXPECT_TRUE(contains(detail::checkHostInfo(k, info).message(),
                       "the manifest says index_bits 64, the code object "
                       "says 32"));
}

// A code object built without the record (an older fac) is refused.
TEST(ModuleLoadTest, CodeObjectWithoutHostInfo) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = test::readBytes(test::fixturePath("attn_f32"));
  const std::string name = "attn_f32_host_info";
  auto at = std::search(bytes.begin(), bytes.end(), name.begin(), name.end());
  ASSERT_NE(at, bytes.end());
  at[name.size() - 1] = 'X'; // the dynamic symbol is now attn_f32_host_infX
  std::string path = test::writeCodeObject(dir, "attn.so", bytes,
                                           test::fixtureManifest("attn_f32"));
  Expected<Module> m = Module::load(test::hostDevice(), path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(m.status().message(),
            "code object has no fa_host_info for kernel 'attn_f32' (symbol "
            "'attn_f32_host_info'); rebuild it with this fac");
  EXPECT_EQ(m.status().call(), "dlsym");
}

/// The fixture with its ELF header edited by `edit`, loaded with a manifest
/// that matches the edited bytes.
Status loadWithHeader(void (*edit)(Elf64_Ehdr &, size_t fileBytes)) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = test::readBytes(test::fixturePath("attn_f32"));
  Elf64_Ehdr h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  edit(h, bytes.size());
  std::memcpy(bytes.data(), &h, sizeof(h));
  std::string path = test::writeCodeObject(dir, "attn.so", bytes,
                                           test::fixtureManifest("attn_f32"));
  Expected<Module> m = Module::load(test::hostDevice(), path);
  return m ? Status::success() : m.takeStatus();
}

// The tables are read as arrays of Elf64_Phdr / Elf64_Shdr, so their entry
// sizes must be those: a 1-byte e_phentsize with the table moved to the end
// of the file used to read 56-byte headers past the end of the buffer.
TEST(ModuleLoadTest, WrongElfEntrySizes) {
  Status ph = loadWithHeader([](Elf64_Ehdr &h, size_t fileBytes) {
    h.e_phentsize = 1;
    h.e_phoff = fileBytes - h.e_phnum;
  });
  EXPECT_EQ(ph.code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(ph.message(), "code object's program header entries are 1 bytes, "
                          "ELF64 program header entries are 56");
  Status big =
      loadWithHeader([](Elf64_Ehdr &h, size_t) { h.e_phentsize = 4096; });
  EXPECT_EQ(big.message(), "code object's program header entries are 4096 "
                           "bytes, ELF64 program header entries are 56");
  Status sh = loadWithHeader([](Elf64_Ehdr &h, size_t) { h.e_shentsize = 32; });
  EXPECT_EQ(sh.code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(sh.message(), "code object's section header entries are 32 "
                          "bytes, ELF64 section header entries are 64");
}

} // namespace
