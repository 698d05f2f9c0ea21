// Sliding-window geometry shared by conv, conv_transpose and pooling: the
// ONNX attributes strides / pads / dilations / auto_pad, the layout attribute
// (channels first or last) and the output sizes, validated with errors that
// name the op and the attribute. Spatial dims are padded to three (leading
// dims of size 1) so one engine serves 1-D, 2-D and 3-D.
#pragma once

#include <cstdint>
#include <vector>

#include "opsnn/op.h"

namespace opsnn::conv {

struct Window {
  int r = 0;  // spatial rank of the op (1, 2 or 3)
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1},
          d[3] = {1, 1, 1}, pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return k[0] * k[1] * k[2]; }
};

// The attribute specs: strides, pads, dilations, auto_pad (and layout).
std::vector<AttrSpec> window_attrs(bool with_dilations = true);
AttrSpec layout_attr();

// True when the "layout" attribute says channels last (NHWC, NWC, NDHWC).
bool channels_last(const OpCall& call);
// Spatial dims of a [N, C, ...] / [N, ..., C] shape.
std::vector<int64_t> spatial_dims(const Shape& s, bool cl);
// Output shape [N, C, O...] or [N, O..., C].
Shape nc_shape(int64_t n, int64_t c, const Window& w, bool cl);

// Validates the attributes and computes the output sizes of a window of
// kernel `k` over `in` (r dims each). ceil_mode rounds the output size up
// (pooling), dropping a last window that would start in the end padding.
Window make_window(const OpCall& call, const std::vector<int64_t>& in,
                   const std::vector<int64_t>& k, bool ceil_mode = false);

}  // namespace opsnn::conv
