//===- CodeObject.h - An hsaco as the simulator loads it --------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. What the gfx906 simulator needs from an AMDGPU code object (v4/v5
// ELF): its loadable segments as one image addressed like the GPU's loader
// would (virtual addresses from 0), and for each kernel the 64-byte kernel
// descriptor at its `<name>.kd` symbol with the fields decoded: the entry
// point, register counts, LDS and scratch sizes, the float mode and which
// registers the hardware initialises (AMDGPUUsage, "Kernel Descriptor" and
// "Initial Kernel Execution State"; the bit positions are those of LLVM's
// AMDHSAKernelDescriptor.h).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_CODEOBJECT_H
#define FA_LIB_SIM_CODEOBJECT_H

#include "fa/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fa {
namespace sim {

/// A kernel descriptor's fields, and what follows from them.
struct KernelDescriptor {
  uint32_t groupSegmentFixedSize = 0;   ///< static LDS bytes
  uint32_t privateSegmentFixedSize = 0; ///< scratch bytes per lane
  uint32_t kernargSize = 0;
  int64_t entryByteOffset = 0; ///< relative to the descriptor
  uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;
  uint16_t codeProperties = 0;

  // COMPUTE_PGM_RSRC1.
  /// VGPRs per lane the wave owns: (granules + 1) * 4 on gfx9.
  unsigned vgprCount() const { return ((rsrc1 & 0x3f) + 1) * 4; }
  /// SGPRs the wave owns: (granules + 1) * 8 on gfx9 (not counting VCC).
  unsigned sgprCount() const { return (((rsrc1 >> 6) & 0xf) + 1) * 8; }
  unsigned floatRoundMode32() const { return (rsrc1 >> 12) & 3; }
  unsigned floatRoundMode1664() const { return (rsrc1 >> 14) & 3; }
  unsigned floatDenormMode32() const { return (rsrc1 >> 16) & 3; }
  unsigned floatDenormMode1664() const { return (rsrc1 >> 18) & 3; }
  bool dx10Clamp() const { return (rsrc1 >> 21) & 1; }
  bool ieeeMode() const { return (rsrc1 >> 23) & 1; }

  // COMPUTE_PGM_RSRC2.
  bool privateSegmentWaveOffset() const { return rsrc2 & 1; }
  unsigned userSgprCount() const { return (rsrc2 >> 1) & 0x1f; }
  bool workgroupId(int dim) const { return (rsrc2 >> (7 + dim)) & 1; }
  bool workgroupInfo() const { return (rsrc2 >> 10) & 1; }
  /// 0: v0 = X; 1: v0, v1 = X, Y; 2: v0..v2 = X, Y, Z.
  unsigned workItemIdDims() const { return (rsrc2 >> 11) & 3; }

  // kernel_code_properties: the user SGPRs, in their order.
  bool privateSegmentBuffer() const { return codeProperties & (1 << 0); }
  bool dispatchPtr() const { return codeProperties & (1 << 1); }
  bool queuePtr() const { return codeProperties & (1 << 2); }
  bool kernargSegmentPtr() const { return codeProperties & (1 << 3); }
  bool dispatchId() const { return codeProperties & (1 << 4); }
  bool flatScratchInit() const { return codeProperties & (1 << 5); }
  bool privateSegmentSize() const { return codeProperties & (1 << 6); }
  bool wave32() const { return codeProperties & (1 << 10); }
  bool usesDynamicStack() const { return codeProperties & (1 << 11); }

  /// The user SGPRs the enable bits ask for (4 + 2 + 2 + 2 + 2 + 2 + 1).
  unsigned enabledUserSgprs() const;
};

/// One kernel of a code object.
struct CodeObjectKernel {
  std::string name;            ///< the function (`attention_kernel`)
  uint64_t descriptorAddr = 0; ///< the `.kd` symbol's address
  uint64_t entry = 0;          ///< the first instruction's address
  KernelDescriptor kd;
};

/// The loadable image of a code object and its kernels.
struct CodeObject {
  /// The PT_LOAD segments at their virtual addresses (bytes not in a
  /// segment's file image are zero).
  std::vector<uint8_t> image;
  /// Where executable code may be: the union of PF_X segments.
  uint64_t codeBegin = 0, codeEnd = 0;
  /// EI_ABIVERSION: 2 code object v4, 3 v5, 4 v6 (the hidden kernel
  /// arguments' layout depends on it).
  unsigned abiVersion = 0;
  std::vector<CodeObjectKernel> kernels;

  /// The kernel named `name`, or nullptr.
  const CodeObjectKernel *find(const std::string &name) const;
};

/// Reads an AMDGPU ELF code object: program headers, the symbol table, each
/// `*.kd` symbol's descriptor. Every offset and size is checked against the
/// file; a damaged file is CorruptCodeObject naming what is wrong. A
/// descriptor the simulator cannot run as gfx906 code (wave32, an entry
/// outside the code, a dynamic stack) is Unsupported.
Expected<CodeObject> readCodeObject(const std::vector<uint8_t> &elf);

/// Nothing if `kd` describes a kernel the simulator runs, else why not.
Status checkDescriptor(const std::string &kernel, const KernelDescriptor &kd);

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_CODEOBJECT_H
