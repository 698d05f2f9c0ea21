// Fused attention beyond the case table: the KV cache (contiguous and paged
// decode against the float64 reference, paged == contiguous bit for bit,
// thread-count independence, errors) and long sequences with a bounded
// workspace.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

Tensor random_tensor(const Shape& s, DType t, uint64_t seed, double lo = -2, double hi = 2) {
  Tensor x = Tensor::zeros(s, DType::f32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(static_cast<float>(lo), static_cast<float>(hi));
  float* p = x.data_as<float>();
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = u(rng);
  if (t == DType::f32) return x;
  Tensor y = Tensor::empty(s, t);
  copy_into(x, y);
  return y;
}

// Reference attention (float64 oracle kernel of the op) of q against the
// first lens[b] positions of the full histories k, v [B, Hkv, cap, D].
Tensor reference(const Tensor& q, const Tensor& k, const Tensor& v,
                 const std::vector<int64_t>& lens, bool causal) {
  Tensor l = Tensor::empty({static_cast<int64_t>(lens.size())}, DType::i64);
  std::memcpy(l.data(), lens.data(), lens.size() * sizeof(int64_t));
  Op op = Op::create("sdpa", std::vector<Tensor>{q, k, v, l}, {{"causal", int64_t{causal ? 1 : 0}}},
                     "sdpa_ref_f64");
  return op({q, k, v, l})[0];
}

void expect_close(const Tensor& got, const Tensor& ref, DType t, const char* what) {
  const double atol = t == DType::f32 ? 2e-5 : 8e-3, rtol = t == DType::f32 ? 1e-4 : 1.6e-2;
  ASSERT_EQ(got.shape(), ref.shape());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.flat_get(i), r = ref.flat_get(i);
    ASSERT_LE(std::fabs(g - r), atol + rtol * std::fabs(r))
        << what << " element " << i << ": got " << g << " want " << r;
  }
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

struct CacheParam {
  int64_t block_size;
  DType dtype;
};

class KvCacheDecode : public ::testing::TestWithParam<CacheParam> {};

TEST_P(KvCacheDecode, MatchesReferenceStepByStep) {
  const CacheParam cp = GetParam();
  const int64_t B = 3, Hkv = 2, Hq = 8, D = 64, cap = 300;
  KvCacheConfig cfg;
  cfg.batch = B;
  cfg.kv_heads = Hkv;
  cfg.head_dim = D;
  cfg.capacity = cap;
  cfg.dtype = cp.dtype;
  cfg.block_size = cp.block_size;
  KvCache cache(cfg);
  // The whole history of every sequence; the cache receives it piece by piece.
  const Tensor K = random_tensor({B, Hkv, cap, D}, cp.dtype, 1),
               V = random_tensor({B, Hkv, cap, D}, cp.dtype, 2, -3, 3);
  auto piece = [&](const Tensor& T, int64_t b, int64_t from, int64_t n) {
    const Tensor s = T.slice(0, b, b + 1).slice(2, from, from + n);
    return Tensor::wrap(const_cast<void*>(s.data()), {Hkv, n, D}, T.dtype(),
                        {s.strides()[1], s.strides()[2], s.strides()[3]});
  };
  // Prompts of different lengths, appended interleaved so paged blocks interleave; sequence 1 stays
  // empty.
  const int64_t prompt[B] = {20, 0, 45};
  for (int64_t t = 0; t < 45; t += 5)
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n = std::min<int64_t>(5, prompt[b] - t);
      if (n > 0) cache.append(b, piece(K, b, t, n), piece(V, b, t, n));
    }
  EXPECT_EQ(cache.length(0), 20);
  EXPECT_EQ(cache.length(1), 0);
  EXPECT_EQ(cache.length(2), 45);
  {  // attention before any decode step: sequence 1 is empty -> zeros
    const Tensor q = random_tensor({B, Hq, 1, D}, cp.dtype, 50);
    const Tensor got = cache.attend(q);
    expect_close(got, reference(q, K, V, cache.lengths(), true), cp.dtype, "prompt");
    for (int64_t i = 0; i < Hq * D; ++i) ASSERT_EQ(got.slice(0, 1, 2).flat_get(i), 0.0);
  }
  for (int step = 0; step < 6; ++step) {
    const int64_t n = step == 3 ? 4 : 1;  // one multi-token step (speculative-decode style, causal)
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = cache.length(b);
      cache.append(b, piece(K, b, len, n), piece(V, b, len, n));
    }
    const Tensor q = random_tensor({B, Hq, n, D}, cp.dtype, 100 + step);
    const Tensor got = cache.attend(q);
    expect_close(got, reference(q, K, V, cache.lengths(), true), cp.dtype, "decode");
  }
  // Long context: fill sequence 2 close to capacity (exercises the split over keys).
  const int64_t len2 = cache.length(2);
  cache.append(2, piece(K, 2, len2, cap - len2 - 1), piece(V, 2, len2, cap - len2 - 1));
  const Tensor q = random_tensor({B, Hq, 1, D}, cp.dtype, 999);
  const Tensor got = cache.attend(q);
  expect_close(got, reference(q, K, V, cache.lengths(), true), cp.dtype, "long");
  // Bit-identical for 1 and 2 threads.
  const int saved = num_threads();
  set_num_threads(1);
  const Tensor one = cache.attend(q);
  set_num_threads(2);
  const Tensor two = cache.attend(q);
  set_num_threads(saved);
  EXPECT_TRUE(same_bits(one, two));
  EXPECT_TRUE(same_bits(one, got));
  // Errors: over capacity, wrong q.
  EXPECT_THROW(cache.append(2, piece(K, 2, 0, 2), piece(V, 2, 0, 2)), Error);
  EXPECT_THROW(cache.attend(random_tensor({B, 3, 1, D}, cp.dtype, 7)), Error);
  cache.reset(2);
  EXPECT_EQ(cache.length(2), 0);
}

INSTANTIATE_TEST_SUITE_P(All, KvCacheDecode,
                         ::testing::Values(CacheParam{0, DType::f32}, CacheParam{16, DType::f32},
                                           CacheParam{0, DType::bf16}, CacheParam{7, DType::bf16}),
                         [](const ::testing::TestParamInfo<CacheParam>& i) {
                           return std::string(i.param.block_size
                                                  ? "paged" + std::to_string(i.param.block_size)
                                                  : "contiguous") +
                                  "_" + dtype_name(i.param.dtype);
                         });

TEST(KvCache, PagedEqualsContiguousBitwise) {
  const int64_t B = 2, Hkv = 4, Hq = 32, D = 128, cap = 1000;
  KvCacheConfig cfg{B, Hkv, D, cap, DType::f32, 0, 0};
  KvCache flat(cfg);
  cfg.block_size = 64;
  cfg.num_blocks = 24;  // a shared pool smaller than batch * capacity (2 x 16 blocks)
  KvCache paged(cfg);
  const Tensor k = random_tensor({B, Hkv, 700, D}, DType::f32, 3),
               v = random_tensor({B, Hkv, 700, D}, DType::f32, 4);
  for (int64_t t = 0; t < 700; t += 100) {
    const Tensor ks = k.slice(2, t, t + 100), vs = v.slice(2, t, t + 100);
    flat.append(ks, vs);
    paged.append(ks, vs);
  }
  const Tensor q = random_tensor({B, Hq, 1, D}, DType::f32, 5);
  EXPECT_TRUE(same_bits(flat.attend(q), paged.attend(q)));
  // 2 x ceil(700/64) = 22 of the 24 blocks are used; 300 more positions need 5.
  EXPECT_THROW(paged.append(0, random_tensor({Hkv, 300, D}, DType::f32, 6),
                            random_tensor({Hkv, 300, D}, DType::f32, 6)),
               Error);
}

// Bad input is refused at phase one with the op, the argument and expected vs got.
TEST(SdpaErrors, ClearMessages) {
  auto err = [](std::vector<TensorDesc> in, const Attrs& a = {}) -> std::string {
    try {
      Op::create("sdpa", std::move(in), a);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const DType f = DType::f32;
  const TensorDesc q(f, {2, 6, 5, 64}), k(f, {2, 3, 7, 64}), none = TensorDesc::none();
  EXPECT_NE(err({q, TensorDesc(f, {2, 4, 7, 64}), TensorDesc(f, {2, 4, 7, 64})})
                .find("KV heads dividing"),
            std::string::npos);
  EXPECT_NE(
      err({q, TensorDesc(f, {2, 3, 7, 32}), TensorDesc(f, {2, 3, 7, 32})}).find("head dim 64"),
      std::string::npos);
  EXPECT_NE(err({q, k, TensorDesc(f, {2, 3, 8, 64})}).find("v"), std::string::npos);
  EXPECT_NE(err({q, TensorDesc(DType::bf16, {2, 3, 7, 64}), k}).find("sdpa"), std::string::npos);
  EXPECT_NE(err({q, k, k, TensorDesc(DType::f32, {2})}).find("key_lens"), std::string::npos);
  EXPECT_NE(err({q, k, k, TensorDesc(DType::i32, {3})}).find("key_lens"), std::string::npos);
  EXPECT_NE(err({q, k, k, none, TensorDesc(f, {2, 6, 4, 7})}).find("broadcastable to [2, 6, 5, 7]"),
            std::string::npos);
  EXPECT_NE(err({q, k, k, none, none, TensorDesc(f, {7})}).find("mask"), std::string::npos);
  EXPECT_NE(err({q, k, k}, {{"layout", std::string("BSHD")}}).find("BHLD|BLHD"), std::string::npos);
  EXPECT_NE(err({q, k, k}, {{"causal", int64_t{2}}}).find("causal"), std::string::npos);
  EXPECT_NE(err({q, k, k}, {{"scale", -1.0}}).find("scale"), std::string::npos);
  EXPECT_EQ(err({q, k, k, TensorDesc(DType::i64, {2}), TensorDesc(f, {5, 7}),
                 TensorDesc(DType::boolean, {2, 1, 1, 7})}),
            "");
}

// f16 is not in the op's dtype list (test time); its loads share the code of
// bf16, and this checks every flash kernel on two f16 cases.
TEST(SdpaF16, FlashKernelsMatchReference) {
  for (const char* kernel : {"sdpa_flash_avx512", "sdpa_flash_avx2", "sdpa_flash_scalar"}) {
    const Isa need = std::string(kernel).find("avx512") != std::string::npos ? Isa::avx512
                     : std::string(kernel).find("avx2") != std::string::npos ? Isa::avx2
                                                                             : Isa::scalar;
    if (need > active_isa()) continue;
    for (int causal : {0, 1}) {
      const Tensor q = random_tensor({2, 4, 9, 40}, DType::f16, 21),
                   k = random_tensor({2, 2, 70, 40}, DType::f16, 22),
                   v = random_tensor({2, 2, 70, 40}, DType::f16, 23);
      const Attrs a = {{"causal", int64_t{causal}}};
      const Tensor got = Op::create("sdpa", std::vector<Tensor>{q, k, v}, a, kernel)({q, k, v})[0];
      const Tensor ref =
          Op::create("sdpa", std::vector<Tensor>{q, k, v}, a, "sdpa_ref_f64")({q, k, v})[0];
      for (int64_t i = 0; i < got.numel(); ++i)
        ASSERT_NEAR(got.flat_get(i), ref.flat_get(i), 1e-3 + 2e-3 * std::fabs(ref.flat_get(i)))
            << kernel << " " << i;
    }
  }
}

// One key whose score exceeds every other by ~190 (e^-190 underflows to 0),
// placed at every key position in turn: the output is that key's value row.
// A row maximum that missed the key (first, middle or last of a register
// tile of keys, or the zero-padded last keys of a block) would overflow exp
// and give NaN. kv_block 40 over 87 keys: two full blocks and one of 7 keys
// (a whole tile and 3 padded keys); 48 rows take the many-rows form.
TEST(SdpaScores, DominantKeyAtEveryPosition) {
  const int64_t Lq = 48, Lk = 87, D = 40;
  Tensor q = Tensor::empty({1, 1, Lq, D}, DType::f32);  // scores: sum of k / sqrt(40)
  for (int64_t x = 0; x < Lq * D; ++x) q.data_as<float>()[x] = 1.0f;
  const Tensor v = random_tensor({1, 1, Lk, D}, DType::f32, 41, -3, 3);
  for (const char* kernel : {"sdpa_flash_avx512", "sdpa_flash_avx2", "sdpa_flash_scalar"}) {
    const Isa need = std::string(kernel).find("avx512") != std::string::npos ? Isa::avx512
                     : std::string(kernel).find("avx2") != std::string::npos ? Isa::avx2
                                                                             : Isa::scalar;
    if (need > active_isa()) continue;
    for (int64_t jd = 0; jd < Lk; ++jd) {
      Tensor k = random_tensor({1, 1, Lk, D}, DType::f32, 42, -0.1, 0.1);      // scores below 0.7
      for (int64_t d = 0; d < D; ++d) k.data_as<float>()[jd * D + d] = 30.0f;  // 189.7
      const Attrs a = {{"kv_block", int64_t{40}}};
      const Tensor got = Op::create("sdpa", std::vector<Tensor>{q, k, v}, a, kernel)({q, k, v})[0];
      for (int64_t i = 0; i < Lq; ++i)
        for (int64_t d = 0; d < D; ++d)
          ASSERT_NEAR(got.flat_get(i * D + d), v.flat_get(jd * D + d), 1e-5)
              << kernel << " dominant key " << jd << " row " << i << " dim " << d;
    }
  }
}

// Inputs with a non-unit stride along D (views of [B, H, D, L] tensors) are
// copied to contiguous workspace by sdpa_flash_packed_<isa> (the flash kernel
// of the active ISA) instead of falling back to the float64 reference kernel.
TEST(SdpaStridedD, PackedFlashKernel) {
  for (DType t : {DType::f32, DType::bf16}) {
    const Tensor qs = random_tensor({2, 4, 48, 7}, t, 31),
                 ks = random_tensor({2, 2, 48, 50}, t, 32),
                 vs = random_tensor({2, 2, 48, 50}, t, 33, -3, 3);
    const Tensor q = qs.permute({0, 1, 3, 2}), k = ks.permute({0, 1, 3, 2}),
                 v = vs.permute({0, 1, 3, 2});
    ASSERT_NE(q.strides()[3], 1);
    for (int causal : {0, 1}) {
      const Attrs a = {{"causal", int64_t{causal}}};
      Op op = Op::create("sdpa", std::vector<Tensor>{q, k, v}, a);
      EXPECT_EQ(op.kernel_name(), std::string("sdpa_flash_packed_") + isa_name(active_isa()));
      const Tensor got = op({q, k, v})[0];
      const Tensor ref =
          Op::create("sdpa", std::vector<Tensor>{q, k, v}, a, "sdpa_ref_f64")({q, k, v})[0];
      expect_close(got, ref, t, "strided D");
    }
  }
}

// Decode with GQA groups of 1, 4 and 8 query heads per KV head, Lq 1..16,
// contiguous and paged, f32 and bf16: the few-rows path (Lq x G <= 16) and
// the flash path with key splits (more rows) against the float64 reference,
// 1 vs 2 threads bit for bit.
TEST(KvCache, DecodeGroupSizes) {
  for (DType t : {DType::f32, DType::bf16})
    for (int64_t block : {int64_t{0}, int64_t{32}})
      for (int64_t G : {1, 4, 8}) {
        const int64_t B = 2, Hkv = 2, D = 128, cap = 700;
        KvCacheConfig cfg{B, Hkv, D, cap, t, block, 0};
        KvCache cache(cfg);
        const Tensor K = random_tensor({B, Hkv, 600, D}, t, 40 + G),
                     V = random_tensor({B, Hkv, 600, D}, t, 50 + G, -3, 3);
        cache.append(K, V);
        cache.reset(1);
        cache.append(1, K.slice(0, 1, 2).reshape({Hkv, 600, D}).slice(1, 0, 333),
                     V.slice(0, 1, 2).reshape({Hkv, 600, D}).slice(1, 0, 333));
        Tensor Kf = Tensor::zeros({B, Hkv, cap, D}, t), Vf = Tensor::zeros({B, Hkv, cap, D}, t);
        Tensor kd = Kf.slice(2, 0, 600), vd = Vf.slice(2, 0, 600);
        copy_into(K, kd);
        copy_into(V, vd);
        for (int64_t lq : {int64_t{1}, int64_t{3}, int64_t{16}}) {
          const Tensor q = random_tensor({B, Hkv * G, lq, D}, t, 60 + lq);
          const Tensor got = cache.attend(q);
          expect_close(got, reference(q, Kf, Vf, cache.lengths(), true), t, "group decode");
          const int saved = num_threads();
          set_num_threads(1);
          const Tensor one = cache.attend(q);
          set_num_threads(2);
          const Tensor two = cache.attend(q);
          set_num_threads(saved);
          EXPECT_TRUE(same_bits(one, two)) << "G " << G << " lq " << lq;
        }
      }
}

// float64 attention of one query row (causal, aligned square) for spot checks.
std::vector<double> row_reference(const float* q, const float* k, const float* v, int64_t L,
                                  int64_t D, int64_t i) {
  const double scale = 1 / std::sqrt(static_cast<double>(D));
  std::vector<double> s(static_cast<size_t>(i + 1)), o(static_cast<size_t>(D), 0.0);
  double mx = -INFINITY, sum = 0;
  for (int64_t j = 0; j <= i; ++j) {
    double a = 0;
    for (int64_t d = 0; d < D; ++d) a += static_cast<double>(q[i * D + d]) * k[j * D + d];
    s[j] = a * scale;
    mx = std::max(mx, s[j]);
  }
  (void)L;
  for (int64_t j = 0; j <= i; ++j) sum += (s[j] = std::exp(s[j] - mx));
  for (int64_t j = 0; j <= i; ++j)
    for (int64_t d = 0; d < D; ++d) o[d] += s[j] / sum * v[j * D + d];
  return o;
}

void long_sequence(int64_t L) {
  const int64_t D = 64;
  const Tensor q = random_tensor({1, 1, L, D}, DType::f32, 11),
               k = random_tensor({1, 1, L, D}, DType::f32, 12),
               v = random_tensor({1, 1, L, D}, DType::f32, 13);
  Op op = Op::create("sdpa", std::vector<Tensor>{q, k, v}, {{"causal", int64_t{1}}});
  ASSERT_NE(op.kernel_name().find("sdpa_flash"), std::string::npos) << op.kernel_name();
  const size_t limit = size_t{64} << 20;
  EXPECT_LT(op.workspace_bytes(), limit);
  Arena arena(op.workspace_bytes() + kAlignment);
  auto ws = arena.span(op.workspace_bytes());
  Tensor out = Tensor::empty({1, 1, L, D}, DType::f32);
  op.run(std::vector<Tensor>{q, k, v}, {&out, 1}, ws);
  EXPECT_LT(arena.peak_bytes(), limit);
  for (int64_t i : {int64_t{0}, int64_t{1}, L / 3, L / 2 + 7, L - 2, L - 1}) {
    const std::vector<double> r =
        row_reference(q.data_as<float>(), k.data_as<float>(), v.data_as<float>(), L, D, i);
    for (int64_t d = 0; d < D; ++d)
      ASSERT_NEAR(out.data_as<float>()[i * D + d], r[d], 2e-5 + 1e-4 * std::fabs(r[d]))
          << "row " << i << " d " << d;
  }
}

TEST(SdpaLong, Causal4096WorkspaceBounded) { long_sequence(4096); }
// Lq = Lk = 32768, D = 64 (about 2-3 s on 2 cores with AVX-512).
TEST(SdpaLong, Causal32768WorkspaceUnder64MiB) {
  // The portable scalar kernel needs about 5 minutes here; the 4096 case covers it.
  if (active_isa() == Isa::scalar)
    GTEST_SKIP() << "scalar ISA: covered by Causal4096WorkspaceBounded";
  long_sequence(32768);
}

}  // namespace
}  // namespace opsnn
