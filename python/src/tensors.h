// Python objects <-> opsnn::Tensor: NumPy arrays (incl. ml_dtypes bfloat16),
// torch CPU tensors and any object with __dlpack__, read in place.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "opsnn/tensor.h"

namespace ops_nn {

namespace nb = nanobind;

// What a result is returned as: the kind of the call's first tensor input.
enum class Kind { numpy, torch };

Kind kind_of(nb::handle obj);

// Wraps `obj` without copying. Throws opsnn::Error naming `op` and `arg` when
// it is not a tensor, lives off the CPU, needs gradients or has strides the
// library does not take (negative). `keep` receives an object that must stay
// alive while the tensor is used (a dtype view), or stays empty.
opsnn::Tensor to_tensor(nb::handle obj, const std::string& op, const std::string& arg,
                        nb::object* keep = nullptr);

// Hands `t`'s memory to Python (no copy): the array owns a reference to t's storage.
nb::object from_tensor(opsnn::Tensor t, Kind kind);

// A float64 NumPy array that takes over `data` (no copy), shaped `shape`.
nb::object numpy_f64(std::vector<double> data, const opsnn::Shape& shape);

// "f32", "float32", numpy/ml_dtypes dtypes and types, torch dtypes -> DType.
opsnn::DType dtype_from_py(nb::handle obj);
nb::object dtype_to_numpy(opsnn::DType t);

// Module-level Python objects looked up once (numpy, ml_dtypes, torch types).
void init_tensor_types();

}  // namespace ops_nn
