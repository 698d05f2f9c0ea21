#include "support/alloc_counter.h"

#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocs{0};

void count_one() {
  if (!g_counting.load(std::memory_order_relaxed)) return;
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (std::getenv("OPSNN_ALLOC_TRACE")) {
    g_counting = false;  // backtrace_symbols_fd itself may allocate
    void* frames[16];
    backtrace_symbols_fd(frames, backtrace(frames, 16), 2);
    g_counting = true;
  }
}

using AlignedAllocFn = void* (*)(size_t, size_t);
AlignedAllocFn next_aligned_alloc() {
  static const auto fn = reinterpret_cast<AlignedAllocFn>(dlsym(RTLD_NEXT, "aligned_alloc"));
  return fn;
}
}  // namespace

namespace opsnn::test {
void start_counting_allocs() {
  g_allocs = 0;
  g_counting = true;
}
int64_t stop_counting_allocs() {
  g_counting = false;
  return g_allocs.load();
}
}  // namespace opsnn::test

// The next definition of aligned_alloc (libc's, or the sanitizer's) does the work.
extern "C" void* aligned_alloc(size_t align, size_t n) noexcept {
  count_one();
  return next_aligned_alloc()(align, n);
}

void* operator new(size_t n) {
  count_one();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
// The nothrow forms too (std::stable_sort's temporary buffer): every plain
// new and delete of the binary is malloc and free, or ASan reports a mismatch.
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
