// Side-by-side convolution benchmark: ops-nn conv2d (NHWC, its fastest
// layout) vs oneDNN's forward convolution (oneDNN 2.6: source, weights and
// destination in the layouts it picks, format `any`; weights and source
// reordered once outside the timing), f32 and bf16, on the SD-1.5 UNet and
// VAE-decoder 3x3 / 1x1 shapes at 512x512, N = 1, 2 threads. Also times our
// conv + bias + SiLU (fused epilogue) beside our bare conv, and oneDNN's
// conv with bias and a swish post-op beside its bare one. Interleaved
// rounds (side_by_side.h); prints min and median and the speed ratios.
//
// Build: cmake -DOPSNN_BUILD_PEER_BENCH=ON (after bench/setup_peers.sh).
// Run:   build/bench/opsnn_bench_conv_peers [rounds] [shapes] [dtypes] [layout]
//   shapes: comma-separated indices into the list below (default all) or
//           shapes of one's own, CinxCoutxHxWxk[xG] (e.g. 320x32x8x142x3;
//           G: groups, 1 unless given; depthwise: 320x320x64x64x3x320);
//   dtypes: f32, bf16 or all (default);
//   layout: NHWC (default) or NCHW, ours only (oneDNN keeps `any`).
//   AVX2: OPSNN_ISA=avx2 DNNL_MAX_CPU_ISA=AVX2 build/bench/opsnn_bench_conv_peers ...
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dnnl.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/opsnn.h"
#include "peer_bench_util.h"
#include "side_by_side.h"

namespace {

using namespace opsnn;
using namespace opsnn::bench;

struct ConvShape {
  int64_t cin, cout, h, w, k, g = 1;
};

// A shape of one's own: CinxCoutxHxWxk[xG] (padding k / 2, G groups).
bool parse_shape(const std::string& tok, ConvShape* c) {
  c->g = 1;
  const int got = std::sscanf(
      tok.c_str(), "%" SCNd64 "x%" SCNd64 "x%" SCNd64 "x%" SCNd64 "x%" SCNd64 "x%" SCNd64, &c->cin,
      &c->cout, &c->h, &c->w, &c->k, &c->g);
  return (got == 5 || got == 6) && c->g >= 1 && c->cin % c->g == 0 && c->cout % c->g == 0;
}

// oneDNN's bare convolution and its conv + bias + swish, layouts `any`, the
// source and weights reordered once here, outside the timing.
struct DnnlConv {
  dnnl::convolution_forward prim, fprim;
  dnnl::memory src_p, w_p, dst_p, bias_p, dst2_p;

  DnnlConv(dnnl::engine& eng, dnnl::stream& strm, const ConvShape& s, bool bf, bool nchw, Tensor& x,
           Tensor& w, Tensor& b) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const int64_t pad = s.k / 2, cin_g = s.cin / s.g;
    const dt d = bf ? dt::bf16 : dt::f32;
    const dnnl::memory::dims src_dims{1, s.cin, s.h, s.w},
        w_dims = s.g == 1 ? dnnl::memory::dims{s.cout, s.cin, s.k, s.k}
                          : dnnl::memory::dims{s.g, s.cout / s.g, cin_g, s.k, s.k},
        dst_dims{1, s.cout, s.h, s.w}, strides{1, 1}, pads{pad, pad};
    dnnl::memory::desc src_any(src_dims, d, tag::any), w_any(w_dims, d, tag::any),
        dst_any(dst_dims, d, tag::any);
    dnnl::convolution_forward::desc cd(dnnl::prop_kind::forward_inference,
                                       dnnl::algorithm::convolution_direct, src_any, w_any, dst_any,
                                       strides, pads, pads);
    dnnl::convolution_forward::primitive_desc pd(cd, eng);
    prim = dnnl::convolution_forward(pd);
    const dnnl::memory::desc bias_md({s.cout}, d, tag::a);
    dnnl::convolution_forward::desc fcd(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, pd.src_desc(),
        pd.weights_desc(), bias_md, pd.dst_desc(), strides, pads, pads);
    dnnl::post_ops silu_post;
    silu_post.append_eltwise(1.0f, dnnl::algorithm::eltwise_swish, 1.0f, 0.0f);
    dnnl::primitive_attr fattr;
    fattr.set_post_ops(silu_post);
    dnnl::convolution_forward::primitive_desc fpd(fcd, fattr, eng);
    fprim = dnnl::convolution_forward(fpd);
    dnnl::memory src_u({src_dims, d, nchw ? tag::nchw : tag::nhwc}, eng, x.data());
    dnnl::memory w_u({w_dims, d, s.g == 1 ? tag::oihw : tag::goihw}, eng, w.data());
    src_p = dnnl::memory(pd.src_desc(), eng);
    w_p = dnnl::memory(pd.weights_desc(), eng);
    dst_p = dnnl::memory(pd.dst_desc(), eng);
    bias_p = dnnl::memory(bias_md, eng, b.data());
    dst2_p = dnnl::memory(fpd.dst_desc(), eng);
    dnnl::reorder(src_u, src_p).execute(strm, src_u, src_p);
    dnnl::reorder(w_u, w_p).execute(strm, w_u, w_p);
    strm.wait();
  }
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const std::vector<ConvShape> all = {
      {4, 320, 64, 64, 3},     {320, 320, 64, 64, 3},   {640, 640, 32, 32, 3},
      {1280, 1280, 16, 16, 3}, {1280, 1280, 8, 8, 3},   {320, 640, 32, 32, 1},
      {512, 512, 64, 64, 3},   {256, 256, 256, 256, 3}, {128, 128, 512, 512, 3}};
  const std::vector<ConvShape> shapes = pick(all, argc > 2 ? argv[2] : nullptr, parse_shape);
  const std::string dsel = argc > 3 ? argv[3] : "all";
  const bool nchw = argc > 4 && std::string(argv[4]) == "NCHW";
  double peak = 0;
  for (int i = 0; i < 2; ++i) peak = std::max(peak, measure_fma_peak_gflops());
  std::printf(
      "threads %d, isa %s; FMA peak measured now %.1f GFLOP/s; %d interleaved rounds; ours in "
      "%s\n",
      num_threads(), isa_name(active_isa()), peak, rounds, nchw ? "NCHW" : "NHWC");
  std::printf("%-5s %-22s %-14s %9s %9s %8s %7s %12s\n", "dtype", "Cin,Cout,H,W,k", "who", "min_ms",
              "med_ms", "GFLOP/s", "%peak", "ours/x(min)");
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::vector<double> r_f32, r_bf16, fused_f32, fused_bf16, dnnl_fused_f32, dnnl_fused_bf16,
      bf16_vs_f32;
  for (const char* dts : {"f32", "bf16"}) {
    const bool bf = std::string(dts) == "bf16";
    if (dsel != "all" && dsel != dts) continue;
    const DType t = bf ? DType::bf16 : DType::f32;
    for (const ConvShape& s : shapes) {
      const int64_t pad = s.k / 2;
      const int64_t cin_g = s.cin / s.g;
      Tensor xf =
          Tensor::empty(nchw ? Shape{1, s.cin, s.h, s.w} : Shape{1, s.h, s.w, s.cin}, DType::f32);
      Tensor wf = Tensor::empty({s.cout, cin_g, s.k, s.k}, DType::f32);
      Tensor bfv = Tensor::empty({s.cout}, DType::f32);
      fill_uniform(xf, 1);
      fill_uniform(wf, 2);
      fill_uniform(bfv, 3);
      Tensor x = as_dtype(xf, t), w = as_dtype(wf, t), b = as_dtype(bfv, t);
      const Attrs attrs{{"pads", std::vector<int64_t>{pad, pad, pad, pad}},
                        {"group", s.g},
                        {"layout", std::string(nchw ? "NCHW" : "NHWC")}};
      Attrs fattrs = attrs;
      fattrs.set("activation", std::string("silu"));
      // The weight (and bias) are constant operands: packed once at create.
      const TensorDesc wc = TensorDesc::constant(w), bc = TensorDesc::constant(b);
      Op bare = Op::create("conv2d", {x.desc(), wc}, attrs);
      Op fused = Op::create("conv2d", {x.desc(), wc, bc}, fattrs);
      Tensor y = Tensor::empty(bare.outputs()[0].shape, t);
      Tensor y2 = Tensor::empty(bare.outputs()[0].shape, t);
      Tensor ws = Tensor::empty(
          {static_cast<int64_t>(std::max(bare.workspace_bytes(), fused.workspace_bytes()) + 64)},
          DType::u8);
      // oneDNN: everything `any`, reorders done here, outside the timing.
      // oneDNN 2.6 has no bf16 convolution on a CPU without AVX-512 (it
      // refuses the descriptor): there ours in bf16 is timed against ours
      // in f32, as bf16 storage should never be slower than f32.
      std::optional<DnnlConv> dn;
      try {
        dn.emplace(eng, strm, s, bf, nchw, x, w, b);
      } catch (const dnnl::error&) {
        if (!bf) throw;
      }
      Op bare32;
      Tensor y32, ws32;
      if (!dn) {
        bare32 = Op::create("conv2d", {xf.desc(), TensorDesc::constant(wf)}, attrs);
        y32 = Tensor::empty(bare.outputs()[0].shape, DType::f32);
        ws32 = Tensor::empty({static_cast<int64_t>(bare32.workspace_bytes() + 64)}, DType::u8);
      }
      std::vector<Contender> cs = {op_contender(bare, {x, Tensor()}, {y}, ws)};
      if (dn) {
        cs.push_back(dnnl_contender(
            dn->prim, strm,
            {{DNNL_ARG_SRC, dn->src_p}, {DNNL_ARG_WEIGHTS, dn->w_p}, {DNNL_ARG_DST, dn->dst_p}}));
      } else {
        cs.push_back(op_contender(bare32, {xf, Tensor()}, {y32}, ws32));
      }
      cs.push_back(op_contender(fused, {x, Tensor(), Tensor()}, {y2}, ws));
      if (dn) {
        cs.push_back(dnnl_contender(dn->fprim, strm,
                                    {{DNNL_ARG_SRC, dn->src_p},
                                     {DNNL_ARG_WEIGHTS, dn->w_p},
                                     {DNNL_ARG_BIAS, dn->bias_p},
                                     {DNNL_ARG_DST, dn->dst2_p}}));
      }
      const std::vector<Stat> st = time_side_by_side(cs, rounds);
      const char* who_dnnl[] = {"opsnn", "onednn", "opsnn+bias+silu", "onednn+bias+silu"};
      const char* who_f32[] = {"opsnn", "opsnn f32", "opsnn+bias+silu"};
      const char* const* who = dn ? who_dnnl : who_f32;
      const double flops = 2.0 * static_cast<double>(s.h * s.w * s.cout * cin_g * s.k * s.k);
      char shp[48];
      std::snprintf(shp, sizeof shp, "%lld,%lld,%lld,%lld,%lld%s", static_cast<long long>(s.cin),
                    static_cast<long long>(s.cout), static_cast<long long>(s.h),
                    static_cast<long long>(s.w), static_cast<long long>(s.k),
                    s.g == 1       ? ""
                    : s.g == s.cin ? ",dw"
                                   : ",grp");
      for (size_t i = 0; i < st.size(); ++i) {
        const double gf = flops / (st[i].min_ms * 1e-3) / 1e9;
        std::printf("%-5s %-22s %-14s %9.3f %9.3f %8.1f %6.1f%% %12.2f\n", dts, shp, who[i],
                    st[i].min_ms, st[i].med_ms, gf, 100 * gf / peak, st[i].min_ms / st[0].min_ms);
      }
      (!dn ? bf16_vs_f32 : bf ? r_bf16 : r_f32).push_back(st[1].min_ms / st[0].min_ms);
      (bf ? fused_bf16 : fused_f32).push_back(st[2].min_ms / st[0].min_ms);
      if (dn) (bf ? dnnl_fused_bf16 : dnnl_fused_f32).push_back(st[3].min_ms / st[1].min_ms);
      std::fflush(stdout);
    }
  }
  std::printf(
      "speed vs oneDNN (>1 = ours faster, min to min): f32 geomean %.2f worst %.2f; bf16 geomean "
      "%.2f worst %.2f\n",
      geomean(r_f32), smallest(r_f32), geomean(r_bf16), smallest(r_bf16));
  std::printf(
      "fused bias+silu time / bare conv time: f32 geomean %.3f max %.3f; bf16 geomean "
      "%.3f max %.3f\n",
      geomean(fused_f32), largest(fused_f32), geomean(fused_bf16), largest(fused_bf16));
  std::printf(
      "oneDNN's own bias+swish time / its bare conv: f32 geomean %.3f max %.3f; bf16 geomean "
      "%.3f max %.3f\n",
      geomean(dnnl_fused_f32), largest(dnnl_fused_f32), geomean(dnnl_fused_bf16),
      largest(dnnl_fused_bf16));
  if (!bf16_vs_f32.empty()) {
    std::printf(
        "oneDNN has no bf16 convolution on this CPU; ours bf16 vs ours f32 (>1 = bf16 faster): "
        "geomean %.2f worst %.2f\n",
        geomean(bf16_vs_f32), smallest(bf16_vs_f32));
  }
  return 0;
}
