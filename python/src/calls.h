// ops_nn.functional's engine (a cache of created Ops per op) and ops_nn.Op
// (the two-phase form).
#pragma once

#include <nanobind/nanobind.h>

namespace ops_nn {
namespace nb = nanobind;

void bind_calls(nb::module_& m);
// (input addresses, output addresses) of this thread's last op call.
nb::tuple last_pointers();

}  // namespace ops_nn
