//===- gfx906_corpus_run.cpp - Third-party gfx906 kernels on gfx906-sim ---===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The driver of bench/gfx906_corpus.py (not built by CMake: the script
// compiles it against a build's libfa_runtime.so). It runs HIP kernels of a
// code object on the gfx906 simulator as a HIP runtime would hand them to
// the GPU: the packed kernarg segment with code object v5's hidden
// arguments, grid, block and dynamic LDS (sim/Dispatch.h), with device
// buffers the script fills and reads back as files. It reads a plan from
// standard input, one command per line:
//
//   module PATH                       the code object (an .hsaco)
//   buffer NAME BYTES [FILE]          a device buffer, zeros or FILE's bytes
//   launch SYMBOL GX GY GZ BX BY BZ LDS HEX [OFFSET NAME]...
//                                     a dispatch; HEX the explicit kernarg
//                                     bytes, each OFFSET NAME pair the
//                                     address of buffer NAME written at that
//                                     byte offset
//   timing SAMPLES MODELS             the next launches run only SAMPLES
//                                     grid x indices (at y = z = 0; their
//                                     results incomplete) and are timed by
//                                     each of MODELS, "|"-separated
//                                     TimingParams::apply lists ("-": the
//                                     default); `timing 0 -` turns it off
//   read NAME FILE                    a buffer's bytes to FILE
//   audit                             the module's instructions that would
//                                     stop a launch: `nosemantics MNEMONIC
//                                     COUNT` per mnemonic that decodes but
//                                     has no semantics, `undecodable COUNT
//                                     FIRST-ERROR` for words that do not
//                                     decode (padding included)
//
// and prints per launch a line
//   launch SYMBOL instructions N lane_ops M seconds S
// then one line `op MNEMONIC COUNT` per instruction mnemonic executed
// (wave-instructions); with `timing`, per model a line
//   estimate INDEX JSON
// (TimingEstimate::json: an ESTIMATE of the named MI50 model). The first error
// (a refused instruction names itself and its pc) is printed and exits 1.
//
//===----------------------------------------------------------------------===//

#include "sim/Dispatch.h"
#include "sim/Profile.h"
#include "sim/Timing.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace fa;
using namespace fa::sim;

namespace {

struct DeviceBuffer {
  std::unique_ptr<uint8_t, decltype(&std::free)> bytes{nullptr, &std::free};
  size_t size = 0;
  uint64_t address() const {
    return uint64_t(reinterpret_cast<uintptr_t>(bytes.get()));
  }
};

[[noreturn]] void die(const std::string &why) {
  std::fprintf(stderr, "gfx906-corpus-run: %s\n", why.c_str());
  std::exit(1);
}

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    die("cannot read '" + path + "'");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

std::vector<uint8_t> fromHex(const std::string &hex) {
  if (hex == "-")
    return {};
  if (hex.size() % 2)
    die("odd-length kernarg hex");
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = uint8_t(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

} // namespace

int main() {
  std::unique_ptr<SimModule> module;
  unsigned timingSamples = 0;
  std::vector<TimingParams> models;
  std::map<std::string, DeviceBuffer> buffers;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    if (!(in >> cmd) || cmd[0] == '#')
      continue;
    if (cmd == "module") {
      std::string path;
      in >> path;
      Expected<std::unique_ptr<SimModule>> m = SimModule::load(readFile(path));
      if (!m)
        die(m.status().toString());
      module = m.take();
    } else if (cmd == "buffer") {
      std::string name, file;
      size_t size = 0;
      in >> name >> size >> file;
      DeviceBuffer b;
      b.size = size;
      size_t rounded = (size + 255) / 256 * 256;
      b.bytes.reset(static_cast<uint8_t *>(
          std::aligned_alloc(256, rounded ? rounded : 256)));
      std::memset(b.bytes.get(), 0, rounded ? rounded : 256);
      if (!file.empty()) {
        std::vector<uint8_t> data = readFile(file);
        if (data.size() != size)
          die("buffer '" + name + "': file '" + file + "' has " +
              std::to_string(data.size()) + " bytes, not " +
              std::to_string(size));
        std::memcpy(b.bytes.get(), data.data(), size);
      }
      buffers[name] = std::move(b);
    } else if (cmd == "launch") {
      if (!module)
        die("launch before module");
      SimDispatch d;
      std::string symbol, hex;
      in >> symbol;
      for (uint32_t &g : d.grid)
        in >> g;
      for (uint32_t &b : d.block)
        in >> b;
      in >> d.dynamicLdsBytes >> hex;
      d.kernarg = fromHex(hex);
      size_t offset;
      std::string name;
      while (in >> offset >> name) {
        auto it = buffers.find(name);
        if (it == buffers.end())
          die("launch of " + symbol + ": no buffer '" + name + "'");
        if (offset + 8 > d.kernarg.size())
          die("launch of " + symbol + ": pointer at " + std::to_string(offset) +
              " past the kernarg bytes");
        uint64_t a = it->second.address();
        std::memcpy(d.kernarg.data() + offset, &a, 8);
      }
      d.module = module.get();
      d.kernel = module->co.find(symbol);
      if (!d.kernel)
        die("no kernel '" + symbol + "' in the code object");
      d.kernelName = symbol;
      d.hiddenArgsV5 = true;
      for (auto &[n, b] : buffers)
        d.memory.push_back(
            Region{b.address(), b.address() + b.size, true, "buffer"});
      SimStats stats;
      d.stats = &stats;
      ProfileCounters counters;
      d.profile = &counters;
      TimingRequest timing;
      if (timingSamples) {
        timing.samplesX = TimingRequest::spread(d.grid[0], timingSamples);
        timing.onlyRecorded = true;
        d.timing = &timing;
      }
      if (Status s = dispatch(d); !s.ok())
        die("launch of " + symbol + ": " + s.toString());
      for (size_t i = 0; timingSamples && i < models.size(); ++i) {
        TimingEstimate est = estimateTiming(
            module->program, d.kernel->kd, d.grid, d.block,
            d.kernel->kd.groupSegmentFixedSize + d.dynamicLdsBytes,
            timing.traces, models[i]);
        est.kernel = symbol;
        std::printf("estimate %zu %s\n", i, est.json().c_str());
      }
      std::printf("launch %s instructions %llu lane_ops %llu seconds %.3f\n",
                  symbol.c_str(), (unsigned long long)stats.instructions,
                  (unsigned long long)stats.laneOps, stats.seconds);
      std::map<std::string, uint64_t> byMnemonic;
      const Program &p = module->program;
      for (size_t i = 0; i < counters.executed.size() && i < p.insts.size();
           ++i)
        if (counters.executed[i])
          byMnemonic[p.insts[i].info().mnemonic] += counters.executed[i];
      for (auto &[mn, n] : byMnemonic)
        std::printf("op %s %llu\n", mn.c_str(), (unsigned long long)n);
    } else if (cmd == "audit") {
      if (!module)
        die("audit before module");
      const Program &p = module->program;
      std::map<std::string, uint64_t> missing;
      uint64_t undecodable = 0;
      std::string first;
      for (size_t i = 0; i < p.insts.size(); ++i) {
        if (!p.decodeErrors[i].empty()) {
          if (!undecodable++)
            first = p.decodeErrors[i];
        } else if (!p.fns[i]) {
          ++missing[p.insts[i].info().mnemonic];
        }
      }
      for (auto &[mn, n] : missing)
        std::printf("nosemantics %s %llu\n", mn.c_str(), (unsigned long long)n);
      std::printf("undecodable %llu %s\n", (unsigned long long)undecodable,
                  first.c_str());
    } else if (cmd == "timing") {
      std::string list;
      in >> timingSamples >> list;
      models.clear();
      size_t at = 0;
      while (at <= list.size()) {
        size_t end = list.find('|', at);
        if (end == std::string::npos)
          end = list.size();
        std::string one = list.substr(at, end - at);
        TimingParams p;
        if (one != "-")
          if (std::string why = p.apply(one); !why.empty())
            die("timing model '" + one + "': " + why);
        models.push_back(p);
        at = end + 1;
      }
    } else if (cmd == "read") {
      std::string name, file;
      in >> name >> file;
      auto it = buffers.find(name);
      if (it == buffers.end())
        die("read: no buffer '" + name + "'");
      std::ofstream f(file, std::ios::binary);
      f.write(reinterpret_cast<const char *>(it->second.bytes.get()),
              std::streamsize(it->second.size));
      if (!f)
        die("cannot write '" + file + "'");
    } else {
      die("unknown command '" + cmd + "'");
    }
  }
  return 0;
}
