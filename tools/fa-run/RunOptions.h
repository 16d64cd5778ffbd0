//===- RunOptions.h - fa-run's command line ---------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa-run's options and their parser, apart from main so that other programs
// (a fuzzer, tests) can call the parser: it neither prints nor exits, and
// every malformed argument is an InvalidArgument status whose message names
// the option and the value.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TOOLS_FA_RUN_RUNOPTIONS_H
#define FA_TOOLS_FA_RUN_RUNOPTIONS_H

#include "fa/Runtime.h"
#include "fa/Validate.h"

#include <cstdint>
#include <optional>
#include <string>

namespace fa {

struct RunOptions {
  /// --help was given: print runUsage() and stop (nothing else is checked).
  bool help = false;
  std::string path;
  std::string device = "auto";
  std::string kernel;
  std::string golden;
  bool haveShape = false;
  AttentionShape shape;
  Distribution dist = Distribution::Normal;
  uint64_t seed = 0;
  bool checkRaces = false;
  bool poisonLds = false;
  AttentionLayout layout;
  int bench = 0;
  bool json = false;
  bool profile = false;         ///< --profile: print the gfx906-sim profile
  std::string profileJson;      ///< --profile-json FILE
  bool estimate = false;        ///< --estimate: print the MI50 timing estimate
  std::string estimateJson;     ///< --estimate-json FILE
  bool estimateOnly = false;    ///< --estimate-only: no validation
  unsigned estimateSamples = 8; ///< --estimate-samples N
  std::string estimateParams;   ///< --estimate-param K=V (repeatable)
  ReferenceKind reference = ReferenceKind::Auto;
  int64_t kvSplits = 0; ///< --kv-splits N: split-KV kernels' S (0: auto)
  /// --paged PAGE_SIZE [--cache-seqlens L0,L1,...] [--no-shuffle-pages]
  /// [--share-pages]: a paged kernel's K/V cache; the shape's Lk is each
  /// sequence's capacity.
  std::optional<PagedCacheOptions> paged;
  /// --varlen [--seqlens-q L0,L1,...] [--seqlens-k L0,L1,...]: a varlen
  /// kernel's sequences; the shape's B is their count, its Lq and Lk
  /// max_seqlen_q and max_seqlen_k.
  std::optional<VarlenOptions> varlen;
  /// --trace-row [B,H,]R: validation layer 2 on a `fac --trace` kernel,
  /// the running max, sum and output of query row R of batch B, head H
  /// (default 0, 0) after each K/V block, against the fp64 reference's.
  std::optional<TraceRow> traceRow;
  /// --alibi[=drawn|bloom]: the ALiBi slopes of a kernel whose manifest says
  /// `alibi` ("drawn": drawn from the seed, the default also without the
  /// option; "bloom": the exact series 2^(-8(h+1)/Hq)). Empty: not given.
  std::string alibi;
  /// --sinks[=VALUE]: the attention sinks of a kernel whose manifest says
  /// `sinks`: drawn from the seed (the default also without the option), or
  /// VALUE for every head.
  bool sinks = false;
  std::optional<double> sinkValue;
};

/// The largest --bench count.
constexpr int64_t maxBenchRepetitions = 1000000;

/// fa-run's --help text.
const char *runUsage();

/// Parses fa-run's arguments (argv[0] is the program and is skipped). Every
/// error is InvalidArgument with a message for "fa-run: error: ...".
Expected<RunOptions> parseRunOptions(int argc, const char *const *argv);

} // namespace fa

#endif // FA_TOOLS_FA_RUN_RUNOPTIONS_H
