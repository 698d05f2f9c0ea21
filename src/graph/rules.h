// What the planner may do with an op: fold it from shapes alone, run it as a
// view, or let its output overwrite an input. One place, read from the schemas.
#pragma once

#include <string>
#include <vector>

#include "opsnn/op.h"

namespace opsnn::graph::rules {

// The op's outputs depend only on its inputs' shapes ("shape"): folded at
// plan time even when the input's data is not known.
bool folds_from_shapes(const std::string& op);
std::vector<Tensor> fold_from_shapes(const std::string& op, const std::vector<TensorDesc>& inputs,
                                     const Attrs& attrs);

// The op's output is its first input with another shape ("reshape"): the
// planner makes it a view of the input's buffer instead of a copy.
bool is_view(const std::string& op);

// Element-wise ops (output element i reads only input elements at i, or
// broadcast ones): the output may take the buffer of a same-shape input that
// dies at this node.
bool may_write_over_input(const std::string& op);

}  // namespace opsnn::graph::rules
