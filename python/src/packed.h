// ops_nn.pack_matrix / ops_nn.matmul_packed: weights packed once, used per call.
#pragma once

#include <nanobind/nanobind.h>

namespace ops_nn {
void bind_packed(nanobind::module_& m);
}
