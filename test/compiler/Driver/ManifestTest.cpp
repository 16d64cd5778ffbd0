//===- ManifestTest.cpp - fac's manifest through the runtime's writer -----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Manifest.h"

#include "fa/KernelAbi.h"
#include "fa/Manifest.h"

#include <gtest/gtest.h>

namespace {

/// What collectKernels and the backends report for a gfx906 kernel.
mlir::fa::KernelInfo gfx906Kernel() {
  mlir::fa::KernelInfo k;
  k.name = "attention_kernel";
  k.target = "gfx906";
  k.dtype = "bf16";
  k.headDim = 111;
  k.blockM = 64;
  k.blockN = 32;
  k.threads = 256;
  k.waveSize = 64;
  k.ldsBytes = 25600;
  k.ldsPad = 4;
  k.stages = 2;
  k.dynamicLdsBytes = 0;
  k.indexBits = 32;
  k.scale = 1.0f / 11.0f;
  k.causal = true;
  k.hasLse = true;
  k.staticSizes = {-1, 8, 2, 100, -1};
  k.resources = {{"vgprs", 96},        {"sgprs", 40},
                 {"vgpr_spills", 0},   {"sgpr_spills", 3},
                 {"scratch_bytes", 0}, {"waves_per_simd_estimate", 2}};
  return k;
}

// Every field fac fills survives the runtime's reader.
TEST(CompilerManifest, EveryFieldReadsBack) {
  std::string source = "func.func @f() { return }";
  std::string object = "\x7f"
                       "ELF and some bytes";
  llvm::Expected<std::string> text =
      mlir::fa::renderManifest("gfx906", "we\"ird\\.hsaco", "hsaco", object,
                               source, {gfx906Kernel()}, "");
  ASSERT_TRUE(bool(text)) << llvm::toString(text.takeError());
  fa::Expected<fa::Manifest> m = fa::parseManifest(*text);
  ASSERT_TRUE(m.ok()) << m.status().message() << "\n" << *text;
  EXPECT_EQ(m->compiler.rfind("fac ", 0), 0u);
  EXPECT_EQ(m->sourceHash,
            fa::formatFnv1a64(fa::fnv1a64(source.data(), source.size())));
  EXPECT_EQ(m->target, "gfx906");
  EXPECT_EQ(m->codeObjectFile, "we\"ird\\.hsaco");
  EXPECT_EQ(m->codeObjectFormat, "hsaco");
  EXPECT_EQ(m->codeObjectBytes, object.size());
  EXPECT_EQ(m->codeObjectHash,
            fa::formatFnv1a64(fa::fnv1a64(object.data(), object.size())));
  ASSERT_EQ(m->kernels.size(), 1u);
  const fa::KernelInfo &k = m->kernels[0];
  mlir::fa::KernelInfo want = gfx906Kernel();
  EXPECT_EQ(k.name, want.name);
  EXPECT_EQ(k.symbol, want.name);
  EXPECT_EQ(k.abiVersion, 1); // a dense kernel: ABI version 1 (KernelAbi.h)
  EXPECT_EQ(k.dtype, fa::DType::BF16);
  EXPECT_EQ(k.headDim, want.headDim);
  EXPECT_EQ(k.causal, want.causal);
  EXPECT_EQ(k.scale, double(want.scale)); // the kernel's f32, exactly
  EXPECT_EQ(k.hasLse, want.hasLse);
  EXPECT_EQ(k.blockM, want.blockM);
  EXPECT_EQ(k.blockN, want.blockN);
  EXPECT_EQ(k.threads, want.threads);
  EXPECT_EQ(k.waveSize, want.waveSize);
  EXPECT_EQ(k.ldsBytes, want.ldsBytes);
  EXPECT_EQ(k.dynamicLdsBytes, want.dynamicLdsBytes);
  EXPECT_EQ(k.indexBits, want.indexBits);
  EXPECT_EQ(k.ldsPad, want.ldsPad);
  EXPECT_EQ(k.stages, want.stages);
  for (int d = 0; d < 5; ++d)
    EXPECT_EQ(k.staticSizes[d], want.staticSizes[d]) << d;
  EXPECT_EQ(k.resources, want.resources);
}

TEST(CompilerManifest, HostSymbolsTakeTheSuffix) {
  mlir::fa::KernelInfo k = gfx906Kernel();
  k.resources.clear();
  llvm::Expected<std::string> text = mlir::fa::renderManifest(
      "host", "a.so", "elf-shared-object", "x", "", {k}, "_host");
  ASSERT_TRUE(bool(text)) << llvm::toString(text.takeError());
  EXPECT_EQ(text->find("resources"), std::string::npos);
  fa::Expected<fa::Manifest> m = fa::parseManifest(*text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kernels[0].symbol, "attention_kernel_host");
}

// JSON text is UTF-8: a file name that is not cannot be written, and fac
// says so instead of writing a manifest that names another file.
TEST(CompilerManifest, RefusesAFileNameThatIsNotUtf8) {
  llvm::Expected<std::string> text =
      mlir::fa::renderManifest("host", "caf\xe9.so", "elf-shared-object", "x",
                               "", {gfx906Kernel()}, "_host");
  ASSERT_FALSE(bool(text));
  EXPECT_EQ(llvm::toString(text.takeError()),
            "the manifest cannot name 'caf\xe9.so': the file name is not "
            "UTF-8 and JSON text is");
}

// A fact the runtime would refuse fails at compile time, with the field.
TEST(CompilerManifest, RefusesAFactTheRuntimeWouldNotLoad) {
  mlir::fa::KernelInfo k = gfx906Kernel();
  k.threads = 0;
  llvm::Expected<std::string> text =
      mlir::fa::renderManifest("gfx906", "a.hsaco", "hsaco", "x", "", {k}, "");
  ASSERT_FALSE(bool(text));
  EXPECT_EQ(llvm::toString(text.takeError()),
            "the manifest would not load: manifest field "
            "'kernels[0].threads': 0 is outside [1, 65536]");
}

} // namespace
