// Sliding-window geometry shared by conv, conv_transpose and pooling: the
// ONNX attributes strides / pads / dilations / auto_pad, the layout attribute
// (channels first or last) and the output sizes, validated with errors that
// name the op and the attribute. Spatial dims are padded to three (leading
// dims of size 1) so one engine serves 1-D, 2-D and 3-D.
#pragma once

#include <algorithm>
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

// The window origins of the tm output pixels flattened from m0 of image n,
// group g (cnt of them live), their positions stepped from the first (one
// division per tile): per pixel the first input row / column its window
// reads (padding included), that origin's offset in the channels-last input
// (at group g's first channel), and whether every tap of its window is
// inside the input (never for a pixel past cnt).
inline void tile_origins(const Window& w, int64_t n, int64_t g, int64_t cin, int64_t cin_g,
                         int64_t m0, int cnt, int tm, int64_t* i0, int64_t* i1, int64_t* i2,
                         int64_t* org, bool* inside) {
  int64_t o0 = m0 / (w.out[1] * w.out[2]), o1 = m0 / w.out[2] % w.out[1], o2 = m0 % w.out[2];
  for (int j = 0; j < tm; ++j) {
    i0[j] = o0 * w.s[0] - w.pb[0];
    i1[j] = o1 * w.s[1] - w.pb[1];
    i2[j] = o2 * w.s[2] - w.pb[2];
    org[j] = (((n * w.in[0] + i0[j]) * w.in[1] + i1[j]) * w.in[2] + i2[j]) * cin + g * cin_g;
    inside[j] = j < cnt && i0[j] >= 0 && i0[j] + (w.k[0] - 1) * w.d[0] < w.in[0] && i1[j] >= 0 &&
                i1[j] + (w.k[1] - 1) * w.d[1] < w.in[1] && i2[j] >= 0 &&
                i2[j] + (w.k[2] - 1) * w.d[2] < w.in[2];
    if (j + 1 < cnt && ++o2 == w.out[2]) {
      o2 = 0;
      if (++o1 == w.out[1]) o1 = 0, ++o0;
    }
  }
}

// Register rows a tap of a direct kernel's tile leaves out: its first, its
// last (the pixel there reads only padding for that tap, or is past the
// tile's cnt pixels), or the whole tap (no pixel reads an input).
inline constexpr uint8_t kSkipFirst = 1, kSkipLast = 2, kSkipTap = 4;
// Which, for a tap whose rows are px (zeros: the padding row) on tm
// register rows (tm >= cnt).
template <class T>
uint8_t tap_skip(const T* const* px, int cnt, int tm, const T* zeros) {
  auto live = [&](int j) { return j < cnt && px[j] != zeros; };
  bool any = false;
  for (int j = 0; j < cnt; ++j) any = any || live(j);
  if (!any) return kSkipTap;
  return static_cast<uint8_t>((live(0) ? 0 : kSkipFirst) | (live(tm - 1) ? 0 : kSkipLast));
}

// An image's output pixels in register tiles of at most tm (the direct
// kernels'): tm consecutive flattened pixels each, or, by_rows, ceil(W /
// tm) near-equal tiles per output row of W pixels (none crosses a row, so
// a row's first and last pixels sit at a tile's ends).
struct PixelTiles {
  int64_t pixels = 0, width = 1, per_row = 1;
  int tm = 1;
  bool by_rows = false;
  PixelTiles(int64_t p, int64_t w, int tile, bool rows)
      : pixels(p), width(w), per_row(rows ? (w + tile - 1) / tile : 1), tm(tile), by_rows(rows) {}
  int64_t count() const { return by_rows ? pixels / width * per_row : (pixels + tm - 1) / tm; }
  // Tile ti's first pixel and pixel count.
  void at(int64_t ti, int64_t& m0, int& cnt) const {
    if (!by_rows) {
      m0 = ti * tm;
      cnt = static_cast<int>(std::min<int64_t>(tm, pixels - m0));
      return;
    }
    const int64_t s = ti % per_row, base = width / per_row, extra = width % per_row;
    m0 = ti / per_row * width + s * base + std::min(s, extra);
    cnt = static_cast<int>(base + (s < extra ? 1 : 0));
  }
};

}  // namespace opsnn::conv
