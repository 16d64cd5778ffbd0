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
//
//===----------------------------------------------------------------------===//

#include "SimTest.h"

#include "gpu/Vendor.h"

#include <fstream>
#include <iterator>
#include <random>

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
  std::vector<uint8_t> kernarg = detail::packKernargSegment(words, 32);
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
