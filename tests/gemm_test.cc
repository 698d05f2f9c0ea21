// The GEMM engine's public pre-packed path: pack_matrix + matmul_packed give
// the same bits as the ops (same kernel), for any thread count, and reject
// bad input with clear errors. The op form on unpacked weights (small M):
// against the float64 reference on every kernel, both B layouts, strided
// inputs and epilogues.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

Tensor rand_tensor(const Shape& s, uint64_t seed) {
  Tensor t = Tensor::empty(s, DType::f32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST(Gemm, PackedMatchesLinearOpBitwise) {
  for (auto [M, N, K] :
       {std::tuple<int64_t, int64_t, int64_t>{1, 300, 257}, {37, 129, 1000}, {200, 65, 31}}) {
    Tensor x = rand_tensor({M, K}, 1), w = rand_tensor({N, K}, 2), b = rand_tensor({N}, 3);
    PackedMatrix pw = pack_matrix(w, /*transposed=*/true);
    EXPECT_EQ(pw.k(), K);
    EXPECT_EQ(pw.n(), N);
    // The panels hold at least K x N f32 (zero padded past N).
    ASSERT_NE(pw.data(), nullptr);
    EXPECT_GE(pw.bytes(), static_cast<size_t>(K * N) * sizeof(float));
    Tensor y = Tensor::zeros({M, N}, DType::f32);
    MatmulEpilogue ep;
    ep.bias = &b;
    matmul_packed(x, pw, y, ep);
    // The op with the weight as a constant operand packs it at create: the
    // same kernel, the same bits. (The op form on a plain weight reads it in
    // place at small M, as dot products over K: other rounding.)
    Op lin = Op::create("linear", {x.desc(), TensorDesc::constant(w), b.desc()});
    Tensor ref = Tensor::empty({M, N}, DType::f32);
    std::vector<Tensor> ins{x, Tensor(), b};
    Arena arena(lin.workspace_bytes() + 64, false);  // the engine's scratch
    lin.run(ins, {&ref, 1}, arena.span(lin.workspace_bytes()));
    EXPECT_TRUE(same_bits(y, ref)) << M << "x" << N << "x" << K;
    // Thread count does not change the bits.
    const int saved = num_threads();
    set_num_threads(1);
    Tensor y1 = Tensor::zeros({M, N}, DType::f32);
    matmul_packed(x, pw, y1, ep);
    set_num_threads(saved);
    EXPECT_TRUE(same_bits(y, y1));
  }
}

TEST(Gemm, PackedEpilogueMatchesFusedMatmul) {
  Tensor x = rand_tensor({2, 9, 70}, 4), w = rand_tensor({70, 50}, 5), b = rand_tensor({50}, 6),
         r = rand_tensor({2, 9, 50}, 7);
  PackedMatrix pw = pack_matrix(w);
  Tensor y = Tensor::zeros({2, 9, 50}, DType::f32);
  MatmulEpilogue ep;
  ep.bias = &b;
  ep.residual = &r;
  ep.activation = "gelu";
  ep.alpha = 0.5f;
  matmul_packed(x, pw, y, ep);
  Tensor ref =
      call("fused_matmul", {x, w, b, r}, {{"activation", std::string("gelu")}, {"alpha", 0.5}})[0];
  EXPECT_TRUE(same_bits(y, ref));
}

// The gated (swiglu) packing: same bits as fused_matmul gated=1, for a
// [K, 2H] and a transposed [2H, K] weight, f32 and bf16 (the AVX512_BF16 path
// where present), M = 1 (decode / split-K) and M = 37, any thread count.
TEST(Gemm, PackedGatedMatchesFusedMatmul) {
  for (DType t : {DType::f32, DType::bf16})
    for (int64_t M : {1, 37}) {
      const int64_t K = 300, H = 45;
      Tensor x32 = rand_tensor({M, K}, 8), w32 = rand_tensor({K, 2 * H}, 9),
             b32 = rand_tensor({2 * H}, 10);
      Tensor wt32 = Tensor::empty({2 * H, K}, DType::f32);
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < 2 * H; ++j)
          wt32.data_as<float>()[j * K + k] = w32.data_as<float>()[k * 2 * H + j];
      auto cvt = [&](const Tensor& s) {
        Tensor d = Tensor::empty(s.shape(), t);
        copy_into(s, d);
        return d;
      };
      Tensor x = cvt(x32), w = cvt(w32), wt = cvt(wt32), b = cvt(b32);
      Tensor ref = call("fused_matmul", {x, w, b},
                        {{"activation", std::string("silu")}, {"gated", int64_t{1}}})[0];
      ASSERT_EQ(ref.shape(), (Shape{M, H}));
      MatmulEpilogue ep;
      ep.bias = &b;
      ep.activation = "silu";
      for (bool transposed : {false, true}) {
        PackedMatrix pw = pack_matrix(transposed ? wt : w, transposed, /*gated=*/true);
        EXPECT_TRUE(pw.gated());
        Tensor y = Tensor::zeros({M, H}, t);
        matmul_packed(x, pw, y, ep);
        EXPECT_TRUE(same_bits(y, ref)) << dtype_name(t) << " M=" << M << " T=" << transposed;
        const int saved = num_threads();
        set_num_threads(1);
        Tensor y1 = Tensor::zeros({M, H}, t);
        matmul_packed(x, pw, y1, ep);
        set_num_threads(saved);
        EXPECT_TRUE(same_bits(y, y1));
      }
    }
  EXPECT_THROW(pack_matrix(rand_tensor({4, 7}, 1), false, true), Error);  // odd N
}

// Decode on packed weights (M <= 16): A is read in place (bf16 / f16 A
// converted once), its rows run as groups of at most MR rows over each K-block
// of B. Every row is the blocked path's FMA sequence: the M rows give the same
// bits as the first M rows of a 40-row call, on every kernel, for 1 and 2
// threads; with few panels and several K-blocks (N = 40, K = 700) the K-blocks
// run as split-K tasks.
TEST(Gemm, DecodeRowGroupsMatchTheBlockedPath) {
  for (DType dt : {DType::f32, DType::bf16, DType::f16})
    for (int64_t N : {40, 300}) {
      const int64_t K = 700;
      Tensor x40 = Tensor::empty({40, K}, dt), w = Tensor::empty({K, N}, dt);
      copy_into(rand_tensor({40, K}, 11), x40);
      copy_into(rand_tensor({K, N}, 12), w);
      for (const KernelDesc& k : Registry::global().kernels("matmul")) {
        if (k.isa > active_isa() || (k.cpu_ok && !k.cpu_ok()) ||
            k.name.find("_ref_") != std::string::npos)
          continue;
        Op big = Op::create("matmul", {x40.desc(), TensorDesc::constant(w)}, {}, k.name);
        std::vector<Tensor> ins{x40, Tensor()};
        const Tensor want = big(ins)[0];
        for (int64_t M : {1, 2, 5, 7, 8, 13, 15, 16}) {
          SCOPED_TRACE(k.name + " " + dtype_name(dt) + " M=" + std::to_string(M) +
                       " N=" + std::to_string(N));
          Tensor x = Tensor::empty({M, K}, dt);
          std::memcpy(x.data(), x40.data(), x.nbytes());
          Op small = Op::create("matmul", {x.desc(), TensorDesc::constant(w)}, {}, k.name);
          std::vector<Tensor> sins{x, Tensor()};
          for (int threads : {1, 2}) {
            const int saved = num_threads();
            set_num_threads(threads);
            const Tensor got = small(sins)[0];
            set_num_threads(saved);
            EXPECT_EQ(std::memcmp(got.data(), want.data(), got.nbytes()), 0) << threads;
          }
        }
      }
    }
}

// A bf16 output with nothing to apply is rounded and stored by the kernel on
// its last K-block; with a bias (of zeros) the epilogue does it after the
// f32 tile. The same bits, at decode and blocked sizes, 1 and 2 threads.
TEST(Gemm, Bf16OutputFromTheKernelMatchesTheEpilogue) {
  const int64_t K = 700;
  for (int64_t N : {40, 300})
    for (int64_t M : {5, 40, 97}) {
      SCOPED_TRACE("M=" + std::to_string(M) + " N=" + std::to_string(N));
      Tensor x = Tensor::empty({M, K}, DType::bf16), w = Tensor::empty({K, N}, DType::bf16);
      copy_into(rand_tensor({M, K}, 21), x);
      copy_into(rand_tensor({K, N}, 22), w);
      const PackedMatrix pb = pack_matrix(w);
      const Tensor zeros = Tensor::zeros({N}, DType::bf16);
      MatmulEpilogue with_bias;
      with_bias.bias = &zeros;
      Tensor want = Tensor::empty({M, N}, DType::bf16);
      matmul_packed(x, pb, want, with_bias);
      for (int threads : {1, 2}) {
        const int saved = num_threads();
        set_num_threads(threads);
        Tensor got = Tensor::empty({M, N}, DType::bf16);
        matmul_packed(x, pb, got);
        set_num_threads(saved);
        EXPECT_TRUE(same_bits(got, want)) << threads;
      }
    }
}

// A weight given as a constant operand is packed once at create: no
// workspace, the same bits as the op packing it per call, on every kernel.
TEST(Gemm, ConstantWeightIsPackedAtCreateWithTheSameBits) {
  struct Case {
    const char* op;
    Shape x, w;
    Attrs attrs;
  };
  const std::vector<Case> cases = {
      {"matmul", {1, 257}, {257, 300}, {}},
      {"matmul", {3, 37, 100}, {100, 129}, {}},
      {"linear", {37, 100}, {65, 100}, {}},
      {"fused_matmul", {20, 64}, {64, 48}, {{"activation", std::string("gelu")}}},
      {"gemm", {30, 40}, {50, 40}, {{"transB", int64_t{1}}}},
      // Above the decode range the per-call form stages B panel by panel from
      // the tensor (gemm::run_staged_b): several K-blocks, N and K tails.
      {"matmul", {70, 600}, {600, 77}, {}},
      {"linear", {50, 601}, {83, 601}, {}},
  };
  for (const Case& c : cases)
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      SCOPED_TRACE(std::string(c.op) + " " + dtype_name(dt));
      Tensor x = Tensor::empty(c.x, dt), w = Tensor::empty(c.w, dt);
      copy_into(rand_tensor(c.x, 4), x);
      copy_into(rand_tensor(c.w, 5), w);
      for (const KernelDesc& k : Registry::global().kernels(c.op)) {
        if (k.isa > active_isa() || (k.cpu_ok && !k.cpu_ok())) continue;
        Op per_call = Op::create(c.op, {x.desc(), w.desc()}, c.attrs, k.name);
        Op packed = Op::create(c.op, {x.desc(), TensorDesc::constant(w)}, c.attrs, k.name);
        // Above M = 16 the per-call form stages B panel by panel, or packs it
        // into its workspace (bf16 weights on vdpbf16ps): never less
        // workspace than the packed form's engine scratch. (At M <= 16 it
        // reads B in place with no engine scratch.)
        const int64_t m = c.x[c.x.size() - 2];
        if (k.name.find("_ref_") == std::string::npos && m > 16) {
          EXPECT_LE(packed.workspace_bytes(), per_call.workspace_bytes());
        }
        Tensor want = per_call({x, w})[0];
        Tensor got = Tensor::empty(want.shape(), want.dtype());
        std::vector<Tensor> ins{x, Tensor()};
        Tensor ws = Tensor::empty({static_cast<int64_t>(packed.workspace_bytes())}, DType::u8);
        packed.run(ins, {&got, 1}, {static_cast<std::byte*>(ws.data()), packed.workspace_bytes()});
        EXPECT_TRUE(same_bits(want, got)) << k.name;
      }
    }
}

// Above the decode range the op form on a plain f32 weight stages B panel by
// panel instead of packing a copy per call: its workspace holds no B.
TEST(Gemm, OpFormAboveDecodeHoldsNoCopyOfB) {
  const int64_t M = 64, N = 2048, K = 2048;
  const size_t b_bytes = static_cast<size_t>(N * K) * sizeof(float);
  const Tensor x = rand_tensor({M, K}, 7), w = rand_tensor({K, N}, 8), wt = rand_tensor({N, K}, 9);
  for (const Op& op :
       {Op::create("matmul", {x.desc(), w.desc()}), Op::create("linear", {x.desc(), wt.desc()})}) {
    EXPECT_LT(op.workspace_bytes(), b_bytes / 4);
  }
}

TEST(Gemm, ClearErrors) {
  Tensor w = rand_tensor({8, 4}, 1);
  PackedMatrix pw = pack_matrix(w);
  Tensor x = rand_tensor({3, 5}, 2), y = Tensor::zeros({3, 4}, DType::f32);
  EXPECT_THROW(matmul_packed(x, pw, y), Error);
  EXPECT_THROW(matmul_packed(x, PackedMatrix(), y), Error);
  EXPECT_THROW(pack_matrix(rand_tensor({2, 3, 4}, 1)), Error);
  try {
    call("matmul", {rand_tensor({3, 5}, 1), rand_tensor({4, 6}, 2)});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matmul: input 'b'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(
      call("gemm", {rand_tensor({3, 5}, 1), rand_tensor({5, 6}, 2), rand_tensor({2, 6}, 3)}),
      Error);
  EXPECT_THROW(call("linear", {rand_tensor({3, 5}, 1), rand_tensor({6, 4}, 2)}), Error);
  EXPECT_THROW(call("fused_matmul", {rand_tensor({3, 5}, 1), rand_tensor({5, 6}, 2)},
                    {{"activation", std::string("tanhh")}}),
               Error);
}

TEST(Gemm, EveryMicrokernelAndBlockingAgrees) {
  // A 1000-long reduction on every registered matmul kernel: within tolerance
  // of each other (different kc gives different rounding, not different math).
  Tensor a = rand_tensor({65, 1000}, 8), b = rand_tensor({1000, 63}, 9);
  Tensor ref = call("matmul", {a, b})[0];
  for (const KernelDesc& k : Registry::global().kernels("matmul")) {
    if (k.isa > active_isa()) continue;
    Op o = Op::create("matmul", {a.desc(), b.desc()}, {}, k.name);
    Tensor y = o({a, b})[0];
    for (int64_t i = 0; i < y.numel(); ++i)
      ASSERT_NEAR(y.data_as<float>()[i], ref.data_as<float>()[i], 2e-4) << k.name << " at " << i;
  }
}

// The op form on a plain (unpacked) weight at decode sizes reads B in place
// (gemm_unpacked.h): M = 1..17 (17 packs B), odd N and K, B row-major,
// transposed (a linear weight, matmul on a permuted view) and row-strided
// (also at a 4 KiB stride), A row-strided, the epilogues (bias, activation,
// alpha, residual, gated), f32 / bf16 / f16, every kernel (so every ISA the
// CPU has): within the per-dtype tolerance (scaled by sqrt(K) for f32) of
// the float64 reference kernel, and the same bits with 1 and 2 threads.
TEST(Gemm, UnpackedWeightsMatchReference) {
  struct Case {
    std::string op;
    std::vector<Tensor> in;  // f32 values, converted per dtype (views kept)
    Attrs attrs;
    int64_t K;
  };
  std::vector<Case> cases;
  for (int64_t M = 1; M <= 17; ++M) {
    const int64_t N = 17 + 9 * M, K = 3 + 23 * M;  // 26..170, 26..394: odd and even, tails
    const Tensor x = rand_tensor({M, K}, 10 + M), w = rand_tensor({K, N}, 20 + M),
                 wt = rand_tensor({N, K}, 30 + M), b = rand_tensor({N}, 40 + M),
                 r = rand_tensor({M, N}, 50 + M);
    const Tensor xs = rand_tensor({2 * M, K}, 60 + M).slice(0, 0, 2 * M, 2);  // row-strided A
    const Tensor ws = rand_tensor({K, N + 5}, 70 + M).slice(1, 0, N);         // row-strided B
    // A row stride of 4 KiB in f32 (2 KiB in 16-bit): the strip's rows share
    // L1 sets, and the row groups after the first read the strip's buffer.
    const Tensor wa = rand_tensor({K, 1024}, 110 + M).slice(1, 0, N);
    const Tensor wg = rand_tensor({K, 2 * N}, 80 + M), bg = rand_tensor({2 * N}, 90 + M);
    cases.push_back({"matmul", {x, w}, {}, K});
    cases.push_back({"matmul", {xs, ws}, {}, K});
    cases.push_back({"matmul", {x, wa}, {}, K});
    cases.push_back({"matmul", {x, wt.permute({1, 0})}, {}, K});
    cases.push_back({"linear", {xs, wt, b}, {}, K});
    cases.push_back({"gemm", {x, wt, b}, {{"transB", int64_t{1}}, {"alpha", 0.5}}, K});
    cases.push_back({"fused_matmul",
                     {x, w, b, r},
                     {{"activation", std::string(M % 2 ? "gelu" : "silu")}, {"alpha", 0.75}},
                     K});
    cases.push_back({"fused_matmul",
                     {x, wg, bg},
                     {{"activation", std::string("silu")}, {"gated", int64_t{1}}},
                     K});
    cases.push_back({"fused_matmul",
                     {xs, rand_tensor({2 * N, K}, 100 + M).permute({1, 0})},
                     {{"activation", std::string("gelu")}, {"gated", int64_t{1}}},
                     K});
  }
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    const Tolerance tol = default_tolerance(dt);
    for (const Case& c : cases) {
      std::vector<Tensor> in, keep;
      for (const Tensor& t : c.in) {
        if (t.is_contiguous()) {
          Tensor d = Tensor::empty(t.shape(), dt);
          copy_into(t, d);
          in.push_back(d);
          continue;
        }
        // A view: the same strides over a buffer of dt.
        int64_t span = 1;
        for (size_t i = 0; i < t.shape().size(); ++i) span += (t.shape()[i] - 1) * t.strides()[i];
        keep.push_back(Tensor::zeros({span}, dt));
        Tensor v = Tensor::wrap(keep.back().data(), t.shape(), dt, t.strides());
        copy_into(t, v);
        in.push_back(v);
      }
      std::vector<TensorDesc> descs;
      for (const Tensor& t : in) descs.push_back(t.desc());
      const KernelDesc* ref_k = nullptr;
      for (const KernelDesc& k : Registry::global().kernels(c.op))
        if (k.name.find("_ref_") != std::string::npos) ref_k = &k;
      ASSERT_NE(ref_k, nullptr);
      const Tensor want = Op::create(c.op, descs, c.attrs, ref_k->name)(in)[0];
      // f32: the accumulation order's error grows with K. 16-bit: the inputs'
      // products are exact in f32 and the output rounding dominates.
      const double scale =
          dt == DType::f32 ? std::max(1.0, std::sqrt(static_cast<double>(c.K))) : 1.0;
      for (const KernelDesc& k : Registry::global().kernels(c.op)) {
        if (k.isa > active_isa() || (k.cpu_ok && !k.cpu_ok()) || &k == ref_k) continue;
        SCOPED_TRACE(c.op + " " + k.name + " " + dtype_name(dt) + " " + shape_str(in[0].shape()) +
                     "x" + shape_str(in[1].shape()));
        const Op op = Op::create(c.op, descs, c.attrs, k.name);
        const Tensor got = op(in)[0];
        Tensor w32 = Tensor::empty(want.shape(), DType::f32),
               g32 = Tensor::empty(want.shape(), DType::f32);
        copy_into(want, w32);
        copy_into(got, g32);
        int bad = 0;
        for (int64_t i = 0; i < w32.numel() && bad < 3; ++i) {
          const double e = w32.data_as<float>()[i], g = g32.data_as<float>()[i];
          if (!(std::abs(g - e) <= (tol.atol + tol.rtol * std::abs(e)) * scale)) {
            ADD_FAILURE() << "at " << i << ": " << g << " vs " << e;
            ++bad;
          }
        }
        const int saved = num_threads();
        set_num_threads(saved == 1 ? 2 : 1);
        const Tensor other = op(in)[0];
        set_num_threads(saved);
        EXPECT_TRUE(same_bits(got, other));
      }
    }
  }
}

}  // namespace
}  // namespace opsnn
