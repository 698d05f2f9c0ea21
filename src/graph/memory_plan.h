// Memory planning: buffers with lifetimes get offsets in one arena.
#pragma once

#include <cstddef>
#include <vector>

namespace opsnn::graph {

// A buffer live from step `first` to step `last` (inclusive).
struct PlannedBuffer {
  size_t bytes = 0;
  int first = 0, last = 0;
  size_t offset = 0;  // set by plan_offsets
};

struct OffsetPlan {
  size_t arena_bytes = 0;  // end of the highest placed buffer
  size_t lower_bound = 0;  // max over steps of the live bytes
};

// Greedy by size: largest buffers first, each at the lowest 64-byte aligned
// offset that overlaps no placed buffer whose lifetime overlaps its own.
OffsetPlan plan_offsets(std::vector<PlannedBuffer>& buffers);

}  // namespace opsnn::graph
