#include "ops/builtin_ops.h"

#include "opsnn/op.h"

namespace opsnn {

void register_builtin_ops(Registry& r) {
  register_unary_ops(r);
  register_binary_ops(r);
  register_mod_op(r);
  register_where_ops(r);
  register_compare_ops(r);
  register_gated_ops(r);
  register_reduce_ops(r);

  register_softmax_ops(r);
  register_norm_ops(r);

  register_shape_ops(r);
  register_cast_op(r);
  register_shape_of_op(r);
  register_view_ops(r);
  register_index_ops(r);
  register_tile_op(r);
  register_trilu_op(r);
  register_gather_elements_op(r);
  register_scatter_nd_op(r);
  register_range_op(r);

  register_matmul_ops(r);

  register_attention_ops(r);

  register_conv_ops(r);

  register_quant_ops(r);
}

}  // namespace opsnn
