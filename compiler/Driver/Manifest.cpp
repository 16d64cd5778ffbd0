//===- Manifest.cpp - The code object's sidecar manifest ------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file fills a ::fa::Manifest (the runtime's struct, writer and hash,
// linked from fa_runtime) and checks that the runtime reads it back.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Manifest.h"

#include "fa/KernelAbi.h"
#include "fa/Manifest.h"

#include <algorithm>

#ifndef FA_VERSION_STRING
#define FA_VERSION_STRING "0.0.0"
#endif

static llvm::Error manifestError(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

llvm::Expected<std::string> mlir::fa::renderManifest(
    llvm::StringRef target, llvm::StringRef codeObjectFile,
    llvm::StringRef format, llvm::StringRef codeObjectBytes,
    llvm::StringRef sourceText, const std::vector<KernelInfo> &kernels,
    llvm::StringRef symbolSuffix) {
  ::fa::Manifest m;
  m.compiler = std::string("fac ") + FA_VERSION_STRING;
  m.sourceHash =
      ::fa::formatFnv1a64(::fa::fnv1a64(sourceText.data(), sourceText.size()));
  m.target = target.str();
  m.codeObjectFile = codeObjectFile.str();
  m.codeObjectFormat = format.str();
  m.codeObjectBytes = codeObjectBytes.size();
  m.codeObjectHash = ::fa::formatFnv1a64(
      ::fa::fnv1a64(codeObjectBytes.data(), codeObjectBytes.size()));
  for (const KernelInfo &k : kernels) {
    ::fa::KernelInfo entry;
    entry.name = k.name;
    entry.symbol = k.name + symbolSuffix.str();
    entry.abiVersion = k.abiVersion;
    entry.splitKv = k.splitKv;
    entry.splitDirect = k.splitDirect;
    entry.combine = k.combine;
    entry.gqaPacked = k.gqaPacked;
    entry.paged = k.paged;
    entry.varlen = k.varlen;
    entry.trace = k.trace;
    entry.alibi = k.alibi;
    entry.sinks = k.sinks;
    entry.role =
        k.isCombine ? ::fa::KernelRole::Combine : ::fa::KernelRole::Attention;
    std::optional<::fa::DType> dtype = ::fa::parseDType(k.dtype);
    if (!dtype)
      return manifestError("kernel " + k.name + ": element type '" + k.dtype +
                           "' has no manifest spelling");
    entry.dtype = *dtype;
    entry.headDim = k.headDim;
    entry.causal = k.causal;
    entry.windowLeft = k.windowLeft;
    entry.windowRight = k.windowRight;
    entry.softcap = k.softcap;
    entry.scale = k.scale; // the f32 the kernel multiplies by, exactly
    entry.hasLse = k.hasLse;
    entry.blockM = k.blockM;
    entry.blockN = k.blockN;
    entry.threads = k.threads;
    entry.waveSize = k.waveSize;
    entry.ldsBytes = k.ldsBytes;
    entry.dynamicLdsBytes = k.dynamicLdsBytes;
    entry.indexBits = k.indexBits;
    entry.ldsPad = k.ldsPad;
    entry.stages = k.stages;
    std::copy_n(k.staticSizes.begin(),
                std::min<size_t>(k.staticSizes.size(), 5), entry.staticSizes);
    entry.resources = k.resources;
    m.kernels.push_back(std::move(entry));
  }

  std::string text = ::fa::formatManifest(m);
  ::fa::Expected<::fa::Manifest> back = ::fa::parseManifest(text);
  if (!back)
    return manifestError("the manifest would not load: " +
                         back.status().message());
  if (back->codeObjectFile != m.codeObjectFile)
    return manifestError("the manifest cannot name '" + m.codeObjectFile +
                         "': the file name is not UTF-8 and JSON text is");
  return text;
}
