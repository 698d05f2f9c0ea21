// GroupNorm as exporters spell it, fused into one group_norm (or
// group_norm_silu) node.
#pragma once

#include <vector>

#include "opsnn/graph.h"

namespace opsnn::graph::passes {

// Finds reshape(x -> [N, G, rest]) -> instance_norm(constant scale, bias
// [G]) -> reshape(back to x's shape), optionally followed by a mul and an add
// with constants per channel of x [N, C, ...] (PyTorch's opset-9..17 export
// of F.group_norm; the importer's GroupNormalization-18 is the first three),
// and optionally by SiLU as x * sigmoid(x). Each becomes one group_norm or
// group_norm_silu of x with the folded per-channel scale and bias. A
// group_norm node followed by that SiLU becomes group_norm_silu. `descs`
// and `constants` are per value (from shape inference at plan time); the
// intermediate values must have no other use. Returns how many were fused;
// when any, `out` is the rewritten graph (same inputs, outputs and names).
int fuse_group_norm(const Graph& g, const std::vector<TensorDesc>& descs,
                    const std::vector<Tensor>& constants, Graph& out);

}  // namespace opsnn::graph::passes
