// The GEMM epilogue written once over the vec_*.h names: view loads, the
// plain and gated tile epilogues and the streamed output stores. Included
// inside an ISA's `detail` namespace by gemm_impl.h and by the unpacked-weight
// path (gemm_unpacked_impl.h), which share it.

// Element (i, j) of a view, as f32.
inline float view_at(const MatView& v, int64_t i, int64_t j) {
  const int64_t o = i * v.rs + j * v.cs;
  switch (v.t) {
    case DType::f32:
      return static_cast<const float*>(v.p)[o];
    case DType::bf16:
      return to_f32(static_cast<const bf16*>(v.p)[o]);
    case DType::f16:
      return to_f32(static_cast<const f16*>(v.p)[o]);
    default:
      return 0.0f;
  }
}

// n <= kLanes elements of row i starting at column j, as a vector.
inline Vf view_load(const MatView& v, int64_t i, int64_t j, int n) {
  if (v.cs == 0) return set1(view_at(v, i, j));
  const int64_t o = i * v.rs + j * v.cs;
  if (v.cs == 1) {
    switch (v.t) {
      case DType::f32:
        return n == kLanes ? load(static_cast<const float*>(v.p) + o)
                           : load_n(static_cast<const float*>(v.p) + o, n);
      case DType::bf16:
        return n == kLanes ? load(static_cast<const bf16*>(v.p) + o)
                           : load_n(static_cast<const bf16*>(v.p) + o, n);
      case DType::f16:
        return n == kLanes ? load(static_cast<const f16*>(v.p) + o)
                           : load_n(static_cast<const f16*>(v.p) + o, n);
      default:
        break;
    }
  }
  alignas(64) float tmp[kLanes];
  for (int l = 0; l < kLanes; ++l) tmp[l] = l < n ? view_at(v, i, j + l) : 0.0f;
  return load(tmp);
}

#include "kernels/act/act_vec.inc"

// A whole aligned vector of a streamed output goes out non-temporally.
template <class T>
inline void store_out(T* p, Vf v, int n, bool streamed) {
  if (n != kLanes)
    store_n(p, v, n);
  else if (streamed && reinterpret_cast<uintptr_t>(p) % (kLanes * sizeof(T)) == 0)
    stream(p, v);
  else
    store(p, v);
}

// n lanes of v to element o of the output, in its dtype.
inline void store_at(const OutView& out, int64_t o, Vf v, int n) {
  switch (out.t) {
    case DType::f32:
      return store_out(static_cast<float*>(out.p) + o, v, n, out.stream);
    case DType::bf16:
      return store_out(static_cast<bf16*>(out.p) + o, v, n, out.stream);
    case DType::f16:
      return store_out(static_cast<f16*>(out.p) + o, v, n, out.stream);
    default:
      return;
  }
}

// The common fused case (output T: f32, bf16 or f16; at most a contiguous
// f32 bias row, no scaling or residual): row by row, whole vectors, nothing
// decided per vector. The general loop below spends about 60 instructions a
// vector on its checks and view loads: AVX2 conv 320->640 1x1 + bias + SiLU
// took 1.10-1.12x the bare convolution with it, 1.04-1.06x with this (f32;
// bf16 out with a bf16 bias on Zen 4: median 1.22 -> 1.15 ms, the SiLU's
// division and the rounding left). A row of a 16-bit tile is written whole
// before the next, as the column groups below do.
template <act::Kind K, class TB, class T>
void epilogue_rows(const Epilogue& ep, const float* c, int64_t ldc, int rows, int cols, int64_t i0,
                   int64_t j0, const OutView& out) {
  constexpr bool kBias = !std::is_void_v<TB>;
  using B = std::conditional_t<kBias, TB, float>;
  const B* bias = kBias ? static_cast<const B*>(ep.add.p) + j0 : nullptr;
  const Vf beta = set1(ep.beta);
  const int full = cols / kLanes * kLanes, tail = cols - full;
  for (int r = 0; r < rows; ++r) {
    const float* cr = c + r * ldc;
    T* o = static_cast<T*>(out.p) + (i0 + r) * out.ld + j0;
    for (int j = 0; j < full; j += kLanes) {
      Vf v = load(cr + j);
      if constexpr (kBias) v = fma(beta, load(bias + j), v);
      store_out(o + j, act_apply_t<K>(v), kLanes, out.stream);
    }
    if (tail > 0) {
      Vf v = load_n(cr + full, tail);
      if constexpr (kBias) v = fma(beta, load_n(bias + full, tail), v);
      store_n(o + full, act_apply_t<K>(v), tail);
    }
  }
}

// The epilogue of a rows x cols f32 tile `c` (leading dim ldc) whose
// top-left element is output (i0, j0), for activation K.
// Column groups outer: a bias row (the common `add`) is loaded once per
// group, not once per element row. A group is one cache line of the output
// (two vectors of 16-bit output on AVX-512, four on AVX2), written whole
// before the next row: a streamed line left half-written while the other
// rows go out occupies a write-combining buffer and is flushed in parts
// (bf16 2048^3 with one-vector groups: 0.85x f32; docs/gemm.md).
template <act::Kind K>
void epilogue_tile_k(const Epilogue& ep, const float* c, int64_t ldc, int rows, int cols,
                     int64_t i0, int64_t j0, const OutView& out, bool trivial) {
  if (!trivial && ep.alpha == 1.0f && ep.out_scale == 1.0f && !ep.residual.p &&
      (!ep.add.p ||
       (ep.add.rs == 0 && ep.add.cs == 1 && (ep.add.t == DType::f32 || ep.add.t == DType::bf16)))) {
    auto rows_to = [&](auto* out_type) {
      using T = std::remove_pointer_t<decltype(out_type)>;
      if (!ep.add.p) return epilogue_rows<K, void, T>(ep, c, ldc, rows, cols, i0, j0, out);
      if (ep.add.t == DType::f32)
        return epilogue_rows<K, float, T>(ep, c, ldc, rows, cols, i0, j0, out);
      return epilogue_rows<K, bf16, T>(ep, c, ldc, rows, cols, i0, j0, out);
    };
    switch (out.t) {
      case DType::f32:
        return rows_to(static_cast<float*>(nullptr));
      case DType::bf16:
        return rows_to(static_cast<bf16*>(nullptr));
      case DType::f16:
        return rows_to(static_cast<f16*>(nullptr));
      default:
        break;
    }
  }
  constexpr int kMaxGroupVecs = 4;
  const int line_vecs = static_cast<int>(64 / (dtype_size(out.t) * kLanes));
  const int gv = line_vecs < 1 ? 1 : line_vecs > kMaxGroupVecs ? kMaxGroupVecs : line_vecs;
  const bool add_row = ep.add.p && ep.add.rs == 0;
  for (int jg = 0; jg < cols; jg += gv * kLanes) {
    Vf bias[kMaxGroupVecs];
    for (int g = 0; g < gv; ++g) {
      const int j = jg + g * kLanes;
      const int n = cols - j < kLanes ? cols - j : kLanes;
      bias[g] = add_row && n > 0 ? view_load(ep.add, 0, j0 + j, n) : zero();
    }
    for (int r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      for (int g = 0; g < gv; ++g) {
        const int j = jg + g * kLanes;
        if (j >= cols) break;
        const int n = cols - j < kLanes ? cols - j : kLanes;
        Vf v = n == kLanes ? load(c + r * ldc + j) : load_n(c + r * ldc + j, n);
        if (!trivial) {
          if (ep.alpha != 1.0f) v = v * set1(ep.alpha);
          if (ep.add.p)
            v = fma(set1(ep.beta), add_row ? bias[g] : view_load(ep.add, i, j0 + j, n), v);
          v = act_apply_t<K>(v);
          if (ep.out_scale != 1.0f) v = v * set1(ep.out_scale);
          if (ep.residual.p) v = v + view_load(ep.residual, i, j0 + j, n);
        }
        store_at(out, i * out.ld + j0 + j, v, n);
      }
    }
  }
}

inline void epilogue_tile(const Epilogue& ep, const float* c, int64_t ldc, int rows, int cols,
                          int64_t i0, int64_t j0, const OutView& out) {
  const bool trivial = ep.trivial();
  if (trivial && out.t == DType::f32 &&
      static_cast<const void*>(c) == static_cast<float*>(out.p) + i0 * out.ld + j0)
    return;
  with_act(ep.act, [&](auto kind) {
    epilogue_tile_k<decltype(kind)::value>(ep, c, ldc, rows, cols, i0, j0, out, trivial);
  });
}

// The gated epilogue of one gate/value-paired panel tile (see gemm::Epilogue):
// c holds `rows` x nr accumulators, gate columns [0, nr/2), value columns
// [nr/2, nr); the output columns are jo .. jo + min(nr/2, H - jo).
// Activation K chosen once per tile by epilogue_gated.
template <act::Kind K>
void epilogue_gated_k(const Epilogue& ep, const float* c, int64_t ldc, int rows, int nr, int64_t i0,
                      int64_t jo, int64_t H, const OutView& out) {
  const int half = nr / 2;
  const int cols = static_cast<int>(H - jo < half ? H - jo : half);
  for (int r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    for (int j = 0; j < cols; j += kLanes) {
      const int n = cols - j < kLanes ? cols - j : kLanes;
      const float* cr = c + r * ldc + j;
      Vf g = n == kLanes ? load(cr) : load_n(cr, n);
      Vf v = n == kLanes ? load(cr + half) : load_n(cr + half, n);
      if (ep.alpha != 1.0f) {
        g = g * set1(ep.alpha);
        v = v * set1(ep.alpha);
      }
      if (ep.add.p) {
        g = fma(set1(ep.beta), view_load(ep.add, i, jo + j, n), g);
        v = fma(set1(ep.beta), view_load(ep.add, i, H + jo + j, n), v);
      }
      Vf y = act_apply_t<K>(g) * v;
      if (ep.out_scale != 1.0f) y = y * set1(ep.out_scale);
      if (ep.residual.p) y = y + view_load(ep.residual, i, jo + j, n);
      store_at(out, i * out.ld + jo + j, y, n);
    }
  }
}

inline void epilogue_gated(const Epilogue& ep, const float* c, int64_t ldc, int rows, int nr,
                           int64_t i0, int64_t jo, int64_t H, const OutView& out) {
  with_act(ep.act, [&](auto kind) {
    epilogue_gated_k<decltype(kind)::value>(ep, c, ldc, rows, nr, i0, jo, H, out);
  });
}

// The epilogue of the tile of packed panel columns [jp, jp + ncols): plain or
// gated (N = the packed B's logical columns, 2H when gated).
inline void finish_tile(const Epilogue& ep, const float* c, int64_t ldc, int rows, int ncols,
                        int64_t i0, int64_t jp, int nr, int64_t N, const OutView& out) {
  if (ep.gated)
    epilogue_gated(ep, c, ldc, rows, nr, i0, jp / 2, N / 2, out);
  else
    epilogue_tile(ep, c, ldc, rows, ncols, i0, jp, out);
}
