//===- CompileOptions.cpp - fa::compile's options -------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file holds the options of fa::compile: their names (fac's, for the
// C API and other tools), the checks fac makes before it reads any input,
// and the severities' names.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/TargetDesc.h"
#include "compiler/Driver/Compile.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using fa::CompileDiagnostic;
using fa::CompileOptions;
using fa::CompileResult;

/// NVIDIA targets: PTX from the NVPTX backend, a cubin from ptxas.
static bool isNvidia(llvm::StringRef t) { return t.starts_with("sm_"); }

/// --emit values whose output is text (fac may print them on stdout).
static bool emitsText(llvm::StringRef emit) {
  return emit == "mlir" || emit == "llvm" || emit == "asm" || emit == "ptx";
}

static llvm::Error optionError(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

llvm::Error fa::validateCompileOptions(const CompileOptions &o) {
  if (!lookupTarget(o.target))
    return optionError("unknown target '" + o.target +
                       "'; known targets: " + knownTargetNames());
  llvm::StringRef emit = o.emit;
  if (!emit.empty() && !emitsText(emit) && emit != "obj" && emit != "cubin" &&
      emit != "launcher")
    return optionError("unknown --emit='" + o.emit +
                       "'; expected mlir, llvm, asm, obj, ptx, cubin or "
                       "launcher");
  if (o.indexBits != 0 && o.indexBits != 32 && o.indexBits != 64)
    return optionError("--index-bits must be 32 or 64, got " +
                       std::to_string(o.indexBits));
  if (o.dot2 != "auto" && o.dot2 != "on" && o.dot2 != "off")
    return optionError("--dot2 must be auto, on or off, got '" + o.dot2 + "'");
  if (o.shareRows != "auto" && o.shareRows != "on" && o.shareRows != "off")
    return optionError("--share-rows must be auto, on or off, got '" +
                       o.shareRows + "'");
  if (o.kvSplits != "off" && o.kvSplits != "runtime" && o.kvSplits != "auto")
    return optionError("--kv-splits must be off, runtime or auto, got '" +
                       o.kvSplits + "'");
  if (o.gqaPack != "off" && o.gqaPack != "on")
    return optionError("--gqa-pack must be off or on, got '" + o.gqaPack + "'");
  if (o.mergeSplits != "auto" && o.mergeSplits != "on" &&
      o.mergeSplits != "off")
    return optionError("--merge-splits must be auto, on or off, got '" +
                       o.mergeSplits + "'");
  if (o.indexBits != 0 && o.target == "host")
    return optionError("--index-bits is for GPU targets (host kernels use "
                       "64-bit index arithmetic)");
  if ((emit == "ptx" || emit == "cubin") && !isNvidia(o.target))
    return optionError("--emit=" + o.emit +
                       " is for NVIDIA targets (sm_80, sm_90), not " +
                       o.target);
  // A launcher calls a GPU vendor's driver API; host kernels run on fa's
  // emulator, which only the runtime drives.
  if (emit == "launcher" && o.target == "host")
    return optionError("--emit=launcher is for GPU targets (gfx906: HIP; "
                       "sm_80, sm_90: CUDA), not host: host kernels run on "
                       "fa's emulator, through the runtime");
  // The trace words follow the dense ABI's (KernelAbi.h, "Trace").
  if (o.trace && o.kvSplits == "runtime")
    return optionError("--trace is for dense kernels: a split-KV kernel "
                       "(--kv-splits=runtime) cannot be traced");
  if (o.trace && o.gqaPack == "on")
    return optionError("--trace is for dense kernels: a GQA-packed kernel "
                       "(--gqa-pack=on) cannot be traced");
  if (o.trace && emit == "launcher")
    return optionError("--trace is for validation (fa-run --trace-row), not "
                       "for --emit=launcher");
  return llvm::Error::success();
}

static llvm::Error parseInt(llvm::StringRef name, llvm::StringRef value,
                            int64_t &out) {
  if (value.trim().getAsInteger(10, out))
    return optionError("option '" + name + "' expects an integer, got '" +
                       value + "'");
  return llvm::Error::success();
}

static llvm::Error parseBool(llvm::StringRef name, llvm::StringRef value,
                             bool &out) {
  if (value == "true" || value == "1" || value == "on") {
    out = true;
    return llvm::Error::success();
  }
  if (value == "false" || value == "0" || value == "off") {
    out = false;
    return llvm::Error::success();
  }
  return optionError("option '" + name + "' expects true or false, got '" +
                     value + "'");
}

llvm::Error fa::setCompileOption(CompileOptions &o, llvm::StringRef name,
                                 llvm::StringRef value) {
  std::string *text = llvm::StringSwitch<std::string *>(name)
                          .Case("target", &o.target)
                          .Case("emit", &o.emit)
                          .Case("fetch-ahead", &o.fetchAhead)
                          .Case("kv-shared", &o.kvShared)
                          .Case("widen-lds", &o.widenLds)
                          .Case("dot2", &o.dot2)
                          .Case("share-rows", &o.shareRows)
                          .Case("kv-splits", &o.kvSplits)
                          .Case("gqa-pack", &o.gqaPack)
                          .Case("merge-splits", &o.mergeSplits)
                          .Case("name", &o.codeObjectName)
                          .Case("test-plant-bug", &o.plantBug)
                          .Default(nullptr);
  if (text) {
    *text = value.str();
    return llvm::Error::success();
  }
  int64_t *number = llvm::StringSwitch<int64_t *>(name)
                        .Case("block-m", &o.blockM)
                        .Case("block-n", &o.blockN)
                        .Case("waves", &o.waves)
                        .Case("stages", &o.stages)
                        .Default(nullptr);
  if (number)
    return parseInt(name, value, *number);
  if (name == "index-bits") {
    int64_t bits = 0;
    if (llvm::Error e = parseInt(name, value, bits))
      return e;
    if (bits != 32 && bits != 64)
      return optionError("--index-bits must be 32 or 64, got " +
                         std::to_string(bits));
    o.indexBits = static_cast<unsigned>(bits);
    return llvm::Error::success();
  }
  bool *flag = llvm::StringSwitch<bool *>(name)
                   .Case("pad-lds", &o.padLds)
                   .Case("pair-rhs", &o.pairRhs)
                   .Case("allow-bf16", &o.allowBf16)
                   .Case("forbid-spills", &o.forbidSpills)
                   .Case("report", &o.report)
                   .Case("trace", &o.trace)
                   .Default(nullptr);
  if (flag)
    return parseBool(name, value, *flag);
  return optionError("unknown option '" + name + "'");
}

llvm::StringRef fa::severityName(CompileDiagnostic::Severity severity) {
  switch (severity) {
  case CompileDiagnostic::Severity::Note:
    return "note";
  case CompileDiagnostic::Severity::Remark:
    return "remark";
  case CompileDiagnostic::Severity::Warning:
    return "warning";
  case CompileDiagnostic::Severity::Error:
    return "error";
  }
  return "error";
}

std::string CompileResult::firstError() const {
  for (const CompileDiagnostic &d : diagnostics)
    if (d.severity == CompileDiagnostic::Severity::Error)
      return d.text;
  return "";
}
