//===- RobustnessTest.cpp - Damaged machine code gives a clean error ------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The committed gfx906 kernel with random words of its text replaced, run
// for one workgroup with a small instruction budget and a kernarg segment
// of real buffers: every run ends (with the result or an error), none
// crashes or hangs. Branches into the middle of instructions, undecodable
// words, registers past the allocation, wild addresses all become errors.
// Then the same for whole files through the public API: byte flips in the
// text, the kernel descriptor and the metadata note, loaded and launched on
// gfx906-sim (the loader's checks, the descriptor's, the launch's).
//
//===----------------------------------------------------------------------===//

#include "SimTest.h"

#include "fa/Device.h"
#include "fa/Module.h"
#include "gpu/Vendor.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>

#include <elf.h>

using namespace fa;
using namespace fa::sim;

TEST(SimRobustness, MutatedTextEndsCleanly) {
  std::ifstream f(FA_TEST_DATA_DIR "/attention_gfx906.hsaco", std::ios::binary);
  std::vector<uint8_t> good(std::istreambuf_iterator<char>(f), {});
  Expected<CodeObject> parsed = readCodeObject(good);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const CodeObjectKernel &k = parsed->kernels[0];

  // A small problem: B=1, Hq=8, Hkv=2, L=16, D=64, f16, contiguous.
  const uint64_t L = 16, D = 64;
  std::vector<uint16_t> q(8 * L * D, 0x3c00), kv(2 * L * D, 0x3c00),
      o(8 * L * D);
  auto addr = [](const void *p) { return uint64_t(uintptr_t(p)); };
  uint64_t words[FA_ABI_NUM_WORDS] = {};
  const void *bufs[5] = {q.data(), kv.data(), kv.data(), o.data(), nullptr};
  const uint64_t sizes[5] = {q.size(), kv.size(), kv.size(), o.size(), 0};
  for (int b = 0; b < 5; ++b) {
    words[b * 5 + 0] = words[b * 5 + 1] = bufs[b] ? addr(bufs[b]) : 0;
    words[b * 5 + 3] = sizes[b];
    words[b * 5 + 4] = 1;
  }
  const uint64_t sizeWords[19] = {1,     8, 2,         L,     L, 8 * L * D,
                                  L * D, D, 2 * L * D, L * D, D, 2 * L * D,
                                  L * D, D, 8 * L * D, L * D, D, 8 * L,
                                  L};
  for (int i = 0; i < 19; ++i)
    words[FA_ABI_SIZES + i] = sizeWords[i];
  std::vector<uint8_t> kernarg =
      detail::packKernargSegment(words, FA_ABI_NUM_WORDS, 32);
  kernarg.resize(std::max<size_t>(kernarg.size(), k.kd.kernargSize));

  std::mt19937 rng(19);
  const uint64_t textWords = (parsed->codeEnd - k.entry) / 4;
  unsigned errors = 0;
  for (int trial = 0; trial < 150; ++trial) {
    CodeObject co = *parsed;
    for (int m = 0; m < 3; ++m) {
      uint64_t at = k.entry + 4 * (rng() % textWords);
      uint32_t word = trial % 3 == 0 ? rng() : 0;
      if (trial % 3 != 0) { // flip a few bits of the real word instead
        std::memcpy(&word, &co.image[at], 4);
        word ^= 1u << (rng() % 32);
      }
      std::memcpy(&co.image[at], &word, 4);
    }
    Program program = Program::decode(co);
    SimLaunch l;
    l.program = &program;
    l.kernel = &co.kernels[0];
    l.kernelName = "mutant";
    l.block[0] = 256;
    l.ldsBytes = k.kd.groupSegmentFixedSize;
    l.kernargAddr = addr(kernarg.data());
    l.checks.waveBudget = 200000;
    l.checks.races = trial % 2;
    l.workers = 1;
    l.memory = MemoryMap(
        {Region{addr(kernarg.data()), addr(kernarg.data()) + kernarg.size(),
                false, "kernarg segment"},
         Region{addr(q.data()), addr(q.data()) + 2 * q.size(), false, "Q"},
         Region{addr(kv.data()), addr(kv.data()) + 2 * kv.size(), false, "KV"},
         Region{addr(o.data()), addr(o.data()) + 2 * o.size(), true, "O"}});
    Status s = runLaunch(l);
    errors += !s.ok();
    if (!s.ok()) // an error names the kernel and says what went wrong
      EXPECT_FALSE(s.message().empty());
  }
  // Most mutants fail; some mutate words the workgroup never reaches.
  EXPECT_GT(errors, 0u);
}

namespace {

/// [offset, offset + size) of the first section of type `type` (and, for
/// SHT_PROGBITS, executable), from the section headers.
std::pair<size_t, size_t> sectionRange(const std::vector<uint8_t> &elf,
                                       uint32_t type, bool exec) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof(eh));
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, elf.data() + eh.e_shoff + i * sizeof(sh), sizeof(sh));
    if (sh.sh_type == type && (!exec || (sh.sh_flags & SHF_EXECINSTR)))
      return {size_t(sh.sh_offset), size_t(sh.sh_size)};
  }
  return {0, 0};
}

/// The manifest's code object hash (FNV-1a, 64 bits) of `bytes`, so that a
/// mutant reaches the loader instead of the manifest's integrity check.
std::string fnv1a64(const std::vector<uint8_t> &bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes)
    h = (h ^ b) * 0x100000001b3ull;
  char text[32];
  std::snprintf(text, sizeof(text), "fnv1a64:%016llx", (unsigned long long)h);
  return text;
}

} // namespace

// The loader and launch behind the public API, on damaged files: random
// byte flips in the text, the kernel descriptor and the metadata note of the
// committed code object, each loaded with its manifest on gfx906-sim and
// launched for a tiny problem under a small instruction budget. Every
// mutant ends in a clean error (load or launch) or a result.
TEST(SimRobustness, MutatedCodeObjectLoadsOrLaunchesCleanly) {
  std::ifstream f(FA_TEST_DATA_DIR "/attention_gfx906.hsaco", std::ios::binary);
  std::vector<uint8_t> good(std::istreambuf_iterator<char>(f), {});
  std::ifstream mf(FA_TEST_DATA_DIR "/attention_gfx906.hsaco.json");
  std::string manifest(std::istreambuf_iterator<char>(mf), {});
  Expected<CodeObject> parsed = readCodeObject(good);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  // The descriptor's file offset: the first PT_LOAD maps 1:1 (vaddr ==
  // offset), as SimCodeObject.DamageIsACleanError relies on too.
  const size_t kdAt = parsed->kernels[0].descriptorAddr;
  const std::pair<size_t, size_t> parts[3] = {
      sectionRange(good, SHT_PROGBITS, /*exec=*/true),
      {kdAt, 64},
      sectionRange(good, SHT_NOTE, false)};
  for (const auto &p : parts)
    ASSERT_TRUE(p.second > 0 && p.first + p.second <= good.size());
  const std::string goodHash = fnv1a64(good);
  const size_t hashAt = manifest.find(goodHash);
  ASSERT_NE(hashAt, std::string::npos) << goodHash;

  Expected<Device> device = Device::open("gfx906-sim");
  ASSERT_TRUE(device.ok()) << device.status().toString();
  // B=1, Hq=8, Hkv=2 (the kernel's static heads), L=16, D=64, f16.
  const size_t qBytes = 8 * 16 * 64 * 2, kvBytes = 2 * 16 * 64 * 2;
  Buffer q = device->allocate(qBytes).take(),
         k = device->allocate(kvBytes).take(),
         v = device->allocate(kvBytes).take(),
         o = device->allocate(qBytes).take();
  AttentionArgs args;
  args.q = &q;
  args.k = &k;
  args.v = &v;
  args.o = &o;
  args.shape = {1, 8, 2, 16, 16};

  const char *oldBudget = std::getenv("FA_SIM_WAVE_BUDGET");
  std::string saved = oldBudget ? oldBudget : "";
  setenv("FA_SIM_WAVE_BUDGET", "200000", 1);
  std::mt19937 rng(1919);
  unsigned loadErrors[3] = {}, launchErrors[3] = {}, results[3] = {};
  for (int trial = 0; trial < 150; ++trial) {
    int part = trial % 3;
    std::vector<uint8_t> bytes = good;
    int flips = 1 + int(rng() % 4);
    for (int m = 0; m < flips; ++m) {
      size_t at = parts[part].first + rng() % parts[part].second;
      bytes[at] ^= uint8_t(1u << (rng() % 8)) | (m == 0 ? 0 : uint8_t(rng()));
    }
    std::string regenerated = manifest;
    regenerated.replace(hashAt, goodHash.size(), fnv1a64(bytes));
    Expected<Module> module =
        Module::loadFromMemory(*device, bytes.data(), bytes.size(), regenerated,
                               "mutant " + std::to_string(trial));
    if (!module.ok()) {
      ++loadErrors[part];
      EXPECT_FALSE(module.status().message().empty());
      EXPECT_EQ(module.status().message().find("hash"), std::string::npos)
          << module.status().message();
      continue;
    }
    Expected<Kernel> kernel = module->kernel();
    if (!kernel.ok()) {
      ++loadErrors[part];
      continue;
    }
    Status s = kernel->launch(args);
    if (s.ok()) {
      ++results[part];
    } else {
      ++launchErrors[part];
      EXPECT_FALSE(s.message().empty());
    }
  }
  if (oldBudget)
    setenv("FA_SIM_WAVE_BUDGET", saved.c_str(), 1);
  else
    unsetenv("FA_SIM_WAVE_BUDGET");
  const char *names[3] = {"text", "descriptor", "note"};
  for (int p = 0; p < 3; ++p)
    std::printf("%s: %u load errors, %u launch errors, %u results\n", names[p],
                loadErrors[p], launchErrors[p], results[p]);
  // Damage is seen somewhere in each part (most flips matter).
  for (int p = 0; p < 3; ++p)
    EXPECT_GT(loadErrors[p] + launchErrors[p], 0u) << names[p];
}
