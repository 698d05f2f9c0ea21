// Tensor: shape, strides (in elements), dtype and data, owning or wrapping.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "opsnn/dtype.h"

namespace opsnn {

using Shape = std::vector<int64_t>;
class Tensor;
using Strides = std::vector<int64_t>;

std::string shape_str(const Shape& s);
// Product of the dims; throws opsnn::Error if a dim is negative or the product
// (or its size in bytes for `elem_size`) overflows.
int64_t shape_numel(const Shape& s, size_t elem_size = 1);
Strides contiguous_strides(const Shape& s);

// What phase one of an operator needs to know about a tensor: no data.
// Reading a TensorDesc never writes to it (two threads may read one).
struct TensorDesc {
  DType dtype = DType::f32;
  Shape shape;
  Strides strides;      // empty means contiguous
  bool absent = false;  // an omitted optional operator input

  TensorDesc() = default;
  static TensorDesc none() {
    TensorDesc d;
    d.absent = true;
    return d;
  }
  TensorDesc(DType t, Shape s, Strides st = {});
  // A constant operand: the description of `value` (made contiguous) that
  // carries its data. Given to Op::create, it tells the kernel that this
  // input is known now and never changes, so the kernel may pack, reorder or
  // quantize it once, at create. The data is shared, not copied: it must
  // stay unchanged for the life of the Op.
  static TensorDesc constant(const Tensor& value);
  // The data of a constant operand; nullptr for an ordinary input.
  const Tensor* constant_value() const { return constant_.get(); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const;
  bool is_contiguous() const;
  // `strides`, or the contiguous strides when it is empty (a new vector: for
  // phase one; a Tensor keeps its effective strides, see Tensor::strides()).
  Strides effective_strides() const;
  std::string str() const;  // "f32[2, 3]"

 private:
  std::shared_ptr<const Tensor> constant_;
};

class Tensor {
 public:
  Tensor() = default;

  // Owning, 64-byte aligned, uninitialised (zeros() fills with zeros).
  static Tensor empty(const Shape& shape, DType dtype);
  static Tensor zeros(const Shape& shape, DType dtype);
  // Owning, zero-filled, with the given strides (its buffer spans them all).
  static Tensor zeros_strided(const Shape& shape, const Strides& strides, DType dtype);
  // Wraps caller memory; `data` must be aligned to the element size and stay
  // alive as long as the tensor. Empty strides means contiguous.
  static Tensor wrap(void* data, const Shape& shape, DType dtype, const Strides& strides = {});
  template <class T>
  static Tensor from(std::initializer_list<T> values, const Shape& shape);

  DType dtype() const { return desc_.dtype; }
  const Shape& shape() const { return desc_.shape; }
  const Strides& strides() const { return strides_; }  // always filled (contiguous ones too)
  const TensorDesc& desc() const { return desc_; }
  int64_t dim(int64_t i) const;
  int64_t rank() const { return desc_.rank(); }
  int64_t numel() const { return desc_.numel(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype()); }
  bool is_contiguous() const { return desc_.is_contiguous(); }
  bool defined() const { return data_ != nullptr || numel() == 0; }

  void* data() { return data_; }
  const void* data() const { return data_; }
  template <class T>
  T* data_as() {
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data_as() const {
    return static_cast<const T*>(data_);
  }

  // Views share storage with this tensor.
  Tensor reshape(const Shape& shape) const;  // contiguous tensors only; one dim may be -1
  Tensor permute(const std::vector<int64_t>& perm) const;
  Tensor slice(int64_t axis, int64_t start, int64_t stop, int64_t step = 1) const;
  Tensor contiguous() const;  // this tensor if already contiguous, else a packed copy
  Tensor clone() const;       // always a new contiguous copy

  // Element access for tests and tools (slow; converts through double).
  double get(const std::vector<int64_t>& index) const;
  double flat_get(int64_t i) const;  // i-th element in row-major logical order
  void flat_set(int64_t i, double v);

 private:
  friend class Op;              // re-points its staged inputs at the workspace without allocating
  void set_desc(TensorDesc d);  // desc_ and strides_ together: the only way desc_ changes
  // Becomes a contiguous, non-owning view of `data` shaped like `shape`; no
  // allocation when this tensor already has that rank.
  void rebind_contiguous(const Shape& shape, DType dtype, void* data);

  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
  TensorDesc desc_;
  Strides strides_;  // desc_.effective_strides(), computed when desc_ is set
};

template <class T>
Tensor Tensor::from(std::initializer_list<T> values, const Shape& shape) {
  Tensor t = empty(shape, dtype_of<T>::value);
  T* p = t.data_as<T>();
  for (const T& v : values) *p++ = v;
  return t;
}

// Copies src into dst element by element, converting dtypes; shapes must match.
void copy_into(const Tensor& src, Tensor& dst);

}  // namespace opsnn
