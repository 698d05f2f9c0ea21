#include "opsnn/tensor.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "core/convert.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"

namespace opsnn {

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ", ";
    r += std::to_string(s[i]);
  }
  return r + "]";
}

// The product of the non-zero dims must fit in int64 (and so must its byte
// size), not only the element count: then every partial product of dims a
// kernel or a reference forms (rows, inner extents, strides) fits as well,
// also in an empty tensor such as [0, 2^62, 2].
int64_t shape_numel(const Shape& s, size_t elem_size) {
  const bool empty = std::find(s.begin(), s.end(), 0) != s.end();
  int64_t nonzero = 1;
  for (int64_t d : s) {
    if (d < 0) throw Error("tensor", "shape", "non-negative dims", shape_str(s));
    if (__builtin_mul_overflow(nonzero, std::max<int64_t>(d, 1), &nonzero))
      throw Error("tensor", "shape",
                  empty ? "dims whose product (zero dims left out) fits in int64"
                        : "an element count that fits in int64",
                  shape_str(s));
  }
  int64_t bytes;
  if (__builtin_mul_overflow(nonzero, static_cast<int64_t>(elem_size), &bytes))
    throw Error("tensor", "shape", "a byte size that fits in int64", shape_str(s));
  return empty ? 0 : nonzero;
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    // Saturates: a product beyond int64 only occurs in a shape with a zero
    // dim (no element is ever addressed) or one shape_numel refuses.
    if (__builtin_mul_overflow(acc, s[i] > 0 ? s[i] : 1, &acc)) acc = INT64_MAX;
  }
  return st;
}

TensorDesc::TensorDesc(DType t, Shape s, Strides st)
    : dtype(t), shape(std::move(s)), strides(std::move(st)) {
  if (!strides.empty() && strides.size() != shape.size())
    throw Error("tensor", "strides", std::to_string(shape.size()) + " strides",
                std::to_string(strides.size()));
}

TensorDesc TensorDesc::constant(const Tensor& value) {
  if (!value.defined())
    throw Error("tensor", "constant", "a tensor with data", "an undefined tensor");
  auto data = std::make_shared<const Tensor>(value.contiguous());
  TensorDesc d(data->dtype(), data->shape());
  d.constant_ = std::move(data);
  return d;
}

int64_t TensorDesc::numel() const { return shape_numel(shape, dtype_size(dtype)); }

Strides TensorDesc::effective_strides() const {
  return strides.empty() ? contiguous_strides(shape) : strides;
}

void Tensor::rebind_contiguous(const Shape& shape, DType dtype, void* data) {
  desc_.dtype = dtype;
  desc_.shape = shape;
  desc_.strides.clear();
  strides_.resize(shape.size());  // in place: this runs in Op::run, which must not allocate
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides_[i] = acc;
    // Saturates, as contiguous_strides does (only a shape with a zero dim gets there).
    if (__builtin_mul_overflow(acc, std::max<int64_t>(shape[i], 1), &acc)) acc = INT64_MAX;
  }
  storage_.reset();
  data_ = data;
}

void Tensor::set_desc(TensorDesc d) {
  desc_ = std::move(d);
  strides_ = desc_.effective_strides();
}

bool TensorDesc::is_contiguous() const {
  if (strides.empty()) return true;
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != acc) return false;
    acc *= shape[i];
  }
  return true;
}

std::string TensorDesc::str() const {
  std::string r = std::string(dtype_name(dtype)) + shape_str(shape);
  if (!is_contiguous()) r += " strides " + shape_str(strides);
  if (constant_) r += " const";
  return r;
}

int64_t Tensor::dim(int64_t i) const {
  const int64_t r = rank();
  if (i < -r || i >= r)
    throw Error("tensor", "dim",
                "an index in [" + std::to_string(-r) + ", " + std::to_string(r) + ")",
                std::to_string(i));
  return shape()[static_cast<size_t>(i < 0 ? i + r : i)];
}

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  Tensor t;
  t.set_desc(TensorDesc(dtype, shape));
  const int64_t n = shape_numel(shape, dtype_size(dtype));
  const size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
  void* p = aligned_alloc_bytes(bytes);
  t.storage_ = std::shared_ptr<void>(p, aligned_free);
  t.data_ = p;
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  if (t.nbytes()) std::memset(t.data_, 0, t.nbytes());
  return t;
}

Tensor Tensor::zeros_strided(const Shape& shape, const Strides& strides, DType dtype) {
  if (strides.size() != shape.size())
    throw Error("tensor", "strides", std::to_string(shape.size()) + " strides", shape_str(strides));
  int64_t span = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0) span = 0;
    if (strides[k] < 0)
      throw Error("tensor", "strides", "non-negative strides", shape_str(strides));
  }
  if (span)
    for (size_t k = 0; k < shape.size(); ++k) span += (shape[k] - 1) * strides[k];
  Tensor t = zeros({span}, dtype);
  t.set_desc(TensorDesc(dtype, shape, strides));
  return t;
}

Tensor Tensor::wrap(void* data, const Shape& shape, DType dtype, const Strides& strides) {
  const int64_t n = shape_numel(shape, dtype_size(dtype));
  if (n > 0 && data == nullptr) throw Error("tensor", "data", "a non-null pointer", "nullptr");
  const size_t es = dtype_size(dtype);
  if (reinterpret_cast<uintptr_t>(data) % es != 0)
    throw Error(
        "tensor", "data", "a pointer aligned to " + std::to_string(es) + " bytes",
        "an address misaligned by " + std::to_string(reinterpret_cast<uintptr_t>(data) % es));
  Tensor t;
  t.set_desc(TensorDesc(dtype, shape, strides));
  t.data_ = data;
  return t;
}

Tensor Tensor::reshape(const Shape& shape) const {
  if (!is_contiguous()) throw Error("reshape", "input", "a contiguous tensor", desc_.str());
  Shape s = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) throw Error("reshape", "shape", "at most one -1", shape_str(shape));
      infer = static_cast<int64_t>(i);
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel() % known != 0)
      throw Error("reshape", "shape", "a shape with " + std::to_string(numel()) + " elements",
                  shape_str(shape));
    s[static_cast<size_t>(infer)] = numel() / known;
  }
  if (shape_numel(s) != numel())
    throw Error("reshape", "shape", "a shape with " + std::to_string(numel()) + " elements",
                shape_str(shape));
  Tensor t = *this;
  t.set_desc(TensorDesc(dtype(), s));
  return t;
}

Tensor Tensor::permute(const std::vector<int64_t>& perm) const {
  const int64_t r = rank();
  if (static_cast<int64_t>(perm.size()) != r)
    throw Error("permute", "perm", std::to_string(r) + " axes", shape_str(perm));
  std::vector<bool> seen(static_cast<size_t>(r));
  Shape s(static_cast<size_t>(r));
  Strides st(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) {
    int64_t a = perm[static_cast<size_t>(i)];
    if (a < 0) a += r;
    if (a < 0 || a >= r || seen[static_cast<size_t>(a)])
      throw Error("permute", "perm", "a permutation of 0.." + std::to_string(r - 1),
                  shape_str(perm));
    seen[static_cast<size_t>(a)] = true;
    s[static_cast<size_t>(i)] = shape()[static_cast<size_t>(a)];
    st[static_cast<size_t>(i)] = strides()[static_cast<size_t>(a)];
  }
  Tensor t = *this;
  t.set_desc(TensorDesc(dtype(), s, st));
  return t;
}

Tensor Tensor::slice(int64_t axis, int64_t start, int64_t stop, int64_t step) const {
  const int64_t r = rank();
  if (axis < -r || axis >= r)
    throw Error("slice", "axis",
                "an axis in [" + std::to_string(-r) + ", " + std::to_string(r) + ")",
                std::to_string(axis));
  if (axis < 0) axis += r;
  if (step <= 0) throw Error("slice", "step", "> 0", std::to_string(step));
  const int64_t n = shape()[static_cast<size_t>(axis)];
  auto clampi = [n](int64_t v) { return v < 0 ? std::max<int64_t>(v + n, 0) : std::min(v, n); };
  start = clampi(start);
  stop = clampi(stop);
  const int64_t len = stop > start ? (stop - start + step - 1) / step : 0;
  Tensor t = *this;
  Shape s = shape();
  Strides st = strides();
  if (len > 0)
    t.data_ = static_cast<char*>(data_) +
              start * st[static_cast<size_t>(axis)] * static_cast<int64_t>(dtype_size(dtype()));
  s[static_cast<size_t>(axis)] = len;
  st[static_cast<size_t>(axis)] *= step;
  t.set_desc(TensorDesc(dtype(), s, st));
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape(), dtype());
  copy_into(*this, t);
  return t;
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

namespace {

double load_elem(const void* base, DType t, int64_t off) {
  switch (t) {
    case DType::f32:
      return static_cast<const float*>(base)[off];
    case DType::f16:
      return to_f32(static_cast<const f16*>(base)[off]);
    case DType::bf16:
      return to_f32(static_cast<const bf16*>(base)[off]);
    case DType::i8:
      return static_cast<const int8_t*>(base)[off];
    case DType::u8:
      return static_cast<const uint8_t*>(base)[off];
    case DType::i32:
      return static_cast<const int32_t*>(base)[off];
    case DType::i64:
      return static_cast<double>(static_cast<const int64_t*>(base)[off]);
    case DType::boolean:
      return static_cast<const uint8_t*>(base)[off] ? 1.0 : 0.0;
  }
  return 0;
}

template <class I>
I saturate(double v) {
  if (v != v) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

void store_elem(void* base, DType t, int64_t off, double v) {
  switch (t) {
    case DType::f32:
      static_cast<float*>(base)[off] = static_cast<float>(v);
      break;
    case DType::f16:
      static_cast<f16*>(base)[off] = to_f16(static_cast<float>(v));
      break;
    case DType::bf16:
      static_cast<bf16*>(base)[off] = to_bf16(static_cast<float>(v));
      break;
    case DType::i8:
      static_cast<int8_t*>(base)[off] = saturate<int8_t>(v);
      break;
    case DType::u8:
      static_cast<uint8_t*>(base)[off] = saturate<uint8_t>(v);
      break;
    case DType::i32:
      static_cast<int32_t*>(base)[off] = saturate<int32_t>(v);
      break;
    case DType::i64:
      static_cast<int64_t*>(base)[off] = saturate<int64_t>(v);
      break;
    case DType::boolean:
      static_cast<uint8_t*>(base)[off] = v != 0 ? 1 : 0;
      break;
  }
}

int64_t flat_offset(const Shape& shape, const Strides& st, int64_t i) {
  int64_t off = 0;
  for (size_t d = shape.size(); d-- > 0;) {
    off += (i % shape[d]) * st[d];
    i /= shape[d];
  }
  return off;
}

}  // namespace

double Tensor::get(const std::vector<int64_t>& index) const {
  if (static_cast<int64_t>(index.size()) != rank())
    throw Error("tensor", "index", std::to_string(rank()) + " coordinates", shape_str(index));
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape()[d])
      throw Error("tensor", "index", "inside " + shape_str(shape()), shape_str(index));
    off += index[d] * strides()[d];
  }
  return load_elem(data_, dtype(), off);
}

double Tensor::flat_get(int64_t i) const {
  return load_elem(data_, dtype(), flat_offset(shape(), strides(), i));
}

void Tensor::flat_set(int64_t i, double v) {
  store_elem(data_, dtype(), flat_offset(shape(), strides(), i), v);
}

void copy_into(const Tensor& src, Tensor& dst) {
  if (src.shape() != dst.shape())
    throw Error("copy", "dst", "shape " + shape_str(src.shape()), shape_str(dst.shape()));
  const int64_t n = src.numel();
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous()) {
    if (n) std::memcpy(dst.data(), src.data(), src.nbytes());
    return;
  }
  if (src.is_contiguous() && dst.is_contiguous() && n &&
      convert_contiguous(src.data(), src.dtype(), dst.data(), dst.dtype(), static_cast<size_t>(n)))
    return;
  if (src.dtype() == dst.dtype()) {  // raw element copy: exact for every dtype
    const size_t es = dtype_size(src.dtype());
    const auto* s = static_cast<const char*>(src.data());
    auto* d = static_cast<char*>(dst.data());
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(d + flat_offset(dst.shape(), dst.strides(), i) * static_cast<int64_t>(es),
                  s + flat_offset(src.shape(), src.strides(), i) * static_cast<int64_t>(es), es);
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst.flat_set(i, src.flat_get(i));
}

}  // namespace opsnn
