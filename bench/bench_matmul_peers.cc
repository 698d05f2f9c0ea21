// Side-by-side GEMM benchmark: ops-nn (pre-packed B) vs OpenBLAS cblas_sgemm
// vs oneDNN's matmul primitive (weights in its preferred packed layout), f32
// and bf16, in one process on the (M, N, K) list. Prints GFLOP/s (and
// GB/s of weight traffic for M <= 16), the fraction of the FMA peak / read
// bandwidth measured in the same run, and our ratio to each peer. Decode
// shapes (M <= 16) also time a "plain read" of the weight bytes as one more
// contender of the same interleaved rounds: the read bandwidth of this shared
// VM swings 2x within a minute (38-83 GB/s), so the fraction of the probe
// measured at start says little; the fraction of the plain read measured
// round by round beside ours is the figure to judge the weight stream by.
//
// Build: cmake -DOPSNN_BUILD_PEER_BENCH=ON (after bench/setup_peers.sh).
// Run:   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/bench/opsnn_bench_matmul_peers [reps]
//        [shapes] [dtypes]
//   shapes: comma-separated indices into the shape list (0-9, default all);
//   dtypes: f32, bf16 or all (default) -- to keep a single run short.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/opsnn.h"
#include "side_by_side.h"

namespace {

using namespace opsnn;
using namespace opsnn::bench;

struct Shape3 {
  int64_t m, n, k;
};

void fill(Tensor& t, uint32_t seed) {
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const std::vector<Shape3> all_shapes = {
      {1, 4096, 4096},   {1, 11008, 4096}, {8, 4096, 4096},  {512, 4096, 4096}, {2048, 768, 768},
      {2048, 3072, 768}, {4096, 320, 320}, {4096, 320, 768}, {1024, 640, 640},  {2048, 2048, 2048}};
  const std::vector<Shape3> shapes = pick(all_shapes, argc > 2 ? argv[2] : nullptr);
  const std::string dsel = argc > 3 ? argv[3] : "all";
  // OpenBLAS starts its worker threads when it is loaded, and they spin for
  // ~0.1 s: a probe run meanwhile had one core and read half the FMA peak.
  // Let them settle, and keep the better of two probes.
  double peak = 0, bw = 0;
  for (int i = 0; i < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    peak = std::max(peak, measure_fma_peak_gflops());
    bw = std::max(bw, measure_read_gbps());
  }
  std::printf(
      "threads %d, isa %s; measured now: FMA peak %.1f GFLOP/s, read %.1f GB/s; %d interleaved "
      "rounds\n",
      num_threads(), isa_name(active_isa()), peak, bw, rounds);
  std::printf("%-6s %-18s %-10s %8s %9s %7s %9s %9s %9s %7s\n", "dtype", "M,N,K", "who", "min_ms",
              "med_ms", "GFLOP/s", "GB/s(W)", "%peak", "%readbw", "ours/x");
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  std::vector<double> ratio_blas, ratio_dnnl_f32, ratio_dnnl_bf16, ratio_best_f32;
  for (const char* dts : {"f32", "bf16"}) {
    const bool bf = std::string(dts) == "bf16";
    if (dsel != "all" && dsel != dts) continue;
    for (const Shape3& s : shapes) {
      const int64_t M = s.m, N = s.n, K = s.k;
      Tensor a = Tensor::empty({M, K}, DType::f32), b = Tensor::empty({K, N}, DType::f32);
      Tensor y = Tensor::zeros({M, N}, DType::f32), y2 = Tensor::zeros({M, N}, DType::f32);
      fill(a, 1);
      fill(b, 2);
      Tensor ab = a, bb = b, yb = y;
      if (bf) {
        ab = Tensor::empty({M, K}, DType::bf16);
        bb = Tensor::empty({K, N}, DType::bf16);
        yb = Tensor::zeros({M, N}, DType::bf16);
        copy_into(a, ab);
        copy_into(b, bb);
      }
      PackedMatrix pw = pack_matrix(bb);
      // oneDNN: weights format 'any' (its packed layout), reordered once.
      const dt d = bf ? dt::bf16 : dt::f32;
      dnnl::memory::desc a_md({M, K}, d, tag::ab), b_any({K, N}, d, tag::any),
          c_md({M, N}, d, tag::ab), b_user({K, N}, d, tag::ab);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, c_md), eng);
      dnnl::matmul prim(pd);
      dnnl::memory a_m(a_md, eng, ab.data()), c_m(c_md, eng, bf ? yb.data() : y2.data());
      dnnl::memory b_u(b_user, eng, bb.data()), b_p(pd.weights_desc(), eng);
      dnnl::reorder(b_u, b_p).execute(strm, b_u, b_p);
      strm.wait();
      Tensor yours = bf ? Tensor::zeros({M, N}, DType::bf16) : y;
      std::vector<Contender> fns = {
          {[&] { matmul_packed(ab, pw, yours); }, 20},
          {[&] {
             prim.execute(strm,
                          {{DNNL_ARG_SRC, a_m}, {DNNL_ARG_WEIGHTS, b_p}, {DNNL_ARG_DST, c_m}});
             strm.wait();
           },
           20}};
      if (!bf)
        fns.push_back({[&] {
                         cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M),
                                     static_cast<int>(N), static_cast<int>(K), 1.0f,
                                     a.data_as<float>(), static_cast<int>(K), b.data_as<float>(),
                                     static_cast<int>(N), 0.0f, y2.data_as<float>(),
                                     static_cast<int>(N));
                       },
                       150});
      std::vector<std::string> who = {"opsnn", "onednn"};
      if (!bf) who.push_back("openblas");
      // Decode shapes stream the weights: a plain read of a copy of our packed
      // panels (the bytes our kernel streams, in a buffer no other contender
      // touches, so none finds it in the L3 after another), timed in the same
      // rounds, is the read reference this machine's bandwidth swings cannot
      // separate from ours.
      volatile uint32_t sink = 0;
      const bool decode = M <= 16;
      Tensor panels;
      if (decode) {
        panels = Tensor::empty({static_cast<int64_t>(pw.bytes())}, DType::u8);
        std::memcpy(panels.data(), pw.data(), pw.bytes());
        fns.push_back({[&] { sink = stream_read(panels.data(), panels.nbytes()); }, 20});
        who.push_back("plain read");
      }
      std::vector<Stat> st = time_side_by_side(fns, rounds);
      (void)sink;
      const double flops = 2.0 * M * N * K, wbytes = static_cast<double>(K * N) * (bf ? 2 : 4);
      for (size_t i = 0; i < st.size(); ++i) {
        const double sec = st[i].min_ms * 1e-3;
        const double gf = flops / sec / 1e9, gb = wbytes / sec / 1e9;
        char shp[32];
        std::snprintf(shp, sizeof shp, "%lld,%lld,%lld", static_cast<long long>(M),
                      static_cast<long long>(N), static_cast<long long>(K));
        const double ratio = st[i].min_ms / st[0].min_ms;  // >1: ours faster
        const bool is_read = decode && i + 1 == st.size();
        char gfs[16] = "-", pks[16] = "-";
        if (!is_read) {
          std::snprintf(gfs, sizeof gfs, "%.1f", gf);
          std::snprintf(pks, sizeof pks, "%.1f%%", 100 * gf / peak);
        }
        std::printf("%-6s %-18s %-10s %8.3f %9.3f %7s %9s %9s %9s %7.2f\n", dts, shp,
                    who[i].c_str(), st[i].min_ms, st[i].med_ms, gfs,
                    decode ? std::to_string(static_cast<int>(gb)).c_str() : "-", pks,
                    decode ? (std::to_string(static_cast<int>(100 * gb / bw)) + "%").c_str() : "-",
                    i ? ratio : 1.0);
      }
      if (decode)
        std::printf(
            "       ours streams the weights at %.0f%% of the plain read's speed in the same "
            "rounds (min to min), %.0f%% (median to median)\n",
            100 * st.back().min_ms / st[0].min_ms, 100 * st.back().med_ms / st[0].med_ms);
      if (bf)
        ratio_dnnl_bf16.push_back(st[1].min_ms / st[0].min_ms);
      else {
        ratio_dnnl_f32.push_back(st[1].min_ms / st[0].min_ms);
        ratio_blas.push_back(st[2].min_ms / st[0].min_ms);
        ratio_best_f32.push_back(std::min(st[1].min_ms, st[2].min_ms) / st[0].min_ms);
      }
    }
  }
  std::printf(
      "geomean ours/peer (speed ratio, >1 = ours faster): f32 vs oneDNN %.2f, f32 vs OpenBLAS "
      "%.2f, bf16 vs "
      "oneDNN %.2f\n",
      geomean(ratio_dnnl_f32), geomean(ratio_blas), geomean(ratio_dnnl_bf16));
  if (!ratio_best_f32.empty())
    std::printf("f32 vs the better of oneDNN and OpenBLAS per shape: geomean %.2f, lowest %.2f\n",
                geomean(ratio_best_f32), smallest(ratio_best_f32));
  return 0;
}
