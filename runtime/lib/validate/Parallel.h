//===- Parallel.h - A minimal parallel for ----------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. Runs fn(i) for i in [0, n) on up to hardware_concurrency
// std::threads taking indices from a shared counter.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_PARALLEL_H
#define FA_LIB_PARALLEL_H

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace fa {
namespace detail {

template <typename Fn> void parallelFor(size_t n, Fn fn) {
  size_t workers =
      std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i)
      fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;)
      fn(i);
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < workers; ++t)
    threads.emplace_back(work);
  work();
  for (std::thread &t : threads)
    t.join();
}

} // namespace detail
} // namespace fa

#endif // FA_LIB_PARALLEL_H
