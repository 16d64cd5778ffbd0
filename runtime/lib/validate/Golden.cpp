//===- Golden.cpp - Independent golden attention vectors ------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the golden-case loader.
//
//===----------------------------------------------------------------------===//

#include "fa/Golden.h"
#include "core/Files.h"
#include "core/JsonParse.h"
#include "fa/Half.h"

using namespace fa;
using namespace fa::detail;

static Status metaError(const std::string &path, const std::string &what) {
  return Status::error(ErrorCode::ManifestError,
                       "golden meta '" + path + "': " + what)
      .withFile(path);
}

/// Reads `path` as exactly `count` elements of `type`.
static Status readTensor(const std::string &path, DType type, size_t count,
                         std::vector<float> &out) {
  Expected<std::vector<uint8_t>> bytes = readFileBytes(path, "golden tensor");
  if (!bytes)
    return bytes.takeStatus();
  size_t want = count * dtypeBytes(type);
  if (bytes->size() != want)
    return Status::error(ErrorCode::InvalidArgument,
                         "golden tensor '" + path + "' has " +
                             std::to_string(bytes->size()) +
                             " bytes, the shape needs " + std::to_string(want) +
                             " (" + std::to_string(count) + " " +
                             dtypeName(type) + ")")
        .withFile(path);
  out = decodeElements(type, bytes->data(), count);
  return Status::success();
}

Expected<GoldenCase> fa::loadGoldenCase(const std::string &folderIn) {
  std::string folder = folderIn;
  if (!folder.empty() && folder.back() != '/')
    folder += '/';
  std::string metaPath = folder + "meta.json";
  Expected<std::vector<uint8_t>> text = readFileBytes(metaPath, "golden meta");
  if (!text)
    return text.takeStatus();
  Expected<JsonDocument> meta = parseJson(std::string_view(
      reinterpret_cast<const char *>(text->data()), text->size()));
  if (!meta)
    return metaError(metaPath, meta.status().message());
  if (!meta->is_object())
    return metaError(metaPath, "expected a JSON object");

  GoldenCase c;
  c.folder = folderIn;
  auto str = [&](const char *key, std::string &out) -> Status {
    const Json *v = jsonFind(*meta, key);
    if (!v || !v->is_string())
      return metaError(metaPath,
                       std::string("'") + key + "' missing or not a string");
    out = v->get<std::string>();
    return Status::success();
  };
  auto integer = [&](const char *key, int64_t &out, int64_t min) -> Status {
    const Json *v = jsonFind(*meta, key);
    if (!v || !jsonInteger(*v, out) || out < min)
      return metaError(metaPath, std::string("'") + key +
                                     "' missing or not an integer >= " +
                                     std::to_string(min));
    return Status::success();
  };
  std::string dtype, dist;
  int64_t seed = 0;
  AttentionShape &s = c.problem.shape;
  Status st;
  if (!(st = str("name", c.name)).ok() || !(st = str("dtype", dtype)).ok() ||
      !(st = str("dist", dist)).ok() || !(st = integer("B", s.batch, 1)).ok() ||
      !(st = integer("Hq", s.headsQ, 1)).ok() ||
      !(st = integer("Hkv", s.headsKv, 1)).ok() ||
      !(st = integer("Lq", s.seqQ, 1)).ok() ||
      !(st = integer("Lk", s.seqK, 1)).ok() ||
      !(st = integer("D", c.problem.headDim, 1)).ok() ||
      !(st = integer("seed", seed, 0)).ok() ||
      !(st = integer("empty_rows", c.emptyRows, 0)).ok())
    return st;
  c.seed = uint64_t(seed);
  std::optional<DType> parsedType = parseDType(dtype);
  if (!parsedType)
    return metaError(metaPath, "unknown dtype '" + dtype + "'");
  c.dtype = *parsedType;
  std::optional<Distribution> parsedDist = parseDistribution(dist);
  if (!parsedDist)
    return metaError(metaPath, "unknown dist '" + dist + "'");
  c.dist = *parsedDist;
  const Json *causal = jsonFind(*meta, "causal");
  const Json *scale = jsonFind(*meta, "scale");
  if (!causal || !causal->is_boolean())
    return metaError(metaPath, "'causal' missing or not a boolean");
  if (!scale || !scale->is_number() || !(scale->get<double>() > 0))
    return metaError(metaPath, "'scale' missing or not a positive number");
  c.problem.causal = causal->get<bool>();
  c.problem.scale = scale->get<double>();
  if (s.headsQ % s.headsKv != 0)
    return metaError(metaPath, "Hq (" + std::to_string(s.headsQ) +
                                   ") is not a multiple of Hkv (" +
                                   std::to_string(s.headsKv) + ")");

  // File names default to the documented ones; meta.json may name others.
  const Json *files = jsonFind(*meta, "files");
  auto file = [&](const char *key, const char *fallback) {
    const Json *v = files ? jsonFind(*files, key) : nullptr;
    return folder + (v && v->is_string() ? v->get<std::string>() : fallback);
  };
  const AttentionProblem &p = c.problem;
  struct {
    const char *key, *fallback;
    DType type;
    size_t count;
    std::vector<float> *out;
  } tensors[] = {
      {"q", "q.bin", c.dtype, p.qElements(), &c.inputs.q},
      {"k", "k.bin", c.dtype, p.kvElements(), &c.inputs.k},
      {"v", "v.bin", c.dtype, p.kvElements(), &c.inputs.v},
      {"o", "o_ref_f32.bin", DType::F32, p.qElements(), &c.oRef},
      {"lse", "lse_ref_f32.bin", DType::F32, p.lseElements(), &c.lseRef}};
  for (const auto &t : tensors)
    if (Status s = readTensor(file(t.key, t.fallback), t.type, t.count, *t.out);
        !s.ok())
      return s;
  return c;
}
