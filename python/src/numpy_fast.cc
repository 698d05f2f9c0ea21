#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL ops_nn_numpy_api
#include "numpy_fast.h"

#include <numpy/arrayobject.h>

namespace ops_nn {
namespace {

bool dtype_of_num(int num, int64_t itemsize, opsnn::DType* t) {
  using opsnn::DType;
  switch (num) {
    case NPY_FLOAT32:
      *t = DType::f32;
      return true;
    case NPY_FLOAT16:
      *t = DType::f16;
      return true;
    case NPY_INT8:
      *t = DType::i8;
      return true;
    case NPY_UINT8:
      *t = DType::u8;
      return true;
    case NPY_BOOL:
      *t = DType::boolean;
      return true;
    default:
      break;
  }
  // int32 / int64 have several type numbers (int, long, longlong) of one size.
  if (PyTypeNum_ISSIGNED(num)) {
    if (itemsize == 4)
      *t = DType::i32;
    else if (itemsize == 8)
      *t = DType::i64;
    else
      return false;
    return true;
  }
  return false;
}

int num_of(opsnn::DType t) {
  using opsnn::DType;
  switch (t) {
    case DType::f32:
      return NPY_FLOAT32;
    case DType::f16:
      return NPY_FLOAT16;
    case DType::i8:
      return NPY_INT8;
    case DType::u8:
      return NPY_UINT8;
    case DType::i32:
      return NPY_INT32;
    case DType::i64:
      return NPY_INT64;
    case DType::boolean:
      return NPY_BOOL;
    case DType::bf16:
      return -1;
  }
  return -1;
}

void free_tensor(PyObject* capsule) {
  delete static_cast<opsnn::Tensor*>(PyCapsule_GetPointer(capsule, nullptr));
}

}  // namespace

bool numpy_fast_init() { return PyArray_ImportNumPyAPI() >= 0; }

bool numpy_fast_wrap(PyObject* obj, opsnn::Tensor* t) {
  if (!PyArray_CheckExact(obj)) return false;
  auto* a = reinterpret_cast<PyArrayObject*>(obj);
  opsnn::DType dt;
  const PyArray_Descr* d = PyArray_DESCR(a);
  if (!PyArray_ISNBO(d->byteorder) || !dtype_of_num(d->type_num, PyArray_ITEMSIZE(a), &dt))
    return false;
  const int rank = PyArray_NDIM(a);
  const npy_intp* dims = PyArray_DIMS(a);
  const npy_intp* bst = PyArray_STRIDES(a);
  const int64_t es = static_cast<int64_t>(opsnn::dtype_size(dt));
  opsnn::Shape shape(dims, dims + rank);
  opsnn::Strides strides(rank);
  bool contiguous = true;
  int64_t acc = 1;
  for (int i = rank; i-- > 0;) {
    if (bst[i] < 0 || bst[i] % es != 0) return false;  // the generic path says why
    strides[i] = bst[i] / es;
    if (shape[i] != 1 && strides[i] != acc) contiguous = false;
    acc *= shape[i];
  }
  if (contiguous) strides.clear();
  *t = opsnn::Tensor::wrap(PyArray_DATA(a), shape, dt, strides);
  return true;
}

PyObject* numpy_fast_array(opsnn::Tensor t) {
  const int num = num_of(t.dtype());
  if (num < 0) return nullptr;
  auto* owned = new opsnn::Tensor(std::move(t));
  const int rank = static_cast<int>(owned->rank());
  npy_intp dims[NPY_MAXDIMS], bst[NPY_MAXDIMS];
  if (rank > NPY_MAXDIMS) {
    delete owned;
    return nullptr;
  }
  const bool contiguous = owned->is_contiguous();
  for (int i = 0; i < rank; ++i) {
    dims[i] = static_cast<npy_intp>(owned->shape()[i]);
    if (!contiguous)
      bst[i] = static_cast<npy_intp>(owned->strides()[i] * opsnn::dtype_size(owned->dtype()));
  }
  PyObject* arr = PyArray_New(&PyArray_Type, rank, dims, num, contiguous ? nullptr : bst,
                              owned->data(), 0, NPY_ARRAY_WRITEABLE, nullptr);
  if (!arr) {
    delete owned;
    return nullptr;
  }
  PyObject* cap = PyCapsule_New(owned, nullptr, free_tensor);
  if (!cap) {
    delete owned;
    Py_DECREF(arr);
    return nullptr;
  }
  // Steals cap; the array now owns the tensor's storage.
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(arr), cap) < 0) {
    Py_DECREF(arr);
    return nullptr;
  }
  return arr;
}

}  // namespace ops_nn
