// The GEMM engine's streamed (non-temporal) output stores: with
// Params::stream_min_bytes = 1 every output is streamed, and the result must be
// the bits of the ordinary stores (0) for every ISA this machine runs, every
// output dtype, aligned and misaligned outputs, plain, fused-bf16 and gated
// epilogues, the blocked, small-M and split-K paths, 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm/gemm.h"
#include "opsnn/cpu.h"
#include "opsnn/dtype.h"
#include "opsnn/memory.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

struct Buffer {
  explicit Buffer(size_t bytes) : p(aligned_alloc_bytes(bytes)), n(bytes) {
    std::memset(p, 0x5a, n);
  }
  ~Buffer() { aligned_free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* p;
  size_t n;
};

std::vector<float> rand_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

struct Case {
  int64_t M, N, K;
};

// Runs the GEMM into a fresh output buffer (every byte 0x5a, so bytes the
// GEMM must not touch are checked too) and returns the buffer's bytes.
std::vector<unsigned char> run_once(gemm::Params p, int64_t stream_min, const Case& c, DType out_t,
                                    int64_t offset, bool gated, DType pt) {
  p.stream_min_bytes = stream_min;
  const std::vector<float> a = rand_floats(static_cast<size_t>(c.M * c.K), 1);
  const std::vector<float> b = rand_floats(static_cast<size_t>(c.K * c.N), 2);
  const std::vector<float> bias = rand_floats(static_cast<size_t>(c.N), 3);
  std::vector<uint16_t> b16(b.size());
  for (size_t i = 0; i < b.size(); ++i) b16[i] = f32_to_bf16_bits(b[i]);
  Buffer packed(gemm::packed_b_bytes(p, c.K, c.N, pt));
  const gemm::MatView bv = pt == DType::f32 ? gemm::MatView{b.data(), DType::f32, c.N, 1}
                                            : gemm::MatView{b16.data(), DType::bf16, c.N, 1};
  gemm::pack_b(p, c.K, c.N, bv, packed.p, pt, gated);
  const int64_t cols = gated ? c.N / 2 : c.N, ld = cols + offset;
  const size_t esz = dtype_size(out_t);
  Buffer out(static_cast<size_t>((c.M * ld + offset) * static_cast<int64_t>(esz)));
  gemm::Epilogue ep;
  ep.gated = gated;
  if (gated) {
    ep.add = {bias.data(), DType::f32, 0, 1};
    ep.act = gemm::Act::silu;
  }
  const gemm::OutView ov{static_cast<char*>(out.p) + offset * static_cast<int64_t>(esz), out_t, ld};
  gemm::run(p, c.M, c.N, c.K, {a.data(), DType::f32, c.K, 1}, packed.p, pt, ov, ep);
  const auto* bytes = static_cast<const unsigned char*>(out.p);
  return {bytes, bytes + out.n};
}

TEST(GemmStream, StreamedOutputHasTheBitsOfOrdinaryStores) {
  const Case cases[] = {{37, 200, 70}, {3, 100, 300}, {1, 64, 1000}, {64, 96, 33}};
  const int saved = num_threads();
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (isa > cpu_info().best_isa()) continue;
    for (bool dot : {false, true}) {
      gemm::Params p = gemm::default_params(isa, 0);
      EXPECT_GT(p.stream_min_bytes, 0) << "streaming is on by default for large outputs";
      if (dot && !p.bf16_dot) continue;
      p.bf16_dot = dot;
      for (DType pt : {DType::f32, DType::bf16}) {
        if (dot && pt != DType::bf16) continue;
        for (const Case& c : cases)
          for (DType out_t : {DType::f32, DType::bf16, DType::f16})
            for (int64_t offset : {0, 1})
              for (bool gated : {false, true})
                for (int threads : {1, 2}) {
                  set_num_threads(threads);
                  const std::string what = std::string(isa_name(isa)) + (dot ? " dot" : "") + " " +
                                           dtype_name(pt) + "->" + dtype_name(out_t) + " " +
                                           std::to_string(c.M) + "x" + std::to_string(c.N) + "x" +
                                           std::to_string(c.K) + " offset " +
                                           std::to_string(offset) + (gated ? " gated" : "") +
                                           " threads " + std::to_string(threads);
                  EXPECT_EQ(run_once(p, 1, c, out_t, offset, gated, pt),
                            run_once(p, 0, c, out_t, offset, gated, pt))
                      << what;
                }
      }
    }
  }
  set_num_threads(saved);
}

}  // namespace
}  // namespace opsnn
