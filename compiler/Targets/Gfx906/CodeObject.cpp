//===- CodeObject.cpp - gfx906 code object metadata -----------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file reads each kernel's resource figures from an AMDGPU ELF (the
// relocatable object or the linked .hsaco) itself: the NT_AMDGPU_METADATA
// note's msgpack document, as the loader on a real MI50 reads it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Gfx906/CodeObject.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELF.h"

using namespace mlir;

llvm::Expected<std::vector<fa::AmdgpuResources>>
fa::readAmdgpuCodeObject(llvm::StringRef elf) {
  auto file = llvm::object::ELF64LEFile::create(elf);
  if (!file)
    return file.takeError();
  if (file->getHeader().e_machine != llvm::ELF::EM_AMDGPU)
    return llvm::createStringError("not an AMDGPU code object (e_machine " +
                                   std::to_string(file->getHeader().e_machine) +
                                   ")");
  auto sections = file->sections();
  if (!sections)
    return sections.takeError();
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    llvm::Error err = llvm::Error::success();
    for (const auto &note : file->notes(section, err)) {
      if (note.getName() != "AMDGPU" ||
          note.getType() != llvm::ELF::NT_AMDGPU_METADATA)
        continue;
      llvm::msgpack::Document doc;
      if (!doc.readFromBlob(note.getDescAsStringRef(section.sh_addralign),
                            /*Multi=*/false))
        return llvm::createStringError(
            "the AMDGPU metadata note is not valid msgpack");
      auto &root = doc.getRoot();
      if (!root.isMap())
        return llvm::createStringError("the AMDGPU metadata is not a map");
      auto kernelsIt = root.getMap().find(doc.getNode("amdhsa.kernels"));
      if (kernelsIt == root.getMap().end() || !kernelsIt->second.isArray())
        return llvm::createStringError(
            "the AMDGPU metadata has no amdhsa.kernels");
      std::vector<AmdgpuResources> kernels;
      for (auto &node : kernelsIt->second.getArray()) {
        if (!node.isMap())
          continue;
        auto &map = node.getMap();
        auto field = [&](llvm::StringRef key) -> int64_t {
          auto it = map.find(doc.getNode(key));
          if (it == map.end())
            return 0;
          auto &v = it->second;
          if (v.getKind() == llvm::msgpack::Type::UInt)
            return static_cast<int64_t>(v.getUInt());
          if (v.getKind() == llvm::msgpack::Type::Int)
            return v.getInt();
          return 0;
        };
        AmdgpuResources r;
        auto name = map.find(doc.getNode(".name"));
        if (name != map.end() && name->second.isString())
          r.kernel = name->second.getString().str();
        r.vgprs = field(".vgpr_count");
        r.sgprs = field(".sgpr_count");
        r.vgprSpills = field(".vgpr_spill_count");
        r.sgprSpills = field(".sgpr_spill_count");
        r.ldsBytes = field(".group_segment_fixed_size");
        r.scratchBytes = field(".private_segment_fixed_size");
        r.wavefrontSize = field(".wavefront_size");
        kernels.push_back(std::move(r));
      }
      return kernels;
    }
    if (err)
      return std::move(err);
  }
  return llvm::createStringError("no AMDGPU metadata note in the code object");
}

int64_t fa::scratchAccesses(const AmdgpuResources &r) {
  auto it = r.mix.find("scratch (buffer_*)");
  return it == r.mix.end() ? 0 : it->second;
}
