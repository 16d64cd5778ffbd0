//===- HostEmulator.cpp - Runs host-target kernels like a GPU -------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the grid level of the emulator: workers take
// workgroups from a shared counter (x fastest, then y, then z), each running
// them on its own WorkgroupRunner. The first failing workgroup stops the
// launch; race reports of all workers are merged, ordered by workgroup.
// For the launch's duration the memory fault handler is installed, each
// worker has an alternate signal stack, and the guard zones of every host
// buffer are inaccessible (MemoryFaults.h, GuardedMemory.h).
//
//===----------------------------------------------------------------------===//

#include "host/GuardedMemory.h"
#include "host/MemoryFaults.h"
#include "host/WorkerPool.h"
#include "host/Workgroup.h"

#include <algorithm>
#include <atomic>
#include <mutex>

using namespace fa;
using namespace fa::detail;

struct HostEmulator::Impl {
  explicit Impl(unsigned workers) : pool(workers), runners(pool.size()) {
    for (auto &r : runners)
      r = std::make_unique<WorkgroupRunner>();
  }
  std::mutex launchMutex;
  WorkerPool pool;
  std::vector<std::unique_ptr<WorkgroupRunner>> runners;
};

HostEmulator::HostEmulator(unsigned workers)
    : impl(std::make_unique<Impl>(
          workers ? workers
                  : std::max(1u, std::thread::hardware_concurrency()))) {}

HostEmulator::~HostEmulator() = default;

unsigned HostEmulator::workerCount() const { return impl->pool.size(); }

static Status checkLaunch(const HostLaunch &l, const LaunchOptions &o) {
  auto bad = [&](const std::string &m) {
    return Status::error(ErrorCode::InvalidArgument, m)
        .withKernel(l.kernelName);
  };
  if (!l.entry)
    return bad("host launch without an entry point");
  for (int i = 0; i < 3; ++i)
    if (l.grid[i] == 0 || l.block[i] == 0)
      return bad("empty launch: grid (" + std::to_string(l.grid[0]) + "," +
                 std::to_string(l.grid[1]) + "," + std::to_string(l.grid[2]) +
                 ") block (" + std::to_string(l.block[0]) + "," +
                 std::to_string(l.block[1]) + "," + std::to_string(l.block[2]) +
                 ")");
  uint64_t threads = uint64_t(l.block[0]) * l.block[1] * l.block[2];
  if (threads > 65536)
    return bad("workgroup of " + std::to_string(threads) +
               " threads is larger than the emulator's 65536");
  if (l.waveSize == 0)
    return bad("wave size 0");
  if (o.fiberStackBytes < 16384)
    return bad("fiber stack of " + std::to_string(o.fiberStackBytes) +
               " bytes is too small (at least 16384)");
  return Status::success();
}

Status HostEmulator::run(const HostLaunch &launch,
                         const LaunchOptions &options) {
  if (Status s = checkLaunch(launch, options); !s.ok())
    return s;
  std::lock_guard<std::mutex> serialize(impl->launchMutex);
  FaultHandlerScope faultHandler;
  ProtectedZones zones;

  const uint64_t gx = launch.grid[0], gy = launch.grid[1], gz = launch.grid[2];
  const uint64_t total = gx * gy * gz;
  unsigned workers = impl->pool.size();
  if (options.workers)
    workers = std::min(workers, options.workers);
  workers = unsigned(std::min<uint64_t>(workers, total));

  std::atomic<uint64_t> next{0};
  std::atomic<bool> abort{false};
  std::mutex errorMutex;
  Status firstError;
  uint64_t firstErrorAt = UINT64_MAX;

  impl->pool.run(workers, [&](unsigned w) {
    WorkgroupRunner &runner = *impl->runners[w];
    AltStack::Scope signalStack(runner.altStack());
    Status s = runner.prepare(launch, options, &zones);
    uint64_t at = 0;
    while (s.ok() && !abort.load(std::memory_order_relaxed)) {
      uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= total)
        break;
      uint32_t id[3] = {uint32_t(i % gx), uint32_t((i / gx) % gy),
                        uint32_t(i / (gx * gy))};
      s = runner.run(id, i);
      at = i;
    }
    if (!s.ok()) {
      abort = true;
      std::lock_guard<std::mutex> lock(errorMutex);
      if (at < firstErrorAt) {
        firstError = std::move(s);
        firstErrorAt = at;
      }
    }
  });
  if (!firstError.ok())
    return firstError;
  if (!options.checkRaces)
    return Status::success();

  std::vector<RaceReport> reports;
  uint64_t count = 0;
  for (unsigned w = 0; w < workers; ++w) {
    RaceChecker &c = impl->runners[w]->raceChecker();
    reports.insert(reports.end(), c.reports().begin(), c.reports().end());
    count += c.reportCount();
  }
  if (count == 0)
    return Status::success();
  std::stable_sort(reports.begin(), reports.end(),
                   [](const RaceReport &a, const RaceReport &b) {
                     return a.workgroupLinear < b.workgroupLinear;
                   });
  if (reports.size() > options.maxRaceReports)
    reports.resize(options.maxRaceReports);
  bool onlyBounds =
      std::all_of(reports.begin(), reports.end(), [](const RaceReport &r) {
        return r.kind == RaceReport::OutOfBounds;
      });
  std::string log;
  for (const RaceReport &r : reports)
    log += r.describe(launch.kernelName) + "\n";
  std::string message =
      std::to_string(count) +
      (onlyBounds ? " out-of-bounds lds access" : " lds race") +
      (count == 1   ? ""
       : onlyBounds ? "es"
                    : "s") +
      " detected, first: " +
      (reports.empty() ? std::string("(none kept)")
                       : reports.front().describe(launch.kernelName));
  return Status::error(onlyBounds ? ErrorCode::LaunchFailed
                                  : ErrorCode::RaceDetected,
                       message)
      .withKernel(launch.kernelName)
      .withLog(log);
}
