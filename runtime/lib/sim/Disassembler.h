//===- Disassembler.h - Decoded gfx906 instructions as assembly -*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal to the gfx906 simulator. Prints a decoded Instruction in LLVM's
// gfx906 assembly syntax (as llvm-objdump --mcpu=gfx906 prints it), for the
// decoder's oracle test and for the simulator's error messages
// ("unimplemented instruction v_foo at pc 0x1a4"). Branches print their
// 16-bit offset as LLVM does, not the target.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_DISASSEMBLER_H
#define FA_LIB_SIM_DISASSEMBLER_H

#include "sim/Decoder.h"

#include <string>

namespace fa {
namespace sim {

/// The mnemonic as LLVM prints it: with _e32/_e64/_sdwa/_dpp where the
/// instruction has more than one encoding ("v_add_f32_e32").
std::string mnemonicOf(const Instruction &in);

/// One operand: "s[4:5]", "vcc", "v7", "0.5", "0x3f000001".
std::string operandText(const Operand &o);

/// The whole instruction: "v_add_f32_e32 v1, v2, v3".
std::string disassemble(const Instruction &in);

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_DISASSEMBLER_H
