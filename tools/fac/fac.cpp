//===- fac.cpp - The fa compiler driver -----------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fac input.mlir --target=host|gfx906|sm_90 [-o out] [--emit=mlir|llvm|...]
//
// A thin main over fa::compile (compiler/Driver/Compile.h): options in,
// the code object and its manifest (`<out>.json`, docs/manifest.md) out,
// or with --emit=launcher its C launcher (`out.c` and `out.h`,
// compiler/Driver/Launcher.h), diagnostics on stderr and the report on
// stdout.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Compile.h"
#include "compiler/Driver/Launcher.h"
#include "compiler/Testing/PlantedBugs.h"

#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

#include <exception>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("path"), cl::init(""));
static cl::opt<std::string> target("target",
                                   cl::desc("gfx906, sm_90, sm_80 or host"),
                                   cl::init("gfx906"));
static cl::opt<std::string>
    emit("emit",
         cl::desc("Stop at: mlir (gpu dialect), llvm (LLVM IR), asm, obj "
                  "(object file), ptx or cubin (sm_90); or launcher (GPU "
                  "targets): a C source -o out.c and header out.h that embed "
                  "the code object and launch it through HIP or CUDA "
                  "(docs/aot-launcher.md); default: the code object (sm_90: "
                  "a cubin when ptxas is found, else PTX)"),
         cl::init(""));
static cl::opt<std::string> launcherPrefix(
    "launcher-prefix",
    cl::desc("With --emit=launcher: the C identifier the launcher's names "
             "start with (default: the kernel's name)"),
    cl::value_desc("name"), cl::init(""));
static cl::opt<int64_t> blockM("block-m", cl::desc("Rows of Q per workgroup"),
                               cl::init(0));
static cl::opt<int64_t> blockN("block-n", cl::desc("Rows of K/V per step"),
                               cl::init(0));
static cl::opt<int64_t> waves("waves", cl::desc("Waves per workgroup"),
                              cl::init(0));
static cl::opt<int64_t> stages(
    "stages",
    cl::desc("K/V pipeline stages: 2 double-buffers the K/V loop "
             "(fa-double-buffer), 1 does not, 0 (default) chooses 2 unless "
             "its registers would cost occupancy or tile size"),
    cl::init(0));
static cl::opt<std::string> fetchAhead(
    "fetch-ahead",
    cl::desc("With stages=2: next-block (K/V of block n+1 fetched during "
             "block n), in-block (only V fetched ahead, during Q·K^T), or "
             "auto (default: next-block; on gfx906 in-block where "
             "next-block spills, before smaller tiles are tried)"),
    cl::init("auto"));
static cl::opt<unsigned> indexBits(
    "index-bits",
    cl::desc("Width of index arithmetic in gfx906 and sm_90 kernels: 32 "
             "(default; the runtime refuses problems whose offsets do not "
             "fit) or 64"),
    cl::init(32));
static cl::opt<bool>
    padLds("pad-lds",
           cl::desc("Pad LDS rows by bank-conflict analysis (fa-pad-lds; "
                    "--pad-lds=false turns it off)"),
           cl::init(true));
static cl::opt<std::string> kvShared(
    "kv-shared",
    cl::desc("K and V blocks in one LDS slot: auto (default: where that "
             "gives the target's occupancy goal), on, off"),
    cl::init("auto"));
static cl::opt<bool> pairRhs(
    "pair-rhs",
    cl::desc("Store V pair-interleaved in LDS so that P·V reads two keys "
             "per 32-bit word (default; --pair-rhs=false for row-major)"),
    cl::init(true));
static cl::opt<std::string> widenLds(
    "widen-lds",
    cl::desc("Keep f16/bf16 tiles in LDS as f32, converted once by the copy: "
             "auto (default: on for sm_90/sm_80), on, off"),
    cl::init("auto"));
static cl::opt<std::string> dot2(
    "dot2",
    cl::desc("gfx906: v_dot2_f32_f16 for the Q·K^T products: auto (default: "
             "unless it costs waves per SIMD, judged by the backend), on, off"),
    cl::init("auto"));
static cl::opt<std::string> shareRows(
    "share-rows",
    cl::desc("The lhs rows of the LDS products (Q, P) read once per thread "
             "row and rotated around its 16 lanes (DPP row_ror on gfx906) "
             "instead of read by every lane: auto (default: off, and on for "
             "gfx906 where the backend spills without it), on, off"),
    cl::init("auto"));
static cl::opt<std::string> kvSplits(
    "kv-splits",
    cl::desc("Split-KV (flash-decoding): off; runtime: the K/V range of each "
             "Q block is split over S workgroups, S chosen at launch, and a "
             "second kernel combines the parts (kernel ABI version 2; the "
             "target's decode tiles unless given); auto (default): runtime "
             "with the dense tiles on gfx906 for a dense attention that is "
             "not traced (at S = 1 it writes O itself), off elsewhere"),
    cl::init("auto"));
static cl::opt<std::string> gqaPack(
    "gqa-pack",
    cl::desc("GQA packing: off (default), or on: the Hq/Hkv query heads of "
             "one KV head are rows of one Q tile, so that each K/V block is "
             "read once per KV head (for decode)"),
    cl::init("off"));
static cl::opt<std::string> mergeSplits(
    "merge-splits",
    cl::desc("Split-KV combine: merge the splits by groups of threads at once "
             "(fa.merge_splits) where the combine grid leaves CUs idle: auto "
             "(default: where the target has it, gfx906 and sm_90), on "
             "(wherever the combine's tile allows it), off (the loop alone)"),
    cl::init("auto"));
static cl::opt<bool> allowBf16("allow-bf16", cl::desc("Accept emulated bf16"),
                               cl::init(false));
static cl::opt<bool> forbidSpills(
    "forbid-spills",
    cl::desc("gfx906: fail where the kernel still spills to scratch after "
             "fac's retries (default: keep it with a remark)"),
    cl::init(false));
static cl::opt<bool> report("report",
                            cl::desc("Print the tile config and LDS budget"),
                            cl::init(false));
static cl::opt<bool> trace(
    "trace",
    cl::desc("Validation layer 2: the kernel takes a trace buffer and a "
             "traced (batch, head, row) and writes that row's running max, "
             "sum and output after every K/V block (fa-run --trace-row; "
             "dense kernels only; docs/validation.md)"),
    cl::init(false));
static cl::opt<std::string>
    testPlantBug("test-plant-bug",
                 cl::desc("Test only: plant a known bug in the kernel "
                          "(compiler/Testing/PlantedBugs.h) to check that "
                          "tests catch it"),
                 cl::value_desc("name"), cl::init(""), cl::Hidden);
static cl::opt<bool> testListPlantedBugs(
    "test-list-planted-bugs",
    cl::desc("Test only: print the names of the plantable bugs and exit"),
    cl::init(false), cl::Hidden);

static int fail(const llvm::Twine &message) {
  llvm::errs() << "fac: error: " << message << "\n";
  return 1;
}

static int writeFile(llvm::StringRef path, llvm::StringRef bytes) {
  std::string error;
  auto out = openOutputFile(path, &error);
  if (!out)
    return fail(error);
  out->os() << bytes;
  out->keep();
  return 0;
}

static fa::CompileOptions optionsFromCommandLine() {
  fa::CompileOptions o;
  o.target = target;
  o.emit = emit;
  o.blockM = blockM;
  o.blockN = blockN;
  o.waves = waves;
  o.stages = stages;
  o.fetchAhead = fetchAhead;
  // Given or not matters: the host target refuses an explicit width.
  o.indexBits = indexBits.getNumOccurrences() ? indexBits.getValue() : 0;
  o.padLds = padLds;
  o.kvShared = kvShared;
  o.pairRhs = pairRhs;
  o.widenLds = widenLds;
  o.dot2 = dot2;
  o.shareRows = shareRows;
  o.kvSplits = kvSplits;
  o.gqaPack = gqaPack;
  o.mergeSplits = mergeSplits;
  o.allowBf16 = allowBf16;
  o.forbidSpills = forbidSpills;
  o.report = report;
  o.trace = trace;
  o.plantBug = testPlantBug;
  // A launcher embeds the code object: the manifest names the default file.
  if (emit != "launcher")
    o.codeObjectName = llvm::sys::path::filename(outputFile).str();
  return o;
}

static int runFac(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Needs no input file, so it is answered before the required positional
  // argument is checked.
  for (int i = 1; i < argc; ++i)
    if (llvm::StringRef(argv[i]) == "--test-list-planted-bugs") {
      for (const fa::PlantedBugInfo &bug : fa::plantedBugs())
        llvm::outs() << bug.name << "\n";
      return 0;
    }
  cl::ParseCommandLineOptions(argc, argv, "fa compiler driver\n");

  fa::CompileOptions options = optionsFromCommandLine();
  if (llvm::Error e = fa::validateCompileOptions(options))
    return fail(llvm::toString(std::move(e)));
  bool text =
      emit == "mlir" || emit == "llvm" || emit == "asm" || emit == "ptx";
  bool launcher = emit == "launcher";
  if (!launcherPrefix.empty() && !launcher)
    return fail("--launcher-prefix is for --emit=launcher");
  if (launcher && (outputFile.empty() || outputFile == "-"))
    return fail("--emit=launcher writes a C source and its header: -o "
                "<path>.c is required");
  // out.c -> out.h, next to it.
  llvm::SmallString<256> headerFile(outputFile.getValue());
  llvm::sys::path::replace_extension(headerFile, "h");
  if (launcher && headerFile == outputFile)
    return fail("--emit=launcher writes the header '" + headerFile +
                "' next to -o: name the C source (.c) instead");
  if (outputFile.empty() && !text)
    return fail("-o <path> is required for --target=" + target);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  fa::CompileResult result =
      fa::compile(input->getBuffer(), input->getBufferIdentifier(), options);

  for (const fa::CompileDiagnostic &d : result.diagnostics) {
    if (d.located)
      llvm::errs() << d.text;
    else
      llvm::errs() << "fac: " << fa::severityName(d.severity) << ": " << d.text
                   << "\n";
  }
  llvm::outs() << result.report;
  if (!result.ok)
    return 1;
  if (text && (outputFile.empty() || outputFile == "-")) {
    llvm::outs() << result.output;
    return 0;
  }
  if (launcher) {
    fa::LauncherOptions lo;
    lo.prefix = launcherPrefix;
    lo.headerName = llvm::sys::path::filename(headerFile).str();
    llvm::Expected<fa::LauncherFiles> files =
        fa::renderLauncher(result.output, result.manifest, lo);
    if (!files)
      return fail(llvm::toString(files.takeError()));
    if (int rc = writeFile(outputFile, files->source))
      return rc;
    return writeFile(headerFile, files->header);
  }
  if (int rc = writeFile(outputFile, result.output))
    return rc;
  if (result.manifest.empty())
    return 0;
  return writeFile(outputFile + ".json", result.manifest);
}

int main(int argc, char **argv) {
  // Nothing escapes main: an exception from our code (the LLVM libraries are
  // built without them) is reported, not an abort.
  try {
    return runFac(argc, argv);
  } catch (const std::exception &e) {
    llvm::errs() << "fac: internal error: " << e.what() << "\n";
  } catch (...) {
    llvm::errs() << "fac: internal error: unknown exception\n";
  }
  return 1;
}
