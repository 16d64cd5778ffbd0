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
#include "fa/Json.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

using namespace fa;

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

static std::string formatNumber(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", x);
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

namespace {
/// Reads typed fields of one JSON object, naming `path.field` in errors.
class FieldReader {
public:
  FieldReader(const JsonValue &object, std::string path)
      : object(object), path(std::move(path)) {}

  Status error(const std::string &field, const std::string &what) const {
    return Status::error(ErrorCode::ManifestError,
                         "manifest field '" + path + field + "': " + what);
  }

  Status get(const std::string &field, const JsonValue *&out,
             JsonValue::Kind kind, bool required = true) const {
    out = object.find(field);
    if (!out)
      return required ? error(field, "missing") : Status::success();
    if (out->kind() != kind)
      return error(field, std::string("expected ") + JsonValue::kindName(kind) +
                              ", got " + JsonValue::kindName(out->kind()));
    return Status::success();
  }

  Status getString(const std::string &field, std::string &out,
                   bool required = true) const {
    const JsonValue *v;
    if (Status s = get(field, v, JsonValue::Kind::String, required); !s.ok())
      return s;
    if (v)
      out = v->getString();
    return Status::success();
  }

  Status getBool(const std::string &field, bool &out) const {
    const JsonValue *v;
    if (Status s = get(field, v, JsonValue::Kind::Bool); !s.ok())
      return s;
    out = v->getBool();
    return Status::success();
  }

  /// An integer in [minValue, maxValue].
  Status getInt(const std::string &field, int64_t &out, int64_t minValue,
                int64_t maxValue) const {
    const JsonValue *v;
    if (Status s = get(field, v, JsonValue::Kind::Number); !s.ok())
      return s;
    if (!v->isInteger())
      return error(field,
                   "expected an integer, got " + formatNumber(v->getNumber()));
    out = v->getInteger();
    if (out < minValue || out > maxValue)
      return error(field, std::to_string(out) + " is outside [" +
                              std::to_string(minValue) + ", " +
                              std::to_string(maxValue) + "]");
    return Status::success();
  }

private:
  const JsonValue &object;
  std::string path;
};
} // namespace

static Status parseKernel(const JsonValue &value, size_t index, KernelInfo &k) {
  std::string path = "kernels[" + std::to_string(index) + "].";
  if (!value.isObject())
    return Status::error(ErrorCode::ManifestError,
                         "manifest field '" + path.substr(0, path.size() - 1) +
                             "': expected an object");
  FieldReader r(value, path);
  std::string dtype;
  const JsonValue *scale;
  Status s;
  if (!(s = r.getString("name", k.name)).ok() ||
      !(s = r.getString("symbol", k.symbol)).ok() ||
      !(s = r.getInt("abi_version", k.abiVersion, 1, INT32_MAX)).ok() ||
      !(s = r.getString("dtype", dtype)).ok() ||
      !(s = r.getInt("head_dim", k.headDim, 1, 4096)).ok() ||
      !(s = r.getBool("causal", k.causal)).ok() ||
      !(s = r.get("scale", scale, JsonValue::Kind::Number)).ok() ||
      !(s = r.getBool("has_lse", k.hasLse)).ok() ||
      !(s = r.getInt("block_m", k.blockM, 1, 1 << 16)).ok() ||
      !(s = r.getInt("block_n", k.blockN, 1, 1 << 16)).ok() ||
      !(s = r.getInt("threads", k.threads, 1, 1 << 16)).ok() ||
      !(s = r.getInt("wave_size", k.waveSize, 1, 1024)).ok() ||
      !(s = r.getInt("lds_bytes", k.ldsBytes, 0, int64_t(1) << 32)).ok())
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
  if (value.find("dynamic_lds_bytes") &&
      !(s = r.getInt("dynamic_lds_bytes", k.dynamicLdsBytes, 0,
                     int64_t(1) << 32))
           .ok())
    return s;
  if (value.find("index_bits") &&
      !(s = r.getInt("index_bits", k.indexBits, 32, 64)).ok())
    return s;
  if (k.indexBits != 32 && k.indexBits != 64)
    return Status::error(ErrorCode::InvalidArgument,
                         "index_bits must be 32 or 64, got " +
                             std::to_string(k.indexBits));
  const JsonValue *fixed;
  if (!(s = r.get("static_sizes", fixed, JsonValue::Kind::Object,
                  /*required=*/false))
           .ok())
    return s;
  if (fixed) {
    FieldReader sizes(*fixed, path + "static_sizes.");
    const char *names[] = {"B", "Hq", "Hkv", "Lq", "Lk"};
    for (int i = 0; i < 5; ++i)
      if (!(s = sizes.getInt(names[i], k.staticSizes[i], -1, INT32_MAX)).ok())
        return s;
  }
  k.scale = scale->getNumber();
  if (!(k.scale > 0) || !std::isfinite(k.scale))
    return r.error("scale", "must be a positive finite number, got " +
                                formatNumber(k.scale));
  return Status::success();
}

Expected<Manifest> fa::parseManifest(std::string_view json) {
  Expected<JsonValue> doc = parseJson(json);
  if (!doc)
    return doc.takeStatus().prepend("malformed manifest JSON");
  if (!doc->isObject())
    return Status::error(ErrorCode::ManifestError,
                         "manifest must be a JSON object");
  Manifest m;
  FieldReader top(*doc, "");
  const JsonValue *code, *kernels;
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
      !(s = top.get("code_object", code, JsonValue::Kind::Object)).ok() ||
      !(s = top.get("kernels", kernels, JsonValue::Kind::Array)).ok())
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
                            "digits, got \"" +
                                m.codeObjectHash + "\"");

  if (kernels->getArray().empty())
    return top.error("kernels", "empty: a code object needs one kernel");
  for (size_t i = 0; i < kernels->getArray().size(); ++i) {
    KernelInfo k;
    if (Status ks = parseKernel(kernels->getArray()[i], i, k); !ks.ok())
      return ks;
    for (const KernelInfo &other : m.kernels)
      if (other.name == k.name)
        return top.error("kernels", "duplicate kernel name '" + k.name + "'");
    m.kernels.push_back(std::move(k));
  }
  return m;
}

std::string fa::formatManifest(const Manifest &m) {
  char scale[64];
  std::string out = "{\n";
  out += "  \"fa_manifest_version\": " + std::to_string(m.version) + ",\n";
  out += "  \"compiler\": " + jsonQuote(m.compiler) + ",\n";
  out += "  \"source_hash\": " + jsonQuote(m.sourceHash) + ",\n";
  out += "  \"target\": " + jsonQuote(m.target) + ",\n";
  out += "  \"code_object\": {\n";
  out += "    \"file\": " + jsonQuote(m.codeObjectFile) + ",\n";
  out += "    \"format\": " + jsonQuote(m.codeObjectFormat) + ",\n";
  out += "    \"bytes\": " + std::to_string(m.codeObjectBytes) + ",\n";
  out += "    \"hash\": " + jsonQuote(m.codeObjectHash) + "\n";
  out += "  },\n";
  out += "  \"kernels\": [";
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const KernelInfo &k = m.kernels[i];
    std::snprintf(scale, sizeof(scale), "%.17g", k.scale);
    out += i ? ",\n    {\n" : "\n    {\n";
    out += "      \"name\": " + jsonQuote(k.name) + ",\n";
    out += "      \"symbol\": " + jsonQuote(k.symbol) + ",\n";
    out += "      \"abi_version\": " + std::to_string(k.abiVersion) + ",\n";
    out += "      \"dtype\": " + jsonQuote(dtypeName(k.dtype)) + ",\n";
    out += "      \"head_dim\": " + std::to_string(k.headDim) + ",\n";
    out += std::string("      \"causal\": ") + (k.causal ? "true" : "false") +
           ",\n";
    out += std::string("      \"scale\": ") + scale + ",\n";
    out += std::string("      \"has_lse\": ") + (k.hasLse ? "true" : "false") +
           ",\n";
    out += "      \"block_m\": " + std::to_string(k.blockM) + ",\n";
    out += "      \"block_n\": " + std::to_string(k.blockN) + ",\n";
    out += "      \"threads\": " + std::to_string(k.threads) + ",\n";
    out += "      \"wave_size\": " + std::to_string(k.waveSize) + ",\n";
    out += "      \"lds_bytes\": " + std::to_string(k.ldsBytes) + ",\n";
    if (k.dynamicLdsBytes > 0)
      out +=
          "      \"dynamic_lds_bytes\": " + std::to_string(k.dynamicLdsBytes) +
          ",\n";
    if (k.indexBits != 64)
      out += "      \"index_bits\": " + std::to_string(k.indexBits) + ",\n";
    out += "      \"static_sizes\": {";
    const char *names[] = {"B", "Hq", "Hkv", "Lq", "Lk"};
    for (int d = 0; d < 5; ++d)
      out += std::string(d ? ", " : "") + "\"" + names[d] +
             "\": " + std::to_string(k.staticSizes[d]);
    out += "}\n";
    out += "    }";
  }
  out += "\n  ]\n}\n";
  return out;
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
