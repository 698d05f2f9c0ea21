// Counts the heap allocations of a region of a test: every operator new (all
// forms) and every aligned_alloc (the library's 64-byte aligned buffers), on
// any thread. Linking tests/support/alloc_counter.cc into a test binary
// replaces its operator new/delete with malloc/free and interposes
// aligned_alloc. OPSNN_ALLOC_TRACE=1 prints a backtrace for each counted
// allocation (link with -rdynamic for function names).
#pragma once

#include <cstdint>

namespace opsnn::test {

// Starts counting from zero.
void start_counting_allocs();
// Stops counting; returns the allocations since start_counting_allocs().
int64_t stop_counting_allocs();

}  // namespace opsnn::test
