// The total order shared by topk and sample (kernels and float64
// references): larger values first (or smaller, for largest = false), ties by
// lower index; NaN counts as larger than every number (NaNs among
// themselves by index). A strict weak order for every input, so sorting never
// misbehaves on NaN.
#pragma once

#include <cmath>
#include <cstdint>

namespace opsnn::index {

template <class F>
inline bool before(F a, int64_t ia, F b, int64_t ib, bool largest) {
  const bool na = a != a, nb = b != b;
  if (na || nb) {
    if (na && nb) return ia < ib;
    return largest ? na : nb;
  }
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

// splitmix64 (Steele, Lea, Flood 2014): the counter-based generator of sample.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The one uniform draw of row `row`: u = (splitmix64(splitmix64(seed) + row) >> 11) * 2^-53, in [0,
// 1).
inline double sample_uniform(uint64_t seed, int64_t row) {
  const uint64_t z = splitmix64(splitmix64(seed) + static_cast<uint64_t>(row));
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// Picks a token from candidates sorted best first (values as doubles, exact
// copies of the logits): weights w_j = exp((v_j - v_0) / temperature) summed
// in order; top-p keeps the shortest prefix whose cumulative weight reaches
// p * total; the pick is the first j with cumulative weight > u * kept total
// (the last kept one if rounding leaves none). Used by the kernels and the
// float64 reference alike, so both give the same token. `w` is scratch of m.
inline int64_t sample_pick(const double* v, const int64_t* idx, int64_t m, double temperature,
                           double p, double u, double* w) {
  if (m <= 0) return 0;
  if (temperature == 0 || std::isnan(v[0])) return idx[0];  // NaN: no distribution, the arg-max
  // +inf logits share all the mass equally (the limit), where exp(inf - inf)
  // would give NaN weights.
  const bool inf_top = v[0] == INFINITY;
  double total = 0;
  for (int64_t j = 0; j < m; ++j) {
    total += inf_top ? (v[j] == INFINITY ? 1.0 : 0.0) : std::exp((v[j] - v[0]) / temperature);
    w[j] = total;  // cumulative
  }
  int64_t kept = m;
  if (p < 1) {
    const double need = p * total;
    for (int64_t j = 0; j < m; ++j)
      if (w[j] >= need) {
        kept = j + 1;
        break;
      }
  }
  const double target = u * w[kept - 1];
  for (int64_t j = 0; j < kept; ++j)
    if (w[j] > target) return idx[j];
  return idx[kept - 1];
}

}  // namespace opsnn::index
