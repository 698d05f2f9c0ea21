// Op `sdpa`: fused scaled dot-product attention. Schema, shape inference,
// the float64 reference, the case table and the kernel registration.
//
//   out = softmax(scale * Q K^T + bias, masked) V   per (batch, query head)
//
// Inputs: q [B,Hq,Lq,D], k and v [B,Hkv,Lk,D] (layout=BHLD) or [B,L,H,D]
// (layout=BLHD), read through their strides; Hq a multiple of Hkv (GQA/MQA:
// query head h uses KV head h / (Hq/Hkv)). Optional: key_lens (i32/i64 [B],
// keys j >= key_lens[b] are padding), bias (float, broadcastable to
// [B,Hq,Lq,Lk], added after scaling), mask (bool, broadcastable to
// [B,Hq,Lq,Lk], true = attend). causal=1 lets query i see key j iff
// j <= i + (Lk_b - Lq), where Lk_b is the number of valid keys of batch entry
// b: the last query aligns with the last valid key, so a cached prefix works.
// A row with no visible key (fully masked) gives zeros and lse = -inf.
// Outputs: out (q's layout and dtype), and with return_lse=1 lse f32 [B,Hq,Lq]
// (natural log of the softmax denominator of the scaled, biased scores).
#include "ops/attention/sdpa/sdpa.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "kernels/gemm/gemm.h"
#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/checks.h"
#include "ops/common/kernel_names.h"
#include "opsnn/error.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

enum In : size_t { kQ = 0, kK = 1, kV = 2, kLens = 3, kBias = 4, kMask = 5 };

struct Dims {
  int64_t B, Hq, Hkv, Lq, Lk, D;
  bool blhd;
};

// Axis of (b, h, l, d) in a tensor of the given layout.
inline int axis_h(bool blhd) { return blhd ? 2 : 1; }
inline int axis_l(bool blhd) { return blhd ? 1 : 2; }

Dims dims_of(const OpCall& call) {
  const bool blhd = call.attrs.s("layout") == "BLHD";
  const Shape& q = call.in(kQ).shape;
  const Shape& k = call.in(kK).shape;
  return {q[0], q[axis_h(blhd)], k[axis_h(blhd)], q[axis_l(blhd)], k[axis_l(blhd)], q[3], blhd};
}

void check_broadcast(const OpCall& call, size_t i, const Dims& d) {
  const Shape& s = call.in(i).shape;
  const Shape full = {d.B, d.Hq, d.Lq, d.Lk};
  if (s.size() > 4)
    call.fail(ops::input_name(call, i), "rank <= 4, broadcastable to " + shape_str(full),
              shape_str(s));
  for (size_t a = 0; a < s.size(); ++a) {
    const int64_t want = full[4 - s.size() + a];
    if (s[a] != 1 && s[a] != want)
      call.fail(ops::input_name(call, i), "broadcastable to " + shape_str(full), shape_str(s));
  }
}

// Element strides of a broadcastable tensor against [B,Hq,Lq,Lk] (0 on broadcast dims).
void broadcast_strides(const Shape& s, const Strides& st, int64_t out[4]) {
  for (int a = 0; a < 4; ++a) out[a] = 0;
  for (size_t a = 0; a < s.size(); ++a)
    if (s[a] != 1) out[4 - s.size() + a] = st[a];
}

double scale_of(const OpCall& call, int64_t D) {
  const double s = call.attrs.f("scale");
  return s == 0 ? 1.0 / std::sqrt(static_cast<double>(D)) : s;
}

std::vector<TensorDesc> infer(const OpCall& call) {
  const std::string& layout = call.attrs.s("layout");
  if (layout != "BHLD" && layout != "BLHD")
    call.fail("attribute 'layout'", "BHLD|BLHD", "'" + layout + "'");
  ops::require_float(call, kQ);
  ops::require_same_dtype(call, kK, kQ);
  ops::require_same_dtype(call, kV, kQ);
  for (size_t i : {kQ, kK, kV}) ops::require_rank(call, i, 4);
  const Dims d = dims_of(call);
  const Shape& ks = call.in(kK).shape;
  if (call.in(kV).shape != ks)
    call.fail("v", "the shape of k " + shape_str(ks), shape_str(call.in(kV).shape));
  if (ks[0] != d.B)
    call.fail("k", "batch " + std::to_string(d.B) + " (as q)", std::to_string(ks[0]));
  if (ks[3] != d.D)
    call.fail("k", "head dim " + std::to_string(d.D) + " (as q)", std::to_string(ks[3]));
  if (d.D < 1 || d.D > 1024) call.fail("q", "head dim in [1, 1024]", std::to_string(d.D));
  // The kernels scale in f32: a scale beyond f32's range would be inf there.
  if (const double sc = call.attrs.f("scale"); !(std::fabs(sc) <= FLT_MAX))
    call.fail("attribute 'scale'", "a value finite in f32 (0 = 1/sqrt(D))", std::to_string(sc));
  if (d.Hkv < 1 || d.Hq % d.Hkv != 0)
    call.fail("k", "KV heads dividing the query heads " + std::to_string(d.Hq),
              std::to_string(d.Hkv));
  if (call.has_input(kLens)) {
    ops::require_dtype(call, kLens, {DType::i32, DType::i64});
    ops::require_shape(call, kLens, {d.B});
  }
  if (call.has_input(kBias)) {
    ops::require_float(call, kBias);
    check_broadcast(call, kBias, d);
  }
  if (call.has_input(kMask)) {
    ops::require_dtype(call, kMask, {DType::boolean});
    check_broadcast(call, kMask, d);
  }
  const double scale = call.attrs.f("scale");
  if (!std::isfinite(scale) || scale < 0)
    call.fail("attribute 'scale'", "finite, >= 0 (0: 1/sqrt(D))", std::to_string(scale));
  for (const char* a : {"causal", "return_lse"}) {
    const int64_t v = call.attrs.i(a);
    if (v != 0 && v != 1)
      call.fail(std::string("attribute '") + a + "'", "0 or 1", std::to_string(v));
  }
  for (const char* a : {"q_block", "kv_block"}) {
    const int64_t v = call.attrs.i(a);
    if (v < 0 || v > 4096)
      call.fail(std::string("attribute '") + a + "'", "0 (auto) .. 4096", std::to_string(v));
  }
  std::vector<TensorDesc> outs = {TensorDesc(call.in(kQ).dtype, call.in(kQ).shape)};
  if (call.attrs.i("return_lse")) outs.push_back(TensorDesc(DType::f32, {d.B, d.Hq, d.Lq}));
  return outs;
}

// float64 naive attention.
void reference(const OpCall& call, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
  const Dims d = dims_of(call);
  const double scale = scale_of(call, d.D);
  const bool causal = call.attrs.i("causal") != 0;
  const int64_t G = d.Hq / d.Hkv;
  auto idx = [&](int64_t H, int64_t L, int64_t b, int64_t h, int64_t l) {
    return d.blhd ? ((b * L + l) * H + h) * d.D : ((b * H + h) * L + l) * d.D;
  };
  int64_t bs[4] = {0, 0, 0, 0}, ms[4] = {0, 0, 0, 0};
  if (call.has_input(kBias))
    broadcast_strides(in[kBias].shape, contiguous_strides(in[kBias].shape), bs);
  if (call.has_input(kMask))
    broadcast_strides(in[kMask].shape, contiguous_strides(in[kMask].shape), ms);
  std::vector<double> s(static_cast<size_t>(d.Lk));
  std::vector<char> vis(static_cast<size_t>(d.Lk));
  for (int64_t b = 0; b < d.B; ++b) {
    int64_t lk_b = d.Lk;
    if (call.has_input(kLens))
      lk_b = std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(in[kLens].data[b]), 0), d.Lk);
    for (int64_t h = 0; h < d.Hq; ++h)
      for (int64_t i = 0; i < d.Lq; ++i) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < d.Lk; ++j) {
          bool v = j < lk_b && (!causal || j <= i + lk_b - d.Lq);
          if (v && call.has_input(kMask))
            v = in[kMask].data[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]] != 0;
          vis[j] = v;
          if (!v) continue;
          double acc = 0;
          const double* qp = &in[kQ].data[idx(d.Hq, d.Lq, b, h, i)];
          const double* kp = &in[kK].data[idx(d.Hkv, d.Lk, b, h / G, j)];
          for (int64_t x = 0; x < d.D; ++x) acc += qp[x] * kp[x];
          acc *= scale;
          if (call.has_input(kBias))
            acc += in[kBias].data[b * bs[0] + h * bs[1] + i * bs[2] + j * bs[3]];
          s[j] = acc;
          if (acc == -INFINITY)
            vis[j] = 0;
          else
            mx = std::max(mx, acc);
        }
        double sum = 0;
        for (int64_t j = 0; j < d.Lk; ++j)
          if (vis[j]) sum += (s[j] = std::exp(s[j] - mx));
        double* op = &out[0].data[idx(d.Hq, d.Lq, b, h, i)];
        // A NaN score (or +inf - +inf) makes the whole row NaN, as in PyTorch;
        // a row with every key masked gives zeros.
        const double fill = std::isnan(sum) ? NAN : 0.0;
        for (int64_t x = 0; x < d.D; ++x) op[x] = fill;
        if (sum > 0)
          for (int64_t j = 0; j < d.Lk; ++j) {
            if (!vis[j]) continue;
            const double w = s[j] / sum;
            const double* vp = &in[kV].data[idx(d.Hkv, d.Lk, b, h / G, j)];
            for (int64_t x = 0; x < d.D; ++x) op[x] += w * vp[x];
          }
        if (out.size() > 1)
          out[1].data[(b * d.Hq + h) * d.Lq + i] = std::isnan(sum) ? NAN
                                                   : sum > 0       ? mx + std::log(sum)
                                                                   : -INFINITY;
      }
  }
}

// ---- the case table ---------------------------------------------------------
struct CaseSpec {
  int64_t B, Hq, Hkv, Lq, Lk, D;
  int causal = 0;
  bool blhd = false;
  int lens = 0;       // 0 none, 1 random in [0, Lk] (i64), 2 random (i32), 3 all zero
  Shape bias = {};    // empty: no bias
  Shape mask = {};    // empty: no mask
  int mask_kind = 0;  // 0 random 0/1, 1 all false
  bool lse = false;
  double scale = 0;
  double tol = 1;
};

CheckCase make_case(const CaseSpec& c, DType t) {
  CheckCase k;
  const Shape qs = c.blhd ? Shape{c.B, c.Lq, c.Hq, c.D} : Shape{c.B, c.Hq, c.Lq, c.D};
  const Shape ks = c.blhd ? Shape{c.B, c.Lk, c.Hkv, c.D} : Shape{c.B, c.Hkv, c.Lk, c.D};
  k.name = "b" + std::to_string(c.B) + "h" + std::to_string(c.Hq) + "kv" + std::to_string(c.Hkv) +
           "q" + std::to_string(c.Lq) + "k" + std::to_string(c.Lk) + "d" + std::to_string(c.D) +
           (c.causal ? "_causal" : "") + (c.blhd ? "_blhd" : "") +
           (c.lens ? "_lens" + std::to_string(c.lens) : "") +
           (c.bias.empty() ? "" : "_bias" + shape_str(c.bias)) +
           (c.mask.empty() ? "" : "_mask" + shape_str(c.mask)) + (c.mask_kind ? "_maskoff" : "") +
           (c.lse ? "_lse" : "") + (c.scale != 0 ? "_scale" : "");
  k.inputs = {TensorDesc(t, qs), TensorDesc(t, ks), TensorDesc(t, ks)};
  k.ranges = {{-2, 2}, {-2, 2}, {-3, 3}};
  if (c.lens) {
    k.inputs.push_back(TensorDesc(c.lens == 2 ? DType::i32 : DType::i64, {c.B}));
    k.ranges.push_back(c.lens == 3 ? ValueRange{0, 0, true}
                                   : ValueRange{0, static_cast<double>(c.Lk), true});
  } else {
    k.inputs.push_back(TensorDesc::none());
    k.ranges.push_back({});
  }
  if (!c.bias.empty()) {
    k.inputs.push_back(TensorDesc(t, c.bias));
    k.ranges.push_back({-2, 2});
  } else {
    k.inputs.push_back(TensorDesc::none());
    k.ranges.push_back({});
  }
  if (!c.mask.empty()) {
    k.inputs.push_back(TensorDesc(DType::boolean, c.mask));
    k.ranges.push_back(c.mask_kind == 1 ? ValueRange{0, 0, true} : ValueRange{0, 1, true});
  } else {
    k.inputs.push_back(TensorDesc::none());
    k.ranges.push_back({});
  }
  k.attrs = {{"causal", int64_t{c.causal}},
             {"layout", std::string(c.blhd ? "BLHD" : "BHLD")},
             {"return_lse", int64_t{c.lse ? 1 : 0}}};
  if (c.scale != 0) k.attrs.set("scale", c.scale);
  k.tol_scale = c.tol;
  return k;
}

std::vector<CheckCase> cases(DType t) {
  std::vector<CaseSpec> specs = {
      {1, 1, 1, 1, 1, 32},                                    // smallest
      {1, 2, 2, 7, 7, 64, 0, false, 0, {}, {}, 0, true},      // basic + lse
      {2, 2, 2, 5, 77, 64},                                   // Lq != Lk
      {1, 4, 2, 16, 33, 32, 1},                               // GQA causal
      {2, 4, 1, 7, 40, 40},                                   // MQA, D=40
      {1, 8, 2, 1, 300, 128, 0, false, 0, {}, {}, 0, true},   // GQA decode, split over Lk
      {2, 4, 4, 16, 200, 80, 1, false, 1},                    // decode-ish causal + key_lens
      {1, 2, 2, 77, 77, 96, 1},                               // causal square, D=96
      {1, 2, 2, 7, 77, 64, 1, true},                          // causal with a cached prefix, BLHD
      {1, 2, 2, 16, 7, 64, 1, false, 0, {}, {}, 0, true},     // Lq > Lk causal: first rows fully
                                                              // masked
      {3, 2, 2, 7, 77, 160, 0, false, 2},                     // key_lens i32, D=160
      {2, 2, 1, 5, 9, 64, 0, false, 3, {}, {}, 0, true},      // key_lens all 0: every row masked
      {2, 2, 2, 7, 33, 64, 0, false, 0, {2, 2, 7, 33}},       // full bias
      {2, 2, 2, 7, 33, 256, 0, false, 0, {1, 1, 7, 33}},      // broadcast bias, D=256
      {2, 4, 2, 9, 33, 64, 0, true, 0, {33}},                 // key bias, BLHD
      {2, 2, 2, 16, 3, 64, 0, false, 0, {}, {2, 2, 16, 3}},   // random mask: some rows fully masked
      {2, 2, 2, 7, 33, 48, 0, false, 0, {}, {2, 1, 1, 33}},   // padding-style mask
      {1, 2, 2, 4, 9, 32, 0, false, 0, {}, {1, 9}, 1, true},  // all-false mask
      {2, 4, 2, 13, 50, 64, 1, true, 1, {2, 1, 13, 50}, {2, 4, 13, 50}, 0, true},  // everything
      {1, 2, 2, 33, 1000, 64, 1},                                    // long keys, causal
      {1, 4, 4, 1, 1000, 128, 0, false, 0, {}, {}, 0, false, 0.05},  // decode, custom scale
      {1, 3, 3, 70, 70, 32, 0, false, 0, {}, {}, 0, false, 0, 1},    // several q tiles per head
      // Few-rows (decode) path: rows = Lq x G <= 16 per KV head, lanes along D.
      {2, 2, 2, 1, 260, 64, 0, false, 1, {}, {}, 0, true},              // G=1, splits, key_lens
      {1, 8, 1, 1, 513, 40, 0, true, 0, {}, {}, 0, true},               // MQA G=8, D tail, BLHD
      {1, 8, 2, 3, 300, 96, 1, false, 0, {}, {}, 0, true},              // G=4 x Lq=3 = 12 rows
      {1, 4, 4, 16, 290, 32, 1, false, 0, {1, 4, 16, 290}},             // Lq=16, G=1, full bias
      {1, 8, 1, 2, 270, 80, 1, false, 2, {1, 8, 1, 270}, {}, 0, true},  // 16 rows, head bias
      {2, 4, 2, 5, 100, 64, 1, false, 0, {}, {2, 4, 5, 100}},           // 10 rows, random mask
      {2, 4, 1, 1, 150, 128, 0, false, 0, {}, {2, 1, 1, 150}},          // padding mask
      {1, 8, 2, 16, 300, 64, 1, false, 0, {}, {}, 0, true},  // 64 rows: flash path with splits
      // Many-rows form with a bias / mask that varies per row (transposed tiles), odd Lk.
      {1, 2, 2, 40, 77, 64, 0, false, 0, {1, 2, 40, 77}},                 // full bias, 40 rows
      {1, 4, 2, 19, 45, 32, 1, false, 0, {}, {1, 4, 19, 45}},             // 38 rows, random mask
      {1, 2, 1, 20, 23, 40, 0, true, 0, {1, 2, 20, 23}, {1, 1, 20, 23}},  // BLHD, both, G=2
  };
  if (const char* big = std::getenv("OPSNN_SDPA_BIG_CASES"); big && *big == '1') {
    specs.push_back({1, 2, 2, 1000, 1000, 64, 1});
    specs.push_back({1, 4, 1, 1000, 1000, 128, 0, true, 1, {}, {1, 1, 1000, 1000}, 0, true});
    specs.push_back({2, 8, 8, 333, 1021, 80, 1, false, 0, {2, 1, 333, 1021}});
  }
  std::vector<CheckCase> cs;
  for (const CaseSpec& c : specs) cs.push_back(make_case(c, t));
  return cs;
}

CheckCase bench_case(const std::map<std::string, std::string>& kv, DType t) {
  ops::CaseKeys keys("sdpa", kv);
  auto get = [&](const char* key, int64_t def) { return keys.i(key, def); };
  CaseSpec c{get("b", 1), get("hq", get("h", 8)), 0, get("lq", get("l", 1024)), 0, get("d", 64)};
  c.Hkv = get("hkv", c.Hq);
  c.Lk = get("lk", c.Lq);
  c.causal = static_cast<int>(get("causal", 0));
  c.blhd = keys.s("layout", "") == "BLHD";
  // bias=full ([B,Hq,Lq,Lk]), rows ([B,1,Lq,Lk]) or keys ([B,1,1,Lk]); mask= the same.
  auto shape_of = [&](const char* key) -> Shape {
    if (!keys.has(key)) return {};
    const std::string v = keys.s(key, "");
    if (v == "full") return {c.B, c.Hq, c.Lq, c.Lk};
    if (v == "rows") return {c.B, 1, c.Lq, c.Lk};
    if (v == "keys") return {c.B, 1, 1, c.Lk};
    throw Error("sdpa", "--case key '" + std::string(key) + "'", "full, rows or keys",
                "'" + v + "'");
  };
  c.bias = shape_of("bias");
  c.mask = shape_of("mask");
  CheckCase k = make_case(c, t);
  for (const char* a : {"q_block", "kv_block"})
    if (keys.has(a)) k.attrs.set(a, get(a, 0));
  keys.done();
  return k;
}

void cost(const OpCall& call, double* bytes, double* flops) {
  const Dims d = dims_of(call);
  const double es = static_cast<double>(dtype_size(call.in(kQ).dtype));
  *bytes = es * static_cast<double>(2 * d.B * d.Hq * d.Lq * d.D + 2 * d.B * d.Hkv * d.Lk * d.D);
  *flops = 4.0 * static_cast<double>(d.B * d.Hq * d.Lq) * static_cast<double>(d.Lk * d.D);
  if (call.attrs.i("causal")) *flops /= 2;
}

// ---- the fused kernel --------------------------------------------------------
}  // namespace

// Tile sizes from the cache sizes (attributes override them, for a tuner).
// q_block: rows so that Q^T of one tile takes about a quarter of L1, in
// [48, 128]. Smaller tiles waste less on the causal diagonal and balance the
// causal tasks better (GPT-2 prefill 60% -> 70% of the FMA peak going from
// 128 to 48 rows at D = 64 on an Intel Xeon); below 48 rows the register
// tiles lose their third row vector (32 rows: 2 + 2 vectors at AVX2; LLaMA
// prefill, D = 128, one head on an AMD Zen 3 at 1 thread: 15.0 ms at 32 rows,
// 13.7 at 48).
// kv_block: keys so that the score tile takes about half of L1. The output
// update reads it once per group of output dims (D / 4 times at AVX2) and
// the softmax twice, so it belongs in L1; K and V rows are read in place and
// stream through L2 anyway (SD self-attention, D = 40, Zen 3, 2 threads: 174
// ms with 512 keys, a 96 KiB tile, as the earlier rule of half of L2 gave;
// 161 ms with 80).
void sdpa::choose_tiles(Params& p, int64_t qb, int64_t kb) {
  const CpuInfo& ci = cpu_info();
  const bool auto_kb = kb == 0;
  const auto l1 = static_cast<int64_t>(ci.l1d_bytes);
  if (qb == 0) qb = std::clamp<int64_t>(l1 / (p.D * 16) / 16 * 16, 48, 128);
  if (kb == 0) kb = std::clamp<int64_t>(l1 / 2 / (4 * round_up(qb, 16)) / 8 * 8, 32, 512);
  p.q_block = round_up(std::max<int64_t>(qb, 1), 16);
  p.kv_block = round_up(std::max<int64_t>(kb, 1), 8);
  // Decode (few tasks): split the keys so every core has work. The split
  // depends on the problem and the machine's core count only, never on the
  // thread count in use, so any OPSNN_NUM_THREADS gives the same bits. Four
  // tasks per core are enough: more splits cost partial writes and a merge
  // (GQA decode Hq 32 / Hkv 8, Lk 4096, f32 on 2 cores: 0.79 ms with 4
  // splits, 0.58 ms unsplit). An explicit kv_block disables it (one block
  // then spans exactly kv_block keys).
  const RowPlan rp = row_plan(p);
  const int64_t base_tasks = p.B * p.Hkv * rp.tasks_per_kvhead;
  const int64_t want = std::max<int64_t>(8, 4 * int64_t{ci.logical_cores});
  p.kv_splits = 1;
  if (auto_kb && base_tasks > 0 && base_tasks < want && p.Lk >= 256)  // 0: no query heads
    p.kv_splits = std::clamp<int64_t>(
        std::min((want + base_tasks - 1) / base_tasks, (p.Lk + 127) / 128), 1, kMaxSplits);
}

sdpa::RunFn sdpa::run_for(Isa isa) {
  return isa == Isa::avx512 ? run_avx512() : isa == Isa::avx2 ? run_avx2() : run_scalar();
}

// Fixed for the process (the pool never runs more useful threads than cores):
// a workspace sized once stays valid whatever set_num_threads() does later.
int sdpa::default_slots() { return std::clamp(std::max(cpu_info().logical_cores, 2), 1, 256); }

namespace {

class SdpaKernel : public KernelInstance {
 public:
  SdpaKernel(const OpCall& call, sdpa::RunFn fn) : call_(call), fn_(fn) {
    const Dims d = dims_of(call);
    p_.B = d.B;
    p_.Hq = d.Hq;
    p_.Hkv = d.Hkv;
    p_.Lq = d.Lq;
    p_.Lk = d.Lk;
    p_.D = d.D;
    p_.dtype = call.in(kQ).dtype;
    p_.scale = static_cast<float>(scale_of(call, d.D));
    p_.causal = call.attrs.i("causal") != 0;
    sdpa::choose_tiles(p_, call.attrs.i("q_block"), call.attrs.i("kv_block"));
    slots_ = sdpa::default_slots();
    lens_off_ = sdpa::workspace_bytes(p_, slots_);
    ws_ = lens_off_ + static_cast<size_t>(d.B) * sizeof(int64_t);
  }
  size_t workspace_bytes() const override { return ws_; }
  void run(const Tensor* in, Tensor* out, void* workspace) override {
    sdpa::Params p = p_;
    const bool blhd = call_.attrs.s("layout") == "BLHD";
    const int ah = axis_h(blhd), al = axis_l(blhd);
    const Strides& qs = in[kQ].strides();
    const Strides& ks = in[kK].strides();
    const Strides& vs = in[kV].strides();
    const Strides& os = out[0].strides();
    p.q = in[kQ].data();
    p.qsb = qs[0], p.qsh = qs[ah], p.qsl = qs[al];
    p.k.data = in[kK].data();
    p.k.sb = ks[0], p.k.sh = ks[ah], p.k.sl = ks[al];
    p.v.data = in[kV].data();
    p.v.sb = vs[0], p.v.sh = vs[ah], p.v.sl = vs[al];
    p.out = out[0].data();
    p.osb = os[0], p.osh = os[ah], p.osl = os[al];
    p.lse = out_count() > 1 ? out[1].data_as<float>() : nullptr;
    if (call_.has_input(kLens)) {
      int64_t* lens = reinterpret_cast<int64_t*>(static_cast<char*>(workspace) + lens_off_);
      for (int64_t b = 0; b < p.B; ++b) lens[b] = static_cast<int64_t>(in[kLens].flat_get(b));
      p.key_lens = lens;
    }
    int64_t st[4];
    if (call_.has_input(kBias)) {
      broadcast_strides(in[kBias].shape(), in[kBias].strides(), st);
      p.bias = {in[kBias].data(), in[kBias].dtype(), st[0], st[1], st[2], st[3]};
    }
    if (call_.has_input(kMask)) {
      broadcast_strides(in[kMask].shape(), in[kMask].strides(), st);
      p.mask = {in[kMask].data(), DType::boolean, st[0], st[1], st[2], st[3]};
    }
    fn_(p, workspace, slots_);
  }

 private:
  size_t out_count() const { return call_.outputs.size(); }
  const OpCall& call_;
  sdpa::RunFn fn_;
  sdpa::Params p_;
  int slots_ = 1;
  size_t lens_off_ = 0, ws_ = 0;
};

}  // namespace

void register_attention_ops(Registry& r) {
  OpSchema s;
  s.name = "sdpa";
  s.family = "attention";
  s.doc =
      "Fused scaled dot-product attention (flash-style, online softmax): softmax(scale*Q K^T + "
      "bias, masks) V; "
      "GQA/MQA, causal aligned to the end of the keys, key_lens, bias, bool mask, BHLD/BLHD; fully "
      "masked rows "
      "give zeros (lse -inf)";
  s.inputs = {{"q", "[B,Hq,Lq,D] (BHLD) or [B,Lq,Hq,D] (BLHD)"},
              {"k", "[B,Hkv,Lk,D] or [B,Lk,Hkv,D]; Hq % Hkv == 0"},
              {"v", "same shape as k"},
              {"key_lens", "i32/i64 [B]: valid keys per batch entry", true},
              {"bias", "float, broadcastable to [B,Hq,Lq,Lk], added to the scaled scores", true},
              {"mask", "bool, broadcastable to [B,Hq,Lq,Lk], true = attend", true}};
  s.outputs = {{"out", "q's shape, layout and dtype"}, {"lse", "f32 [B,Hq,Lq] when return_lse=1"}};
  s.attrs = {{"scale", AttrType::f64, 0.0, "score scale; 0 = 1/sqrt(D)"},
             {"causal", AttrType::i64, int64_t{0}, "1: query i sees key j iff j <= i + Lk_b - Lq"},
             {"layout", AttrType::str, std::string("BHLD"), "BHLD or BLHD (q, k, v and out)"},
             {"return_lse", AttrType::i64, int64_t{0}, "1: second output lse"},
             {"q_block", AttrType::i64, int64_t{0}, "query rows per task (0: from the L1 size)"},
             {"kv_block", AttrType::i64, int64_t{0}, "keys per block (0: from the L2 size)"}};
  s.dtypes = {DType::f32, DType::bf16, DType::f16};
  s.infer = infer;
  s.reference = reference;
  s.cases = cases;
  s.tolerance = [](DType t) {
    return t == DType::f32 ? Tolerance{2e-5, 1e-4} : default_tolerance(t);
  };
  s.bench_case = bench_case;
  s.cost = cost;
  r.add_op(std::move(s));

  struct IsaKernel {
    Isa isa;
    sdpa::RunFn fn;
  };
  const IsaKernel isas[] = {{Isa::avx512, sdpa::run_avx512()},
                            {Isa::avx2, sdpa::run_avx2()},
                            {Isa::scalar, sdpa::run_scalar()}};
  for (const IsaKernel& ik : isas) {
    KernelDesc k;
    k.name = ops::kernel_name("sdpa", "flash", ik.isa);
    k.isa = ik.isa;
    k.dtypes = {DType::f32, DType::bf16, DType::f16};
    k.contiguous_inputs = false;  // q/k/v/bias/mask are read through their strides
    k.priority = ops::isa_priority(ik.isa);
    k.create = [fn = ik.fn](const OpCall& call,
                            std::string* why) -> std::unique_ptr<KernelInstance> {
      for (size_t i : {kQ, kK, kV}) {
        if (call.in(i).effective_strides()[3] != 1) {
          if (why) *why = ops::input_name(call, i) + " needs unit stride along D";
          return nullptr;
        }
      }
      return std::make_unique<SdpaKernel>(call, fn);
    };
    r.add_kernel("sdpa", std::move(k));
  }
  KernelDesc kb;
  kb.name = "sdpa_flash_avx512bf16";  // the AVX512_BF16 form of sdpa_flash_avx512
  kb.isa = Isa::avx512;
  // Only where vdpbf16ps outruns the FMAs (gemm::use_bf16_dot): on an Intel
  // Xeon (Emerald Rapids) it runs at half their rate, and this kernel's
  // prefill at 0.55-0.7x the generic one on the same bf16 inputs.
  kb.cpu_ok = gemm::use_bf16_dot;
  kb.dtypes = {DType::bf16};
  kb.contiguous_inputs = false;
  kb.priority = ops::kPrioritySpecial;
  kb.create = [](const OpCall& call, std::string* why) -> std::unique_ptr<KernelInstance> {
    if (call.in(kQ).dtype != DType::bf16) {
      if (why) *why = "bf16 inputs only";
      return nullptr;
    }
    if (call.in(kQ).shape[3] % 2 != 0) {
      if (why) *why = "needs an even head dim";
      return nullptr;
    }
    for (size_t i : {kQ, kK, kV}) {
      if (call.in(i).effective_strides()[3] != 1) {
        if (why) *why = ops::input_name(call, i) + " needs unit stride along D";
        return nullptr;
      }
    }
    return std::make_unique<SdpaKernel>(call, sdpa::run_avx512bf16());
  };
  r.add_kernel("sdpa", std::move(kb));

  // Inputs with a non-unit stride along D (a transposed view, ...): the
  // flash kernels need D contiguous, so these let the framework copy the
  // inputs to contiguous workspace first, then run the flash kernel of their
  // ISA. Chosen only when the kernels above decline (before the float64
  // reference).
  for (const IsaKernel& ik : isas) {
    KernelDesc kp;
    kp.name = ops::kernel_name("sdpa", "flash_packed", ik.isa);
    kp.isa = ik.isa;
    kp.dtypes = {DType::f32, DType::bf16, DType::f16};
    kp.contiguous_inputs = true;
    kp.priority = ops::isa_priority(ik.isa, ops::kPriorityFallback);
    kp.create = [fn = ik.fn](const OpCall& call, std::string*) -> std::unique_ptr<KernelInstance> {
      return std::make_unique<SdpaKernel>(call, fn);
    };
    r.add_kernel("sdpa", std::move(kp));
  }
}

}  // namespace opsnn
