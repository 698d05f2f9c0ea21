#include "kernels/gemm/gemm.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "opsnn/error.h"
#include "opsnn/log.h"

namespace opsnn::gemm {
namespace {

const IsaFns& fns(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return fns_avx512();
    case Isa::avx2:
      return fns_avx2();
    default:
      return fns_scalar();
  }
}

}  // namespace

int num_kernels(Isa isa) { return fns(isa).num_kernels; }

int preferred_kernel(Isa isa, DType pt) {
  if (isa != Isa::avx2 || (pt != DType::f32 && pt != DType::bf16 && pt != DType::f16)) return 0;
  const std::string& v = cpu_info().vendor;
  return v == "AuthenticAMD" || v == "HygonGenuine" ? 1 : 0;
}

bool use_bf16_dot() {
  if (!has_avx512_bf16()) return false;
  if (const char* e = std::getenv("OPSNN_BF16_DOT")) return std::string(e) != "0";
  static const bool faster = [] {
    const double r = bf16dot_mac_rate_over_fma();
    char msg[160];
    std::snprintf(msg, sizeof msg,
                  "bf16 GEMM: vdpbf16ps gives %.2fx the MACs per second of vfmadd231ps here, "
                  "so bf16 runs on %s (OPSNN_BF16_DOT=0|1 overrides)",
                  r, r > 1.0 ? "vdpbf16ps" : "the f32 kernels");
    log(LogLevel::info, msg);
    return r > 1.0;
  }();
  return faster;
}

const char* kernel_name(Isa isa, int kernel) {
  const IsaFns& f = fns(isa);
  if (kernel < 0 || kernel >= f.num_kernels)
    throw Error("gemm", "kernel", "an index in [0, " + std::to_string(f.num_kernels) + ")",
                std::to_string(kernel));
  return f.names[kernel];
}

Params default_params(Isa isa, int kernel) {
  const IsaFns& f = fns(isa);
  (void)kernel_name(isa, kernel);
  Params p;
  p.isa = isa;
  p.kernel = kernel;
  p.mr = f.mr[kernel];
  p.nr = f.nr[kernel];
  const CpuInfo& ci = cpu_info();
  const int64_t l1 = static_cast<int64_t>(std::max<size_t>(ci.l1d_bytes, 16 << 10));
  const int64_t l2 = static_cast<int64_t>(std::max<size_t>(ci.l2_bytes, 128 << 10));
  // kc: the B micro-panel (kc x nr) takes about half of L1, the A micro-panel
  // (mr x kc) a quarter; the rest is for C and the streams.
  int64_t kc = l1 / 2 / (p.nr * 4);
  kc = std::clamp<int64_t>(kc / 16 * 16, 64, 512);
  // mc: the packed A block (mc x kc) takes half of L2.
  int64_t mc = l2 / 2 / (kc * 4);
  mc = std::clamp<int64_t>(mc / p.mr * p.mr, p.mr, 1024);
  // nc: the B block (kc x nc) a task walks for one packed A block. Each B
  // micro-panel (kc x nr) is brought to L1 once per A block and used by all
  // its mc/mr row panels, so B needs no L2 residency; a wide nc means A is
  // packed once per (M-block, K-block) instead of once per N-block. The grid
  // (make_grid) splits N further only when M is too short to feed the threads.
  const int64_t l3 = static_cast<int64_t>(std::max<size_t>(ci.l3_bytes, 1 << 20));
  int64_t nc = l3 / 4 / (kc * 4);
  nc = std::clamp<int64_t>(nc / p.nr * p.nr, p.nr, 8192);
  p.kc = kc;
  p.mc = mc;
  p.nc = nc;
  // Measured (docs/gemm.md "Streaming the output"): bf16 and f32
  // 2048x3072x768 and 2048^3 (8-25 MiB outputs) 1-6% faster with streamed
  // stores (most when the host is busy), outputs of 1-5 MiB within the noise. A consumer of the
  // output reads it from DRAM instead of the L3, so smaller outputs keep ordinary stores. The L3
  // size reported in VMs is often the host's, so the limit is not derived from it.
  p.stream_min_bytes = int64_t{8} << 20;
  p.bf16_dot = isa == Isa::avx512 && kernel == 0 && use_bf16_dot();
  return p;
}

int64_t packed_b_elems(const Params& p, int64_t K, int64_t N) {
  return (N + p.nr - 1) / p.nr * p.nr * K;
}
size_t packed_b_bytes(const Params& p, int64_t K, int64_t N, DType pt) {
  if (pt == DType::bf16 && p.bf16_dot) return static_cast<size_t>(bf16dot_packed_elems(K, N)) * 2;
  return static_cast<size_t>(packed_b_elems(p, K, N)) * dtype_size(pt);
}

void pack_b(const Params& p, int64_t K, int64_t N, const MatView& b, void* dst, DType pt,
            bool gated) {
  if (gated && N % 2 != 0) throw Error("gemm", "N", "even for a gated packing", std::to_string(N));
  if (pt == DType::bf16 && p.bf16_dot) return bf16dot_pack_b(K, N, b, dst, gated);
  fns(p.isa).pack_b(p, K, N, b, dst, pt, gated);
}

namespace {
int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

// Bounds of what the drivers (gemm_impl.h run_tt, gemm_avx512bf16.cc run_dp)
// take: the grid's blocks are at most mc x nc (and M, N rounded up to whole
// panels), a K-block at most kc (2 kc + 2 for the bf16 pairs), a C tile is
// needed unless the output is f32, not gated and its stride does not alias,
// and decode calls (M <= direct_max_m(mr)) use the caller's region for split-K
// partial sums and the bf16 pairs of A.
ScratchLayout scratch_layout(const Params& p, int64_t M, int64_t N, int64_t K, DType c_dtype,
                             int64_t ldc, bool gated) {
  ScratchLayout l;
  if (M <= 0 || N <= 0) return l;
  const int64_t mr = std::max(p.mr, 1), nr = std::max(p.nr, 1);
  const int64_t kcb = std::min(std::max<int64_t>(p.kc, 1), std::max<int64_t>(K, 1));
  // The bf16 dot-product path packs A as pairs: rows x bf16dot_kc / 2 floats.
  const int64_t kca = p.bf16_dot ? std::max(kcb, bf16dot_kc(p, std::max<int64_t>(K, 1)) / 2) : kcb;
  const int64_t mcb = std::min(std::max<int64_t>(p.mc / mr, 1) * mr, div_up(M, mr) * mr);
  const int64_t npan = div_up(N, nr) + 1;
  const int64_t ncb = std::min(std::max<int64_t>(p.nc / nr, 1) * nr, npan * nr);
  // The packed A block, then a B micro-panel widened to f32 (16-bit panels)
  // or staged from B as the caller holds it (run_staged_b).
  l.a = static_cast<size_t>(mcb * (kca + 1) + 32 + kca * nr);
  const bool direct_c = c_dtype == DType::f32 && !gated && (ldc * 4) % 2048 != 0;
  if (!direct_c) l.c = static_cast<size_t>(mcb * (ncb + 16));
  if (M <= direct_max_m(mr) && K > 0) {
    const int64_t nkb = div_up(K, kcb) + 1;
    l.split = static_cast<size_t>(npan * nkb * std::max(M, mr) * nr);
    // The bf16 pairs of A (AVX512_BF16), or a bf16 / f16 A converted to f32.
    l.pairs = static_cast<size_t>(std::max(mr * ((K + 1) / 2 + 1), M * K) + 16);
  }
  // Slots start on cache lines.
  auto round = [](size_t f) { return (f + 15) / 16 * 16; };
  l.a = round(l.a);
  l.c = round(l.c);
  l.split = round(l.split);
  l.pairs = round(l.pairs);
  return l;
}

size_t workspace_bytes(const Params& p, int64_t M, int64_t N, int64_t K, DType c_dtype, int64_t ldc,
                       bool gated, int threads) {
  const ScratchLayout l = scratch_layout(p, M, N, K, c_dtype, ldc, gated);
  return (static_cast<size_t>(std::max(threads, 1)) * l.slot() + l.split + l.pairs) * sizeof(float);
}

namespace {
// The output, written with streaming stores when it is large (Params::stream_min_bytes).
OutView streamed_out(const Params& p, int64_t M, int64_t N, const OutView& c, bool gated) {
  OutView out = c;
  const int64_t out_bytes = M * (gated ? N / 2 : N) * static_cast<int64_t>(dtype_size(c.t));
  out.stream = p.stream_min_bytes > 0 && out_bytes >= p.stream_min_bytes;
  return out;
}
}  // namespace

void run(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a, const void* packed_b,
         DType pt, const OutView& c, const Epilogue& ep, const Workspace& ws) {
  const OutView out = streamed_out(p, M, N, c, ep.gated);
  if (pt == DType::bf16 && p.bf16_dot) return bf16dot_run(p, M, N, K, a, packed_b, out, ep, ws);
  fns(p.isa).run(p, M, N, K, a, packed_b, pt, out, ep, ws);
}

bool run_staged_b_ok(const Params& p, const MatView& b, DType pt, bool gated) {
  if (gated || (b.cs != 1 && b.rs != 1)) return false;
  if (b.t != DType::f32 && b.t != DType::bf16 && b.t != DType::f16) return false;
  // vdpbf16ps stages only a bf16 B (its k-pair panels are bf16).
  return !(pt == DType::bf16 && p.bf16_dot) || b.t == DType::bf16;
}

void run_staged_b(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a,
                  const MatView& b, const OutView& c, const Epilogue& ep, const Workspace& ws) {
  // (The caller decides whether the vdpbf16ps packing is worth it: pt f32
  // checks only the layout, dtype and epilogue.)
  if (!run_staged_b_ok(p, b, DType::f32, ep.gated))
    throw Error("gemm", "b",
                "a row-major or transposed f32/bf16/f16 B, not gated (run_staged_b_ok)",
                "another layout");
  if (p.bf16_dot && b.t == DType::bf16)
    return bf16dot_run_staged(p, M, N, K, a, b, streamed_out(p, M, N, c, false), ep, ws);
  fns(p.isa).run_raw(p, M, N, K, a, b, streamed_out(p, M, N, c, false), ep, ws);
}

void fail_scratch_overflow(size_t floats, size_t capacity) {
  throw Error("gemm", "workspace", std::to_string(floats) + " floats of scratch",
              std::to_string(capacity));
}

}  // namespace opsnn::gemm
