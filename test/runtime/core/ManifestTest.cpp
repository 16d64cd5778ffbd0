//===- ManifestTest.cpp - Reading, checking and writing manifests ---------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <clocale>
#include <cstdlib>

using namespace fa;

namespace {

/// The example of docs/manifest.md, required fields only.
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
  // Optional fields take their defaults.
  EXPECT_EQ(k.dynamicLdsBytes, 0);
  EXPECT_EQ(k.indexBits, 64);
  EXPECT_EQ(k.ldsPad, 0);
  EXPECT_EQ(k.stages, 1);
  EXPECT_EQ(k.staticSizes[0], -1);
  EXPECT_TRUE(k.resources.empty());
  EXPECT_EQ(k.windowLeft, -1);
  EXPECT_EQ(k.windowRight, -1);
  EXPECT_EQ(k.softcap, 0);
  EXPECT_FALSE(k.hasWindow());
  EXPECT_FALSE(k.hasSoftcap());
}

/// A manifest with every field away from its default; strings that need
/// escaping.
Manifest everyField() {
  Manifest m;
  m.compiler = "fac \"0.1\" \\ test \x01";
  m.sourceHash = formatFnv1a64(42);
  m.target = "gfx906";
  m.codeObjectFile = "we\"ird\\na\xc3\xafve \xe2\x82\xac.hsaco";
  m.codeObjectFormat = "hsaco";
  m.codeObjectBytes = (uint64_t(1) << 40) + 3;
  m.codeObjectHash = formatFnv1a64(0xfedcba9876543210ull);
  for (int i = 0; i < 2; ++i) {
    KernelInfo k;
    k.name = "k\"" + std::to_string(i);
    k.symbol = k.name + "_host";
    k.abiVersion = 3;
    k.paged = true; // version 3 is the paged ABI
    k.dtype = i ? DType::BF16 : DType::F16;
    k.headDim = 111;
    k.causal = i == 0;
    k.scale = 0.08838834764831843 + i; // needs all 17 digits
    k.hasLse = i == 1;
    k.blockM = 128;
    k.blockN = 32;
    k.threads = 512;
    k.waveSize = 32;
    k.ldsBytes = 4096;
    k.dynamicLdsBytes = 165376;
    k.indexBits = 32;
    k.ldsPad = 8;
    k.stages = 2;
    int64_t sizes[5] = {2, 8, 2, -1, 4096};
    std::copy(sizes, sizes + 5, k.staticSizes);
    k.resources = {{"vgprs", 128}, {"sgprs", 40}, {"scratch_bytes", 0}};
    k.windowLeft = i ? 4096 : 0;
    k.windowRight = i ? -1 : 2147483647;
    k.softcap = 0.1 + 30 * i; // needs all 17 digits
    k.alibi = true;
    k.sinks = i == 0;
    m.kernels.push_back(k);
  }
  return m;
}

void expectSameManifest(const Manifest &a, const Manifest &b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.compiler, b.compiler);
  EXPECT_EQ(a.sourceHash, b.sourceHash);
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.codeObjectFile, b.codeObjectFile);
  EXPECT_EQ(a.codeObjectFormat, b.codeObjectFormat);
  EXPECT_EQ(a.codeObjectBytes, b.codeObjectBytes);
  EXPECT_EQ(a.codeObjectHash, b.codeObjectHash);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const KernelInfo &x = a.kernels[i], &y = b.kernels[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.symbol, y.symbol);
    EXPECT_EQ(x.abiVersion, y.abiVersion);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.headDim, y.headDim);
    EXPECT_EQ(x.causal, y.causal);
    EXPECT_EQ(x.scale, y.scale); // bit-exact
    EXPECT_EQ(x.hasLse, y.hasLse);
    EXPECT_EQ(x.blockM, y.blockM);
    EXPECT_EQ(x.blockN, y.blockN);
    EXPECT_EQ(x.threads, y.threads);
    EXPECT_EQ(x.waveSize, y.waveSize);
    EXPECT_EQ(x.ldsBytes, y.ldsBytes);
    EXPECT_EQ(x.dynamicLdsBytes, y.dynamicLdsBytes);
    EXPECT_EQ(x.indexBits, y.indexBits);
    EXPECT_EQ(x.ldsPad, y.ldsPad);
    EXPECT_EQ(x.stages, y.stages);
    for (int d = 0; d < 5; ++d)
      EXPECT_EQ(x.staticSizes[d], y.staticSizes[d]) << d;
    EXPECT_EQ(x.resources, y.resources);
    EXPECT_EQ(x.role, y.role);
    EXPECT_EQ(x.splitKv, y.splitKv);
    EXPECT_EQ(x.combine, y.combine);
    EXPECT_EQ(x.gqaPacked, y.gqaPacked);
    EXPECT_EQ(x.paged, y.paged);
    EXPECT_EQ(x.varlen, y.varlen);
    EXPECT_EQ(x.windowLeft, y.windowLeft);
    EXPECT_EQ(x.windowRight, y.windowRight);
    EXPECT_EQ(x.softcap, y.softcap); // bit-exact
    EXPECT_EQ(x.alibi, y.alibi);
    EXPECT_EQ(x.sinks, y.sinks);
  }
}

TEST(ManifestTest, WriteThenReadIsIdentity) {
  Manifest m = everyField();
  std::string text = formatManifest(m);
  Expected<Manifest> again = parseManifest(text);
  FA_ASSERT_OK(again);
  expectSameManifest(*again, m);
  EXPECT_EQ(formatManifest(*again), text);
}

// The documented layout: one member per line, static_sizes and resources
// on one line (fac's lit tests check it).
TEST(ManifestTest, WritesTheDocumentedLayout) {
  Manifest m = everyField();
  m.kernels.resize(1);
  std::string text = formatManifest(m);
  EXPECT_EQ(text.rfind("{\n  \"fa_manifest_version\": 1,\n  \"compiler\": "
                       "\"fac \\\"0.1\\\" \\\\ test \\u0001\",\n",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("\n  \"code_object\": {\n    \"file\": "
                      "\"we\\\"ird\\\\na\xc3\xafve \xe2\x82\xac.hsaco\",\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  \"kernels\": [\n    {\n      \"name\": "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n      \"scale\": 0.08838834764831843,\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n      \"static_sizes\": {\"B\": 2, \"Hq\": 8, "
                      "\"Hkv\": 2, \"Lq\": -1, \"Lk\": 4096},\n      "
                      "\"resources\": {\"vgprs\": 128, \"sgprs\": 40, "
                      "\"scratch_bytes\": 0}\n    }\n  ]\n}\n"),
            std::string::npos)
      << text;
}

/// Sets LC_NUMERIC to a locale whose decimal point is ',' while it lives.
/// When none is installed it builds de_DE with localedef (libc-bin; the
/// sources come with Debian's `locales`) into a scratch LOCPATH.
class CommaDecimalLocale {
public:
  CommaDecimalLocale() {
    saved = std::setlocale(LC_NUMERIC, nullptr);
    if (trySet())
      return;
    std::string cmd = "localedef -i de_DE -f UTF-8 '" +
                      dir.file("de_DE.UTF-8") + "' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0)
      return;
    setenv("LOCPATH", dir.path().c_str(), 1);
    trySet();
  }
  ~CommaDecimalLocale() {
    std::setlocale(LC_NUMERIC, saved.c_str());
    unsetenv("LOCPATH");
  }
  bool active() const { return std::localeconv()->decimal_point[0] == ','; }

private:
  bool trySet() {
    for (const char *name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
                             "fr_FR.utf8", "ru_RU.UTF-8", "de_DE"})
      if (std::setlocale(LC_NUMERIC, name) && active())
        return true;
    return false;
  }
  test::ScratchDir dir;
  std::string saved;
};

// A program embedding the runtime may run under any locale; "0.125" must
// not read as 0 nor be written as "0,125".
TEST(ManifestTest, IndependentOfTheNumericLocale) {
  Manifest m = everyField();
  std::string inC = formatManifest(m);
  CommaDecimalLocale comma;
  if (!comma.active())
    GTEST_SKIP() << "no locale with a decimal comma available";
  char probe[16];
  std::snprintf(probe, sizeof(probe), "%g", 0.5);
  ASSERT_STREQ(probe, "0,5"); // the locale is in force
  EXPECT_EQ(formatManifest(m), inC);
  Expected<Manifest> back = parseManifest(inC);
  FA_ASSERT_OK(back);
  expectSameManifest(*back, m);
  Expected<Manifest> doc = parseManifest(docExample);
  FA_ASSERT_OK(doc);
  EXPECT_EQ(doc->kernels[0].scale, 0.125);
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
  EXPECT_EQ(errorOf(replace(doc, "\"threads\": 256",
                            "\"threads\": 9223372036854775808")),
            "manifest field 'kernels[0].threads': 9223372036854775808 is "
            "outside [1, 65536]");
  EXPECT_EQ(errorOf(replace(doc, "\"bytes\": 16384", "\"bytes\": 1e30")),
            "manifest field 'code_object.bytes': expected an integer, got "
            "1e+30");
  EXPECT_EQ(errorOf(replace(doc, "\"lds_bytes\": 33280",
                            "\"lds_bytes\": 33280, \"resources\": "
                            "{\"vgprs\": \"many\"}")),
            "manifest field 'kernels[0].resources.vgprs': expected a number, "
            "got a string");
  EXPECT_EQ(errorOf(replace(doc, "\"lds_bytes\": 33280",
                            "\"lds_bytes\": 33280, \"stages\": 0")),
            "manifest field 'kernels[0].stages': 0 is outside [1, 16]");
  EXPECT_EQ(errorOf(replace(doc, "\"has_lse\": false",
                            "\"has_lse\": false, \"causal\": false")),
            "malformed manifest JSON: duplicate key \"causal\"");
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
            "malformed manifest JSON: line 1, column 27: syntax error while "
            "parsing object key - unexpected end of input; expected string "
            "literal");
}

/// A split-KV attention (ABI version 2): the split kernel, then its combine
/// kernel, required fields only.
const char *splitExample = R"({
  "fa_manifest_version": 1,
  "target": "host",
  "code_object": {"file": "attn.so", "format": "elf-shared-object",
                  "bytes": 16384, "hash": "fnv1a64:0123456789abcdef"},
  "kernels": [
    {"name": "split", "symbol": "split_host", "abi_version": 2,
     "kv_splits": "runtime", "combine": "merge", "gqa_packed": true,
     "dtype": "f16", "head_dim": 128, "causal": true, "scale": 0.125,
     "has_lse": true, "block_m": 16, "block_n": 64, "threads": 256,
     "wave_size": 64, "lds_bytes": 16384},
    {"name": "merge", "symbol": "merge_host", "abi_version": 2,
     "role": "combine",
     "dtype": "f16", "head_dim": 128, "causal": true, "scale": 0.125,
     "has_lse": true, "block_m": 4, "block_n": 1, "threads": 64,
     "wave_size": 64, "lds_bytes": 0}
  ]
})";

TEST(ManifestTest, ParsesASplitKvPair) {
  Expected<Manifest> m = parseManifest(splitExample);
  FA_ASSERT_OK(m);
  ASSERT_EQ(m->kernels.size(), 2u);
  const KernelInfo &split = m->kernels[0], &merge = m->kernels[1];
  EXPECT_EQ(split.abiVersion, 2);
  EXPECT_EQ(split.role, KernelRole::Attention);
  EXPECT_FALSE(split.isCombine());
  EXPECT_TRUE(split.splitKv);
  EXPECT_EQ(split.combine, "merge");
  EXPECT_TRUE(split.gqaPacked);
  EXPECT_TRUE(merge.isCombine());
  EXPECT_FALSE(merge.splitKv);
  EXPECT_EQ(merge.combine, "");
  EXPECT_FALSE(merge.gqaPacked);

  // Written back after abi_version, and read back the same; a dense
  // kernel's entry has none of them.
  std::string text = formatManifest(*m);
  EXPECT_NE(text.find("\"abi_version\": 2,\n      \"kv_splits\": "
                      "\"runtime\",\n      \"combine\": \"merge\",\n      "
                      "\"gqa_packed\": true,\n      \"dtype\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"abi_version\": 2,\n      \"role\": \"combine\",\n"
                      "      \"dtype\""),
            std::string::npos)
      << text;
  Expected<Manifest> back = parseManifest(text);
  FA_ASSERT_OK(back);
  expectSameManifest(*back, *m);
  std::string dense = formatManifest(*parseManifest(docExample));
  for (const char *field : {"role", "kv_splits", "combine", "gqa_packed"})
    EXPECT_EQ(dense.find(field), std::string::npos) << field;
}

// Each inconsistency of the split-KV fields names the field and what is
// wrong.
TEST(ManifestTest, RejectsInconsistentSplitKvFields) {
  std::string doc = splitExample;
  const std::string splitFields =
      "\"abi_version\": 2,\n     \"kv_splits\": \"runtime\", \"combine\": "
      "\"merge\", \"gqa_packed\": true,";
  auto split = [&](const std::string &fields) {
    return replace(doc, splitFields, fields);
  };
  EXPECT_EQ(errorOf(split("\"abi_version\": 2, \"kv_splits\": \"static\", "
                          "\"combine\": \"merge\",")),
            "manifest field 'kernels[0].kv_splits': unknown value \"static\" "
            "(expected \"runtime\": the runtime chooses the split count per "
            "launch)");
  EXPECT_EQ(errorOf(split("\"abi_version\": 2, \"kv_splits\": 4, "
                          "\"combine\": \"merge\",")),
            "manifest field 'kernels[0].kv_splits': expected a string, got a "
            "number");
  EXPECT_EQ(errorOf(split("\"abi_version\": 1, \"kv_splits\": \"runtime\", "
                          "\"combine\": \"merge\",")),
            "manifest field 'kernels[0].kv_splits': a split-KV kernel takes "
            "ABI version 2, this one says abi_version 1");
  EXPECT_EQ(errorOf(split("\"abi_version\": 2,")),
            "manifest field 'kernels[0].abi_version': version 2 is the "
            "split-KV ABI: an attention kernel of version 2 needs "
            "\"kv_splits\": \"runtime\" and a \"combine\" kernel");
  EXPECT_EQ(errorOf(split("\"abi_version\": 2, \"kv_splits\": \"runtime\",")),
            "manifest field 'kernels[0].combine': missing: a split-KV kernel "
            "names the kernel that combines its splits");
  EXPECT_EQ(errorOf(split("\"abi_version\": 1, \"combine\": \"merge\",")),
            "manifest field 'kernels[0].combine': only a split-KV kernel "
            "(\"kv_splits\": \"runtime\") has a combine kernel");
  EXPECT_EQ(errorOf(split("\"abi_version\": 2, \"kv_splits\": \"runtime\", "
                          "\"combine\": \"\",")),
            "manifest field 'kernels[0].combine': empty");
  EXPECT_EQ(errorOf(split("\"abi_version\": 2, \"kv_splits\": \"runtime\", "
                          "\"combine\": \"marge\",")),
            "manifest field 'kernels[0].combine': no kernel 'marge' in the "
            "manifest (it has: split, merge)");
  EXPECT_EQ(errorOf(split("\"abi_version\": 2, \"kv_splits\": \"runtime\", "
                          "\"combine\": \"split\",")),
            "manifest field 'kernels[0].combine': kernel 'split' is not a "
            "combine kernel (its role is \"attention\")");
  // split_direct: a split kernel's (it writes O itself at S = 1).
  Expected<Manifest> direct =
      parseManifest(split("\"abi_version\": 2, \"kv_splits\": \"runtime\", "
                          "\"split_direct\": true, \"combine\": \"merge\","));
  FA_ASSERT_OK(direct);
  EXPECT_TRUE(direct->kernels[0].splitDirect);
  EXPECT_FALSE(parseManifest(doc)->kernels[0].splitDirect);
  std::string directText = formatManifest(*direct);
  EXPECT_NE(directText.find("\"kv_splits\": \"runtime\",\n      "
                            "\"split_direct\": true,\n      \"combine\""),
            std::string::npos)
      << directText;
  expectSameManifest(*parseManifest(directText), *direct);
  EXPECT_EQ(errorOf(split("\"abi_version\": 1, \"split_direct\": true,")),
            "manifest field 'kernels[0].split_direct': only a split-KV kernel "
            "(\"kv_splits\": \"runtime\") writes O directly at S = 1");
  EXPECT_EQ(errorOf(split("\"abi_version\": 2, \"kv_splits\": \"runtime\", "
                          "\"split_direct\": 1, \"combine\": \"merge\",")),
            "manifest field 'kernels[0].split_direct': expected a boolean, "
            "got a number");
  EXPECT_EQ(errorOf(split("\"abi_version\": 2, \"kv_splits\": \"runtime\", "
                          "\"combine\": \"merge\", \"gqa_packed\": 1,")),
            "manifest field 'kernels[0].gqa_packed': expected a boolean, got "
            "a number");

  const std::string mergeFields = "\"abi_version\": 2,\n     \"role\": "
                                  "\"combine\",";
  auto merge = [&](const std::string &fields) {
    return replace(doc, mergeFields, fields);
  };
  EXPECT_EQ(errorOf(merge("\"abi_version\": 2, \"role\": \"merge\",")),
            "manifest field 'kernels[1].role': unknown role \"merge\" "
            "(expected \"attention\" or \"combine\")");
  EXPECT_EQ(errorOf(merge("\"abi_version\": 1, \"role\": \"combine\",")),
            "manifest field 'kernels[1].role': a combine kernel takes the "
            "split-KV ABI (abi_version 2), this one says abi_version 1");
  EXPECT_EQ(errorOf(merge("\"abi_version\": 2, \"role\": \"combine\", "
                          "\"kv_splits\": \"runtime\",")),
            "manifest field 'kernels[1].kv_splits': a combine kernel has no "
            "kv_splits (it runs on grid (ceil(Lq / block_m), Hq, B) after "
            "its split kernel)");
  EXPECT_EQ(errorOf(merge("\"abi_version\": 2, \"role\": \"combine\", "
                          "\"gqa_packed\": true,")),
            "manifest field 'kernels[1].gqa_packed': a combine kernel has no "
            "gqa_packed (it runs on grid (ceil(Lq / block_m), Hq, B) after "
            "its split kernel)");
  EXPECT_EQ(errorOf(merge("\"abi_version\": 2, \"role\": \"combine\", "
                          "\"split_direct\": true,")),
            "manifest field 'kernels[1].split_direct': a combine kernel has "
            "no split_direct (it runs on grid (ceil(Lq / block_m), Hq, B) "
            "after its split kernel)");
  EXPECT_EQ(errorOf(merge("\"abi_version\": 2, \"role\": \"combine\", "
                          "\"combine\": \"split\",")),
            "manifest field 'kernels[1].combine': a combine kernel has no "
            "combine (it runs on grid (ceil(Lq / block_m), Hq, B) after its "
            "split kernel)");
  // The two kernels share O, LSE and the workspace.
  size_t second = doc.find("\"name\": \"merge\"");
  auto mergeWith = [&](const std::string &from, const std::string &to) {
    std::string edited = doc;
    size_t at = edited.find(from, second);
    EXPECT_NE(at, std::string::npos) << from;
    return edited.replace(at, from.size(), to);
  };
  EXPECT_EQ(errorOf(mergeWith("\"dtype\": \"f16\"", "\"dtype\": \"f32\"")),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "dtype f32, kernel 'split' has f16 (the two share the O and LSE "
            "buffers and the workspace)");
  EXPECT_EQ(errorOf(mergeWith("\"head_dim\": 128", "\"head_dim\": 64")),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "head_dim 64, kernel 'split' has 128 (the two share the O and LSE "
            "buffers and the workspace)");
  EXPECT_EQ(errorOf(mergeWith("\"has_lse\": true", "\"has_lse\": false")),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "has_lse false, kernel 'split' has true (the two share the O and "
            "LSE buffers and the workspace)");
}

/// A paged split-KV attention (ABI version 3): both kernels say version 3
/// and paged; a plain paged kernel after them.
const char *pagedExample = R"({
  "fa_manifest_version": 1,
  "target": "host",
  "code_object": {"file": "attn.so", "format": "elf-shared-object",
                  "bytes": 16384, "hash": "fnv1a64:0123456789abcdef"},
  "kernels": [
    {"name": "split", "symbol": "split_host", "abi_version": 3,
     "kv_splits": "runtime", "combine": "merge", "paged": true,
     "dtype": "f16", "head_dim": 128, "causal": true, "scale": 0.125,
     "has_lse": true, "block_m": 16, "block_n": 64, "threads": 256,
     "wave_size": 64, "lds_bytes": 16384},
    {"name": "merge", "symbol": "merge_host", "abi_version": 3,
     "role": "combine", "paged": true,
     "dtype": "f16", "head_dim": 128, "causal": true, "scale": 0.125,
     "has_lse": true, "block_m": 4, "block_n": 1, "threads": 64,
     "wave_size": 64, "lds_bytes": 0},
    {"name": "plain", "symbol": "plain_host", "abi_version": 3, "paged": true,
     "dtype": "f16", "head_dim": 128, "causal": false, "scale": 0.125,
     "has_lse": false, "block_m": 16, "block_n": 64, "threads": 256,
     "wave_size": 64, "lds_bytes": 16384}
  ]
})";

TEST(ManifestTest, ParsesPagedKernels) {
  Expected<Manifest> m = parseManifest(pagedExample);
  FA_ASSERT_OK(m);
  ASSERT_EQ(m->kernels.size(), 3u);
  const KernelInfo &split = m->kernels[0], &merge = m->kernels[1],
                   &plain = m->kernels[2];
  EXPECT_TRUE(split.paged && split.splitKv);
  EXPECT_EQ(split.abiVersion, 3);
  EXPECT_TRUE(merge.paged && merge.isCombine());
  EXPECT_TRUE(plain.paged && !plain.splitKv);
  // Written back after the split-KV fields, read back the same; a dense
  // kernel's entry has no "paged".
  std::string text = formatManifest(*m);
  EXPECT_NE(text.find("\"combine\": \"merge\",\n      \"paged\": true,\n"
                      "      \"dtype\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"abi_version\": 3,\n      \"paged\": true,\n"),
            std::string::npos)
      << text;
  Expected<Manifest> back = parseManifest(text);
  FA_ASSERT_OK(back);
  expectSameManifest(*back, *m);
  EXPECT_EQ(formatManifest(*parseManifest(docExample)).find("paged"),
            std::string::npos);
  // A combine kernel of version 3 need not say paged (it reads no cache).
  Expected<Manifest> quiet = parseManifest(
      replace(pagedExample, "\"role\": \"combine\", \"paged\": true,",
              "\"role\": \"combine\","));
  FA_ASSERT_OK(quiet);
  EXPECT_FALSE(quiet->kernels[1].paged);
}

// `paged` exactly on the attention kernels of version 3; a combine kernel
// takes its split kernel's version.
TEST(ManifestTest, RejectsInconsistentPagedFields) {
  const std::string doc = pagedExample;
  const std::string plainFields = "\"abi_version\": 3, \"paged\": true,";
  auto plain = [&](const std::string &fields) {
    return replace(doc, plainFields, fields);
  };
  EXPECT_EQ(errorOf(plain("\"abi_version\": 1, \"paged\": true,")),
            "manifest field 'kernels[2].paged': a paged kernel takes the paged "
            "K/V ABI (abi_version 3), this one says abi_version 1");
  EXPECT_EQ(errorOf(plain("\"abi_version\": 3,")),
            "manifest field 'kernels[2].abi_version': version 3 is the paged "
            "K/V ABI: an attention kernel of version 3 needs \"paged\": true");
  EXPECT_EQ(errorOf(plain("\"abi_version\": 3, \"paged\": false,")),
            "manifest field 'kernels[2].abi_version': version 3 is the paged "
            "K/V ABI: an attention kernel of version 3 needs \"paged\": true");
  EXPECT_EQ(errorOf(plain("\"abi_version\": 3, \"paged\": \"yes\",")),
            "manifest field 'kernels[2].paged': expected a boolean, got a "
            "string");
  EXPECT_EQ(errorOf(plain("\"abi_version\": 4, \"paged\": true,")),
            "manifest field 'kernels[2].paged': a paged kernel takes the paged "
            "K/V ABI (abi_version 3), this one says abi_version 4");
  const std::string splitFields =
      "\"abi_version\": 3,\n     \"kv_splits\": \"runtime\", \"combine\": "
      "\"merge\", \"paged\": true,";
  EXPECT_EQ(errorOf(replace(doc, splitFields,
                            "\"abi_version\": 2, \"kv_splits\": \"runtime\", "
                            "\"combine\": \"merge\", \"paged\": true,")),
            "manifest field 'kernels[0].paged': a paged kernel takes the paged "
            "K/V ABI (abi_version 3), this one says abi_version 2");
  const std::string mergeFields =
      "\"abi_version\": 3,\n     \"role\": \"combine\", \"paged\": true,";
  EXPECT_EQ(errorOf(replace(doc, mergeFields,
                            "\"abi_version\": 2, \"role\": \"combine\", "
                            "\"paged\": true,")),
            "manifest field 'kernels[1].paged': a paged kernel takes the paged "
            "K/V ABI (abi_version 3), this one says abi_version 2");
  EXPECT_EQ(errorOf(replace(doc, mergeFields,
                            "\"abi_version\": 2, \"role\": \"combine\",")),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "abi_version 2, kernel 'split' has 3 (the combine kernel takes "
            "its split kernel's words)");
}

/// A varlen split-KV attention (ABI version 4): both kernels say version 4
/// and varlen; a plain varlen kernel after them.
const char *varlenExample = R"({
  "fa_manifest_version": 1,
  "target": "host",
  "code_object": {"file": "attn.so", "format": "elf-shared-object",
                  "bytes": 16384, "hash": "fnv1a64:0123456789abcdef"},
  "kernels": [
    {"name": "split", "symbol": "split_host", "abi_version": 4,
     "kv_splits": "runtime", "combine": "merge", "gqa_packed": true,
     "varlen": true,
     "dtype": "f16", "head_dim": 128, "causal": true, "scale": 0.125,
     "has_lse": true, "block_m": 16, "block_n": 64, "threads": 256,
     "wave_size": 64, "lds_bytes": 16384},
    {"name": "merge", "symbol": "merge_host", "abi_version": 4,
     "role": "combine", "varlen": true,
     "dtype": "f16", "head_dim": 128, "causal": true, "scale": 0.125,
     "has_lse": true, "block_m": 4, "block_n": 1, "threads": 64,
     "wave_size": 64, "lds_bytes": 0},
    {"name": "plain", "symbol": "plain_host", "abi_version": 4, "varlen": true,
     "dtype": "f16", "head_dim": 128, "causal": false, "scale": 0.125,
     "has_lse": false, "block_m": 16, "block_n": 64, "threads": 256,
     "wave_size": 64, "lds_bytes": 16384}
  ]
})";

TEST(ManifestTest, ParsesVarlenKernels) {
  Expected<Manifest> m = parseManifest(varlenExample);
  FA_ASSERT_OK(m);
  ASSERT_EQ(m->kernels.size(), 3u);
  const KernelInfo &split = m->kernels[0], &merge = m->kernels[1],
                   &plain = m->kernels[2];
  EXPECT_TRUE(split.varlen && split.splitKv && split.gqaPacked);
  EXPECT_FALSE(split.paged);
  EXPECT_EQ(split.abiVersion, 4);
  EXPECT_TRUE(merge.varlen && merge.isCombine());
  EXPECT_EQ(merge.abiVersion, 4);
  EXPECT_TRUE(plain.varlen && !plain.splitKv && !plain.paged);
  // Written back after the other versioned fields, read back the same; a
  // dense or paged kernel's entry has no "varlen".
  std::string text = formatManifest(*m);
  EXPECT_NE(text.find("\"gqa_packed\": true,\n      \"varlen\": true,\n"
                      "      \"dtype\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"abi_version\": 4,\n      \"varlen\": true,\n"),
            std::string::npos)
      << text;
  Expected<Manifest> back = parseManifest(text);
  FA_ASSERT_OK(back);
  expectSameManifest(*back, *m);
  EXPECT_EQ(formatManifest(*parseManifest(docExample)).find("varlen"),
            std::string::npos);
  EXPECT_EQ(formatManifest(*parseManifest(pagedExample)).find("varlen"),
            std::string::npos);
  // A combine kernel of version 4 need not say varlen, as for paged.
  Expected<Manifest> quiet = parseManifest(
      replace(varlenExample, "\"role\": \"combine\", \"varlen\": true,",
              "\"role\": \"combine\","));
  FA_ASSERT_OK(quiet);
  EXPECT_FALSE(quiet->kernels[1].varlen);
}

// `varlen` exactly on the attention kernels of version 4 (with `paged`, a
// mixed batch); a combine kernel takes its split kernel's version.
TEST(ManifestTest, RejectsInconsistentVarlenFields) {
  const std::string doc = varlenExample;
  const std::string plainFields = "\"abi_version\": 4, \"varlen\": true,";
  auto plain = [&](const std::string &fields) {
    return replace(doc, plainFields, fields);
  };
  EXPECT_EQ(errorOf(plain("\"abi_version\": 1, \"varlen\": true,")),
            "manifest field 'kernels[2].varlen': a varlen kernel takes the "
            "variable-length ABI (abi_version 4), this one says abi_version 1");
  EXPECT_EQ(errorOf(plain("\"abi_version\": 3, \"varlen\": true,")),
            "manifest field 'kernels[2].varlen': a varlen kernel takes the "
            "variable-length ABI (abi_version 4), this one says abi_version 3");
  EXPECT_EQ(errorOf(plain("\"abi_version\": 4,")),
            "manifest field 'kernels[2].abi_version': version 4 is the "
            "variable-length ABI: an attention kernel of version 4 needs "
            "\"varlen\": true");
  EXPECT_EQ(errorOf(plain("\"abi_version\": 4, \"varlen\": false,")),
            "manifest field 'kernels[2].abi_version': version 4 is the "
            "variable-length ABI: an attention kernel of version 4 needs "
            "\"varlen\": true");
  EXPECT_EQ(errorOf(plain("\"abi_version\": 4, \"varlen\": 1,")),
            "manifest field 'kernels[2].varlen': expected a boolean, got a "
            "number");
  EXPECT_EQ(errorOf(plain("\"abi_version\": 5, \"varlen\": true,")),
            "manifest field 'kernels[2].varlen': a varlen kernel takes the "
            "variable-length ABI (abi_version 4), this one says abi_version 5");
  // Paged and varlen on one kernel: a mixed prefill/decode batch, of
  // version 4 only.
  Expected<Manifest> mixed = parseManifest(
      plain("\"abi_version\": 4, \"varlen\": true, \"paged\": true,"));
  FA_ASSERT_OK(mixed);
  EXPECT_TRUE(mixed->kernels[2].paged && mixed->kernels[2].varlen);
  EXPECT_NE(formatManifest(*mixed).find("\"paged\": true"), std::string::npos);
  EXPECT_EQ(errorOf(plain("\"abi_version\": 3, \"varlen\": true, "
                          "\"paged\": true,")),
            "manifest field 'kernels[2].varlen': a mixed-batch (paged and "
            "varlen) kernel takes the variable-length ABI (abi_version 4), "
            "this one says abi_version 3");
  const std::string mergeFields =
      "\"abi_version\": 4,\n     \"role\": \"combine\", \"varlen\": true,";
  EXPECT_EQ(errorOf(replace(doc, mergeFields,
                            "\"abi_version\": 2, \"role\": \"combine\", "
                            "\"varlen\": true,")),
            "manifest field 'kernels[1].varlen': a varlen kernel takes the "
            "variable-length ABI (abi_version 4), this one says abi_version 2");
  EXPECT_EQ(errorOf(replace(doc, mergeFields,
                            "\"abi_version\": 2, \"role\": \"combine\",")),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "abi_version 2, kernel 'split' has 4 (the combine kernel takes "
            "its split kernel's words)");
  EXPECT_EQ(errorOf(replace(doc, mergeFields,
                            "\"abi_version\": 3, \"role\": \"combine\", "
                            "\"paged\": true,")),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "abi_version 3, kernel 'split' has 4 (the combine kernel takes "
            "its split kernel's words)");
}

// `trace` (fac --trace): written only when set, read back, and only on a
// dense attention kernel.
TEST(ManifestTest, ParsesTraceKernels) {
  const std::string traced = replace(docExample, "\"abi_version\": 1,",
                                     "\"abi_version\": 1, \"trace\": true,");
  Expected<Manifest> m = parseManifest(traced);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->kernels[0].trace);
  std::string text = formatManifest(*m);
  EXPECT_NE(text.find("\"trace\": true"), std::string::npos) << text;
  Expected<Manifest> plain = parseManifest(docExample);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->kernels[0].trace);
  EXPECT_EQ(formatManifest(*plain).find("trace"), std::string::npos);
  EXPECT_EQ(errorOf(replace(traced, "\"abi_version\": 1,",
                            "\"abi_version\": 1, \"gqa_packed\": true,")),
            "manifest field 'kernels[0].trace': a trace kernel is a dense "
            "attention kernel (abi_version 1, not GQA-packed), this one says "
            "abi_version 1");
  EXPECT_EQ(
      errorOf(replace(varlenExample, "\"abi_version\": 4, \"varlen\": true,",
                      "\"abi_version\": 4, \"varlen\": true, "
                      "\"trace\": true,")),
      "manifest field 'kernels[2].trace': a trace kernel is a dense "
      "attention kernel (abi_version 1, not GQA-packed), this one says "
      "abi_version 4");
}

// The sliding window and the softcap (issue 32): optional, written after
// `causal` only where they say something, read back; a combine kernel may
// omit them or state its split kernel's.
TEST(ManifestTest, ParsesWindowAndSoftcap) {
  const std::string windowed =
      replace(docExample, "\"causal\": true,",
              "\"causal\": true, \"window_left\": 128, \"window_right\": 0, "
              "\"softcap\": 30,");
  Expected<Manifest> m = parseManifest(windowed);
  FA_ASSERT_OK(m);
  const KernelInfo &k = m->kernels[0];
  EXPECT_EQ(k.windowLeft, 128);
  EXPECT_EQ(k.windowRight, 0);
  EXPECT_EQ(k.softcap, 30);
  EXPECT_TRUE(k.hasWindow());
  EXPECT_TRUE(k.hasSoftcap());
  std::string text = formatManifest(*m);
  EXPECT_NE(text.find("\"causal\": true,\n      \"window_left\": 128,\n"
                      "      \"window_right\": 0,\n      \"softcap\": 30.0,"
                      "\n      \"scale\": 0.125,\n"),
            std::string::npos)
      << text;
  Expected<Manifest> back = parseManifest(text);
  FA_ASSERT_OK(back);
  expectSameManifest(*back, *m);

  // One bounded side: both bounds are written (a window is a pair); no
  // softcap, none written.
  Expected<Manifest> left =
      parseManifest(replace(docExample, "\"causal\": true,",
                            "\"causal\": true, \"window_left\": 5,"));
  FA_ASSERT_OK(left);
  EXPECT_EQ(left->kernels[0].windowLeft, 5);
  EXPECT_EQ(left->kernels[0].windowRight, -1);
  EXPECT_TRUE(left->kernels[0].hasWindow());
  EXPECT_FALSE(left->kernels[0].hasSoftcap());
  text = formatManifest(*left);
  EXPECT_NE(text.find("\"window_left\": 5,\n      \"window_right\": -1,\n"
                      "      \"scale\""),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("softcap"), std::string::npos) << text;
  // Stated at their defaults they are no window and no softcap, and the
  // entry is written as a plain kernel's.
  Expected<Manifest> defaults = parseManifest(
      replace(docExample, "\"causal\": true,",
              "\"causal\": true, \"window_left\": -1, \"window_right\": -1, "
              "\"softcap\": 0,"));
  FA_ASSERT_OK(defaults);
  EXPECT_FALSE(defaults->kernels[0].hasWindow());
  EXPECT_FALSE(defaults->kernels[0].hasSoftcap());
  EXPECT_EQ(formatManifest(*defaults),
            formatManifest(*parseManifest(docExample)));
  std::string dense = formatManifest(*parseManifest(docExample));
  for (const char *field : {"window_left", "window_right", "softcap"})
    EXPECT_EQ(dense.find(field), std::string::npos) << field;

  // A split-KV pair: the combine kernel states its split kernel's values,
  // or omits them.
  const std::string splitWindowed = replace(
      replace(splitExample, "\"kv_splits\": \"runtime\",",
              "\"kv_splits\": \"runtime\", \"window_left\": 64, "
              "\"softcap\": 50,"),
      "\"role\": \"combine\",",
      "\"role\": \"combine\", \"window_left\": 64, \"window_right\": -1, "
      "\"softcap\": 50,");
  Expected<Manifest> pair = parseManifest(splitWindowed);
  FA_ASSERT_OK(pair);
  EXPECT_EQ(pair->kernels[1].windowLeft, 64);
  EXPECT_EQ(pair->kernels[1].softcap, 50);
  Expected<Manifest> omitted =
      parseManifest(replace(splitExample, "\"kv_splits\": \"runtime\",",
                            "\"kv_splits\": \"runtime\", \"window_left\": 64, "
                            "\"softcap\": 50,"));
  FA_ASSERT_OK(omitted);
  EXPECT_FALSE(omitted->kernels[1].hasWindow());
  EXPECT_FALSE(omitted->kernels[1].hasSoftcap());
}

TEST(ManifestTest, RejectsBadWindowAndSoftcap) {
  auto with = [](const std::string &fields) {
    return replace(docExample, "\"causal\": true,",
                   "\"causal\": true, " + fields);
  };
  EXPECT_EQ(errorOf(with("\"window_left\": -2,")),
            "manifest field 'kernels[0].window_left': -2 is outside [-1, "
            "2147483647]");
  EXPECT_EQ(errorOf(with("\"window_right\": -5,")),
            "manifest field 'kernels[0].window_right': -5 is outside [-1, "
            "2147483647]");
  EXPECT_EQ(errorOf(with("\"window_left\": 2147483648,")),
            "manifest field 'kernels[0].window_left': 2147483648 is outside "
            "[-1, 2147483647]");
  EXPECT_EQ(errorOf(with("\"window_left\": 1.5,")),
            "manifest field 'kernels[0].window_left': expected an integer, got "
            "1.5");
  EXPECT_EQ(errorOf(with("\"window_right\": \"none\",")),
            "manifest field 'kernels[0].window_right': expected a number, got "
            "a string");
  EXPECT_EQ(errorOf(with("\"softcap\": -1,")),
            "manifest field 'kernels[0].softcap': must be a finite number of "
            "at least 0 (0: no softcap), got -1");
  // JSON has no infinity: an overflowing number is the parser's error.
  EXPECT_EQ(errorOf(with("\"softcap\": 1e999,")),
            "malformed manifest JSON: number overflow parsing '1e999'");
  EXPECT_EQ(errorOf(with("\"softcap\": true,")),
            "manifest field 'kernels[0].softcap': expected a number, got a "
            "boolean");

  // A combine kernel that states a window or softcap states its split
  // kernel's.
  const std::string split =
      replace(splitExample, "\"kv_splits\": \"runtime\",",
              "\"kv_splits\": \"runtime\", \"window_left\": 64, "
              "\"softcap\": 50,");
  EXPECT_EQ(errorOf(replace(split, "\"role\": \"combine\",",
                            "\"role\": \"combine\", \"window_left\": 32,")),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "window [32, -1], kernel 'split' has [64, -1] (a combine kernel "
            "omits the window or states its split kernel's)");
  EXPECT_EQ(errorOf(replace(split, "\"role\": \"combine\",",
                            "\"role\": \"combine\", \"window_left\": 64, "
                            "\"window_right\": 0,")),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "window [64, 0], kernel 'split' has [64, -1] (a combine kernel "
            "omits the window or states its split kernel's)");
  EXPECT_EQ(errorOf(replace(split, "\"role\": \"combine\",",
                            "\"role\": \"combine\", \"softcap\": 30,")),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "softcap 30.0, kernel 'split' has 50.0 (a combine kernel omits the "
            "softcap or states its split kernel's)");
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

// ALiBi and attention sinks (issue 32): optional booleans, written after
// `causal` (and the window and softcap) only when set, read back; they add
// the head words to the ABI, so a combine kernel states its split kernel's
// values; never with a trace.
TEST(ManifestTest, ParsesAlibiAndSinks) {
  const std::string both =
      replace(docExample, "\"causal\": true,",
              "\"causal\": true, \"alibi\": true, \"sinks\": true,");
  Expected<Manifest> m = parseManifest(both);
  FA_ASSERT_OK(m);
  EXPECT_TRUE(m->kernels[0].alibi);
  EXPECT_TRUE(m->kernels[0].sinks);
  EXPECT_TRUE(m->kernels[0].hasHeadParams());
  std::string text = formatManifest(*m);
  EXPECT_NE(text.find("\"causal\": true,\n      \"alibi\": true,\n"
                      "      \"sinks\": true,\n      \"scale\": 0.125,\n"),
            std::string::npos)
      << text;
  Expected<Manifest> back = parseManifest(text);
  FA_ASSERT_OK(back);
  expectSameManifest(*back, *m);

  // One of the two: only it is written.
  Expected<Manifest> sinks = parseManifest(replace(
      docExample, "\"causal\": true,", "\"causal\": true, \"sinks\": true,"));
  FA_ASSERT_OK(sinks);
  EXPECT_FALSE(sinks->kernels[0].alibi);
  EXPECT_TRUE(sinks->kernels[0].sinks);
  EXPECT_TRUE(sinks->kernels[0].hasHeadParams());
  text = formatManifest(*sinks);
  EXPECT_EQ(text.find("alibi"), std::string::npos) << text;
  EXPECT_NE(text.find("\"sinks\": true"), std::string::npos) << text;

  // Absent or false: neither, and the entry is written as before.
  Expected<Manifest> plain = parseManifest(docExample);
  FA_ASSERT_OK(plain);
  EXPECT_FALSE(plain->kernels[0].alibi);
  EXPECT_FALSE(plain->kernels[0].sinks);
  EXPECT_FALSE(plain->kernels[0].hasHeadParams());
  Expected<Manifest> stated = parseManifest(
      replace(docExample, "\"causal\": true,",
              "\"causal\": true, \"alibi\": false, \"sinks\": false,"));
  FA_ASSERT_OK(stated);
  EXPECT_EQ(formatManifest(*stated), formatManifest(*plain));
  for (const char *field : {"alibi", "sinks"})
    EXPECT_EQ(formatManifest(*plain).find(field), std::string::npos) << field;

  // A split-KV pair states them on both kernels.
  const std::string pair =
      replace(replace(splitExample, "\"kv_splits\": \"runtime\",",
                      "\"kv_splits\": \"runtime\", \"alibi\": true, "
                      "\"sinks\": true,"),
              "\"role\": \"combine\",",
              "\"role\": \"combine\", \"alibi\": true, \"sinks\": true,");
  Expected<Manifest> split = parseManifest(pair);
  FA_ASSERT_OK(split);
  EXPECT_TRUE(split->kernels[1].alibi);
  EXPECT_TRUE(split->kernels[1].sinks);
}

TEST(ManifestTest, RejectsBadAlibiAndSinks) {
  auto with = [](const std::string &fields) {
    return replace(docExample, "\"causal\": true,",
                   "\"causal\": true, " + fields);
  };
  EXPECT_EQ(errorOf(with("\"alibi\": 1,")),
            "manifest field 'kernels[0].alibi': expected a boolean, got a "
            "number");
  EXPECT_EQ(errorOf(with("\"sinks\": \"yes\",")),
            "manifest field 'kernels[0].sinks': expected a boolean, got a "
            "string");
  // The trace words and the head words exclude each other.
  EXPECT_EQ(errorOf(replace(with("\"alibi\": true,"), "\"abi_version\": 1,",
                            "\"abi_version\": 1, \"trace\": true,")),
            "manifest field 'kernels[0].trace': a trace kernel has no alibi "
            "(fac --trace does not trace ALiBi or attention sinks)");
  EXPECT_EQ(errorOf(replace(with("\"sinks\": true,"), "\"abi_version\": 1,",
                            "\"abi_version\": 1, \"trace\": true,")),
            "manifest field 'kernels[0].trace': a trace kernel has no sinks "
            "(fac --trace does not trace ALiBi or attention sinks)");

  // A combine kernel that omits them, or states others, takes other words.
  const std::string split =
      replace(splitExample, "\"kv_splits\": \"runtime\",",
              "\"kv_splits\": \"runtime\", \"sinks\": true,");
  EXPECT_EQ(errorOf(split),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "sinks false, kernel 'split' has true (the combine kernel takes "
            "its split kernel's words, the head parameters included: it "
            "states alibi and sinks as its split kernel does)");
  EXPECT_EQ(errorOf(replace(split, "\"role\": \"combine\",",
                            "\"role\": \"combine\", \"alibi\": true, "
                            "\"sinks\": true,")),
            "manifest field 'kernels[0].combine': combine kernel 'merge' has "
            "alibi true, kernel 'split' has false (the combine kernel takes "
            "its split kernel's words, the head parameters included: it "
            "states alibi and sinks as its split kernel does)");
}
