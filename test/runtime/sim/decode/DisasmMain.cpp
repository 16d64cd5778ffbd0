//===- DisasmMain.cpp - fa-sim-disasm: print a code object's .text --------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements fa-sim-disasm, the decoder's side of the oracle test
// (oracle_test.py): it decodes the `.text` section of a gfx906 code object
// with fa's decoder and prints one line per instruction, "<pc hex> <text>",
// pcs being the section's addresses as llvm-objdump prints them. The first
// instruction the decoder refuses ends the output with the error on stderr
// and exit status 1.
//
//   fa-sim-disasm kernel.hsaco
//   fa-sim-disasm --words < lines   (each line: hex dwords of one
//                                    instruction; prints its text or
//                                    "error: ...")
//   fa-sim-disasm --table           (Opcodes.def: mnemonic encoding opcode)
//
// The last two serve table_oracle.py, which checks every row of the table
// against LLVM's disassembler.
//
//===----------------------------------------------------------------------===//

#include "sim/Decoder.h"
#include "sim/Disassembler.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

template <typename T>
bool readAt(const std::vector<uint8_t> &f, uint64_t off, T &out) {
  if (off > f.size() || f.size() - off < sizeof(T))
    return false;
  std::memcpy(&out, f.data() + off, sizeof(T));
  return true;
}

/// Finds the ELF64 section named `name`: its file offset, size, address.
bool findSection(const std::vector<uint8_t> &f, const char *name,
                 uint64_t &offset, uint64_t &size, uint64_t &addr) {
  if (f.size() < 64 || std::memcmp(f.data(),
                                   "\x7f"
                                   "ELF\x02\x01",
                                   6) != 0)
    return false;
  uint64_t shoff;
  uint16_t shentsize, shnum, shstrndx;
  if (!readAt(f, 0x28, shoff) || !readAt(f, 0x3a, shentsize) ||
      !readAt(f, 0x3c, shnum) || !readAt(f, 0x3e, shstrndx) || shentsize < 64 ||
      shstrndx >= shnum)
    return false;
  uint64_t strOff;
  if (!readAt(f, shoff + uint64_t(shstrndx) * shentsize + 0x18, strOff))
    return false;
  for (unsigned i = 0; i < shnum; ++i) {
    uint64_t sh = shoff + uint64_t(i) * shentsize;
    uint32_t nameOff;
    if (!readAt(f, sh, nameOff))
      return false;
    uint64_t at = strOff + nameOff;
    size_t len = std::strlen(name);
    if (at + len + 1 > f.size() ||
        std::memcmp(f.data() + at, name, len + 1) != 0)
      continue;
    if (!readAt(f, sh + 0x10, addr) || !readAt(f, sh + 0x18, offset) ||
        !readAt(f, sh + 0x20, size) || offset > f.size() ||
        f.size() - offset < size)
      return false;
    return true;
  }
  return false;
}

const char *encodingName(fa::sim::Encoding e) {
  using fa::sim::Encoding;
  switch (e) {
  case Encoding::SOP1:
    return "SOP1";
  case Encoding::SOP2:
    return "SOP2";
  case Encoding::SOPK:
    return "SOPK";
  case Encoding::SOPC:
    return "SOPC";
  case Encoding::SOPP:
    return "SOPP";
  case Encoding::SMEM:
    return "SMEM";
  case Encoding::VOP1:
    return "VOP1";
  case Encoding::VOP2:
    return "VOP2";
  case Encoding::VOPC:
    return "VOPC";
  case Encoding::VOP3A:
    return "VOP3A";
  case Encoding::VOP3B:
    return "VOP3B";
  case Encoding::VOP3P:
    return "VOP3P";
  case Encoding::DS:
    return "DS";
  case Encoding::FLAT:
    return "FLAT";
  case Encoding::GLOBAL:
    return "GLOBAL";
  case Encoding::SCRATCH:
    return "SCRATCH";
  case Encoding::MUBUF:
    return "MUBUF";
  }
  return "?";
}

const char *typeName(fa::sim::OperandType t) {
  static const char *names[] = {"None", "B16",  "F16", "PkB16", "PkF16",
                                "B32",  "F32",  "B64", "F64",   "B96",
                                "B128", "B256", "B512"};
  unsigned i = static_cast<unsigned>(t);
  return i < sizeof names / sizeof names[0] ? names[i] : "?";
}

int printTable() {
  for (unsigned i = 0; i < fa::sim::kNumOps; ++i) {
    const fa::sim::OpInfo &info = fa::sim::opInfo(static_cast<fa::sim::Op>(i));
    std::printf("%s %s %u %u %s %s %s %s\n", info.mnemonic,
                encodingName(info.enc), info.opcode, info.flags,
                typeName(info.dst), typeName(info.src0), typeName(info.src1),
                typeName(info.src2));
  }
  return 0;
}

int decodeWords() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::vector<uint32_t> words;
    std::string w;
    while (in >> w)
      words.push_back(static_cast<uint32_t>(std::stoul(w, nullptr, 16)));
    std::vector<uint8_t> bytes(words.size() * 4);
    if (!bytes.empty())
      std::memcpy(bytes.data(), words.data(), bytes.size());
    fa::Expected<fa::sim::Instruction> inst =
        fa::sim::decode(bytes.data(), bytes.size(), 0);
    if (!inst)
      std::printf("error: %s\n", inst.status().message().c_str());
    else if (inst->size != bytes.size())
      std::printf("error: decoded %u of %zu bytes\n", inst->size, bytes.size());
    else
      std::printf("%s\n", fa::sim::disassemble(*inst).c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::strcmp(argv[1], "--table") == 0)
    return printTable();
  if (argc == 2 && std::strcmp(argv[1], "--words") == 0)
    return decodeWords();
  if (argc != 2) {
    std::fprintf(stderr, "usage: fa-sim-disasm <code object> | --words | "
                         "--table\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    std::fprintf(stderr, "fa-sim-disasm: cannot read %s\n", argv[1]);
    return 2;
  }
  uint64_t offset, size, addr;
  if (!findSection(file, ".text", offset, size, addr)) {
    std::fprintf(stderr, "fa-sim-disasm: %s: no .text section\n", argv[1]);
    return 2;
  }
  std::string out;
  size_t at = 0;
  while (at < size) {
    fa::Expected<fa::sim::Instruction> inst = fa::sim::decode(
        file.data() + offset + at, size - at, static_cast<uint32_t>(addr + at));
    if (!inst) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fprintf(stderr, "fa-sim-disasm: %s\n",
                   inst.status().toString().c_str());
      return 1;
    }
    char pc[24];
    std::snprintf(pc, sizeof pc, "%llx ",
                  static_cast<unsigned long long>(addr + at));
    out += pc + fa::sim::disassemble(*inst) + "\n";
    at += inst->size;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
