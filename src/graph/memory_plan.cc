#include "graph/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "opsnn/memory.h"

namespace opsnn::graph {
namespace {
size_t align_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }
}  // namespace

OffsetPlan plan_offsets(std::vector<PlannedBuffer>& buffers) {
  OffsetPlan result;
  int steps = 0;
  for (const PlannedBuffer& b : buffers) steps = std::max(steps, b.last + 1);
  std::vector<size_t> live(static_cast<size_t>(steps), 0);
  for (const PlannedBuffer& b : buffers)
    for (int s = b.first; s <= b.last; ++s) live[s] += align_up(b.bytes);
  for (size_t v : live) result.lower_bound = std::max(result.lower_bound, v);

  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;  // indices, kept sorted by offset
  for (size_t i : order) {
    PlannedBuffer& b = buffers[i];
    const size_t need = align_up(b.bytes);
    size_t offset = 0;
    for (size_t j : placed) {  // sorted by offset: first gap that fits wins
      const PlannedBuffer& p = buffers[j];
      if (p.last < b.first || b.last < p.first) continue;  // lifetimes disjoint
      if (p.offset >= offset + need) break;
      offset = std::max(offset, p.offset + align_up(p.bytes));
    }
    b.offset = offset;
    result.arena_bytes = std::max(result.arena_bytes, offset + need);
    placed.insert(
        std::upper_bound(placed.begin(), placed.end(), i,
                         [&](size_t x, size_t y) { return buffers[x].offset < buffers[y].offset; }),
        i);
  }
  return result;
}

}  // namespace opsnn::graph
