// The matmul family: matmul (NumPy), batch_matmul, gemm (ONNX), linear and
// fused_matmul (matmul + bias/activation/residual epilogue), all on the GEMM
// engine in src/kernels/gemm/. Schemas, float64 references and case tables.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/act/act.h"
#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/matmul/matmul/matmul_plan.h"
#include "opsnn/error.h"
#include "opsnn/gemm.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

using matmul::Plan;

constexpr int64_t kSizes[] = {1, 7, 15, 16, 17, 63, 64, 65, 255, 1000};

// OPSNN_CHECK_FULL=1: the full M x N x K cartesian product of kSizes (what
// `opsnn check --op matmul` is meant to run). Otherwise a reduced table that
// still hits every size in every dim (the test suite runs it for every
// kernel x dtype x forced ISA, and under ASan).
bool full_table() {
  const char* e = std::getenv("OPSNN_CHECK_FULL");
  return e && std::string(e) == "1";
}

// tolerance grows with the reduction length
double tol_for_k(int64_t k) { return std::max(1.0, std::sqrt(static_cast<double>(k))); }

const ValueRange kRange{-1, 1};

// ---- float64 references ---------------------------------------------------------
// NumPy matmul of two contiguous tensors (1-D promoted), with batch broadcast.
void ref_matmul(const RefTensor& a, const RefTensor& b, RefTensor& out) {
  Shape as = a.shape, bs = b.shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  const size_t ra = as.size() - 2, rb = bs.size() - 2, r = std::max(ra, rb);
  Shape batch(r);
  for (size_t d = 0; d < r; ++d) {
    const int64_t da = d < r - ra ? 1 : as[d - (r - ra)];
    const int64_t db = d < r - rb ? 1 : bs[d - (r - rb)];
    batch[d] = std::max(da, db);
  }
  int64_t nbatch = 1;
  for (int64_t d : batch) nbatch *= d;
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    // Decompose bi into the batch index; map to a and b with broadcasting.
    int64_t rem = bi, ia = 0, ib = 0, sa = 1, sb = 1;
    for (size_t d = r; d-- > 0;) {
      const int64_t i = rem % batch[d];
      rem /= batch[d];
      if (d >= r - ra) {
        const int64_t da = as[d - (r - ra)];
        ia += (da == 1 ? 0 : i) * sa;
        sa *= da;
      }
      if (d >= r - rb) {
        const int64_t db = bs[d - (r - rb)];
        ib += (db == 1 ? 0 : i) * sb;
        sb *= db;
      }
    }
    const double* pa = a.data.data() + ia * M * K;
    const double* pb = b.data.data() + ib * K * N;
    double* po = out.data.data() + bi * M * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += pa[i * K + k] * pb[k * N + j];
        po[i * N + j] = s;
      }
  }
}

// Value of `t` broadcast (NumPy, right-aligned) to an element of `shape` at flat index `flat`.
double broadcast_at(const RefTensor& t, const Shape& shape, int64_t flat) {
  int64_t off = 0, stride = 1;
  const size_t r = shape.size(), rt = t.shape.size();
  for (size_t d = r; d-- > 0;) {
    const int64_t i = flat % shape[d];
    flat /= shape[d];
    if (d >= r - rt) {
      const int64_t dt = t.shape[d - (r - rt)];
      off += (dt == 1 ? 0 : i) * stride;
      stride *= dt;
    }
  }
  return t.data[static_cast<size_t>(off)];
}

// ---- shape inference helpers ------------------------------------------------------------
Shape matmul_shape(const OpCall& call, size_t ia, size_t ib) {
  const TensorDesc &a = call.in(ia), &b = call.in(ib);
  ops::require_float(call, ia);
  ops::require_same_dtype(call, ib, ia);
  ops::require_rank_at_least(call, ia, 1);
  ops::require_rank_at_least(call, ib, 1);
  const int64_t K = a.shape.back();
  const int64_t Kb = b.rank() == 1 ? b.shape[0] : b.shape[b.shape.size() - 2];
  if (K != Kb)
    call.fail(ops::input_name(call, ib),
              std::string(b.rank() == 1 ? "dim 0" : "dim -2") + " = " + std::to_string(K) +
                  " (the last dim of " + ops::input_name(call, ia) + ")",
              std::to_string(Kb) + " in " + shape_str(b.shape));
  Shape ba(a.shape.begin(), a.shape.end() - std::min<int64_t>(a.rank(), 2));
  Shape bb(b.shape.begin(), b.shape.end() - std::min<int64_t>(b.rank(), 2));
  Shape out = ops::broadcast_shapes(call, ba, bb);
  if (a.rank() >= 2) out.push_back(a.shape[a.shape.size() - 2]);
  if (b.rank() >= 2) out.push_back(b.shape.back());
  return out;
}

// Plan for out = a @ b (NumPy) with inputs ia, ib.
Plan matmul_plan(const OpCall& call, int ia, int ib) {
  const TensorDesc &a = call.in(ia), &b = call.in(ib);
  const Strides &sa = a.effective_strides(), &sb = b.effective_strides();
  Plan p;
  p.K = a.shape.back();
  p.M = a.rank() >= 2 ? a.shape[a.shape.size() - 2] : 1;
  p.N = b.rank() >= 2 ? b.shape.back() : 1;
  Shape ba(a.shape.begin(), a.shape.end() - std::min<int64_t>(a.rank(), 2));
  Shape bb(b.shape.begin(), b.shape.end() - std::min<int64_t>(b.rank(), 2));
  const size_t r = std::max(ba.size(), bb.size());
  p.batch.assign(r, 1);
  for (size_t d = 0; d < r; ++d) {
    const int64_t da = d < r - ba.size() ? 1 : ba[d - (r - ba.size())];
    const int64_t db = d < r - bb.size() ? 1 : bb[d - (r - bb.size())];
    p.batch[d] = std::max(da, db);
    if (da == 0 || db == 0) p.batch[d] = 0;
  }
  p.a.input = ia;
  p.a.cs = sa.back();
  p.a.rs = a.rank() >= 2 ? sa[sa.size() - 2] : 0;
  p.a.bs =
      matmul::batch_strides(a.shape, sa, static_cast<int>(std::min<int64_t>(a.rank(), 2)), p.batch);
  p.b.input = ib;
  p.b.rs = b.rank() >= 2 ? sb[sb.size() - 2] : sb[0];
  p.b.cs = b.rank() >= 2 ? sb.back() : 0;
  p.b.bs =
      matmul::batch_strides(b.shape, sb, static_cast<int>(std::min<int64_t>(b.rank(), 2)), p.batch);
  return p;
}

// Strides of an epilogue operand `t` broadcast to the output [batch..., M, N]
// (output 1-D/0-D forms are viewed as [.., 1, N] / [.., M, 1]).
matmul::Operand epi_operand(const OpCall& call, int input, const Plan& p) {
  const TensorDesc& t = call.in(input);
  const Strides& st = t.effective_strides();
  matmul::Operand o;
  o.input = input;
  const Shape& out = call.out(0).shape;
  // Expand t's shape to the rank of `out`, then map out's dims onto full's.
  const size_t ro = out.size(), rt = t.shape.size();
  std::vector<int64_t> s_out(ro, 0);
  for (size_t d = 0; d < rt; ++d) {
    const size_t od = ro - rt + d;
    s_out[od] = t.shape[d] == 1 ? 0 : st[d];
  }
  // out dims = batch + [M if present] + [N if present]
  const size_t nb = p.batch.size();
  o.bs.assign(s_out.begin(), s_out.begin() + static_cast<int64_t>(nb));
  // Callers guarantee out = batch + [M, N] here (a and b at least 2-D).
  o.rs = ro >= nb + 2 ? s_out[nb] : 0;
  o.cs = ro >= nb + 1 ? s_out[ro - 1] : 0;
  return o;
}

void require_broadcastable_to(const OpCall& call, size_t i, const Shape& target) {
  const Shape& s = call.in(i).shape;
  bool ok = s.size() <= target.size();
  for (size_t d = 0; ok && d < s.size(); ++d) {
    const int64_t td = target[target.size() - s.size() + d];
    ok = s[d] == 1 || s[d] == td;
  }
  if (!ok)
    call.fail(ops::input_name(call, i), "a shape that broadcasts to " + shape_str(target),
              shape_str(s));
}

std::vector<CheckCase> mnk_cases(DType t, bool full) {
  std::vector<CheckCase> cs;
  auto add = [&](int64_t M, int64_t N, int64_t K) {
    CheckCase c;
    c.name = "m" + std::to_string(M) + "n" + std::to_string(N) + "k" + std::to_string(K);
    c.inputs = {TensorDesc(t, {M, K}), TensorDesc(t, {K, N})};
    c.ranges = {kRange, kRange};
    c.tol_scale = tol_for_k(K);
    cs.push_back(c);
  };
  if (full) {
    for (int64_t M : kSizes)
      for (int64_t N : kSizes)
        for (int64_t K : kSizes) add(M, N, K);
  } else {
    for (int64_t s : kSizes) {
      add(s, 17, 16);
      add(16, s, 17);
      add(17, 33, s);
    }
    add(64, 64, 64);
    add(65, 63, 255);
    add(1, 1000, 65);
    add(7, 1000, 64);
    add(3, 5, 0);
    add(0, 5, 3);
  }
  return cs;
}

// ---- matmul ---------------------------------------------------------------------
// The bench case of the matmul family: `--case m=..,n=..,k=..[,batch=..]`
// (a [batch,] M x K, b [batch,] K x (b_cols_per_n * N)); the keys are taken
// from `keys`, the caller adds its own and calls keys.done().
CheckCase mnk_bench_case(ops::CaseKeys& keys, DType t, int64_t b_cols_per_n) {
  const int64_t M = keys.i("m", 512), N = keys.i("n", 512), K = keys.i("k", 512),
                B = keys.i("batch", 1);
  const int64_t NB = N * b_cols_per_n;
  CheckCase c;
  c.name = "bench";
  c.inputs = B > 1 ? std::vector<TensorDesc>{TensorDesc(t, {B, M, K}), TensorDesc(t, {B, K, NB})}
                   : std::vector<TensorDesc>{TensorDesc(t, {M, K}), TensorDesc(t, {K, NB})};
  c.ranges = {kRange, kRange};
  return c;
}

// 2 * batch * M * N * K flops of plan p (N = b's columns, so a gated
// fused_matmul counts both halves); bytes: every input (bias, residual
// included) and the output.
void plan_cost(const OpCall& call, const Plan& p, double* bytes, double* flops) {
  double nb = 1;
  for (int64_t d : p.batch) nb *= static_cast<double>(d);
  *flops =
      2.0 * nb * static_cast<double>(p.M) * static_cast<double>(p.N) * static_cast<double>(p.K);
  double b =
      static_cast<double>(call.out(0).numel()) * static_cast<double>(dtype_size(call.out(0).dtype));
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (call.has_input(i))
      b += static_cast<double>(call.in(i).numel()) *
           static_cast<double>(dtype_size(call.in(i).dtype));
  *bytes = b;
}

// `packed=1` of the GEMM ops: y = a @ w (w packed, transposed for linear)
// (+ bias when defined) through matmul_packed, cycling the packed copies.
PackedBench packed_bench(const Tensor& a, const Tensor& w, bool transposed, const Tensor& bias,
                         const Tensor& y) {
  auto pws = bench_packed_copies([&] { return pack_matrix(w, transposed); });
  PackedBench pb;
  pb.kernel = "matmul_packed(" + pws->front().kernel() + ")";
  pb.run = [pws, a, y = y, bias, next = size_t{0}]() mutable {
    MatmulEpilogue ep;
    if (bias.defined()) ep.bias = &bias;
    matmul_packed(a, (*pws)[next++ % pws->size()], y, ep);
  };
  return pb;
}

void mnk_cost(const OpCall& call, double* bytes, double* flops) {
  plan_cost(call, matmul_plan(call, 0, 1), bytes, flops);
}

void add_matmul(Registry& r) {
  OpSchema s;
  s.name = "matmul";
  s.family = "matmul";
  s.doc =
      "NumPy matmul: a[..., M, K] @ b[..., K, N] with broadcast batch dims; 1-D operands are "
      "promoted and the "
      "promoted dim removed";
  s.inputs = {{"a", "[..., M, K] or [K]"},
              {.name = "b", .doc = "[..., K, N] or [K]", .weight = true}};
  s.outputs = {{"y", "[broadcast(batch), M, N]"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    return std::vector<TensorDesc>{TensorDesc(call.in(0).dtype, matmul_shape(call, 0, 1))};
  };
  s.reference = [](const OpCall&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    ref_matmul(in[0], in[1], out[0]);
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs = mnk_cases(t, full_table());
    auto add = [&](std::string name, TensorDesc a, TensorDesc b, int64_t K) {
      cs.push_back(
          {std::move(name), {std::move(a), std::move(b)}, {}, {kRange, kRange}, tol_for_k(K)});
    };
    add("batch[2,1,7,15]x[3,15,17]", TensorDesc(t, {2, 1, 7, 15}), TensorDesc(t, {3, 15, 17}), 15);
    add("batch[4,33,65]x[65,20]", TensorDesc(t, {4, 33, 65}), TensorDesc(t, {65, 20}), 65);
    add("batch[17,40]x[2,40,33]", TensorDesc(t, {17, 40}), TensorDesc(t, {2, 40, 33}), 40);
    add("vec[15]x[15,17]", TensorDesc(t, {15}), TensorDesc(t, {15, 17}), 15);
    add("[7,15]xvec[15]", TensorDesc(t, {7, 15}), TensorDesc(t, {15}), 15);
    add("vec[33]xvec[33]", TensorDesc(t, {33}), TensorDesc(t, {33}), 33);
    add("aT[33,65]x[65,17]", ops::transposed_desc(t, 33, 65), TensorDesc(t, {65, 17}), 65);
    add("[20,65]xbT[65,47]", TensorDesc(t, {20, 65}), ops::transposed_desc(t, 65, 47), 65);
    add("aT[70,40]xbT[40,90]", ops::transposed_desc(t, 70, 40), ops::transposed_desc(t, 40, 90),
        40);
    // Row-strided (every other row of a wider buffer) and a strided batch.
    add("rowstrided[9,20]x[20,31]", TensorDesc(t, {9, 20}, {40, 1}),
        TensorDesc(t, {20, 31}, {64, 1}), 20);
    add("batchstrided[3,5,8]x[3,8,6]", TensorDesc(t, {3, 5, 8}, {1, 3, 15}),
        TensorDesc(t, {3, 8, 6}), 8);
    // Small M, few N panels, long K: split-K across threads (bit-identical to
    // the unsplit path; ops_test compares 1 vs 2 threads).
    add("splitk[1,4096]x[4096,16]", TensorDesc(t, {1, 4096}), TensorDesc(t, {4096, 16}), 4096);
    add("splitk[7,2000]x[2000,40]", TensorDesc(t, {7, 2000}), TensorDesc(t, {2000, 40}), 2000);
    add("splitk[14,1000]x[1000,100]", TensorDesc(t, {14, 1000}), TensorDesc(t, {1000, 100}), 1000);
    return cs;
  };
  s.tolerance = default_tolerance;
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    ops::CaseKeys keys("matmul", kv);
    CheckCase c = mnk_bench_case(keys, t, 1);
    keys.done();
    return c;
  };
  s.cost = &mnk_cost;
  s.bench_packed = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Attrs&) {
    if (in[1].rank() != 2)
      throw Error("bench", "--case packed=1", "a 2-D B (batch=1)", shape_str(in[1].shape()));
    return packed_bench(in[0], in[1], /*transposed=*/false, Tensor(), out[0]);
  };
  r.add_op(std::move(s));
  matmul::register_gemm_kernels(r, "matmul",
                                [](const OpCall& call) { return matmul_plan(call, 0, 1); });
}

// ---- batch_matmul ------------------------------------------------------------------
void add_batch_matmul(Registry& r) {
  OpSchema s;
  s.name = "batch_matmul";
  s.family = "matmul";
  s.doc = "a[B, M, K] @ b[B, K, N] -> [B, M, N] (a batch dim of 1 broadcasts)";
  s.inputs = {{"a", "[B, M, K]"}, {"b", "[B, K, N]"}};
  s.outputs = {{"y", "[B, M, N]"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    ops::require_rank(call, 0, 3);
    ops::require_rank(call, 1, 3);
    return std::vector<TensorDesc>{TensorDesc(call.in(0).dtype, matmul_shape(call, 0, 1))};
  };
  s.reference = [](const OpCall&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    ref_matmul(in[0], in[1], out[0]);
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc a, TensorDesc b, int64_t K) {
      cs.push_back(
          {std::move(name), {std::move(a), std::move(b)}, {}, {kRange, kRange}, tol_for_k(K)});
    };
    add("[3,17,15]x[3,15,33]", TensorDesc(t, {3, 17, 15}), TensorDesc(t, {3, 15, 33}), 15);
    add("[1,17,64]x[4,64,16]", TensorDesc(t, {1, 17, 64}), TensorDesc(t, {4, 64, 16}), 64);
    add("[5,1,65]x[5,65,63]", TensorDesc(t, {5, 1, 65}), TensorDesc(t, {5, 65, 63}), 65);
    add("[2,0,4]x[2,4,3]", TensorDesc(t, {2, 0, 4}), TensorDesc(t, {2, 4, 3}), 4);
    add("[2,7,9]^Tx[2,9,5]", TensorDesc(t, {2, 7, 9}, {63, 1, 7}), TensorDesc(t, {2, 9, 5}), 9);
    // Many small matrices (batch-parallel: one GEMM per task) and one batch
    // above the batch-parallel threshold (each GEMM split over the threads).
    add("[16,64,64]x[16,64,64]", TensorDesc(t, {16, 64, 64}), TensorDesc(t, {16, 64, 64}), 64);
    add("[9,7,100]x[1,100,33]", TensorDesc(t, {9, 7, 100}), TensorDesc(t, {1, 100, 33}), 100);
    add("[2,200,130]x[2,130,170]", TensorDesc(t, {2, 200, 130}), TensorDesc(t, {2, 130, 170}), 130);
    return cs;
  };
  s.tolerance = default_tolerance;
  r.add_op(std::move(s));
  matmul::register_gemm_kernels(r, "batch_matmul",
                                [](const OpCall& call) { return matmul_plan(call, 0, 1); });
}

// ---- fused_matmul ------------------------------------------------------------------
Plan fused_plan(const OpCall& call) {
  Plan p = matmul_plan(call, 0, 1);
  p.alpha = static_cast<float>(call.attrs.f("alpha"));
  p.act = act::from_name(call.op(), call.attrs.s("activation"));
  p.gated = call.attrs.i("gated") != 0;
  if (call.has_input(2)) {
    const Strides& st = call.in(2).effective_strides();
    p.add.input = 2;
    p.add.rs = 0;
    p.add.cs = call.in(2).shape[0] == 1 ? 0 : st[0];
    p.add.bs.assign(p.batch.size(), 0);
  }
  if (call.has_input(3)) p.res = epi_operand(call, 3, p);
  return p;
}

void add_fused_matmul(Registry& r) {
  OpSchema s;
  s.name = "fused_matmul";
  s.family = "matmul";
  s.doc =
      "y = act(alpha * (a @ b) + bias) + residual, the epilogue applied to each output tile while "
      "it is in cache (matmul semantics for a and b; a and b at least 2-D). gated=1 (swiglu with "
      "activation=silu, geglu with gelu): b has N = 2H columns, gate = columns [0, H), value = "
      "columns [H, 2H); z = alpha * (a @ b) + bias (bias has N = 2H entries), "
      "y[..., j] = act(z[..., j]) * z[..., H + j] + residual, y has H columns; computed in-tile "
      "(the packing pairs gate and value columns in each panel)";
  s.inputs = {{"a", "[..., M, K]"},
              {.name = "b", .doc = "[..., K, N]", .weight = true},
              {"bias", "[N] (optional)", true},
              {"residual", "broadcastable to y (optional)", true}};
  s.outputs = {{"y", "[..., M, N] ([..., M, N/2] if gated)"}};
  s.attrs = {{"activation", AttrType::str, std::string("none"), "none|relu|gelu|gelu_tanh|silu"},
             {"alpha", AttrType::f64, 1.0, "scale of a @ b"},
             {"gated", AttrType::i64, int64_t{0},
              "1: gated output act(gate) * value, gate = b[..., :N/2], value = b[..., N/2:]"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    ops::require_rank_at_least(call, 0, 2);
    ops::require_rank_at_least(call, 1, 2);
    Shape out = matmul_shape(call, 0, 1);
    (void)act::from_name(call.op(), call.attrs.s("activation"));
    const int64_t g = call.attrs.i("gated");
    if (g != 0 && g != 1) call.fail("attribute 'gated'", "0 or 1", std::to_string(g));
    const int64_t nb = out.back();  // b's columns (bias length)
    if (g && nb % 2 != 0)
      call.fail("input 'b'", "an even number of columns (gate | value) when gated",
                std::to_string(nb) + " in " + shape_str(call.in(1).shape));
    if (call.has_input(2)) {
      ops::require_same_dtype(call, 2, 0);
      ops::require_rank(call, 2, 1);
      if (call.in(2).shape[0] != nb && call.in(2).shape[0] != 1)
        call.fail("input 'bias'", "shape [" + std::to_string(nb) + "]",
                  shape_str(call.in(2).shape));
    }
    if (g) out.back() = nb / 2;
    if (call.has_input(3)) {
      ops::require_same_dtype(call, 3, 0);
      require_broadcastable_to(call, 3, out);
    }
    return std::vector<TensorDesc>{TensorDesc(call.in(0).dtype, out)};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in,
                   std::vector<RefTensor>& out) {
    const double alpha = call.attrs.f("alpha");
    const gemm::Act act = act::from_name(call.op(), call.attrs.s("activation"));
    const Shape& os = out[0].shape;
    const bool gated = call.attrs.i("gated") != 0;
    // z = alpha * (a @ b) + bias over all of b's columns.
    RefTensor z;
    z.shape = os;
    if (gated) z.shape.back() *= 2;
    z.data.assign(static_cast<size_t>(shape_numel(z.shape)), 0.0);
    ref_matmul(in[0], in[1], z);
    const size_t NB = static_cast<size_t>(z.shape.back());
    for (size_t i = 0; i < z.data.size(); ++i) {
      z.data[i] *= alpha;
      if (call.has_input(2)) z.data[i] += in[2].data[in[2].data.size() == 1 ? 0 : i % NB];
    }
    const size_t N = static_cast<size_t>(os.back());
    for (size_t i = 0; i < out[0].data.size(); ++i) {
      double v;
      if (gated) {
        const size_t row = i / N, j = i % N;
        v = act::reference(act, z.data[row * NB + j]) * z.data[row * NB + N + j];
      } else {
        v = act::reference(act, z.data[i]);
      }
      if (call.has_input(3)) v += broadcast_at(in[3], os, static_cast<int64_t>(i));
      out[0].data[i] = v;
    }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    const Shape a = {33, 65}, b = {65, 47};
    const char* acts[] = {"none", "relu", "gelu", "gelu_tanh", "silu"};
    for (const char* act : acts) {
      cs.push_back({std::string(act) + "+bias",
                    {TensorDesc(t, a), TensorDesc(t, b), TensorDesc(t, {47})},
                    {{"activation", std::string(act)}},
                    {kRange, kRange, kRange},
                    tol_for_k(65)});
    }
    cs.push_back(
        {"bias+residual",
         {TensorDesc(t, a), TensorDesc(t, b), TensorDesc(t, {47}), TensorDesc(t, {33, 47})},
         {{"activation", std::string("gelu")}, {"alpha", 0.5}},
         {kRange, kRange, kRange, kRange},
         tol_for_k(65)});
    cs.push_back({"residual-only-batch",
                  {TensorDesc(t, {2, 17, 16}), TensorDesc(t, {16, 40}), TensorDesc::none(),
                   TensorDesc(t, {2, 17, 40})},
                  {{"activation", std::string("silu")}},
                  {kRange, kRange, kRange, kRange},
                  tol_for_k(16)});
    cs.push_back({"residual-bcast-row",
                  {TensorDesc(t, {7, 64}), TensorDesc(t, {64, 1000}), TensorDesc(t, {1000}),
                   TensorDesc(t, {1, 1000})},
                  {{"activation", std::string("relu")}, {"alpha", 2.0}},
                  {kRange, kRange, kRange, kRange},
                  tol_for_k(64)});
    cs.push_back({"decode-m1",
                  {TensorDesc(t, {1, 255}), TensorDesc(t, {255, 63}), TensorDesc(t, {63})},
                  {{"activation", std::string("gelu_tanh")}},
                  {kRange, kRange, kRange},
                  tol_for_k(255)});
    cs.push_back({"k0",
                  {TensorDesc(t, {5, 0}), TensorDesc(t, {0, 9}), TensorDesc(t, {9})},
                  {{"activation", std::string("silu")}},
                  {kRange, kRange, kRange},
                  1});
    cs.push_back({"strided-a",
                  {ops::transposed_desc(t, 20, 33), TensorDesc(t, {33, 18}), TensorDesc(t, {18})},
                  {{"activation", std::string("relu")}},
                  {kRange, kRange, kRange},
                  tol_for_k(33)});
    // Gated (swiglu = silu, geglu = gelu): H = 47 (not a panel multiple), H = 7
    // (less than half a panel), decode, batch + residual, transposed b, K = 0.
    cs.push_back({"swiglu+bias",
                  {TensorDesc(t, a), TensorDesc(t, {65, 94}), TensorDesc(t, {94})},
                  {{"activation", std::string("silu")}, {"gated", int64_t{1}}},
                  {kRange, kRange, kRange},
                  tol_for_k(65)});
    cs.push_back({"swiglu-h7",
                  {TensorDesc(t, {17, 40}), TensorDesc(t, {40, 14})},
                  {{"activation", std::string("silu")}, {"gated", int64_t{1}}},
                  {kRange, kRange},
                  tol_for_k(40)});
    cs.push_back({"swiglu-m1-k1000",
                  {TensorDesc(t, {1, 1000}), TensorDesc(t, {1000, 130}), TensorDesc(t, {130})},
                  {{"activation", std::string("silu")}, {"gated", int64_t{1}}},
                  {kRange, kRange, kRange},
                  tol_for_k(1000)});
    cs.push_back({"geglu-batch-residual",
                  {TensorDesc(t, {2, 33, 64}), TensorDesc(t, {64, 200}), TensorDesc(t, {200}),
                   TensorDesc(t, {2, 33, 100})},
                  {{"activation", std::string("gelu")}, {"gated", int64_t{1}}, {"alpha", 0.5}},
                  {kRange, kRange, kRange, kRange},
                  tol_for_k(64)});
    cs.push_back({"swiglu-bT",
                  {TensorDesc(t, {20, 65}), ops::transposed_desc(t, 65, 66)},
                  {{"activation", std::string("silu")}, {"gated", int64_t{1}}},
                  {kRange, kRange},
                  tol_for_k(65)});
    cs.push_back({"swiglu-k0",
                  {TensorDesc(t, {5, 0}), TensorDesc(t, {0, 18}), TensorDesc(t, {18})},
                  {{"activation", std::string("silu")}, {"gated", int64_t{1}}},
                  {kRange, kRange, kRange},
                  1});
    return cs;
  };
  s.tolerance = default_tolerance;
  // `--case m=..,n=..,k=..[,batch=..],act=none|relu|gelu|gelu_tanh|silu,bias=0|1,
  // gated=0|1,residual=0|1,alpha=..`: n is the output's columns (b has 2n
  // when gated); the GFLOP/s count b's columns.
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    ops::CaseKeys keys("fused_matmul", kv);
    const bool gated = keys.i("gated", 0) != 0;
    CheckCase c = mnk_bench_case(keys, t, gated ? 2 : 1);
    const int64_t NB = c.inputs[1].shape.back();
    Shape ys = c.inputs[0].shape;
    ys.back() = gated ? NB / 2 : NB;
    const bool bias = keys.i("bias", 1) != 0, residual = keys.i("residual", 0) != 0;
    c.inputs.push_back(bias ? TensorDesc(t, {NB}) : TensorDesc::none());
    c.inputs.push_back(residual ? TensorDesc(t, ys) : TensorDesc::none());
    c.ranges = {kRange, kRange, kRange, kRange};
    c.attrs = {{"activation", keys.s("act", gated ? "silu" : "gelu")},
               {"gated", int64_t{gated ? 1 : 0}},
               {"alpha", keys.f("alpha", 1.0)}};
    keys.done();
    return c;
  };
  s.cost = &mnk_cost;
  r.add_op(std::move(s));
  matmul::register_gemm_kernels(r, "fused_matmul", &fused_plan);
}

// ---- gemm (ONNX) -------------------------------------------------------------------
Plan gemm_plan(const OpCall& call) {
  const TensorDesc &a = call.in(0), &b = call.in(1);
  const Strides &sa = a.effective_strides(), &sb = b.effective_strides();
  const bool ta = call.attrs.i("transA") != 0, tb = call.attrs.i("transB") != 0;
  Plan p;
  p.M = ta ? a.shape[1] : a.shape[0];
  p.K = ta ? a.shape[0] : a.shape[1];
  p.N = tb ? b.shape[0] : b.shape[1];
  p.a = {0, ta ? sa[1] : sa[0], ta ? sa[0] : sa[1], {}};
  p.b = {1, tb ? sb[1] : sb[0], tb ? sb[0] : sb[1], {}};
  p.alpha = static_cast<float>(call.attrs.f("alpha"));
  p.beta = static_cast<float>(call.attrs.f("beta"));
  if (call.has_input(2)) {
    const TensorDesc& c = call.in(2);
    const Strides& sc = c.effective_strides();
    p.add.input = 2;
    if (c.rank() == 2) {
      p.add.rs = c.shape[0] == 1 ? 0 : sc[0];
      p.add.cs = c.shape[1] == 1 ? 0 : sc[1];
    } else if (c.rank() == 1) {
      p.add.cs = c.shape[0] == 1 ? 0 : sc[0];
    }
  }
  return p;
}

void add_gemm(Registry& r) {
  OpSchema s;
  s.name = "gemm";
  s.family = "matmul";
  s.doc =
      "ONNX Gemm: y = alpha * A' @ B' + beta * C, A' = A^T if transA, B' = B^T if transB, C "
      "broadcast to [M, N]";
  s.inputs = {{"a", "[M, K] or [K, M] if transA"},
              {.name = "b", .doc = "[K, N] or [N, K] if transB", .weight = true},
              {"c", "broadcastable to [M, N]", true}};
  s.outputs = {{"y", "[M, N]"}};
  s.attrs = {{"alpha", AttrType::f64, 1.0, "scale of A' @ B'"},
             {"beta", AttrType::f64, 1.0, "scale of C"},
             {"transA", AttrType::i64, int64_t{0}, "transpose A"},
             {"transB", AttrType::i64, int64_t{0}, "transpose B"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    ops::require_float(call, 0);
    ops::require_same_dtype(call, 1, 0);
    ops::require_rank(call, 0, 2);
    ops::require_rank(call, 1, 2);
    for (const char* t : {"transA", "transB"}) {
      const int64_t v = call.attrs.i(t);
      if (v != 0 && v != 1)
        call.fail(std::string("attribute '") + t + "'", "0 or 1", std::to_string(v));
    }
    const bool ta = call.attrs.i("transA") != 0, tb = call.attrs.i("transB") != 0;
    const Shape &a = call.in(0).shape, &b = call.in(1).shape;
    const int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1];
    const int64_t Kb = tb ? b[1] : b[0], N = tb ? b[0] : b[1];
    if (K != Kb)
      call.fail("input 'b'",
                std::string(tb ? "dim 1" : "dim 0") + " = " + std::to_string(K) + " (K of a)",
                std::to_string(Kb) + " in " + shape_str(b));
    if (call.has_input(2)) {
      ops::require_same_dtype(call, 2, 0);
      require_broadcastable_to(call, 2, {M, N});
    }
    return std::vector<TensorDesc>{TensorDesc(call.in(0).dtype, {M, N})};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in,
                   std::vector<RefTensor>& out) {
    const bool ta = call.attrs.i("transA") != 0, tb = call.attrs.i("transB") != 0;
    const double alpha = call.attrs.f("alpha"), beta = call.attrs.f("beta");
    const Shape &as = in[0].shape, &bs = in[1].shape;
    const int64_t M = ta ? as[1] : as[0], K = ta ? as[0] : as[1], N = tb ? bs[0] : bs[1];
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double x = ta ? in[0].data[k * M + i] : in[0].data[i * K + k];
          const double y = tb ? in[1].data[j * K + k] : in[1].data[k * N + j];
          sum += x * y;
        }
        double v = alpha * sum;
        if (call.has_input(2)) v += beta * broadcast_at(in[2], {M, N}, i * N + j);
        out[0].data[i * N + j] = v;
      }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    const int64_t M = 33, N = 47, K = 65;
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        TensorDesc a(t, ta ? Shape{K, M} : Shape{M, K}), b(t, tb ? Shape{N, K} : Shape{K, N});
        Attrs at{{"transA", int64_t{ta}}, {"transB", int64_t{tb}}, {"alpha", 0.5}, {"beta", 2.0}};
        const std::string n = "tA" + std::to_string(ta) + "tB" + std::to_string(tb);
        cs.push_back({n + "-c[M,N]",
                      {a, b, TensorDesc(t, {M, N})},
                      at,
                      {kRange, kRange, kRange},
                      tol_for_k(K)});
        cs.push_back({n + "-noc", {a, b}, at, {kRange, kRange}, tol_for_k(K)});
      }
    const Shape cshapes[] = {{N}, {1, N}, {M, 1}, {}, {1}};
    for (const Shape& c : cshapes)
      cs.push_back({"c" + shape_str(c),
                    {TensorDesc(t, {M, K}), TensorDesc(t, {K, N}), TensorDesc(t, c)},
                    {{"beta", -1.5}},
                    {kRange, kRange, kRange},
                    tol_for_k(K)});
    cs.push_back({"m1k1000",
                  {TensorDesc(t, {1, 1000}), TensorDesc(t, {64, 1000}), TensorDesc(t, {64})},
                  {{"transB", int64_t{1}}},
                  {kRange, kRange, kRange},
                  tol_for_k(1000)});
    cs.push_back({"strided-a",
                  {ops::transposed_desc(t, 20, 17), TensorDesc(t, {17, 9})},
                  {},
                  {kRange, kRange},
                  tol_for_k(17)});
    return cs;
  };
  s.tolerance = default_tolerance;
  r.add_op(std::move(s));
  matmul::register_gemm_kernels(r, "gemm", &gemm_plan);
}

// ---- linear -----------------------------------------------------------------------
Plan linear_plan(const OpCall& call) {
  const TensorDesc &x = call.in(0), &w = call.in(1);
  const Strides &sx = x.effective_strides(), &sw = w.effective_strides();
  Plan p;
  p.K = x.shape.back();
  p.N = w.shape[0];
  // Contiguous x: all leading dims are rows of one GEMM. Otherwise batch over
  // the dims before the last two.
  if (x.is_contiguous() || x.rank() <= 2) {
    p.M = x.rank() >= 2 ? x.numel() / std::max<int64_t>(p.K, 1) : 1;
    if (x.rank() >= 2 && p.K == 0) {
      p.M = 1;
      for (int64_t i = 0; i + 1 < x.rank(); ++i) p.M *= x.shape[static_cast<size_t>(i)];
    }
    p.a = {0, x.rank() >= 2 ? sx[sx.size() - 2] : 0, sx.back(), {}};
    if (x.is_contiguous()) p.a.rs = p.K;
  } else {
    p.M = x.shape[x.shape.size() - 2];
    p.batch.assign(x.shape.begin(), x.shape.end() - 2);
    p.a = {0, sx[sx.size() - 2], sx.back(), matmul::batch_strides(x.shape, sx, 2, p.batch)};
  }
  p.b = {1, sw[1], sw[0], std::vector<int64_t>(p.batch.size(), 0)};
  if (call.has_input(2)) {
    p.add.input = 2;
    p.add.cs = call.in(2).effective_strides()[0];
    p.add.bs.assign(p.batch.size(), 0);
  }
  return p;
}

void add_linear(Registry& r) {
  OpSchema s;
  s.name = "linear";
  s.family = "matmul";
  s.doc = "y = x @ W^T + b (a PyTorch Linear layer): x [..., K], W [N, K], b [N]";
  s.inputs = {{"x", "[..., K]"},
              {.name = "weight", .doc = "[N, K]", .weight = true},
              {"bias", "[N] (optional)", true}};
  s.outputs = {{"y", "[..., N]"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    ops::require_float(call, 0);
    ops::require_same_dtype(call, 1, 0);
    ops::require_rank_at_least(call, 0, 1);
    ops::require_rank(call, 1, 2);
    const int64_t K = call.in(0).shape.back();
    if (call.in(1).shape[1] != K)
      call.fail("input 'weight'", "dim 1 = " + std::to_string(K) + " (the last dim of x)",
                std::to_string(call.in(1).shape[1]) + " in " + shape_str(call.in(1).shape));
    const int64_t N = call.in(1).shape[0];
    if (call.has_input(2)) {
      ops::require_same_dtype(call, 2, 0);
      ops::require_shape(call, 2, {N});
    }
    Shape out = call.in(0).shape;
    out.back() = N;
    return std::vector<TensorDesc>{TensorDesc(call.in(0).dtype, out)};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in,
                   std::vector<RefTensor>& out) {
    const int64_t K = in[0].shape.back(), N = in[1].shape[0];
    const int64_t rows = K ? static_cast<int64_t>(in[0].data.size()) / K
                           : static_cast<int64_t>(out[0].data.size()) / std::max<int64_t>(N, 1);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t n = 0; n < N; ++n) {
        double v = 0;
        for (int64_t k = 0; k < K; ++k) v += in[0].data[i * K + k] * in[1].data[n * K + k];
        if (call.has_input(2)) v += in[2].data[n];
        out[0].data[i * N + n] = v;
      }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, std::vector<TensorDesc> in, int64_t K) {
      std::vector<ValueRange> rg(in.size(), kRange);
      cs.push_back({std::move(name), std::move(in), {}, rg, tol_for_k(K)});
    };
    add("[17,65]x[47,65]+b",
        {TensorDesc(t, {17, 65}), TensorDesc(t, {47, 65}), TensorDesc(t, {47})}, 65);
    add("[2,3,64]x[33,64]", {TensorDesc(t, {2, 3, 64}), TensorDesc(t, {33, 64})}, 64);
    add("[1,1000]x[255,1000]+b",
        {TensorDesc(t, {1, 1000}), TensorDesc(t, {255, 1000}), TensorDesc(t, {255})}, 1000);
    add("vec[16]x[7,16]", {TensorDesc(t, {16}), TensorDesc(t, {7, 16})}, 16);
    add("strided[2,5,8]x[6,8]",
        {TensorDesc(t, {2, 5, 8}, {1, 16, 2}), TensorDesc(t, {6, 8}), TensorDesc(t, {6})}, 8);
    add("wT[9,20]x[20,15]^T", {TensorDesc(t, {9, 20}), ops::transposed_desc(t, 15, 20)}, 20);
    return cs;
  };
  s.tolerance = default_tolerance;
  // `--case m=..,n=..,k=..[,bias=1]`: x [M, K], weight [N, K] (as PyTorch
  // stores it), a bias of N when asked.
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    ops::CaseKeys keys("linear", kv);
    const int64_t M = keys.i("m", 512), N = keys.i("n", 512), K = keys.i("k", 512);
    const bool bias = keys.i("bias", 0) != 0;
    keys.done();
    CheckCase c;
    c.name = "bench";
    c.inputs = {TensorDesc(t, {M, K}), TensorDesc(t, {N, K})};
    if (bias) c.inputs.push_back(TensorDesc(t, {N}));
    c.ranges.assign(c.inputs.size(), kRange);
    return c;
  };
  s.cost = [](const OpCall& call, double* bytes, double* flops) {
    plan_cost(call, linear_plan(call), bytes, flops);
  };
  s.bench_packed = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Attrs&) {
    return packed_bench(in[0], in[1], /*transposed=*/true, in.size() > 2 ? in[2] : Tensor(),
                        out[0]);
  };
  r.add_op(std::move(s));
  matmul::register_gemm_kernels(r, "linear", &linear_plan);
}

}  // namespace

void register_matmul_ops(Registry& r) {
  add_matmul(r);
  add_batch_matmul(r);
  add_fused_matmul(r);
  add_gemm(r);
  add_linear(r);
}

}  // namespace opsnn
