// Side-by-side resize and pooling benchmark: ops-nn `resize`, `max_pool2d`,
// `avg_pool2d` and `global_avg_pool` against oneDNN 2.6's resampling and
// pooling primitives, f32 or bf16, N = 1, on the up-sampling shapes of the SD-1.5
// UNet and VAE decoder (nearest and bilinear x2, half_pixel) and common
// pooling shapes. Both libraries on the same plain layout: ours NCHW against
// oneDNN `nchw`, ours NHWC against oneDNN `nhwc`; oneDNN's blocked `nChw16c`
// (the layout its own convolutions hand it) is timed too. Interleaved rounds
// (side_by_side.h); prints min and median, GB/s of the input and output bytes
// and our speed ratio to oneDNN on the same layout (> 1: ours faster).
//
// Build: cmake -DOPSNN_BUILD_PEER_BENCH=ON (after bench/setup_peers.sh).
// Run:   build/bench/opsnn_bench_resize_pool_peers [rounds] [cases] [dtype]
//   cases: comma-separated indices into the list below (default all);
//   dtype: f32 (default) or bf16 (both libraries on bf16 tensors).
//   AVX2: OPSNN_ISA=avx2 DNNL_MAX_CPU_ISA=AVX2 build/bench/opsnn_bench_resize_pool_peers ...
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

enum class Kind { nearest, linear, max3s2, avg2s2, global_avg };

struct Case {
  Kind kind;
  int64_t c, h, w;
};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::nearest:
      return "nearest x2";
    case Kind::linear:
      return "linear x2";
    case Kind::max3s2:
      return "max 3x3/2 p1";
    case Kind::avg2s2:
      return "avg 2x2/2";
    default:
      return "global avg";
  }
}

// Our op for case k on layout `layout` over x.
Op our_op(const Case& k, const Tensor& x, const std::string& layout) {
  Attrs a{{"layout", layout}};
  switch (k.kind) {
    case Kind::nearest:
    case Kind::linear:
      a.set("mode", std::string(k.kind == Kind::nearest ? "nearest" : "linear"));
      a.set("scales", std::vector<double>{2.0, 2.0});
      return Op::create("resize", {x.desc()}, a);
    case Kind::max3s2:
      a.set("kernel_shape", std::vector<int64_t>{3, 3});
      a.set("strides", std::vector<int64_t>{2, 2});
      a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
      return Op::create("max_pool2d", {x.desc()}, a);
    case Kind::avg2s2:
      a.set("kernel_shape", std::vector<int64_t>{2, 2});
      a.set("strides", std::vector<int64_t>{2, 2});
      return Op::create("avg_pool2d", {x.desc()}, a);
    default:
      return Op::create("global_avg_pool", {x.desc()}, a);
  }
}

// oneDNN's primitive for case k from src (dims N, C, H, W) to dst.
dnnl::primitive dnnl_prim(const Case& k, const dnnl::memory::desc& src,
                          const dnnl::memory::desc& dst, const dnnl::engine& eng) {
  using dnnl::algorithm;
  const auto inf = dnnl::prop_kind::forward_inference;
  switch (k.kind) {
    case Kind::nearest:
    case Kind::linear: {
      const dnnl::resampling_forward::desc d(
          inf,
          k.kind == Kind::nearest ? algorithm::resampling_nearest : algorithm::resampling_linear,
          src, dst);
      return dnnl::resampling_forward(dnnl::resampling_forward::primitive_desc(d, eng));
    }
    case Kind::max3s2: {
      const dnnl::pooling_forward::desc d(inf, algorithm::pooling_max, src, dst, {2, 2}, {3, 3},
                                          {1, 1}, {1, 1});
      return dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(d, eng));
    }
    case Kind::avg2s2: {
      const dnnl::pooling_forward::desc d(inf, algorithm::pooling_avg_exclude_padding, src, dst,
                                          {2, 2}, {2, 2}, {0, 0}, {0, 0});
      return dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(d, eng));
    }
    default: {
      const dnnl::pooling_forward::desc d(inf, algorithm::pooling_avg_exclude_padding, src, dst,
                                          {1, 1}, {k.h, k.w}, {0, 0}, {0, 0});
      return dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(d, eng));
    }
  }
}

void out_hw(const Case& k, int64_t* oh, int64_t* ow) {
  switch (k.kind) {
    case Kind::nearest:
    case Kind::linear:
      *oh = 2 * k.h, *ow = 2 * k.w;
      return;
    case Kind::max3s2:
      *oh = (k.h + 2 - 3) / 2 + 1, *ow = (k.w + 2 - 3) / 2 + 1;
      return;
    case Kind::avg2s2:
      *oh = k.h / 2, *ow = k.w / 2;
      return;
    default:
      *oh = *ow = 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const std::vector<Case> all = {
      // SD-1.5 UNet up-samplers (nearest x2 before a 3x3 conv).
      {Kind::nearest, 1280, 8, 8},
      {Kind::nearest, 1280, 16, 16},
      {Kind::nearest, 640, 32, 32},
      // VAE decoder up-samplers.
      {Kind::nearest, 512, 64, 64},
      {Kind::nearest, 512, 128, 128},
      {Kind::nearest, 256, 256, 256},
      // Bilinear x2 (half_pixel) on the same feature maps.
      {Kind::linear, 640, 32, 32},
      {Kind::linear, 512, 128, 128},
      // Pooling: a ResNet-style stem, a 2x2 down-sampler, a global average.
      {Kind::max3s2, 64, 112, 112},
      {Kind::avg2s2, 256, 64, 64},
      {Kind::global_avg, 512, 64, 64}};
  const std::vector<Case> cases = pick(all, argc > 2 ? argv[2] : nullptr);
  const bool bf = argc > 3 && std::string(argv[3]) == "bf16";
  const DType xt = bf ? DType::bf16 : DType::f32;
  const size_t es = dtype_size(xt);
  std::printf(
      "threads %d, isa %s; copy bandwidth measured now %.1f GB/s; %d interleaved rounds; %s\n",
      num_threads(), isa_name(active_isa()), measure_copy_gbps(), rounds, dtype_name(xt));
  std::printf("%-13s %-15s %-16s %9s %9s %7s %12s\n", "op", "C,H,W", "who", "min_ms", "med_ms",
              "GB/s", "ours/x(min)");
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  using tag = dnnl::memory::format_tag;
  const auto dt = bf ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
  std::vector<double> r_nchw, r_nhwc;
  for (const Case& k : cases) {
    int64_t oh = 0, ow = 0;
    out_hw(k, &oh, &ow);
    Tensor xf_cf = Tensor::empty({1, k.c, k.h, k.w}, DType::f32);
    Tensor xf_cl = Tensor::empty({1, k.h, k.w, k.c}, DType::f32);
    fill_uniform(xf_cf, 1);
    fill_uniform(xf_cl, 1);
    Tensor x_cf = Tensor::empty(xf_cf.shape(), xt), x_cl = Tensor::empty(xf_cl.shape(), xt);
    copy_into(xf_cf, x_cf);
    copy_into(xf_cl, x_cl);
    Op op_cf = our_op(k, x_cf, "NCHW"), op_cl = our_op(k, x_cl, "NHWC");
    Tensor y_cf = Tensor::empty(op_cf.outputs()[0].shape, xt);
    Tensor y_cl = Tensor::empty(op_cl.outputs()[0].shape, xt);
    Tensor ws = Tensor::empty(
        {static_cast<int64_t>(std::max(op_cf.workspace_bytes(), op_cl.workspace_bytes()) + 64)},
        DType::u8);
    const dnnl::memory::dims sd{1, k.c, k.h, k.w}, dd{1, k.c, oh, ow};
    std::vector<dnnl::primitive> prims;
    std::vector<dnnl::memory> srcs, dsts;
    for (tag t : {tag::nchw, tag::nhwc, tag::nChw16c}) {
      const dnnl::memory::desc smd(sd, dt, t), dmd(dd, dt, t);
      prims.push_back(dnnl_prim(k, smd, dmd, eng));
      srcs.emplace_back(smd, eng);
      dsts.emplace_back(dmd, eng);
      // The same values (their order does not change the time).
      const size_t n = std::min<size_t>(x_cf.nbytes(), smd.get_size());
      std::memcpy(srcs.back().get_data_handle(), x_cf.data(), n);
    }
    auto ours = [&](Op& op, Tensor& x, Tensor& y) {
      return Contender{[&] {
                         std::vector<Tensor> in{x};
                         std::vector<Tensor> out{y};
                         op.run(in, out, {static_cast<std::byte*>(ws.data()), ws.nbytes()});
                       },
                       20};
    };
    auto theirs = [&](size_t i) {
      return Contender{[&, i] {
                         prims[i].execute(strm, {{DNNL_ARG_SRC, srcs[i]}, {DNNL_ARG_DST, dsts[i]}});
                         strm.wait();
                       },
                       20};
    };
    std::vector<Contender> cs = {ours(op_cf, x_cf, y_cf), theirs(0), ours(op_cl, x_cl, y_cl),
                                 theirs(1), theirs(2)};
    const std::vector<Stat> st = time_side_by_side(cs, rounds);
    const char* who[] = {"opsnn NCHW", "onednn nchw", "opsnn NHWC", "onednn nhwc",
                         "onednn nChw16c"};
    const double bytes = static_cast<double>(es) * static_cast<double>(k.c * (k.h * k.w + oh * ow));
    char shp[40];
    std::snprintf(shp, sizeof shp, "%lld,%lld,%lld", static_cast<long long>(k.c),
                  static_cast<long long>(k.h), static_cast<long long>(k.w));
    for (size_t i = 0; i < st.size(); ++i) {
      const size_t mine = i < 2 ? 0 : 2;
      std::printf("%-13s %-15s %-16s %9.3f %9.3f %7.1f %12.2f\n", kind_name(k.kind), shp, who[i],
                  st[i].min_ms, st[i].med_ms, bytes / (st[i].min_ms * 1e-3) / 1e9,
                  st[i].min_ms / st[mine].min_ms);
    }
    r_nchw.push_back(st[1].min_ms / st[0].min_ms);
    r_nhwc.push_back(st[3].min_ms / st[2].min_ms);
    std::fflush(stdout);
  }
  std::printf(
      "speed vs oneDNN on the same layout (>1 = ours faster, min to min): NCHW geomean %.2f worst "
      "%.2f; NHWC geomean %.2f worst %.2f\n",
      geomean(r_nchw), smallest(r_nchw), geomean(r_nhwc), smallest(r_nhwc));
  return 0;
}
