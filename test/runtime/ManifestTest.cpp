//===- ManifestTest.cpp - Reading, checking and writing manifests ---------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace fa;

namespace {

/// The example of docs/manifest.md.
const char *docExample = R"({
  "fa_manifest_version": 1,
  "compiler": "fac 0.1.0",
  "source_hash": "fnv1a64:0123456789abcdef",
  "target": "host",
  "code_object": {
    "file": "attn.so",
    "format": "elf-shared-object",
    "bytes": 16384,
    "hash": "fnv1a64:0123456789abcdef"
  },
  "kernels": [
    {
      "name": "attention_kernel",
      "symbol": "attention_kernel_host",
      "abi_version": 1,
      "dtype": "f16",
      "head_dim": 64,
      "causal": true,
      "scale": 0.125,
      "has_lse": false,
      "block_m": 64,
      "block_n": 64,
      "threads": 256,
      "wave_size": 64,
      "lds_bytes": 33280
    }
  ]
})";

std::string replace(std::string text, const std::string &from,
                    const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::string errorOf(const std::string &json) {
  Expected<Manifest> m = parseManifest(json);
  EXPECT_FALSE(m.ok());
  return m ? "" : m.status().message();
}

TEST(ManifestTest, ParsesTheDocumentedExample) {
  Expected<Manifest> m = parseManifest(docExample);
  FA_ASSERT_OK(m);
  EXPECT_EQ(m->target, "host");
  EXPECT_EQ(m->compiler, "fac 0.1.0");
  EXPECT_EQ(m->codeObjectFile, "attn.so");
  EXPECT_EQ(m->codeObjectFormat, "elf-shared-object");
  EXPECT_EQ(m->codeObjectBytes, 16384u);
  EXPECT_EQ(m->codeObjectHash, "fnv1a64:0123456789abcdef");
  ASSERT_EQ(m->kernels.size(), 1u);
  const KernelInfo &k = m->kernels[0];
  EXPECT_EQ(k.name, "attention_kernel");
  EXPECT_EQ(k.symbol, "attention_kernel_host");
  EXPECT_EQ(k.abiVersion, 1);
  EXPECT_EQ(k.dtype, DType::F16);
  EXPECT_EQ(k.headDim, 64);
  EXPECT_TRUE(k.causal);
  EXPECT_EQ(k.scale, 0.125);
  EXPECT_FALSE(k.hasLse);
  EXPECT_EQ(k.blockM, 64);
  EXPECT_EQ(k.blockN, 64);
  EXPECT_EQ(k.threads, 256);
  EXPECT_EQ(k.waveSize, 64);
  EXPECT_EQ(k.ldsBytes, 33280);
}

TEST(ManifestTest, WriteThenReadIsIdentity) {
  Expected<Manifest> m = parseManifest(docExample);
  FA_ASSERT_OK(m);
  m->kernels[0].scale = 0.08838834764831843; // needs all 17 digits
  Expected<Manifest> again = parseManifest(formatManifest(*m));
  FA_ASSERT_OK(again);
  EXPECT_EQ(formatManifest(*again), formatManifest(*m));
  EXPECT_EQ(again->kernels[0].scale, 0.08838834764831843);
}

TEST(ManifestTest, NamesTheBadField) {
  std::string doc = docExample;
  EXPECT_EQ(errorOf(replace(doc, "\"head_dim\": 64,", "")),
            "manifest field 'kernels[0].head_dim': missing");
  EXPECT_EQ(errorOf(replace(doc, "\"causal\": true", "\"causal\": 1")),
            "manifest field 'kernels[0].causal': expected a boolean, got a "
            "number");
  EXPECT_EQ(errorOf(replace(doc, "\"dtype\": \"f16\"", "\"dtype\": \"f8\"")),
            "manifest field 'kernels[0].dtype': unknown element type 'f8' "
            "(expected f16, bf16 or f32)");
  EXPECT_EQ(errorOf(replace(doc, "\"threads\": 256", "\"threads\": 0")),
            "manifest field 'kernels[0].threads': 0 is outside [1, 65536]");
  EXPECT_EQ(errorOf(replace(doc, "\"block_m\": 64", "\"block_m\": 6.5")),
            "manifest field 'kernels[0].block_m': expected an integer, got "
            "6.5");
  EXPECT_EQ(errorOf(replace(doc, "\"scale\": 0.125", "\"scale\": -1")),
            "manifest field 'kernels[0].scale': must be a positive finite "
            "number, got -1");
  EXPECT_EQ(errorOf(replace(doc, "\"target\": \"host\",", "")),
            "manifest field 'target': missing");
  EXPECT_EQ(errorOf(replace(doc, "\"bytes\": 16384", "\"bytes\": \"16384\"")),
            "manifest field 'code_object.bytes': expected a number, got a "
            "string");
  EXPECT_EQ(errorOf(replace(doc, "fnv1a64:0123456789abcdef\"\n  },",
                            "crc32:01234567\"\n  },")),
            "manifest field 'code_object.hash': expected \"fnv1a64:\" and 16 "
            "lowercase hex digits, got \"crc32:01234567\"");
  EXPECT_EQ(errorOf(replace(doc, "\"fa_manifest_version\": 1",
                            "\"fa_manifest_version\": 2")),
            "manifest field 'fa_manifest_version': version 2 is not supported "
            "(this runtime reads version 1)");
}

TEST(ManifestTest, RejectsStructuralProblems) {
  std::string doc = docExample;
  size_t open = doc.find("\"kernels\": [") + 12;
  size_t close = doc.rfind(']');
  std::string noKernels = doc.substr(0, open) + doc.substr(close);
  EXPECT_EQ(errorOf(noKernels),
            "manifest field 'kernels': empty: a code object needs one kernel");
  std::string kernel = doc.substr(open, close - open);
  std::string twice =
      doc.substr(0, open) + kernel + "," + kernel + doc.substr(close);
  EXPECT_EQ(errorOf(twice), "manifest field 'kernels': duplicate kernel name "
                            "'attention_kernel'");
  EXPECT_EQ(errorOf("[1, 2]"), "manifest must be a JSON object");
  EXPECT_EQ(errorOf("{\"fa_manifest_version\": 1,"),
            "malformed manifest JSON: line 1, column 27: expected a string "
            "key");
}

TEST(ManifestTest, Fnv1a64KnownVectors) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ull);
  EXPECT_EQ(formatFnv1a64(0xaf63dc4c8601ec8cull), "fnv1a64:af63dc4c8601ec8c");
  EXPECT_EQ(formatFnv1a64(1), "fnv1a64:0000000000000001");
}

TEST(ManifestTest, CodeObjectIdentity) {
  Expected<Manifest> m = parseManifest(docExample);
  FA_ASSERT_OK(m);
  std::vector<uint8_t> bytes = {1, 2, 3};
  Status size = checkCodeObjectIdentity(*m, bytes);
  EXPECT_EQ(size.code(), ErrorCode::CorruptCodeObject);
  EXPECT_EQ(size.message().rfind("code object is 3 bytes but the manifest "
                                 "says 16384",
                                 0),
            0u);
  m->codeObjectBytes = 3;
  Status hash = checkCodeObjectIdentity(*m, bytes);
  EXPECT_EQ(hash.code(), ErrorCode::CorruptCodeObject);
  EXPECT_NE(hash.message().find("does not match the manifest's "
                                "fnv1a64:0123456789abcdef"),
            std::string::npos);
  m->codeObjectHash = formatFnv1a64(fnv1a64(bytes.data(), 3));
  FA_ASSERT_OK(checkCodeObjectIdentity(*m, bytes));
}

} // namespace
