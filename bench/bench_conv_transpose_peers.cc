// Side-by-side transposed-convolution benchmark: ops-nn conv_transpose2d
// against oneDNN 2.6's deconvolution_forward, f32 or bf16, N = 1, 2 threads,
// on decoder up-sampling shapes (kernel 4 stride 2 pad 1, and kernel 2
// stride 2: each output pixel of the doubled map gathers its taps). oneDNN
// picks its layouts (format `any`), weights and source reordered outside the
// timing; ours NHWC or NCHW with the weight a constant operand. Interleaved
// rounds (side_by_side.h); prints min and median, GFLOP/s and the speed
// ratio (> 1: ours faster).
//
// Build: cmake -DOPSNN_BUILD_PEER_BENCH=ON (after bench/setup_peers.sh).
// Run:   build/bench/opsnn_bench_conv_transpose_peers [rounds] [shapes] [dtype] [layout]
//   shapes: comma-separated indices into the list below (default all);
//   dtype: f32 (default) or bf16; layout: NHWC (default) or NCHW, ours only.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dnnl.hpp>
#include <string>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/opsnn.h"
#include "peer_bench_util.h"
#include "side_by_side.h"

namespace {

using namespace opsnn;
using namespace opsnn::bench;

struct Shape4 {
  int64_t cin, cout, h, w, k, s, p;  // input map h x w, kernel k, stride s, pad p
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const std::vector<Shape4> all = {{512, 256, 32, 32, 4, 2, 1},
                                   {256, 128, 64, 64, 4, 2, 1},
                                   {128, 64, 128, 128, 4, 2, 1},
                                   {320, 320, 32, 32, 2, 2, 0},
                                   {640, 320, 16, 16, 4, 2, 1}};
  const std::vector<Shape4> shapes = pick(all, argc > 2 ? argv[2] : nullptr);
  const bool bf = argc > 3 && std::string(argv[3]) == "bf16";
  const bool nchw = argc > 4 && std::string(argv[4]) == "NCHW";
  const DType t = bf ? DType::bf16 : DType::f32;
  double peak = 0;
  for (int i = 0; i < 2; ++i) peak = std::max(peak, measure_fma_peak_gflops());
  std::printf(
      "threads %d, isa %s; FMA peak measured now %.1f GFLOP/s; %d interleaved rounds; %s, ours "
      "%s\n",
      num_threads(), isa_name(active_isa()), peak, rounds, dtype_name(t), nchw ? "NCHW" : "NHWC");
  std::printf("%-26s %-8s %9s %9s %8s %7s %12s\n", "Cin,Cout,H,W,k,s,p", "who", "min_ms", "med_ms",
              "GFLOP/s", "%peak", "ours/x(min)");
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  using tag = dnnl::memory::format_tag;
  const auto d = bf ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
  std::vector<double> ratios;
  for (const Shape4& s : shapes) {
    const int64_t oh = (s.h - 1) * s.s - 2 * s.p + s.k, ow = (s.w - 1) * s.s - 2 * s.p + s.k;
    Tensor xf = Tensor::empty(
        nchw ? opsnn::Shape{1, s.cin, s.h, s.w} : opsnn::Shape{1, s.h, s.w, s.cin}, DType::f32);
    Tensor wf = Tensor::empty({s.cin, s.cout, s.k, s.k}, DType::f32);  // ONNX: [C, Cout, k, k]
    fill_uniform(xf, 1);
    fill_uniform(wf, 2);
    Tensor x = as_dtype(xf, t), w = as_dtype(wf, t);
    const Attrs attrs{{"strides", std::vector<int64_t>{s.s, s.s}},
                      {"pads", std::vector<int64_t>{s.p, s.p, s.p, s.p}},
                      {"layout", std::string(nchw ? "NCHW" : "NHWC")}};
    Op op = Op::create("conv_transpose2d", {x.desc(), TensorDesc::constant(w)}, attrs);
    Tensor y = Tensor::empty(op.outputs()[0].shape, t);
    Tensor ws = Tensor::empty({static_cast<int64_t>(op.workspace_bytes() + 64)}, DType::u8);
    // oneDNN: weights {Cout, Cin, k, k} as `iohw` over ONNX's [Cin, Cout, k, k].
    const dnnl::memory::dims src_dims{1, s.cin, s.h, s.w}, w_dims{s.cout, s.cin, s.k, s.k},
        dst_dims{1, s.cout, oh, ow}, strides{s.s, s.s}, pads{s.p, s.p};
    dnnl::memory::desc src_any(src_dims, d, tag::any), w_any(w_dims, d, tag::any),
        dst_any(dst_dims, d, tag::any);
    dnnl::deconvolution_forward::desc dd(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::deconvolution_direct, src_any, w_any,
                                         dst_any, strides, pads, pads);
    dnnl::deconvolution_forward::primitive_desc pd(dd, eng);
    dnnl::deconvolution_forward prim(pd);
    dnnl::memory src_u({src_dims, d, nchw ? tag::nchw : tag::nhwc}, eng, x.data());
    dnnl::memory w_u({w_dims, d, tag::iohw}, eng, w.data());
    dnnl::memory src_p(pd.src_desc(), eng), w_p(pd.weights_desc(), eng), dst_p(pd.dst_desc(), eng);
    dnnl::reorder(src_u, src_p).execute(strm, src_u, src_p);
    dnnl::reorder(w_u, w_p).execute(strm, w_u, w_p);
    strm.wait();
    std::vector<Contender> cs = {
        op_contender(op, {x, Tensor()}, {y}, ws),
        dnnl_contender(prim, strm,
                       {{DNNL_ARG_SRC, src_p}, {DNNL_ARG_WEIGHTS, w_p}, {DNNL_ARG_DST, dst_p}})};
    const std::vector<Stat> st = time_side_by_side(cs, rounds);
    const char* who[] = {"opsnn", "onednn"};
    const double flops = 2.0 * static_cast<double>(s.h * s.w * s.cin * s.cout * s.k * s.k);
    char shp[48];
    std::snprintf(
        shp, sizeof shp, "%lld,%lld,%lld,%lld,%lld,%lld,%lld", static_cast<long long>(s.cin),
        static_cast<long long>(s.cout), static_cast<long long>(s.h), static_cast<long long>(s.w),
        static_cast<long long>(s.k), static_cast<long long>(s.s), static_cast<long long>(s.p));
    for (size_t i = 0; i < st.size(); ++i) {
      const double gf = flops / (st[i].min_ms * 1e-3) / 1e9;
      std::printf("%-26s %-8s %9.3f %9.3f %8.1f %6.1f%% %12.2f\n", shp, who[i], st[i].min_ms,
                  st[i].med_ms, gf, 100 * gf / peak, st[i].min_ms / st[0].min_ms);
    }
    // Both computed the same thing: oneDNN's output in our layout, compared.
    Tensor yd = Tensor::empty(y.shape(), t);
    dnnl::memory dst_u({dst_dims, d, nchw ? tag::nchw : tag::nhwc}, eng, yd.data());
    dnnl::reorder(dst_p, dst_u).execute(strm, dst_p, dst_u);
    strm.wait();
    double diff = 0, mag = 0;
    for (int64_t i = 0; i < y.numel(); ++i) {
      diff = std::max(diff, std::abs(y.flat_get(i) - yd.flat_get(i)));
      mag = std::max(mag, std::abs(yd.flat_get(i)));
    }
    std::printf("%-26s max |ours - oneDNN| %.3g (max |y| %.3g)\n", shp, diff, mag);
    ratios.push_back(st[1].min_ms / st[0].min_ms);
    std::fflush(stdout);
  }
  std::printf("speed vs oneDNN (>1 = ours faster, min to min): geomean %.2f worst %.2f\n",
              geomean(ratios), smallest(ratios));
  return 0;
}
