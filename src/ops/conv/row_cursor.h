// The output rows of a channels-first pool or resize kernel, flattened as
// q = (plane * D.out + od) * H.out + oh: a range's first row is divided into
// (plane, od, oh) once, each next row is a step.
#pragma once

#include <cstdint>

namespace opsnn::conv {

struct RowCursor {
  int64_t plane, od, oh;
  int64_t d_out, h_out;

  RowCursor(int64_t q, int64_t d_out_, int64_t h_out_)
      : plane(q / (d_out_ * h_out_)),
        od(q % (d_out_ * h_out_) / h_out_),
        oh(q % h_out_),
        d_out(d_out_),
        h_out(h_out_) {}

  void step() {
    if (++oh < h_out) return;
    oh = 0;
    if (++od < d_out) return;
    od = 0;
    ++plane;
  }
};

}  // namespace opsnn::conv
