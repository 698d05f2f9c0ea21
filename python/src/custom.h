// Custom ops from Python: a schema, a NumPy float64 reference and an optional
// Python kernel (a slow path for prototyping before the C++ kernel exists).
#pragma once

#include <nanobind/nanobind.h>

namespace ops_nn {
void bind_custom(nanobind::module_& m);
}
