// Per-dimension scratch of a kernel's run on the stack: phase two allocates
// nothing. Kernels that use it decline tensors of rank above kMaxRank at
// create (the reference kernel takes those).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "opsnn/op.h"

namespace opsnn::ops {

inline constexpr size_t kMaxRank = 16;

template <class T>
class RankArray {
 public:
  RankArray() = default;
  explicit RankArray(size_t n) : n_(n) {}
  void push_back(const T& v) { v_[n_++] = v; }
  void pop_back() { --n_; }
  void clear() { n_ = 0; }
  void resize(size_t n) { n_ = n; }
  bool empty() const { return n_ == 0; }
  size_t size() const { return n_; }
  T& back() { return v_[n_ - 1]; }
  const T& back() const { return v_[n_ - 1]; }
  T& operator[](size_t i) { return v_[i]; }
  const T& operator[](size_t i) const { return v_[i]; }
  T* data() { return v_; }
  const T* data() const { return v_; }
  T* begin() { return v_; }
  T* end() { return v_ + n_; }
  const T* begin() const { return v_; }
  const T* end() const { return v_ + n_; }

 private:
  T v_[kMaxRank]{};
  size_t n_ = 0;
};

// A kernel factory's accepts(): every input and output has rank <= kMaxRank.
inline bool ranks_fit(const OpCall& call, std::string* why) {
  auto fits = [](const TensorDesc& d) { return d.shape.size() <= kMaxRank; };
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (call.has_input(i) && !fits(call.inputs[i])) {
      if (why) *why = "rank above " + std::to_string(kMaxRank);
      return false;
    }
  for (const TensorDesc& d : call.outputs)
    if (!fits(d)) {
      if (why) *why = "rank above " + std::to_string(kMaxRank);
      return false;
    }
  return true;
}

}  // namespace opsnn::ops
