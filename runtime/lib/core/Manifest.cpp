//===- Manifest.cpp - The sidecar manifest of a code object ---------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements reading, checking and writing manifests, and the
// FNV-1a 64 hash that ties a manifest to its code object.
//
//===----------------------------------------------------------------------===//

#include "fa/Manifest.h"
#include "core/JsonParse.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <tuple>

using namespace fa;
using namespace fa::detail;

uint64_t fa::fnv1a64(const void *data, size_t bytes) {
  const auto *p = static_cast<const uint8_t *>(data);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string fa::formatFnv1a64(uint64_t hash) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "fnv1a64:%016" PRIx64, hash);
  return buf;
}

static bool isHashSpelling(const std::string &s) {
  if (s.size() != 24 || s.compare(0, 8, "fnv1a64:") != 0)
    return false;
  for (size_t i = 8; i < s.size(); ++i)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

static const char *const staticSizeNames[5] = {"B", "Hq", "Hkv", "Lq", "Lk"};

namespace {
/// Reads typed fields of one JSON object, naming `path.field` in errors.
class FieldReader {
public:
  FieldReader(const Json &object, std::string path)
      : object(object), path(std::move(path)) {}

  Status error(const std::string &field, const std::string &what) const {
    return Status::error(ErrorCode::ManifestError,
                         "manifest field '" + path + field + "': " + what);
  }

  /// Member `field` of JSON type `kind` (a sample value: Json::object(),
  /// 0, "", false, Json::array()); nullptr in `out` if absent and optional.
  Status get(const std::string &field, const Json *&out, const Json &kind,
             bool required = true) const {
    out = jsonFind(object, field);
    if (!out)
      return required ? error(field, "missing") : Status::success();
    bool same =
        kind.is_number() ? out->is_number() : out->type() == kind.type();
    if (!same)
      return error(field, std::string("expected ") + jsonKindName(kind) +
                              ", got " + jsonKindName(*out));
    return Status::success();
  }

  Status getString(const std::string &field, std::string &out,
                   bool required = true) const {
    const Json *v;
    if (Status s = get(field, v, "", required); !s.ok())
      return s;
    if (v)
      out = v->get<std::string>();
    return Status::success();
  }

  Status getBool(const std::string &field, bool &out,
                 bool required = true) const {
    const Json *v;
    if (Status s = get(field, v, false, required); !s.ok())
      return s;
    if (v)
      out = v->get<bool>();
    return Status::success();
  }

  /// An integer in [minValue, maxValue]; left alone if absent and optional.
  Status getInt(const std::string &field, int64_t &out, int64_t minValue,
                int64_t maxValue, bool required = true) const {
    const Json *v;
    if (Status s = get(field, v, 0, required); !s.ok() || !v)
      return s;
    int64_t value;
    if (!jsonInteger(*v, value) && v->is_number_float())
      return error(field, "expected an integer, got " + jsonDump(*v));
    if (!jsonInteger(*v, value) || value < minValue || value > maxValue)
      return error(field, jsonDump(*v) + " is outside [" +
                              std::to_string(minValue) + ", " +
                              std::to_string(maxValue) + "]");
    out = value;
    return Status::success();
  }

private:
  const Json &object;
  std::string path;
};
} // namespace

const char *fa::kernelRoleName(KernelRole role) {
  return role == KernelRole::Combine ? "combine" : "attention";
}

/// The split-KV, paged and varlen fields of one kernel (role, kv_splits,
/// combine, gqa_packed, paged, varlen) and how they agree with its ABI version;
/// what `combine` names is checked once every kernel is read
/// (checkCombineKernels).
static Status parseVersionedFields(const FieldReader &r, KernelInfo &k) {
  std::string role = "attention";
  const Json *splits, *combine;
  Status s;
  if (!(s = r.getString("role", role, false)).ok() ||
      !(s = r.get("kv_splits", splits, "", false)).ok() ||
      !(s = r.get("combine", combine, "", false)).ok() ||
      !(s = r.getBool("gqa_packed", k.gqaPacked, false)).ok() ||
      !(s = r.getBool("split_direct", k.splitDirect, false)).ok() ||
      !(s = r.getBool("paged", k.paged, false)).ok() ||
      !(s = r.getBool("varlen", k.varlen, false)).ok() ||
      !(s = r.getBool("trace", k.trace, false)).ok() ||
      !(s = r.getBool("alibi", k.alibi, false)).ok() ||
      !(s = r.getBool("sinks", k.sinks, false)).ok())
    return s;
  if (role == "combine")
    k.role = KernelRole::Combine;
  else if (role != "attention")
    return r.error("role", "unknown role " + jsonDump(role) +
                               " (expected \"attention\" or \"combine\")");
  if (splits) {
    if (splits->get<std::string>() != "runtime")
      return r.error("kv_splits",
                     "unknown value " + jsonDump(*splits) +
                         " (expected \"runtime\": the runtime chooses the "
                         "split count per launch)");
    k.splitKv = true;
  }
  const bool hasCombine = combine != nullptr;
  if (combine) {
    k.combine = combine->get<std::string>();
    if (k.combine.empty())
      return r.error("combine", "empty");
  }

  const std::string version = std::to_string(k.abiVersion);
  if (k.paged && !k.varlen && k.abiVersion != 3)
    return r.error("paged", "a paged kernel takes the paged K/V ABI "
                            "(abi_version 3), this one says abi_version " +
                                version);
  if (k.varlen && k.abiVersion != 4)
    return r.error("varlen", std::string(k.paged ? "a mixed-batch (paged "
                                                   "and varlen)"
                                                 : "a varlen") +
                                 " kernel takes the variable-length "
                                 "ABI (abi_version 4), this one says "
                                 "abi_version " +
                                 version);
  // The trace words follow the dense ABI's (KernelAbi.h, "Trace").
  if (k.trace && (k.abiVersion != 1 || k.isCombine() || k.gqaPacked))
    return r.error("trace", "a trace kernel is a dense attention kernel "
                            "(abi_version 1, not GQA-packed), this one says "
                            "abi_version " +
                                version);
  // The trace words and the head words exclude each other (KernelAbi.h).
  if (k.trace && k.hasHeadParams())
    return r.error("trace", std::string("a trace kernel has no ") +
                                (k.alibi ? "alibi" : "sinks") +
                                " (fac --trace does not trace ALiBi or "
                                "attention sinks)");
  if (k.isCombine()) {
    if (k.abiVersion < 2)
      return r.error("role", "a combine kernel takes the split-KV ABI "
                             "(abi_version 2), this one says abi_version " +
                                 version);
    for (const auto &[field, set] :
         {std::pair<const char *, bool>{"kv_splits", k.splitKv},
          {"combine", hasCombine},
          {"gqa_packed", k.gqaPacked},
          {"split_direct", k.splitDirect}})
      if (set)
        return r.error(field, "a combine kernel has no " + std::string(field) +
                                  " (it runs on grid (ceil(Lq / block_m), "
                                  "Hq, B) after its split kernel)");
    return Status::success();
  }
  if (k.splitKv && k.abiVersion < 2)
    return r.error("kv_splits", "a split-KV kernel takes ABI version 2, this "
                                "one says abi_version " +
                                    version);
  if (k.abiVersion == 3 && !k.paged)
    return r.error("abi_version",
                   "version 3 is the paged K/V ABI: an attention kernel of "
                   "version 3 needs \"paged\": true");
  if (k.abiVersion == 4 && !k.varlen)
    return r.error("abi_version",
                   "version 4 is the variable-length ABI: an attention "
                   "kernel of version 4 needs \"varlen\": true");
  if (k.abiVersion == 2 && !k.splitKv)
    return r.error("abi_version",
                   "version 2 is the split-KV ABI: an attention kernel of "
                   "version 2 needs \"kv_splits\": \"runtime\" and a "
                   "\"combine\" kernel");
  if (k.splitKv && !hasCombine)
    return r.error("combine", "missing: a split-KV kernel names the kernel "
                              "that combines its splits");
  if (!k.splitKv && k.splitDirect)
    return r.error("split_direct", "only a split-KV kernel (\"kv_splits\": "
                                   "\"runtime\") writes O directly at S = 1");
  if (!k.splitKv && hasCombine)
    return r.error("combine", "only a split-KV kernel (\"kv_splits\": "
                              "\"runtime\") has a combine kernel");
  return Status::success();
}

/// Every split-KV kernel's `combine` names a combine kernel that takes the
/// same words and reads and writes the same buffers: the same abi_version,
/// dtype, head_dim and has_lse.
static Status checkCombineKernels(const std::vector<KernelInfo> &kernels) {
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelInfo &k = kernels[i];
    if (!k.splitKv)
      continue;
    const std::string field = "kernels[" + std::to_string(i) + "].combine";
    auto error = [&](const std::string &what) {
      return Status::error(ErrorCode::ManifestError,
                           "manifest field '" + field + "': " + what);
    };
    const KernelInfo *c = nullptr;
    std::string names;
    for (const KernelInfo &other : kernels) {
      if (other.name == k.combine)
        c = &other;
      names += (names.empty() ? "" : ", ") + other.name;
    }
    if (!c)
      return error("no kernel '" + k.combine +
                   "' in the manifest (it has: " + names + ")");
    if (!c->isCombine())
      return error("kernel '" + k.combine +
                   "' is not a combine kernel (its role is \"" +
                   kernelRoleName(c->role) + "\")");
    auto differs = [&](const char *what, const std::string &mine,
                       const std::string &theirs) {
      return error("combine kernel '" + c->name + "' has " + what + " " +
                   theirs + ", kernel '" + k.name + "' has " + mine +
                   " (the two share the O and LSE buffers and the workspace)");
    };
    if (c->abiVersion != k.abiVersion)
      return error("combine kernel '" + c->name + "' has abi_version " +
                   std::to_string(c->abiVersion) + ", kernel '" + k.name +
                   "' has " + std::to_string(k.abiVersion) +
                   " (the combine kernel takes its split kernel's words)");
    if (c->dtype != k.dtype)
      return differs("dtype", dtypeName(k.dtype), dtypeName(c->dtype));
    if (c->headDim != k.headDim)
      return differs("head_dim", std::to_string(k.headDim),
                     std::to_string(c->headDim));
    if (c->hasLse != k.hasLse)
      return differs("has_lse", k.hasLse ? "true" : "false",
                     c->hasLse ? "true" : "false");
    // A combine kernel may omit the window and softcap (it merges what the
    // splits computed); where it states them they are its split kernel's.
    auto window = [](const KernelInfo &x) {
      return "[" + std::to_string(x.windowLeft) + ", " +
             std::to_string(x.windowRight) + "]";
    };
    if (c->hasWindow() &&
        (c->windowLeft != k.windowLeft || c->windowRight != k.windowRight))
      return error("combine kernel '" + c->name + "' has window " + window(*c) +
                   ", kernel '" + k.name + "' has " + window(k) +
                   " (a combine kernel omits the window or states its split "
                   "kernel's)");
    if (c->hasSoftcap() && c->softcap != k.softcap)
      return error("combine kernel '" + c->name + "' has softcap " +
                   jsonDump(c->softcap) + ", kernel '" + k.name + "' has " +
                   jsonDump(k.softcap) +
                   " (a combine kernel omits the softcap or states its split "
                   "kernel's)");
    // alibi and sinks add the head words, which the combine kernel takes
    // too (and reads sinks from): it states both as its split kernel does.
    for (const auto &[what, mine, theirs] :
         {std::tuple<const char *, bool, bool>{"alibi", k.alibi, c->alibi},
          {"sinks", k.sinks, c->sinks}})
      if (mine != theirs)
        return error("combine kernel '" + c->name + "' has " + what + " " +
                     (theirs ? "true" : "false") + ", kernel '" + k.name +
                     "' has " + (mine ? "true" : "false") +
                     " (the combine kernel takes its split kernel's words, "
                     "the head parameters included: it states alibi and "
                     "sinks as its split kernel does)");
  }
  return Status::success();
}

/// The optional mask and score fields: each window bound an integer of at
/// least -1 (-1: unbounded; at most INT32_MAX, so that i + Lk - Lq plus a
/// bound cannot overflow), the softcap a finite number of at least 0 (0:
/// none).
static Status parseWindowSoftcap(const FieldReader &r, KernelInfo &k) {
  const Json *softcap;
  Status s;
  if (!(s = r.getInt("window_left", k.windowLeft, -1, INT32_MAX, false)).ok() ||
      !(s = r.getInt("window_right", k.windowRight, -1, INT32_MAX, false))
           .ok() ||
      !(s = r.get("softcap", softcap, 0.0, false)).ok() || !softcap)
    return s;
  k.softcap = softcap->get<double>();
  if (!(k.softcap >= 0) || !std::isfinite(k.softcap))
    return r.error("softcap", "must be a finite number of at least 0 (0: no "
                              "softcap), got " +
                                  jsonDump(*softcap));
  return Status::success();
}

static Status parseKernel(const Json &value, size_t index, KernelInfo &k) {
  std::string path = "kernels[" + std::to_string(index) + "].";
  if (!value.is_object())
    return Status::error(ErrorCode::ManifestError,
                         "manifest field '" + path.substr(0, path.size() - 1) +
                             "': expected an object");
  FieldReader r(value, path);
  std::string dtype;
  const Json *scale;
  Status s;
  if (!(s = r.getString("name", k.name)).ok() ||
      !(s = r.getString("symbol", k.symbol)).ok() ||
      !(s = r.getInt("abi_version", k.abiVersion, 1, INT32_MAX)).ok() ||
      !(s = r.getString("dtype", dtype)).ok() ||
      !(s = r.getInt("head_dim", k.headDim, 1, 4096)).ok() ||
      !(s = r.getBool("causal", k.causal)).ok() ||
      !(s = r.get("scale", scale, 0.0)).ok() ||
      !(s = r.getBool("has_lse", k.hasLse)).ok() ||
      !(s = r.getInt("block_m", k.blockM, 1, 1 << 16)).ok() ||
      !(s = r.getInt("block_n", k.blockN, 1, 1 << 16)).ok() ||
      !(s = r.getInt("threads", k.threads, 1, 1 << 16)).ok() ||
      !(s = r.getInt("wave_size", k.waveSize, 1, 1024)).ok() ||
      !(s = r.getInt("lds_bytes", k.ldsBytes, 0, int64_t(1) << 32)).ok() ||
      !(s = r.getInt("dynamic_lds_bytes", k.dynamicLdsBytes, 0,
                     int64_t(1) << 32, /*required=*/false))
           .ok() ||
      !(s = r.getInt("index_bits", k.indexBits, 32, 64, false)).ok() ||
      !(s = r.getInt("lds_pad", k.ldsPad, 0, 1 << 16, false)).ok() ||
      !(s = r.getInt("stages", k.stages, 1, 16, false)).ok())
    return s;
  if (k.name.empty())
    return r.error("name", "empty");
  if (k.symbol.empty())
    return r.error("symbol", "empty");
  std::optional<DType> parsed = parseDType(dtype);
  if (!parsed)
    return r.error("dtype", "unknown element type '" + dtype +
                                "' (expected f16, bf16 or f32)");
  k.dtype = *parsed;
  if (k.indexBits != 32 && k.indexBits != 64)
    return Status::error(ErrorCode::InvalidArgument,
                         "index_bits must be 32 or 64, got " +
                             std::to_string(k.indexBits));
  const Json *fixed, *resources;
  if (!(s = r.get("static_sizes", fixed, Json::object(), false)).ok() ||
      !(s = r.get("resources", resources, Json::object(), false)).ok())
    return s;
  if (fixed) {
    FieldReader sizes(*fixed, path + "static_sizes.");
    for (int i = 0; i < 5; ++i)
      if (!(s = sizes.getInt(staticSizeNames[i], k.staticSizes[i], -1,
                             INT32_MAX))
               .ok())
        return s;
  }
  if (resources) {
    FieldReader figures(*resources, path + "resources.");
    for (auto it = resources->begin(); it != resources->end(); ++it) {
      int64_t figure;
      if (!(s = figures.getInt(it.key(), figure, 0, INT64_MAX)).ok())
        return s;
      k.resources.emplace_back(it.key(), figure);
    }
  }
  k.scale = scale->get<double>();
  if (!(k.scale > 0) || !std::isfinite(k.scale))
    return r.error("scale",
                   "must be a positive finite number, got " + jsonDump(*scale));
  if (!(s = parseWindowSoftcap(r, k)).ok())
    return s;
  return parseVersionedFields(r, k);
}

Expected<Manifest> fa::parseManifest(std::string_view json) {
  Expected<JsonDocument> doc = parseJson(json);
  if (!doc)
    return doc.takeStatus().prepend("malformed manifest JSON");
  if (!doc->is_object())
    return Status::error(ErrorCode::ManifestError,
                         "manifest must be a JSON object");
  Manifest m;
  FieldReader top(*doc, "");
  const Json *code, *kernels;
  Status s;
  if (!(s = top.getInt("fa_manifest_version", m.version, 0, INT32_MAX)).ok())
    return s;
  if (m.version != 1)
    return top.error("fa_manifest_version",
                     "version " + std::to_string(m.version) +
                         " is not supported (this runtime reads version 1)");
  if (!(s = top.getString("compiler", m.compiler, false)).ok() ||
      !(s = top.getString("source_hash", m.sourceHash, false)).ok() ||
      !(s = top.getString("target", m.target)).ok() ||
      !(s = top.get("code_object", code, Json::object())).ok() ||
      !(s = top.get("kernels", kernels, Json::array())).ok())
    return s;
  if (m.target.empty())
    return top.error("target", "empty");

  FieldReader co(*code, "code_object.");
  int64_t bytes;
  if (!(s = co.getString("file", m.codeObjectFile)).ok() ||
      !(s = co.getString("format", m.codeObjectFormat)).ok() ||
      !(s = co.getInt("bytes", bytes, 1, INT64_MAX)).ok() ||
      !(s = co.getString("hash", m.codeObjectHash)).ok())
    return s;
  m.codeObjectBytes = uint64_t(bytes);
  if (!isHashSpelling(m.codeObjectHash))
    return co.error("hash", "expected \"fnv1a64:\" and 16 lowercase hex "
                            "digits, got " +
                                jsonDump(m.codeObjectHash));

  if (kernels->empty())
    return top.error("kernels", "empty: a code object needs one kernel");
  for (size_t i = 0; i < kernels->size(); ++i) {
    KernelInfo k;
    if (Status ks = parseKernel((*kernels)[i], i, k); !ks.ok())
      return ks;
    for (const KernelInfo &other : m.kernels)
      if (other.name == k.name)
        return top.error("kernels", "duplicate kernel name '" + k.name + "'");
    m.kernels.push_back(std::move(k));
  }
  if (Status cs = checkCombineKernels(m.kernels); !cs.ok())
    return cs;
  return m;
}

/// The documented layout: one member per line down to the kernel entries,
/// containers below that (static_sizes, resources) on one line.
static void printManifestJson(const Json &value, int depth, std::string &out) {
  if (!value.is_structured() || value.empty()) {
    out += jsonDump(value);
    return;
  }
  bool oneLine = depth >= 3, object = value.is_object();
  out += object ? '{' : '[';
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it != value.begin())
      out += oneLine ? ", " : ",";
    if (!oneLine)
      out += "\n" + std::string(2 * depth + 2, ' ');
    if (object)
      out += jsonDump(it.key()) + ": ";
    printManifestJson(*it, depth + 1, out);
  }
  if (!oneLine)
    out += "\n" + std::string(2 * depth, ' ');
  out += object ? '}' : ']';
}

std::string fa::formatManifest(const Manifest &m) {
  Json kernels = Json::array();
  for (const KernelInfo &k : m.kernels) {
    Json sizes = Json::object(), resources = Json::object();
    for (int i = 0; i < 5; ++i)
      sizes[staticSizeNames[i]] = k.staticSizes[i];
    for (const auto &[name, figure] : k.resources)
      resources[name] = figure;
    Json entry = {
        {"name", k.name}, {"symbol", k.symbol}, {"abi_version", k.abiVersion}};
    // The split-KV and paged fields only where they say something, so a
    // dense kernel's entry reads as it did before they existed.
    if (k.isCombine())
      entry["role"] = kernelRoleName(k.role);
    if (k.splitKv)
      entry["kv_splits"] = "runtime";
    if (k.splitDirect)
      entry["split_direct"] = true;
    if (!k.combine.empty())
      entry["combine"] = k.combine;
    if (k.gqaPacked)
      entry["gqa_packed"] = true;
    if (k.paged)
      entry["paged"] = true;
    if (k.varlen)
      entry["varlen"] = true;
    if (k.trace)
      entry["trace"] = true;
    Json rest = {{"dtype", dtypeName(k.dtype)},
                 {"head_dim", k.headDim},
                 {"causal", k.causal}};
    // The window (both bounds) and the softcap only where they say
    // something, as above.
    if (k.hasWindow()) {
      rest["window_left"] = k.windowLeft;
      rest["window_right"] = k.windowRight;
    }
    if (k.softcap != 0)
      rest["softcap"] = k.softcap;
    if (k.alibi)
      rest["alibi"] = true;
    if (k.sinks)
      rest["sinks"] = true;
    Json more = {{"scale", k.scale},
                 {"has_lse", k.hasLse},
                 {"block_m", k.blockM},
                 {"block_n", k.blockN},
                 {"threads", k.threads},
                 {"wave_size", k.waveSize},
                 {"lds_bytes", k.ldsBytes},
                 {"dynamic_lds_bytes", k.dynamicLdsBytes},
                 {"index_bits", k.indexBits},
                 {"lds_pad", k.ldsPad},
                 {"stages", k.stages},
                 {"static_sizes", sizes}};
    for (Json *part : {&rest, &more})
      for (auto it = part->begin(); it != part->end(); ++it)
        entry[it.key()] = std::move(*it);
    if (!k.resources.empty())
      entry["resources"] = resources;
    kernels.push_back(std::move(entry));
  }
  Json doc = {{"fa_manifest_version", m.version},
              {"compiler", m.compiler},
              {"source_hash", m.sourceHash},
              {"target", m.target},
              {"code_object",
               {{"file", m.codeObjectFile},
                {"format", m.codeObjectFormat},
                {"bytes", m.codeObjectBytes},
                {"hash", m.codeObjectHash}}},
              {"kernels", std::move(kernels)}};
  std::string out;
  printManifestJson(doc, 0, out);
  return out + "\n";
}

Status fa::checkCodeObjectIdentity(const Manifest &m,
                                   const std::vector<uint8_t> &codeObject) {
  if (codeObject.size() != m.codeObjectBytes)
    return Status::error(ErrorCode::CorruptCodeObject,
                         "code object is " + std::to_string(codeObject.size()) +
                             " bytes but the manifest says " +
                             std::to_string(m.codeObjectBytes) +
                             " (truncated, or not the file the manifest "
                             "describes)");
  std::string actual =
      formatFnv1a64(fnv1a64(codeObject.data(), codeObject.size()));
  if (actual != m.codeObjectHash)
    return Status::error(ErrorCode::CorruptCodeObject,
                         "code object hash " + actual +
                             " does not match the manifest's " +
                             m.codeObjectHash +
                             " (modified after compilation, or not the file "
                             "the manifest describes)");
  return Status::success();
}
