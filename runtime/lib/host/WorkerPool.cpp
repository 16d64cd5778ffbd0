//===- WorkerPool.cpp - Persistent worker threads -------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the worker pool: threads start lazily on the first
// job and wait on a generation counter between jobs.
//
//===----------------------------------------------------------------------===//

#include "host/WorkerPool.h"

using namespace fa::detail;

WorkerPool::WorkerPool(unsigned count) : count(count ? count : 1) {}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &t : threads)
    t.join();
}

void WorkerPool::run(unsigned n, const std::function<void(unsigned)> &fn) {
  if (n > count)
    n = count;
  std::unique_lock<std::mutex> lock(mutex);
  while (threads.size() < n) {
    unsigned index = unsigned(threads.size());
    threads.emplace_back([this, index] { workerMain(index); });
  }
  job = &fn;
  participants = n;
  remaining = n;
  ++generation;
  wake.notify_all();
  done.wait(lock, [&] { return remaining == 0; });
  job = nullptr;
}

void WorkerPool::workerMain(unsigned index) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex);
  // A thread started for this job must take part in it.
  seen = generation - 1;
  while (true) {
    wake.wait(lock, [&] { return stopping || generation != seen; });
    if (stopping)
      return;
    seen = generation;
    if (index >= participants)
      continue;
    const std::function<void(unsigned)> *fn = job;
    lock.unlock();
    (*fn)(index);
    lock.lock();
    if (--remaining == 0)
      done.notify_all();
  }
}
