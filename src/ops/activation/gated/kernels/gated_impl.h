// Gated activation kernels written once over the vec_*.h names; included by
// gated_{scalar,avx2,avx512}.cc inside their ISA namespace.

#include "kernels/act/act_vec.inc"

template <gated::Kind K>
inline Vf act(Vf g) {
  using gated::Kind;
  if constexpr (K == Kind::swiglu) return act_silu(g);
  if constexpr (K == Kind::geglu_erf) return act_gelu_erf(g);
  if constexpr (K == Kind::geglu_tanh) return act_gelu_tanh(g);
}

// act(g) * v. An infinite v times the act of a finite non-zero g is an
// infinity of sign(v g): act(g) is non-zero there but can underflow to 0 in
// f32 (gelu(-20) = -6e-88), which would give inf * 0 = NaN.
template <gated::Kind K>
inline Vf gate(Vf g, Vf v) {
  const Vf inf = set1(__builtin_inff());
  const Mask finite_nonzero = ((g < zero()) | (g > zero())) & (abs(g) < inf);
  return select((abs(v) == inf) & finite_nonzero, v * g, act<K>(g) * v);
}

template <gated::Kind K, class T>
void run_typed(const T* x, T* y, int64_t rows, int64_t h, bool gate_first) {
  const int64_t goff = gate_first ? 0 : h, voff = gate_first ? h : 0;
  // Chunks over the flat output; every element gets the same lane arithmetic
  // whatever the chunking (bit-identical for any thread count).
  parallel_for(rows * h, 16384, [&](int64_t b, int64_t e) {
    int64_t r = b / h, j = b % h;
    while (b < e) {
      const int64_t end = std::min(e - b, h - j);
      const T* xr = x + r * 2 * h;
      T* yr = y + r * h;
      int64_t k = j;
      for (; k + kLanes <= j + end; k += kLanes)
        store(yr + k, gate<K>(load(xr + goff + k), load(xr + voff + k)));
      if (k < j + end) {
        const int n = static_cast<int>(j + end - k);
        store_n(yr + k, gate<K>(load_n(xr + goff + k, n), load_n(xr + voff + k, n)), n);
      }
      b += end;
      ++r;
      j = 0;
    }
  });
}

template <gated::Kind K>
void run_kind(DType t, const void* x, void* y, int64_t rows, int64_t h, bool gf) {
  switch (t) {
    case DType::f32:
      return run_typed<K>(static_cast<const float*>(x), static_cast<float*>(y), rows, h, gf);
    case DType::bf16:
      return run_typed<K>(static_cast<const bf16*>(x), static_cast<bf16*>(y), rows, h, gf);
    case DType::f16:
      return run_typed<K>(static_cast<const f16*>(x), static_cast<f16*>(y), rows, h, gf);
    default:
      return;
  }
}

inline void run(gated::Kind kind, DType t, const void* x, void* y, int64_t rows, int64_t h,
                bool gf) {
  if (rows == 0 || h == 0) return;
  switch (kind) {
    case gated::Kind::swiglu:
      return run_kind<gated::Kind::swiglu>(t, x, y, rows, h, gf);
    case gated::Kind::geglu_erf:
      return run_kind<gated::Kind::geglu_erf>(t, x, y, rows, h, gf);
    case gated::Kind::geglu_tanh:
      return run_kind<gated::Kind::geglu_tanh>(t, x, y, rows, h, gf);
  }
}
