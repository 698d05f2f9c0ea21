// Aligned allocation and a bump arena with current/peak accounting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace opsnn {

inline constexpr size_t kAlignment = 64;

// 64-byte aligned; regions of 2 MiB or more are advised for huge pages.
void* aligned_alloc_bytes(size_t bytes);
void aligned_free(void* p);

// One block reserved up front, handed out in 64-byte aligned slices. Reset
// returns everything at once. Used for operator workspaces and activations so
// the hot path never touches fresh memory.
class Arena {
 public:
  explicit Arena(size_t capacity_bytes = 0, bool pretouch = true);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Grows (re-allocates) only when empty; throws opsnn::Error otherwise.
  void reserve(size_t capacity_bytes);
  void* allocate(size_t bytes);  // throws opsnn::Error when out of capacity
  // allocate() as a span, e.g. an Op's workspace: arena.span(op.workspace_bytes()).
  std::span<std::byte> span(size_t bytes) {
    return {static_cast<std::byte*>(allocate(bytes)), bytes};
  }
  void reset() { used_ = 0; }

  size_t capacity() const { return capacity_; }
  size_t current_bytes() const { return used_; }
  size_t peak_bytes() const { return peak_; }
  void reset_peak() { peak_ = used_; }

 private:
  uint8_t* base_ = nullptr;
  size_t capacity_ = 0, used_ = 0, peak_ = 0;
  bool pretouch_;
};

}  // namespace opsnn
