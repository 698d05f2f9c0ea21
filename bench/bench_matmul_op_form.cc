// The matmul op form (weights as plain tensors) against the pre-packed form,
// side by side in one process (docs/performance.md "Op form on unpacked
// weights"):
//
//   decode  (M = 1, 8; N = 4096, 11008; K = 4096; f32, bf16): `matmul` on a
//           [K, N] weight and `linear` on an [N, K] weight, `matmul_packed`,
//           and a plain read (stream_read) of the same plain weight bytes.
//           Every contender cycles through its own copies of the weights
//           (256 MiB or more in all), so each call streams them from memory
//           as a model's layer does.
//   compute (2048x768x768, 2048^3): the op form and the packed form, f32 and
//           bf16 (run under OPSNN_ISA=avx2 for a CPU without bf16 dot
//           products).
//
//   large   (M = 64, 512 on 4096x4096; 2048x768x768): the op form (B staged
//           panel by panel) against the pre-packed form, both on a warm B.
//
// Usage: opsnn_bench_matmul_op_form [rounds=7] [decode|compute|large|all] [max decode N]
//        [decode M only] [decode dtype only: f32|bf16]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/memory.h"
#include "opsnn/opsnn.h"
#include "side_by_side.h"

using namespace opsnn;
using opsnn::bench::Contender;
using opsnn::bench::Stat;
using opsnn::bench::time_side_by_side;

namespace {

Tensor random(const Shape& s, DType t, uint32_t seed) {
  Tensor f = Tensor::empty(s, DType::f32);
  uint32_t x = seed * 2654435761u + 1;
  for (int64_t i = 0; i < f.numel(); ++i) {
    x = x * 1664525u + 1013904223u;
    f.data_as<float>()[i] = static_cast<float>(x >> 8) / 16777216.0f - 0.5f;
  }
  if (t == DType::f32) return f;
  Tensor d = Tensor::empty(s, t);
  copy_into(f, d);
  return d;
}

size_t copies_for(size_t bytes) {
  return std::clamp<size_t>((size_t{256} << 20) / std::max<size_t>(bytes, 1), 2, 16);
}

void decode(int rounds, int64_t max_n, int64_t only_m, const std::string& only_t) {
  struct S {
    int64_t m, n, k;
  };
  const double bw = measure_read_gbps();
  std::printf(
      "decode: threads %d, isa %s, read probe %.1f GB/s, %d rounds; GB/s of the weight bytes\n",
      num_threads(), isa_name(active_isa()), bw, rounds);
  std::printf("%-5s %-14s %-12s %8s %8s %7s %10s %10s\n", "dtype", "M,N,K", "who", "min_ms",
              "med_ms", "GB/s", "pk/op min", "pk/op med");
  for (DType t : {DType::f32, DType::bf16})
    for (S s : {S{1, 4096, 4096}, S{1, 11008, 4096}, S{8, 4096, 4096}, S{8, 11008, 4096}}) {
      if (s.n > max_n || (only_m > 0 && s.m != only_m)) continue;
      if (!only_t.empty() && only_t != dtype_name(t)) continue;
      const Tensor x = random({s.m, s.k}, t, 1);
      Tensor y = Tensor::zeros({s.m, s.n}, t);
      const size_t wbytes = static_cast<size_t>(s.k * s.n) * dtype_size(t);
      const size_t n = copies_for(wbytes);
      std::vector<Tensor> b, w;  // [K, N] for matmul, [N, K] for linear
      std::vector<PackedMatrix> pb;
      for (size_t i = 0; i < n; ++i) {
        b.push_back(random({s.k, s.n}, t, 2 + static_cast<uint32_t>(i)));
        w.push_back(random({s.n, s.k}, t, 40 + static_cast<uint32_t>(i)));
        pb.push_back(pack_matrix(b.back()));
      }
      Op mm = Op::create("matmul", {x.desc(), b[0].desc()});
      Op lin = Op::create("linear", {x.desc(), w[0].desc()});
      const size_t wsb = std::max(mm.workspace_bytes(), lin.workspace_bytes());
      Arena arena(wsb + kAlignment);
      const auto ws = arena.span(wsb);
      size_t i0 = 0, i1 = 0, i2 = 0, i3 = 0;
      volatile uint32_t sink = 0;
      std::vector<Contender> cs = {{[&] {
                                      std::vector<Tensor> in{x, b[i0++ % n]};
                                      mm.run(in, {&y, 1}, ws);
                                    },
                                    0},
                                   {[&] {
                                      std::vector<Tensor> in{x, w[i1++ % n]};
                                      lin.run(in, {&y, 1}, ws);
                                    },
                                    0},
                                   {[&] { matmul_packed(x, pb[i2++ % n], y); }, 0},
                                   {[&] {
                                      const Tensor& r = b[i3++ % n];
                                      sink = stream_read(r.data(), r.nbytes());
                                    },
                                    0}};
      const char* who[] = {"matmul op", "linear op", "packed", "plain read"};
      const std::vector<Stat> st = time_side_by_side(cs, rounds);
      (void)sink;
      char shp[40];
      std::snprintf(shp, sizeof shp, "%lld,%lld,%lld", static_cast<long long>(s.m),
                    static_cast<long long>(s.n), static_cast<long long>(s.k));
      for (size_t i = 0; i < st.size(); ++i) {
        std::printf("%-5s %-14s %-12s %8.3f %8.3f %7.1f", dtype_name(t), shp, who[i], st[i].min_ms,
                    st[i].med_ms, static_cast<double>(wbytes) / st[i].min_ms / 1e6);
        if (i != 2)  // packed time / this one: >= 0.8 wanted for the op forms
          std::printf(" %10.2f %10.2f", st[2].min_ms / st[i].min_ms, st[2].med_ms / st[i].med_ms);
        std::printf("\n");
      }
    }
}

void compute(int rounds) {
  struct S {
    int64_t m, n, k;
  };
  std::printf("compute: threads %d, isa %s, %d rounds; bf16/f32 is the speed ratio\n",
              num_threads(), isa_name(active_isa()), rounds);
  std::printf("%-14s %-10s %9s %9s %9s %9s %8s %8s\n", "M,N,K", "form", "f32 min", "f32 med",
              "bf16 min", "bf16 med", "x min", "x med");
  for (S s : {S{2048, 768, 768}, S{2048, 2048, 2048}}) {
    Tensor x[2], b[2], y[2];
    PackedMatrix pb[2];
    std::vector<Op> ops;
    const DType ts[2] = {DType::f32, DType::bf16};
    for (int i = 0; i < 2; ++i) {
      x[i] = random({s.m, s.k}, ts[i], 1);
      b[i] = random({s.k, s.n}, ts[i], 2);
      y[i] = Tensor::zeros({s.m, s.n}, ts[i]);
      pb[i] = pack_matrix(b[i]);
      ops.push_back(Op::create("matmul", {x[i].desc(), b[i].desc()}));
    }
    const size_t wsb = std::max(ops[0].workspace_bytes(), ops[1].workspace_bytes());
    Arena arena(wsb + kAlignment);
    const auto ws = arena.span(wsb);
    std::vector<Contender> cs;
    for (int i = 0; i < 2; ++i)
      cs.push_back({[&, i] {
                      std::vector<Tensor> in{x[i], b[i]};
                      ops[static_cast<size_t>(i)].run(in, {&y[i], 1}, ws);
                    },
                    0});
    for (int i = 0; i < 2; ++i) cs.push_back({[&, i] { matmul_packed(x[i], pb[i], y[i]); }, 0});
    const std::vector<Stat> st = time_side_by_side(cs, rounds);
    char shp[40];
    std::snprintf(shp, sizeof shp, "%lld,%lld,%lld", static_cast<long long>(s.m),
                  static_cast<long long>(s.n), static_cast<long long>(s.k));
    for (int f = 0; f < 2; ++f) {
      const Stat &a = st[static_cast<size_t>(2 * f)], &c = st[static_cast<size_t>(2 * f + 1)];
      std::printf("%-14s %-10s %9.3f %9.3f %9.3f %9.3f %8.2f %8.2f\n", shp, f ? "packed" : "op",
                  a.min_ms, a.med_ms, c.min_ms, c.med_ms, a.min_ms / c.min_ms, a.med_ms / c.med_ms);
    }
  }
}

// The op form above M = 16 stages B panel by panel from the tensor
// (gemm::run_staged_b; it packed all of B per call before): `matmul` on a
// [K, N] weight and `linear` on an [N, K] weight against the pre-packed form
// (same B, warm). packed / op = 1 - what staging costs.
void large(int rounds) {
  struct S {
    int64_t m, n, k;
  };
  std::printf("large M: threads %d, isa %s, %d rounds; packed/op = 1 - the staging's share\n",
              num_threads(), isa_name(active_isa()), rounds);
  std::printf("%-5s %-14s %9s %9s %9s %9s %9s %9s %7s %7s %7s %7s\n", "dtype", "M,N,K", "mm min",
              "mm med", "lin min", "lin med", "pk min", "pk med", "pk/mm", "md", "pk/lin", "md");
  for (DType t : {DType::f32, DType::bf16})
    for (S s : {S{64, 4096, 4096}, S{512, 4096, 4096}, S{2048, 768, 768}}) {
      const Tensor x = random({s.m, s.k}, t, 1), b = random({s.k, s.n}, t, 2),
                   bt = random({s.n, s.k}, t, 3);
      Tensor y = Tensor::zeros({s.m, s.n}, t);
      const PackedMatrix pb = pack_matrix(b);
      Op mm = Op::create("matmul", {x.desc(), b.desc()});
      Op lin = Op::create("linear", {x.desc(), bt.desc()});
      Arena arena(std::max(mm.workspace_bytes(), lin.workspace_bytes()) + kAlignment);
      const auto ws = arena.span(std::max(mm.workspace_bytes(), lin.workspace_bytes()));
      std::vector<Contender> cs = {{[&] {
                                      std::vector<Tensor> in{x, b};
                                      mm.run(in, {&y, 1}, ws);
                                    },
                                    0},
                                   {[&] {
                                      std::vector<Tensor> in{x, bt};
                                      lin.run(in, {&y, 1}, ws);
                                    },
                                    0},
                                   {[&] { matmul_packed(x, pb, y); }, 0}};
      const std::vector<Stat> st = time_side_by_side(cs, rounds);
      char shp[40];
      std::snprintf(shp, sizeof shp, "%lld,%lld,%lld", static_cast<long long>(s.m),
                    static_cast<long long>(s.n), static_cast<long long>(s.k));
      std::printf("%-5s %-14s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %7.2f %7.2f %7.2f %7.2f\n",
                  dtype_name(t), shp, st[0].min_ms, st[0].med_ms, st[1].min_ms, st[1].med_ms,
                  st[2].min_ms, st[2].med_ms, st[2].min_ms / st[0].min_ms,
                  st[2].med_ms / st[0].med_ms, st[2].min_ms / st[1].min_ms,
                  st[2].med_ms / st[1].med_ms);
    }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const std::string what = argc > 2 ? argv[2] : "all";
  const int64_t max_n = argc > 3 ? std::atoll(argv[3]) : INT64_MAX;
  const int64_t only_m = argc > 4 ? std::atoll(argv[4]) : 0;
  const std::string only_t = argc > 5 ? argv[5] : "";
  if (what == "all" || what == "decode") decode(rounds, max_n, only_m, only_t);
  if (what == "all" || what == "compute") compute(rounds);
  if (what == "all" || what == "large") large(rounds);
  return 0;
}
