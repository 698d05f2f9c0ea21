// Shared by the files of the data-movement ops (reshape.cc, transpose.cc,
// concat_split.cc, slice_pad.cc, expand.cc, gather.cc); defined in
// shape_ops.cc, which also registers them.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ops/shape/kernels/copy.h"
#include "ops/shape/shape_util.h"
#include "opsnn/check.h"
#include "opsnn/op.h"

namespace opsnn {
namespace shape {

CheckCase cc(std::string name, std::vector<TensorDesc> in, Attrs attrs = {},
             std::vector<ValueRange> ranges = {});

// Every dtype (the copy engine is element-size generic).
extern const std::vector<DType> kAll;

// Registers the three copy-engine kernels (in-register transpose tiles per ISA).
void add_move_kernels(Registry& r, const std::string& op,
                      void (*fn)(const OpCall&, const Tensor*, Tensor*, const TileKernels&),
                      bool contiguous_inputs = false);

// Copies the view (shape, strides) at `src` into contiguous `dst`.
void copy_view(const Tensor& t, const void* src, std::span<const int64_t> shape,
               std::span<const int64_t> strides, void* dst, const TileKernels& tiles);

const char* byte_ptr(const Tensor& t, int64_t elem_offset);

}  // namespace shape

void add_reshape(Registry& r);
void add_transpose(Registry& r);
void add_concat(Registry& r);
void add_split(Registry& r);
void add_slice(Registry& r);
void add_pad(Registry& r);
void add_expand(Registry& r);
void add_gather(Registry& r);
void add_embedding(Registry& r);

}  // namespace opsnn
