// Registration of every built-in op family. Each family's .cc defines its
// register_*_ops function; builtin_ops.cc calls them in order from
// register_builtin_ops (ops/framework/builtin_set.h).
#pragma once

#include "ops/framework/builtin_set.h"

namespace opsnn {

void register_unary_ops(Registry& r);
void register_binary_ops(Registry& r);
void register_mod_op(Registry& r);
void register_where_ops(Registry& r);
void register_compare_ops(Registry& r);  // equal, less, ..., logical_and/or/xor/not
void register_gated_ops(Registry& r);
void register_reduce_ops(Registry& r);

void register_softmax_ops(Registry& r);
void register_norm_ops(Registry& r);

void register_shape_ops(Registry& r);
void register_cast_op(Registry& r);
void register_shape_of_op(Registry& r);
void register_view_ops(
    Registry& r);  // squeeze, unsqueeze, flatten  // shape (folded by the graph planner)
void register_index_ops(Registry& r);
void register_tile_op(Registry& r);
void register_trilu_op(Registry& r);
void register_gather_elements_op(Registry& r);
void register_scatter_nd_op(Registry& r);
void register_range_op(Registry& r);  // range (folded by the graph planner)

void register_matmul_ops(Registry& r);

void register_attention_ops(Registry& r);

void register_conv_ops(Registry& r);  // conv*, conv_transpose2d, pooling, resize

void register_quant_ops(
    Registry& r);  // quantize, dequantize, quantize_dynamic, matmul_wq, matmul_int8
void register_matmul_wq_op(Registry& r);
void register_matmul_int8_op(Registry& r);
}  // namespace opsnn
