#include "ops/shape/kernels/copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ops/common/rank_array.h"
#include "opsnn/thread_pool.h"

namespace opsnn::shape {
namespace {

struct Dim {
  int64_t n, ss, ds;
};

using Dims = ops::RankArray<Dim>;

// Drops size-1 dims and merges neighbours that are contiguous on both sides.
void simplify(std::span<const int64_t> shape, std::span<const int64_t> ss,
              std::span<const int64_t> ds, Dims& dims) {
  dims.clear();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    Dim d{shape[i], ss[i], ds[i]};
    if (!dims.empty()) {
      Dim& p = dims.back();
      if (p.ss == d.ss * d.n && p.ds == d.ds * d.n) {
        p = {p.n * d.n, d.ss, d.ds};
        continue;
      }
    }
    dims.push_back(d);
  }
}

// Offsets of the outer dims (all but those in `skip`) for a linear outer index.
struct Outer {
  Dims dims;  // outer dims, outermost first
  int64_t count = 1;
  void offsets(int64_t idx, int64_t* so, int64_t* dof) const {
    int64_t s = 0, d = 0;
    for (size_t k = dims.size(); k-- > 0;) {
      const int64_t i = idx % dims[k].n;
      idx /= dims[k].n;
      s += i * dims[k].ss;
      d += i * dims[k].ds;
    }
    *so = s;
    *dof = d;
  }
};

template <class T>
void copy_run(const T* s, int64_t ss, T* d, int64_t ds, int64_t n) {
  if (ds == 1 && ss == 0) {
    const T v = *s;
    for (int64_t i = 0; i < n; ++i) d[i] = v;
  } else if (ds == 1 && ss == -1) {  // reversed run (slice with step -1, pad reflect)
    for (int64_t i = 0; i < n; ++i) d[i] = s[-i];
  } else if (ds == 1) {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i * ss];
  } else {
    for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
  }
}

void copy_elems(size_t es, const char* s, int64_t ss, char* d, int64_t ds, int64_t n) {
  switch (es) {
    case 1:
      return copy_run(reinterpret_cast<const uint8_t*>(s), ss, reinterpret_cast<uint8_t*>(d), ds,
                      n);
    case 2:
      return copy_run(reinterpret_cast<const uint16_t*>(s), ss, reinterpret_cast<uint16_t*>(d), ds,
                      n);
    case 4:
      return copy_run(reinterpret_cast<const uint32_t*>(s), ss, reinterpret_cast<uint32_t*>(d), ds,
                      n);
    case 8:
      return copy_run(reinterpret_cast<const uint64_t*>(s), ss, reinterpret_cast<uint64_t*>(d), ds,
                      n);
    default:
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(d + i * ds * static_cast<int64_t>(es), s + i * ss * static_cast<int64_t>(es),
                    es);
  }
}

template <class T>
void tile_portable(const void* src, int64_t src_ld, void* dst, int64_t dst_ld, int64_t rows,
                   int64_t cols) {
  const T* s = static_cast<const T*>(src);
  T* d = static_cast<T*>(dst);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) d[c * dst_ld + r] = s[r * src_ld + c];
}

TileFn tile_for(size_t es, const TileKernels& t) {
  switch (es) {
    case 1:
      return tile_portable<uint8_t>;
    case 2:
      return t.tile2 ? t.tile2 : tile_portable<uint16_t>;
    case 4:
      return t.tile4 ? t.tile4 : tile_portable<uint32_t>;
    case 8:
      return tile_portable<uint64_t>;
    default:
      return nullptr;
  }
}

constexpr int64_t kBlock = 256;  // transpose cache block (elements per side)
// Transposes of at least this many bytes use TileKernels::tile4_stream.
constexpr int64_t kStreamBytes = int64_t{16} << 20;

}  // namespace

TileKernels tiles_scalar() { return {}; }

void fill(size_t es, void* dst, int64_t n, const void* value) {
  if (n <= 0) return;
  char* d = static_cast<char*>(dst);
  std::memcpy(d, value, es);
  // Doubling memcpy: O(log n) calls, then threaded tail-free.
  int64_t done = 1;
  while (done < n && done < 4096) {
    const int64_t k = std::min(done, n - done);
    std::memcpy(d + done * static_cast<int64_t>(es), d, static_cast<size_t>(k) * es);
    done += k;
  }
  if (done >= n) return;
  const int64_t chunk = done;  // a pattern of `chunk` elements at d
  const int64_t nchunks = (n - done + chunk - 1) / chunk;
  parallel_for(nchunks, 16, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t at = done + c * chunk, k = std::min(chunk, n - at);
      std::memcpy(d + at * static_cast<int64_t>(es), d, static_cast<size_t>(k) * es);
    }
  });
}

void strided_copy(size_t es, std::span<const int64_t> shape, const void* src,
                  std::span<const int64_t> src_strides, void* dst,
                  std::span<const int64_t> dst_strides, const TileKernels& tiles) {
  for (int64_t n : shape)
    if (n == 0) return;
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  const int64_t E = static_cast<int64_t>(es);
  Dims dims;
  simplify(shape, src_strides, dst_strides, dims);
  if (dims.empty()) {
    std::memcpy(d, s, es);
    return;
  }
  const Dim in = dims.back();

  // Transpose: the destination's unit-stride axis is not the source's.
  if (in.ds == 1 && in.ss != 1 && tile_for(es, tiles)) {
    int64_t j = -1;
    for (size_t k = 0; k + 1 < dims.size(); ++k)
      if (dims[k].ss == 1) j = static_cast<int64_t>(k);
    if (j >= 0) {
      const Dim p = dims[static_cast<size_t>(j)];  // contiguous in source
      Outer outer;
      for (size_t k = 0; k + 1 < dims.size(); ++k)
        if (static_cast<int64_t>(k) != j) {
          outer.dims.push_back(dims[k]);
          outer.count *= dims[k].n;
        }
      TileFn tile = tile_for(es, tiles);
      // Large 4-byte transposes stream their output (each tile writes whole lines).
      int64_t total = static_cast<int64_t>(es);
      for (int64_t n : shape) total *= n;
      if (es == 4 && tiles.tile4_stream && total >= kStreamBytes) tile = tiles.tile4_stream;
      // Tasks: outer index x block of destination columns (source rows).
      const int64_t qblocks = (in.n + kBlock - 1) / kBlock;
      const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, p.n * kBlock));
      parallel_for(outer.count * qblocks, grain, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          int64_t so, dof;
          outer.offsets(t / qblocks, &so, &dof);
          const int64_t q0 = (t % qblocks) * kBlock, qn = std::min(kBlock, in.n - q0);
          for (int64_t p0 = 0; p0 < p.n; p0 += kBlock) {
            const int64_t pn = std::min(kBlock, p.n - p0);
            // Source rows q (stride in.ss), contiguous along p; dest rows p (stride p.ds).
            tile(s + (so + q0 * in.ss + p0) * E, in.ss, d + (dof + p0 * p.ds + q0) * E, p.ds, qn,
                 pn);
          }
        }
      });
      return;
    }
  }

  Outer outer;
  for (size_t k = 0; k + 1 < dims.size(); ++k) {
    outer.dims.push_back(dims[k]);
    outer.count *= dims[k].n;
  }
  const bool contiguous = in.ss == 1 && in.ds == 1;
  // Long runs are cut into pieces so both cores share one big memcpy.
  const int64_t piece = contiguous && in.n * E > (1 << 20) ? (256 << 10) / E : in.n;
  const int64_t pieces = (in.n + piece - 1) / piece;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, piece * E));
  parallel_for(outer.count * pieces, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t so, dof;
      outer.offsets(t / pieces, &so, &dof);
      const int64_t i0 = (t % pieces) * piece, n = std::min(piece, in.n - i0);
      if (contiguous)
        std::memcpy(d + (dof + i0) * E, s + (so + i0) * E, static_cast<size_t>(n * E));
      else
        copy_elems(es, s + (so + i0 * in.ss) * E, in.ss, d + (dof + i0 * in.ds) * E, in.ds, n);
    }
  });
}

}  // namespace opsnn::shape
