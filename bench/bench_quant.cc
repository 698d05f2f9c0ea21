// Quantized matmuls side by side with our f32 matmul, in one process:
//  - decode (M = 1, 8): f32 pre-packed matmul vs matmul_wq int8 (group 128)
//    and int4 (groups 32 and 128); GB/s of weight traffic and the ratio to f32
//  - compute bound: matmul_int8 (W8A8, pre-packed, f32 dequantized output)
//    vs f32 pre-packed matmul; GOP/s and the ratio
//  - mid (M = 16 .. 256, part "mid", not in "all"): f32 pre-packed matmul vs
//    matmul_wq int4/int8 (group 128) on its tiled (decode) path and on its
//    panel path (panel_cols 128 / 256 / 512), chosen per contender through
//    the attributes panel_min_m / panel_cols; GFLOP/s and the ratio to f32
// Each round runs every contender of a shape once (interleaved), min/median
// over the rounds. Run it on an otherwise idle machine:
//   build/bench/opsnn_bench_quant [rounds] [threads] [all|decode|compute|mid] [M,M,..]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/opsnn.h"
#include "side_by_side.h"

#ifdef OPSNN_BENCH_DNNL
// Built as opsnn_bench_quant_peers (-DOPSNN_BUILD_PEER_BENCH=ON): adds
// oneDNN's int8 matmul (s8 x s8, weights reordered once to its packed layout).
#include <dnnl.hpp>
#endif

namespace {

using namespace opsnn;

using bench::Stat;
// Every contender is followed by a 20 ms busy-wait gap (see side_by_side.h):
// without it oneDNN's OpenMP workers, still spinning after their call, took a
// core from whichever contender ran next (our f32 2048x768x768 read 9.2 ms
// instead of 5.5).
std::vector<Stat> time_side_by_side(std::vector<std::function<void()>>& fns, int rounds) {
  std::vector<bench::Contender> cs;
  for (auto& f : fns) cs.push_back({f, 20});
  return bench::time_side_by_side(cs, rounds);
}

uint32_t next(uint32_t& s) {
  s = s * 1664525u + 1013904223u;
  return s >> 8;
}
Tensor rand_f32(const Shape& sh, float lo, float hi, uint32_t seed) {
  Tensor t = Tensor::empty(sh, DType::f32);
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = lo + (hi - lo) * static_cast<float>(next(seed) & 0xffff) / 65535.0f;
  return t;
}
Tensor rand_bytes(const Shape& sh, DType dt, uint32_t seed) {
  Tensor t = Tensor::empty(sh, dt);
  uint8_t* p = static_cast<uint8_t*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<uint8_t>(next(seed));
  return t;
}

struct Contender {
  std::string name;
  double weight_bytes;
  std::function<void()> fn;
};

// A matmul_wq op with its inputs, outputs and workspace, ready to run.
struct WqCase {
  Op op;
  std::vector<Tensor> ins, outs;
  std::unique_ptr<Arena> ws;
  std::span<std::byte> w;
  // paths: matmul_wq's tuning attributes (panel_min_m, panel_cols), if any.
  WqCase(const Tensor& x, int64_t N, int bits, int group, const Attrs& paths = {}) {
    const int64_t K = x.dim(1);
    ins = {x, rand_bytes({N, bits == 4 ? K / 2 : K}, bits == 4 ? DType::u8 : DType::i8, 7),
           rand_f32({N, K / group}, 0.001f, 0.01f, 9)};
    Attrs attrs = paths;
    attrs.set("bits", int64_t{bits});
    attrs.set("group", int64_t{group});
    op = Op::create("matmul_wq", ins, attrs);
    for (const TensorDesc& d : op.outputs()) outs.push_back(Tensor::zeros(d.shape, d.dtype));
    ws = std::make_unique<Arena>(op.workspace_bytes() + kAlignment);
    w = ws->span(op.workspace_bytes());
  }
  void run() { op.run(ins, outs, w); }
  double weight_bytes() const { return static_cast<double>(ins[1].nbytes() + ins[2].nbytes()); }
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  if (argc > 2) set_num_threads(std::atoi(argv[2]));
  const std::string part = argc > 3 ? argv[3] : "all";
  const CpuInfo& ci = cpu_info();
  std::printf("ops-nn quantized matmul bench: %s, isa %s, %d thread(s), L2 %zu KiB, L3 %zu MiB\n",
              ci.brand.c_str(), isa_name(active_isa()), num_threads(), ci.l2_bytes >> 10,
              ci.l3_bytes >> 20);
  const double read_gbps = measure_read_gbps();
  const double peak = measure_fma_peak_gflops();
  std::printf("measured now: DRAM read %.1f GB/s, f32 FMA peak %.1f GFLOP/s\n\n", read_gbps, peak);

  struct S {
    int64_t m, n, k;
  };
  if (part == "all" || part == "decode") {
    std::printf("== decode: f32 pre-packed matmul vs weight-only int8/int4 (matmul_wq) ==\n");
    std::printf("%-16s %-16s %9s %9s %9s %8s %8s %9s\n", "shape", "kernel", "min_ms", "med_ms",
                "w_MiB", "GB/s", "GFLOP/s", "x_f32");
    for (S s : {S{1, 4096, 4096}, S{1, 11008, 4096}, S{8, 4096, 4096}}) {
      Tensor x = rand_f32({s.m, s.k}, -1, 1, 1);
      Tensor wf = rand_f32({s.n, s.k}, -0.05f, 0.05f, 2);
      PackedMatrix pf = pack_matrix(wf, /*transposed=*/true);
      Tensor yf = Tensor::zeros({s.m, s.n}, DType::f32);
      WqCase w8(x, s.n, 8, 128), w4a(x, s.n, 4, 32), w4b(x, s.n, 4, 128);
      std::vector<Contender> cs = {
          {"f32", static_cast<double>(pf.bytes()), [&] { matmul_packed(x, pf, yf); }},
          {"wq_int8_g128", w8.weight_bytes(), [&] { w8.run(); }},
          {"wq_int4_g32", w4a.weight_bytes(), [&] { w4a.run(); }},
          {"wq_int4_g128", w4b.weight_bytes(), [&] { w4b.run(); }},
      };
      std::vector<std::function<void()>> fns;
      for (auto& c : cs) fns.push_back(c.fn);
      const std::vector<Stat> st = time_side_by_side(fns, rounds);
      const std::string shape =
          std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
      for (size_t i = 0; i < cs.size(); ++i) {
        const double sec = st[i].min_ms * 1e-3;
        std::printf("%-16s %-16s %9.4f %9.4f %9.2f %8.1f %8.1f %8.2fx\n", shape.c_str(),
                    cs[i].name.c_str(), st[i].min_ms, st[i].med_ms, cs[i].weight_bytes / 1048576.0,
                    cs[i].weight_bytes / sec / 1e9,
                    2.0 * static_cast<double>(s.m * s.n * s.k) / sec / 1e9,
                    st[0].min_ms / st[i].min_ms);
      }
    }
  }
  if (part == "mid") {
    std::vector<int64_t> ms = {16, 32, 64, 128, 256};
    if (argc > 4) {
      ms.clear();
      for (const char* c = argv[4]; *c;) {
        char* e = nullptr;
        ms.push_back(std::strtoll(c, &e, 10));
        c = *e ? e + 1 : e;
      }
    }
    std::printf("== mid M: f32 pre-packed matmul vs matmul_wq tiled / panel path (group 128) ==\n");
    std::printf("%-16s %-18s %9s %9s %8s %9s\n", "shape", "kernel", "min_ms", "med_ms", "GFLOP/s",
                "x_f32");
    const int64_t n = 4096, k = 4096;
    auto tiled = [] { return Attrs{{"panel_min_m", int64_t{1} << 40}}; };
    auto panel = [](int64_t cols) {
      return Attrs{{"panel_min_m", int64_t{1}}, {"panel_cols", cols}};
    };
    for (int64_t m : ms) {
      Tensor x = rand_f32({m, k}, -1, 1, 1);
      Tensor wf = rand_f32({n, k}, -0.05f, 0.05f, 2);
      PackedMatrix pf = pack_matrix(wf, /*transposed=*/true);
      Tensor yf = Tensor::zeros({m, n}, DType::f32);
      WqCase t4(x, n, 4, 128, tiled()), p4a(x, n, 4, 128, panel(128)),
          p4b(x, n, 4, 128, panel(256)), p4c(x, n, 4, 128, panel(512)), t8(x, n, 8, 128, tiled()),
          p8(x, n, 8, 128, panel(256));
      // bf16 activations: the panel path uses bf16 panels and vdpbf16ps where
      // the CPU has AVX512_BF16.
      Tensor xb = Tensor::empty({m, k}, DType::bf16);
      convert_f32_to_bf16(x.data_as<float>(), xb.data_as<bf16>(), static_cast<size_t>(m * k));
      WqCase tb(xb, n, 4, 128, tiled()), pb(xb, n, 4, 128, panel(0));
      std::vector<std::pair<std::string, std::function<void()>>> cs = {
          {"f32", [&] { matmul_packed(x, pf, yf); }}, {"int4_tiled", [&] { t4.run(); }},
          {"int4_panel128", [&] { p4a.run(); }},      {"int4_panel256", [&] { p4b.run(); }},
          {"int4_panel512", [&] { p4c.run(); }},      {"int8_tiled", [&] { t8.run(); }},
          {"int8_panel256", [&] { p8.run(); }},       {"int4_bf16x_tiled", [&] { tb.run(); }},
          {"int4_bf16x_panel", [&] { pb.run(); }},
      };
      std::vector<std::function<void()>> fns;
      for (auto& c : cs) fns.push_back(c.second);
      const std::vector<Stat> st = time_side_by_side(fns, rounds);
      const std::string shape =
          std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      for (size_t i = 0; i < cs.size(); ++i)
        std::printf("%-16s %-18s %9.3f %9.3f %8.1f %8.2fx\n", shape.c_str(), cs[i].first.c_str(),
                    st[i].min_ms, st[i].med_ms,
                    2.0 * static_cast<double>(m * n * k) / (st[i].min_ms * 1e-3) / 1e9,
                    st[0].min_ms / st[i].min_ms);
    }
    return 0;
  }
  if (part == "decode") return 0;
  std::printf("\n== compute bound: W8A8 matmul_int8 (pre-packed, f32 output) vs f32 ==\n");
  std::printf("%-16s %-34s %9s %9s %9s %8s\n", "shape", "kernel", "min_ms", "med_ms", "GOP/s",
              "x_f32");
  for (S s : {S{512, 4096, 4096}, S{2048, 768, 768}, S{2048, 2048, 2048}}) {
    Tensor xf = rand_f32({s.m, s.k}, -1, 1, 1);
    Tensor wf = rand_f32({s.n, s.k}, -0.05f, 0.05f, 2);
    PackedMatrix pf = pack_matrix(wf, true);
    Tensor yf = Tensor::zeros({s.m, s.n}, DType::f32);
    Tensor a8 = rand_bytes({s.m, s.k}, DType::i8, 3);
    Tensor w8 = rand_bytes({s.n, s.k}, DType::i8, 4);
    PackedInt8Matrix p8 = pack_int8_matrix(w8);
    // The same weights folded into 7 bits ([-64, 63], within ONNX Runtime's
    // reduce_range): plain AVX2 then runs the vpmaddubsw kernel.
    Tensor w7 = Tensor::empty({s.n, s.k}, DType::i8);
    for (int64_t i = 0; i < w7.numel(); ++i)
      w7.data_as<int8_t>()[i] = static_cast<int8_t>(w8.data_as<int8_t>()[i] / 2);
    PackedInt8Matrix p7 = pack_int8_matrix(w7);
    Tensor as = rand_f32({s.m}, 0.001f, 0.01f, 5), wsc = rand_f32({s.n}, 0.001f, 0.01f, 6);
    Tensor y8 = Tensor::zeros({s.m, s.n}, DType::f32);
    Tensor y32 = Tensor::zeros({s.m, s.n}, DType::i32);
    Int8MatmulParams prm;
    prm.a_scale = &as;
    prm.w_scale = &wsc;
    std::vector<std::pair<std::string, std::function<void()>>> cs = {
        {"f32", [&] { matmul_packed(xf, pf, yf); }},
        {"int8_" + p8.kernel() + "_f32out", [&] { matmul_int8_packed(a8, p8, y8, prm); }},
        {"int8_" + p8.kernel() + "_i32out", [&] { matmul_int8_packed(a8, p8, y32); }},
        {"int8_" + p7.kernel() + "_f32out(7-bit w)", [&] { matmul_int8_packed(a8, p7, y8, prm); }},
    };
#ifdef OPSNN_BENCH_DNNL
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    dnnl::memory::desc a_md({s.m, s.k}, dt::s8, tag::ab), w_any({s.k, s.n}, dt::s8, tag::any),
        w_user({s.k, s.n}, dt::s8, tag::ba), c32_md({s.m, s.n}, dt::s32, tag::ab),
        cf_md({s.m, s.n}, dt::f32, tag::ab);
    dnnl::matmul::primitive_desc pd32(dnnl::matmul::desc(a_md, w_any, c32_md), eng);
    dnnl::primitive_attr attr;
    std::vector<float> oscale(static_cast<size_t>(s.n));
    for (int64_t n = 0; n < s.n; ++n)
      oscale[static_cast<size_t>(n)] = as.data_as<float>()[0] * wsc.data_as<float>()[n];
    attr.set_output_scales(1 << 1, oscale);
    dnnl::matmul::primitive_desc pdf(dnnl::matmul::desc(a_md, w_any, cf_md), attr, eng);
    dnnl::matmul prim32(pd32), primf(pdf);
    Tensor yd32 = Tensor::zeros({s.m, s.n}, DType::i32),
           ydf = Tensor::zeros({s.m, s.n}, DType::f32);
    dnnl::memory a_m(a_md, eng, a8.data()), wu(w_user, eng, w8.data());
    dnnl::memory wp32(pd32.weights_desc(), eng), wpf(pdf.weights_desc(), eng);
    dnnl::reorder(wu, wp32).execute(strm, wu, wp32);
    dnnl::reorder(wu, wpf).execute(strm, wu, wpf);
    dnnl::memory c32(c32_md, eng, yd32.data()), cf(cf_md, eng, ydf.data());
    strm.wait();
    cs.push_back(
        {"onednn_int8_f32out(per-ch scale)", [&] {
           primf.execute(strm, {{DNNL_ARG_SRC, a_m}, {DNNL_ARG_WEIGHTS, wpf}, {DNNL_ARG_DST, cf}});
           strm.wait();
         }});
    cs.push_back({"onednn_int8_i32out", [&] {
                    prim32.execute(
                        strm, {{DNNL_ARG_SRC, a_m}, {DNNL_ARG_WEIGHTS, wp32}, {DNNL_ARG_DST, c32}});
                    strm.wait();
                  }});
#endif
    std::vector<std::function<void()>> fns;
    for (auto& c : cs) fns.push_back(c.second);
    const std::vector<Stat> st = time_side_by_side(fns, std::max(3, rounds / 4));
    const std::string shape =
        std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
#ifdef OPSNN_BENCH_DNNL
    // oneDNN's int32 sums against ours (exact, tested against int64): without
    // VNNI its kernel sums u8 x s8 products in saturating 16-bit pairs, which
    // weights within 7 bits cannot overflow.
    auto check = [&](const Tensor& w, const PackedInt8Matrix& p, const char* what) {
      dnnl::memory wu_w(w_user, eng, const_cast<void*>(w.data())), wp(pd32.weights_desc(), eng);
      dnnl::reorder(wu_w, wp).execute(strm, wu_w, wp);
      prim32.execute(strm, {{DNNL_ARG_SRC, a_m}, {DNNL_ARG_WEIGHTS, wp}, {DNNL_ARG_DST, c32}});
      strm.wait();
      matmul_int8_packed(a8, p, y32);
      int64_t differ = 0, worst = 0;
      for (int64_t i = 0; i < s.m * s.n; ++i) {
        const int64_t d = std::abs(int64_t{yd32.data_as<int32_t>()[i]} - y32.data_as<int32_t>()[i]);
        differ += d != 0;
        worst = std::max(worst, d);
      }
      std::printf(
          "%-16s oneDNN's int32 sums, %s: %lld of %lld differ from the exact ones (by up to "
          "%lld)\n",
          shape.c_str(), what, static_cast<long long>(differ), static_cast<long long>(s.m * s.n),
          static_cast<long long>(worst));
    };
    check(w8, p8, "8-bit weights");
    check(w7, p7, "7-bit weights");
#endif
    for (size_t i = 0; i < cs.size(); ++i)
      std::printf("%-16s %-34s %9.3f %9.3f %9.1f %7.2fx\n", shape.c_str(), cs[i].first.c_str(),
                  st[i].min_ms, st[i].med_ms,
                  2.0 * static_cast<double>(s.m * s.n * s.k) / (st[i].min_ms * 1e-3) / 1e9,
                  st[0].min_ms / st[i].min_ms);
  }
  return 0;
}
