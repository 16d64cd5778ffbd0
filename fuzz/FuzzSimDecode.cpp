//===- FuzzSimDecode.cpp - Fuzz target: the gfx906 simulator's decoder ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The input is machine words as a corrupted `.text` could hold them. The
// simulator's decoder (runtime/lib/sim/Decoder.h) must decode each or return
// an error naming the pc, never crash or read past the input; what it
// decodes must print (the disassembler names instructions in the
// simulator's errors) and must decode again, from the same bytes, to the
// same text.
//
//===----------------------------------------------------------------------===//

#include "sim/Decoder.h"
#include "sim/Disassembler.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // An exact copy, so that a read past the input is past the allocation
  // (ASan) rather than into the fuzzer's buffer.
  std::vector<uint8_t> bytes(data, data + size);
  uint32_t pc = 0;
  while (pc < bytes.size()) {
    fa::Expected<fa::sim::Instruction> in =
        fa::sim::decode(bytes.data() + pc, bytes.size() - pc, /*pc=*/pc);
    if (!in) {
      (void)in.status().toString();
      // Go on at the next word: every 4-byte boundary is a possible start.
      pc += 4;
      continue;
    }
    std::string text = fa::sim::disassemble(*in);
    if (in->size == 0 || pc + in->size > bytes.size()) {
      std::fprintf(stderr, "fuzz-sim-decode: %s at pc %llu claims %u bytes\n",
                   text.c_str(), static_cast<unsigned long long>(pc),
                   unsigned(in->size));
      std::abort();
    }
    fa::Expected<fa::sim::Instruction> again =
        fa::sim::decode(bytes.data() + pc, in->size, pc);
    if (!again || fa::sim::disassemble(*again) != text) {
      std::fprintf(stderr,
                   "fuzz-sim-decode: decoding '%s' again from its own %u "
                   "bytes gives %s\n",
                   text.c_str(), unsigned(in->size),
                   again ? fa::sim::disassemble(*again).c_str()
                         : again.status().toString().c_str());
      std::abort();
    }
    pc += in->size;
  }
  return 0;
}
