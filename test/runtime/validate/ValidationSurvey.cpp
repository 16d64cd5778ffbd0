//===- ValidationSurvey.cpp - Measures what the validation criteria see ---===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The measurements behind the thresholds of docs/validation.md. For each
// kernel given (host code objects with manifests), each shape of a fixed
// list, both input distributions and seeds 0..N-1, this runs the kernel
// through fa::validateKernel and records, for the kernel and for the naive
// same-precision reference, the largest absolute error and the largest scaled
// error |O - O_ref| / max(A, floor). It also measures two modelled bugs on
// the same problems, computed in fp64 and rounded to the kernel's dtype:
//   drop-key: every row misses its last visible key (for causal problems the
//             diagonal key: the causal loop stops one key short);
//   no-scale: the softmax scale is not applied.
// Printed per (dtype, distribution): the worst (largest) values of the
// correct implementations and the weakest (smallest) values of the bugs,
// with how many runs each criterion flagged.
//
//   fa-validation-survey [--seeds N] KERNEL.so...
//
//===----------------------------------------------------------------------===//

#include "Perturb.h"
#include "fa/Half.h"
#include "fa/Runtime.h"
#include "fa/Validate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace fa;

namespace {

struct Cell {
  int runs = 0;
  double naiveScaled = 0, kernelScaled = 0, naiveAbs = 0, kernelAbs = 0;
  double absRatio = 0; ///< largest kernel / naive max_abs_diff
  double dropScaled = INFINITY, dropAbs = INFINITY, noScaleScaled = INFINITY;
  int dropCaughtScaled = 0, dropCaughtAbsOld = 0, kernelFails = 0;
  int dropRuns = 0, noScaleRuns = 0, noScaleCaught = 0, kernelFailsOld = 0;
};

std::vector<float> rounded(DType dtype, const std::vector<double> &v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = roundTo(dtype, float(v[i]));
  return out;
}

double maxAbs(const std::vector<float> &v) {
  double m = 0;
  for (float x : v)
    m = std::max(m, double(std::fabs(x)));
  return m;
}

} // namespace

int main(int argc, char **argv) {
  int seeds = 6;
  std::vector<std::string> kernels;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seeds" && i + 1 < argc)
      seeds = std::atoi(argv[++i]);
    else
      kernels.push_back(a);
  }
  if (kernels.empty()) {
    std::fprintf(stderr,
                 "usage: fa-validation-survey [--seeds N] KERNEL.so...\n");
    return 2;
  }
  const AttentionShape shapes[] = {{1, 2, 1, 1, 100},   {1, 2, 2, 17, 17},
                                   {1, 4, 2, 100, 100}, {1, 2, 1, 17, 257},
                                   {1, 2, 2, 257, 257}, {2, 2, 1, 100, 17},
                                   {1, 2, 1, 257, 1}};
  Expected<Device> device = Device::open("host");
  if (!device) {
    std::fprintf(stderr, "%s\n", device.status().toString().c_str());
    return 2;
  }
  std::map<std::string, Cell> cells;
  for (const std::string &path : kernels) {
    Expected<Module> module = Module::load(*device, path);
    if (!module) {
      std::fprintf(stderr, "%s\n", module.status().toString().c_str());
      return 2;
    }
    Kernel kernel = module->kernel().take();
    const KernelInfo &info = kernel.info();
    for (const AttentionShape &shape : shapes)
      for (Distribution dist : {Distribution::Normal, Distribution::Outliers})
        for (int seed = 0; seed < seeds; ++seed) {
          ValidationOptions vo;
          vo.shape = shape;
          vo.dist = dist;
          vo.seed = uint64_t(seed);
          Expected<ValidationReport> r = validateKernel(kernel, vo);
          if (!r) {
            std::fprintf(stderr, "%s: %s\n", path.c_str(),
                         r.status().toString().c_str());
            return 1;
          }
          AttentionData in0 =
              generateInputs(r->problem, info.dtype, dist, uint64_t(seed));
          double oldAbs =
              (info.dtype == DType::F32   ? 5e-5
               : info.dtype == DType::F16 ? 1e-2
                                          : 5e-2) *
              (dist == Distribution::Outliers ? std::max(1.0, maxAbs(in0.v))
                                              : 1.0);
          Cell &c = cells[std::string(dtypeName(info.dtype)) + " " +
                          distributionName(dist)];
          ++c.runs;
          c.naiveScaled = std::max(c.naiveScaled, r->naive.maxScaledDiff);
          c.kernelScaled = std::max(c.kernelScaled, r->ours.maxScaledDiff);
          c.naiveAbs = std::max(c.naiveAbs, r->naive.maxAbsDiff);
          c.kernelAbs = std::max(c.kernelAbs, r->ours.maxAbsDiff);
          if (r->naive.maxAbsDiff > 0)
            c.absRatio =
                std::max(c.absRatio, r->ours.maxAbsDiff / r->naive.maxAbsDiff);
          c.kernelFails += !r->verdict.pass;
          c.kernelFailsOld +=
              r->ours.maxAbsDiff > oldAbs || r->ours.cosine < 0.999 ||
              r->ours.maxAbsDiff > 2 * r->naive.maxAbsDiff + 1e-5;
          if (!r->verdict.pass)
            for (const Check &check : r->verdict.checks)
              if (!check.pass)
                std::printf("FAIL %s %s %s seed %d: %s\n", info.name.c_str(),
                            shape.toString().c_str(), distributionName(dist),
                            seed, check.text.c_str());

          // The modelled bugs, against the same fp64 baseline.
          const AttentionProblem &p = r->problem;
          AttentionData in =
              generateInputs(p, info.dtype, dist, uint64_t(seed));
          AttentionResult<double> ref = referenceAttentionF64(p, in);
          double floor = magnitudeFloor(maxAbs(in.v));
          double limit = scaledThreshold(info.dtype);
          if (p.shape.seqK > 1) {
            AttentionProblem dp;
            AttentionData dd = test::dropLastKey(p, in, dp);
            std::vector<float> got =
                rounded(info.dtype, referenceAttentionF64(dp, dd).o);
            OutputMetrics m = compareOutputs(got, ref.o);
            compareScaled(m, got, ref.o, ref.magnitude, floor);
            ++c.dropRuns;
            c.dropScaled = std::min(c.dropScaled, m.maxScaledDiff);
            c.dropAbs = std::min(c.dropAbs, m.maxAbsDiff);
            c.dropCaughtScaled += m.maxScaledDiff > limit;
            c.dropCaughtAbsOld += m.maxAbsDiff > oldAbs;
          }
          AttentionProblem np = p;
          np.scale = 1.0;
          std::vector<float> got =
              rounded(info.dtype, referenceAttentionF64(np, in).o);
          OutputMetrics m = compareOutputs(got, ref.o);
          compareScaled(m, got, ref.o, ref.magnitude, floor);
          if (p.shape.seqK >= 17) { // the scale matters with several keys
            ++c.noScaleRuns;
            c.noScaleScaled = std::min(c.noScaleScaled, m.maxScaledDiff);
            c.noScaleCaught += m.maxScaledDiff > limit;
          }
        }
  }
  std::printf(
      "columns: worst naive / kernel scaled and absolute error, largest "
      "kernel / naive absolute error; "
      "drop-key: smallest scaled error, runs over the scaled limit, "
      "runs over the old absolute limit, smallest absolute error; "
      "kernel runs failing (new criteria, old criteria); no-scale: smallest "
      "scaled error (Lk >= "
      "17), runs over the limit\n");
  std::printf("%-14s %5s | %9s %9s | %9s %9s %6s | %9s %9s %9s %9s | %5s | %9s "
              "%9s\n",
              "dtype dist", "runs", "naive sc", "kern sc", "naive abs",
              "kern abs", "ratio", "drop sc", "caught", "old abs", "drop abs",
              "kfail old", "nosc sc", "caught");
  for (const auto &[name, c] : cells)
    std::printf("%-14s %5d | %9.2e %9.2e | %9.2e %9.2e %6.2f | %9.2e %4d/%-4d "
                "%4d/%-4d %9.2e | %5d %5d | %9.2e %4d/%-4d\n",
                name.c_str(), c.runs, c.naiveScaled, c.kernelScaled, c.naiveAbs,
                c.kernelAbs, c.absRatio, c.dropScaled, c.dropCaughtScaled,
                c.dropRuns, c.dropCaughtAbsOld, c.dropRuns, c.dropAbs,
                c.kernelFails, c.kernelFailsOld, c.noScaleScaled,
                c.noScaleCaught, c.noScaleRuns);
  return 0;
}
