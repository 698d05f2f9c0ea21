// Fused attention benchmark on the five cases: the fused kernel, our
// unfused path (same micro-kernels, one tile spanning the whole score matrix,
// so the Lq x Lk scores are written to memory and read back) and, when given
// a results file from bench/attention/compare_sdpa.py, PyTorch's
// scaled_dot_product_attention. The FMA peak and the read bandwidth are
// measured in the same run.
//
//   bench/attention/run_compare.sh   (sets up torch; PyTorch and ours side by
//                                     side in Python, then this benchmark)
//   build/bench/opsnn_bench_sdpa [--torch FILE] [--threads N] [--dtype f32|bf16] [--case NAME]
//                                [--unfused 0|1] [--seconds S] [--lk N] [--hot 1]
// --lk replaces the keys of the cases; --hot 1 times decode on one K/V set
// that stays in cache (the compute alone, no memory stream). Decode from
// memory also times a plain read of the same K/V sets in the same rounds
// (stream_read): the read reference next to the kernel's figure, where the
// probe measured once says little on this VM (38-83 GB/s within a minute).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/check.h"
#include "opsnn/opsnn.h"

namespace {
using namespace opsnn;

struct Case {
  const char* name;
  int64_t B, Hq, Hkv, Lq, Lk, D;
  int causal;
};

const Case kCases[] = {
    {"gpt2_prefill", 1, 12, 12, 1024, 1024, 64, 1},     {"sd_self_512", 1, 8, 8, 4096, 4096, 40, 0},
    {"sd_cross_512", 1, 8, 8, 4096, 77, 40, 0},         {"gqa_decode", 1, 32, 8, 1, 4096, 128, 0},
    {"llama7b_prefill", 1, 32, 32, 2048, 2048, 128, 1},
};

struct Result {
  Timing t;
  // Decode from memory: a plain read of the same K/V bytes, timed in the same
  // rounds as the kernel (the reference this machine's bandwidth swings
  // cannot separate from the kernel's figure).
  Timing same_read;
  std::vector<double> round_ratios;  // per round: read median / kernel median, sorted
  std::string kernel;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Result time_sdpa(const Case& c, DType dt, bool unfused, double seconds, bool hot) {
  Attrs a = {{"causal", int64_t{c.causal}}};
  if (unfused) {
    a.set("q_block", std::min<int64_t>(c.Lq, 4096));
    a.set("kv_block", std::min<int64_t>(c.Lk, 4096));
  }
  // Decode streams the KV cache from memory: like the layers of a model, the
  // timed calls cycle through enough K/V copies (>= 128 MiB, 4x this L3) that
  // none is still cached when its turn comes. Other cases reuse one set.
  const double kv_bytes =
      2.0 * static_cast<double>(c.B * c.Hkv * c.Lk * c.D) * static_cast<double>(dtype_size(dt));
  const int sets =
      c.Lq <= 16 && !hot ? static_cast<int>(std::ceil(128.0 * (1 << 20) / kv_bytes)) : 1;
  std::vector<std::vector<Tensor>> ins(static_cast<size_t>(sets));
  for (int i = 0; i < sets; ++i)
    for (const Shape& s : {Shape{c.B, c.Hq, c.Lq, c.D}, Shape{c.B, c.Hkv, c.Lk, c.D},
                           Shape{c.B, c.Hkv, c.Lk, c.D}}) {
      CheckCase cc;
      cc.inputs = {TensorDesc(dt, s)};
      ins[static_cast<size_t>(i)].push_back(make_case_inputs(cc, dt, 7 + i)[0]);
    }
  Op op = Op::create("sdpa", ins[0], a);
  Tensor out = Tensor::zeros(op.outputs()[0].shape, dt);
  Arena ws(op.workspace_bytes() + kAlignment);
  auto w = ws.span(op.workspace_bytes());
  Result r;
  r.kernel = op.kernel_name() + (unfused ? "(unfused)" : "");
  if (sets == 1) {
    r.t = time_it([&] { op.run(ins[0], {&out, 1}, w); }, 5, seconds);
    return r;
  }
  // Rounds: every set through the kernel, then every set through a plain read.
  // Each round's medians give one paired ratio (read / kernel): the bandwidth
  // drifts between rounds, so the ratio within a round is the steady figure.
  std::vector<double> tk, tr;
  volatile uint32_t sink = 0;
  op.run(ins[0], {&out, 1}, w);
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < 5 || ms_since(start) < seconds * 2e3; ++round) {
    for (const auto& in : ins) {
      const auto t0 = std::chrono::steady_clock::now();
      op.run(in, {&out, 1}, w);
      tk.push_back(ms_since(t0));
    }
    for (const auto& in : ins) {
      const auto t0 = std::chrono::steady_clock::now();
      sink = stream_read(in[1].data(), in[1].nbytes()) ^ stream_read(in[2].data(), in[2].nbytes());
      tr.push_back(ms_since(t0));
    }
    const auto n = static_cast<std::ptrdiff_t>(ins.size());
    r.round_ratios.push_back(timing_of({tr.end() - n, tr.end()}).median_ms /
                             timing_of({tk.end() - n, tk.end()}).median_ms);
  }
  std::sort(r.round_ratios.begin(), r.round_ratios.end());
  (void)sink;
  r.t = timing_of(tk);
  r.same_read = timing_of(tr);
  return r;
}

std::map<std::string, std::pair<double, double>> read_torch(const std::string& path) {
  std::map<std::string, std::pair<double, double>> m;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    std::string name, dt;
    double mn, md;
    if (ss >> name >> dt >> mn >> md) m[name + "/" + dt] = {mn, md};
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::string torch_file, dts = "f32", only;
  bool run_unfused = true, hot = false;
  int64_t lk = 0;
  double seconds = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--torch")) torch_file = argv[i + 1];
    if (!std::strcmp(argv[i], "--threads")) set_num_threads(std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--dtype")) dts = argv[i + 1];
    if (!std::strcmp(argv[i], "--case")) only = argv[i + 1];
    if (!std::strcmp(argv[i], "--unfused")) run_unfused = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--lk")) lk = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--hot")) hot = std::atoi(argv[i + 1]) != 0;
  }
  const DType dt = dtype_from_name(dts);
  const auto torch = torch_file.empty() ? decltype(read_torch("")){} : read_torch(torch_file);
  // The best of three measurements of each limit (they vary from run to run
  // on a shared machine; the best is the conservative reference).
  double peak = 0, bw = 0;
  for (int i = 0; i < 3; ++i) {
    peak = std::max(peak, measure_fma_peak_gflops());
    bw = std::max(bw, measure_read_gbps());
  }
  std::printf(
      "sdpa %s, %d threads, isa %s; best of 3 measured now: FMA peak %.1f GFLOP/s, read %.1f "
      "GB/s\n",
      dts.c_str(), num_threads(), isa_name(active_isa()), peak, bw);
  std::printf("%-16s %-22s %21s %9s %7s %21s %21s %8s %8s\n", "case", "kernel", "fused min/med ms",
              "GFLOP/s", "%limit", "unfused min/med ms", "torch min/med ms", "x unfus", "x torch");
  struct DecodeFig {
    double gbps, same_read_gbps, med_ratio;
    std::vector<double> rounds;
  };
  std::vector<DecodeFig> decode_figs;
  for (Case c : kCases) {
    if (!only.empty() && only != c.name) continue;
    if (lk > 0) c.Lk = lk;
    const Result f = time_sdpa(c, dt, false, seconds, hot);
    const Result u = run_unfused ? time_sdpa(c, dt, true, seconds, hot) : Result{};
    double flops = 4.0 * c.B * c.Hq * c.Lq * c.Lk * c.D * (c.causal ? 0.5 : 1.0);
    const double es = static_cast<double>(dtype_size(dt));
    const double kv_bytes = 2.0 * c.B * c.Hkv * c.Lk * c.D * es;
    const double gflops = flops / (f.t.min_ms * 1e-3) / 1e9;
    const bool decode = c.Lq <= 16;
    const double frac = decode ? kv_bytes / (f.t.min_ms * 1e-3) / 1e9 / bw : gflops / peak;
    char tbuf[64] = "n/a", xbuf[16] = "n/a";
    auto it = torch.find(std::string(c.name) + "/" + dts);
    if (it != torch.end()) {
      std::snprintf(tbuf, sizeof tbuf, "%.3f/%.3f", it->second.first, it->second.second);
      std::snprintf(xbuf, sizeof xbuf, "%.2f", it->second.first / f.t.min_ms);
    }
    char fb[64], ub[64];
    std::snprintf(fb, sizeof fb, "%.3f/%.3f", f.t.min_ms, f.t.median_ms);
    std::snprintf(ub, sizeof ub, "%.3f/%.3f", u.t.min_ms, u.t.median_ms);
    if (decode && f.same_read.repeats)
      decode_figs.push_back({kv_bytes / (f.t.min_ms * 1e-3) / 1e9,
                             kv_bytes / (f.same_read.min_ms * 1e-3) / 1e9,
                             f.same_read.median_ms / f.t.median_ms, f.round_ratios});
    std::printf("%-16s %-22s %21s %9.1f %6.1f%%%s %21s %21s %8.2f %8s\n", c.name, f.kernel.c_str(),
                fb, gflops, 100 * frac, decode ? "bw" : "  ", ub, tbuf, u.t.min_ms / f.t.min_ms,
                xbuf);
    std::fflush(stdout);
  }
  peak = std::max(peak, measure_fma_peak_gflops());
  bw = std::max(bw, measure_read_gbps());
  std::printf(
      "best of those and the figures measured again after the cases: FMA peak %.1f GFLOP/s, read "
      "%.1f GB/s\n",
      peak, bw);
  for (const DecodeFig& d : decode_figs) {
    const auto q = [&](double f) {
      return 100 * d.rounds[static_cast<size_t>(f * static_cast<double>(d.rounds.size() - 1))];
    };
    std::printf(
        "decode KV stream %.1f GB/s = %.1f%% of the best read figure %.1f GB/s; a plain read of "
        "the same K/V bytes in the same rounds: %.1f GB/s, the kernel %.1f%% of it (min to min), "
        "%.1f%% (median to median); per round: median %.1f%% (quartiles %.1f-%.1f%%, %zu "
        "rounds)\n",
        d.gbps, 100 * d.gbps / bw, bw, d.same_read_gbps, 100 * d.gbps / d.same_read_gbps,
        100 * d.med_ratio, q(0.5), q(0.25), q(0.75), d.rounds.size());
  }
  return 0;
}
