//===- MakeManifest.cpp - Writes the manifest of a test fixture kernel ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Stands in for the manifest writer of `fac` while fixture kernels are
// compiled by CMake: after a fixture .so is linked, this writes
// `<so>.json` with its size and FNV-1a hash and the kernel fields given on
// the command line (the same values CMake compiled into the kernel).
//
//   fa-test-make-manifest FILE key=value... [--kernel key=value...]...
//     keys: name dtype head_dim causal scale has_lse block_m block_n threads
//           wave_size lds_bytes [target] [abi_version] [role] [kv_splits]
//           [combine] [gqa_packed] [paged] [varlen] [window_left]
//           [window_right] [softcap] [alibi] [sinks]
//   Each --kernel starts another kernel entry, which takes the previous
//   entry's values for the keys it does not give (except role, kv_splits,
//   combine and gqa_packed, which default to a dense kernel's; a combine
//   kernel keeps its split kernel's abi_version and paged).
//
//===----------------------------------------------------------------------===//

#include "fa/KernelAbi.h"
#include "fa/Manifest.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fa-test-make-manifest FILE key=value... "
                         "[--kernel key=value...]...\n");
    return 2;
  }
  std::string path = argv[1];
  // One key-value map per kernel entry.
  std::vector<std::map<std::string, std::string>> entries(1);
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--kernel") {
      entries.push_back(entries.back());
      for (const char *own : {"role", "kv_splits", "combine", "gqa_packed"})
        entries.back().erase(own);
      continue;
    }
    size_t eq = a.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "fa-test-make-manifest: bad argument '%s'\n",
                   argv[i]);
      return 2;
    }
    entries.back()[a.substr(0, eq)] = a.substr(eq + 1);
  }

  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fa-test-make-manifest: cannot read '%s'\n",
                 path.c_str());
    return 1;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());

  fa::Manifest m;
  m.compiler = "fa-test-make-manifest (test fixture)";
  m.sourceHash = fa::formatFnv1a64(0);
  auto target = entries.front().find("target");
  m.target = target == entries.front().end() ? "host" : target->second;
  m.codeObjectFile = path.substr(path.rfind('/') + 1);
  m.codeObjectFormat = "elf-shared-object";
  m.codeObjectBytes = bytes.size();
  m.codeObjectHash = fa::formatFnv1a64(fa::fnv1a64(bytes.data(), bytes.size()));
  for (const std::map<std::string, std::string> &kv : entries) {
    auto get = [&](const char *key, const char *fallback = nullptr) {
      auto it = kv.find(key);
      if (it != kv.end())
        return it->second;
      if (!fallback) {
        std::fprintf(stderr, "fa-test-make-manifest: missing %s=\n", key);
        std::exit(2);
      }
      return std::string(fallback);
    };
    auto integer = [&](const char *key, const char *fallback = nullptr) {
      return std::strtoll(get(key, fallback).c_str(), nullptr, 10);
    };
    fa::KernelInfo k;
    k.name = get("name");
    k.symbol = k.name + FA_HOST_ENTRY_SUFFIX;
    k.abiVersion = integer("abi_version", "1");
    std::optional<fa::DType> dtype = fa::parseDType(get("dtype"));
    if (!dtype) {
      std::fprintf(stderr, "fa-test-make-manifest: bad dtype\n");
      return 2;
    }
    k.dtype = *dtype;
    k.headDim = integer("head_dim");
    k.causal = integer("causal") != 0;
    k.windowLeft = integer("window_left", "-1");
    k.windowRight = integer("window_right", "-1");
    k.softcap = std::strtod(get("softcap", "0").c_str(), nullptr);
    k.scale = std::strtod(get("scale").c_str(), nullptr);
    k.hasLse = integer("has_lse") != 0;
    k.blockM = integer("block_m");
    k.blockN = integer("block_n");
    k.threads = integer("threads");
    k.waveSize = integer("wave_size");
    k.ldsBytes = integer("lds_bytes");
    k.role = get("role", "attention") == "combine" ? fa::KernelRole::Combine
                                                   : fa::KernelRole::Attention;
    k.splitKv = get("kv_splits", "") == "runtime";
    k.combine = get("combine", "");
    k.gqaPacked = integer("gqa_packed", "0") != 0;
    k.paged = integer("paged", "0") != 0;
    k.varlen = integer("varlen", "0") != 0;
    k.alibi = integer("alibi", "0") != 0;
    k.sinks = integer("sinks", "0") != 0;
    m.kernels.push_back(k);
  }

  std::string json = fa::formatManifest(m);
  if (fa::Expected<fa::Manifest> back = fa::parseManifest(json); !back) {
    std::fprintf(stderr,
                 "fa-test-make-manifest: produced an invalid manifest: %s\n",
                 back.status().toString().c_str());
    return 1;
  }
  std::ofstream out(path + ".json", std::ios::binary);
  out << json;
  return out ? 0 : 1;
}
