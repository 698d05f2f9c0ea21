// ops_nn._core._time_cpp: the C++ call of an op timed inside the extension,
// the baseline of bench/bench_python_overhead.py's per-call overhead.
#pragma once

#include <nanobind/nanobind.h>

namespace ops_nn {
void bind_timing(nanobind::module_& m);
}
