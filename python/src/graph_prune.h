// The part of a graph that some of its outputs need (ops_nn.Session's
// `outputs=`): nodes, constants and inputs nothing requested depends on are
// left out, so a plan for the subset computes only that.
#pragma once

#include <vector>

#include "opsnn/graph.h"

namespace ops_nn {

struct PrunedGraph {
  opsnn::graph::Graph graph;
  // For each input of `graph`, its index among the source graph's inputs.
  std::vector<int> source_inputs;
};

// `outputs`: indices into g.outputs(); they become the pruned graph's outputs
// in that order, with their names.
PrunedGraph prune_to_outputs(const opsnn::graph::Graph& g, const std::vector<size_t>& outputs);

}  // namespace ops_nn
