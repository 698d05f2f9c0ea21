// The NumPy C API for the common case of a call: an ndarray of a dtype NumPy
// has natively (everything but bfloat16) in, a new ndarray out. Several times
// cheaper than the generic buffer-protocol / DLPack path (tensors.cc), which
// handles everything else and produces the error messages.
#pragma once

#include <Python.h>

#include "opsnn/tensor.h"

namespace ops_nn {

// Imports NumPy's C API; false (with a Python error set) when it fails.
bool numpy_fast_init();
// Wraps an exact numpy.ndarray of a supported native dtype with non-negative,
// element-aligned strides into *t (no copy); false: use the generic path.
bool numpy_fast_wrap(PyObject* obj, opsnn::Tensor* t);
// A new ndarray viewing t's memory (it keeps t's storage alive); nullptr
// without an error set when t's dtype has no native NumPy type (bfloat16).
PyObject* numpy_fast_array(opsnn::Tensor t);

}  // namespace ops_nn
