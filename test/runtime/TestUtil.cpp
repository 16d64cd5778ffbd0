//===- TestUtil.cpp - Shared helpers of the runtime tests -----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

using namespace fa;

std::string test::fixturePath(const std::string &name) {
  return std::string(FA_TEST_KERNEL_DIR) + "/" + name + ".so";
}

std::string test::goldenPath(const std::string &name) {
  return std::string(FA_TEST_GOLDEN_DIR) + "/" + name;
}

std::vector<std::string> test::goldenCases() {
  return {"f16_d128_causal_l256_scale0.5_outliers",
          "f16_d128_gqa_causal_lq77_lk203_outliers",
          "f16_d64_causal_lq203_lk77_masked_rows",
          "f16_d64_l128",
          "f32_d128_decode_lq1_lk300",
          "f32_d64_gqa_l100"};
}

test::ScratchDir::ScratchDir() {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/fa-runtime-test-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back(0);
  if (!::mkdtemp(buf.data()))
    ADD_FAILURE() << "mkdtemp failed for " << pattern;
  dir = buf.data();
}

test::ScratchDir::~ScratchDir() {
  std::string cmd = "rm -rf '" + dir + "'";
  if (std::system(cmd.c_str()) != 0)
    std::fprintf(stderr, "warning: could not remove %s\n", dir.c_str());
}

std::vector<uint8_t> test::readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

void test::writeBytes(const std::string &path,
                      const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            std::streamsize(bytes.size()));
  EXPECT_TRUE(out.good()) << "cannot write " << path;
}

void test::writeText(const std::string &path, const std::string &text) {
  writeBytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

Manifest test::fixtureManifest(const std::string &name) {
  std::vector<uint8_t> text = readBytes(fixturePath(name) + ".json");
  Expected<Manifest> m = parseManifest(std::string_view(
      reinterpret_cast<const char *>(text.data()), text.size()));
  EXPECT_TRUE(m.ok()) << m.status().toString();
  return m ? m.take() : Manifest();
}

std::string test::writeCodeObject(const ScratchDir &dir,
                                  const std::string &name,
                                  const std::vector<uint8_t> &bytes,
                                  Manifest manifest) {
  std::string path = dir.file(name);
  writeBytes(path, bytes);
  manifest.codeObjectFile = name;
  manifest.codeObjectBytes = bytes.size();
  manifest.codeObjectHash = formatFnv1a64(fnv1a64(bytes.data(), bytes.size()));
  writeText(path + ".json", formatManifest(manifest));
  return path;
}

Device test::hostDevice() {
  Expected<Device> d = Device::open("host");
  EXPECT_TRUE(d.ok()) << d.status().toString();
  return d.take();
}

Module test::loadModule(const std::string &name) {
  Expected<Module> m = Module::load(hostDevice(), fixturePath(name));
  EXPECT_TRUE(m.ok()) << m.status().toString();
  return m.take();
}

Kernel test::loadKernel(const std::string &name) {
  Expected<Kernel> k = loadModule(name).kernel();
  EXPECT_TRUE(k.ok()) << k.status().toString();
  return k.take();
}

std::string test::failures(const ValidationReport &r) {
  std::string out;
  for (const Check &c : r.verdict.checks)
    if (!c.pass)
      out += c.text + "\n";
  return out;
}

std::string test::packError(const KernelInfo &info, const AttentionArgs &args,
                            const KernelInfo *combine) {
  Expected<PackedLaunch> p =
      packAttentionArgs(info, args, hostDevice().limits(), combine);
  EXPECT_FALSE(p.ok());
  if (p.ok())
    return "ok";
  EXPECT_EQ(p.status().code(), ErrorCode::InvalidArgument);
  return p.status().message();
}
