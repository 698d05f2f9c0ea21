// ops_nn._core._cases: an op's own case table with inputs and float64
// reference outputs, so the Python tests sweep every op through its Python call.
#pragma once

#include <nanobind/nanobind.h>

namespace ops_nn {
void bind_cases(nanobind::module_& m);
}
