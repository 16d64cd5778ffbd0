//===- WorkerPool.h - Persistent worker threads -----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. A fixed set of threads that run one job at a time: job(i) on
// worker i for i < participants, and the caller waits for all of them. The
// workers persist so per-worker state (fiber stacks) survives launches.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_WORKERPOOL_H
#define FA_LIB_WORKERPOOL_H

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fa {
namespace detail {

class WorkerPool {
public:
  explicit WorkerPool(unsigned count);
  ~WorkerPool();

  unsigned size() const { return count; }

  /// Runs job(i) on worker i for i in [0, participants); returns when every
  /// participant has finished.
  void run(unsigned participants, const std::function<void(unsigned)> &job);

private:
  void workerMain(unsigned index);

  unsigned count;
  std::vector<std::thread> threads;
  std::mutex mutex;
  std::condition_variable wake, done;
  const std::function<void(unsigned)> *job = nullptr;
  unsigned participants = 0;
  unsigned remaining = 0;
  uint64_t generation = 0;
  bool stopping = false;
};

} // namespace detail
} // namespace fa

#endif // FA_LIB_WORKERPOOL_H
