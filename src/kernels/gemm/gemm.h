// The f32 GEMM engine: packed B panels, cache blocking, register-tiled
// microkernels per ISA, a fused epilogue and threading over the output tile grid.
//
//   C[M,N] = epilogue(A[M,K] · B[K,N])
//
// A may be f32/bf16/f16 with any strides; it is packed (and converted) into
// MR-row panels per (M-block, K-block), or read in place when M <= 16 (or MR)
// and it is f32 with unit column stride (the decode path). B is packed once into
// NR-column panels covering all of K (`pack_b`); the layout depends only on
// NR, so block sizes can be tuned without repacking. Accumulation is in f32.
//
// Determinism: every output element is accumulated by the same microkernel
// FMA sequence in the same K order; the only blocking that changes rounding is
// kc (C += partial sums per K-block), which never depends on the thread
// count. mc/nc only decide which thread computes which tile.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/act/act.h"
#include "opsnn/cpu.h"
#include "opsnn/dtype.h"

namespace opsnn::gemm {

using Act = act::Kind;  // the shared activation vocabulary

// A strided matrix view of any float dtype; element (i, j) at p + i*rs + j*cs.
// A zero stride broadcasts.
struct MatView {
  const void* p = nullptr;
  DType t = DType::f32;
  int64_t rs = 0, cs = 0;
};

// Row-major output (unit column stride), f32/bf16/f16. stream: the final
// values are written with non-temporal stores where a whole vector is aligned
// (set by run() from Params::stream_min_bytes).
struct OutView {
  void* p = nullptr;
  DType t = DType::f32;
  int64_t ld = 0;
  bool stream = false;
};

// y = act(alpha * (A·B) + beta * add) * out_scale + residual
//
// Gated (swiglu/geglu) form, `gated` = true: B has N = 2H columns, the gate
// half [0, H) and the value half [H, N), packed by pack_b(..., gated = true)
// so that every NR-column panel holds NR/2 gate columns and the NR/2 value
// columns they pair with. The output has H columns:
//   y[:, j] = act(alpha*(A·B)[:, j] + beta*add[j]) * (alpha*(A·B)[:, H+j] + beta*add[H+j])
//             * out_scale + residual[:, j]
// computed from the tile while it is in L1 (swiglu = gated + silu). `add`
// (bias) indexes the 2H packed-B columns; `residual` the H output columns.
struct Epilogue {
  float alpha = 1.0f;
  MatView add;  // bias ([N] as rs=0, cs=1) or ONNX C (any broadcast); p==nullptr: none
  float beta = 1.0f;
  Act act = Act::none;
  float out_scale = 1.0f;
  MatView residual;  // p==nullptr: none
  bool gated = false;
  bool trivial() const {
    return alpha == 1.0f && !add.p && act == Act::none && out_scale == 1.0f && !residual.p &&
           !gated;
  }
};

// Tunable parameters: the microkernel (index into the ISA's list) and the
// cache blocks. Defaults come from cpu_info()'s cache sizes (default_params).
struct Params {
  Isa isa = Isa::scalar;
  int kernel = 0;      // microkernel index for this ISA (see kernel_name)
  int mr = 0, nr = 0;  // filled in from the microkernel
  int64_t mc = 0, nc = 0, kc = 0;
  // bf16 B panels use the AVX512_BF16 dot-product path (vdpbf16ps, 14x32,
  // k-pair panels; A rounded to bf16). Set by default_params for the avx512
  // 14x32 kernel when the CPU has AVX512_BF16.
  bool bf16_dot = false;
  // Outputs of at least this many bytes are written with non-temporal stores
  // (0: never). A large output is written once, tile by tile, while the A
  // blocks, B panels and C scratch cycle through the caches; ordinary stores
  // pay a read-for-ownership per line and evict that working set. Default
  // 8 MiB (see default_params and docs/gemm.md).
  int64_t stream_min_bytes = 0;
};

// The scratch of one run (packed A blocks, C tiles, split-K partial sums) in
// the caller's workspace: one slot per thread (thread_index() < threads),
// then a region for the calling thread. The run uses at most `threads`
// threads. A caller that runs the engine from inside its own parallel tasks
// passes threads = 1 and a region of its own per thread.
struct Workspace {
  void* p = nullptr;  // nullptr: per-thread buffers grown on demand (side APIs outside Op)
  int threads = 1;
};

// Number of microkernels of an ISA and their names ("14x32").
int num_kernels(Isa isa);
const char* kernel_name(Isa isa, int kernel);
// Defaults for `isa` (capped by what the CPU supports is the caller's job).
Params default_params(Isa isa, int kernel = 0);
// The microkernel B panels of dtype pt are packed for on this CPU (pack_matrix
// and the ops' first choice): 0, except f32, bf16 and f16 at AVX2 on an AMD
// CPU, 4x24. Measured on Zen 3 (docs/gemm.md "Panel width per CPU"): packed
// M = 8-32 9-15% faster than on 6x16 in f32 (three B vectors per broadcast
// of A instead of two), 4-16% in bf16 and f16; M = 1 within 0-4%,
// compute-bound shapes within 0-7%.
int preferred_kernel(Isa isa, DType pt);

// Packed B: ceil(N/nr) panels, each K x nr elements of the panel dtype `pt`
// (zero padded past N). pt is f32, or bf16/f16 to keep 16-bit weights at half
// the bytes (converted to f32 in the microkernel's B loads: half the weight
// traffic on the memory-bound decode shapes).
int64_t packed_b_elems(const Params& p, int64_t K, int64_t N);
size_t packed_b_bytes(const Params& p, int64_t K, int64_t N, DType pt);
// gated: N = 2H columns packed gate/value-paired for a gated epilogue (see
// Epilogue); same size as the plain packing.
void pack_b(const Params& p, int64_t K, int64_t N, const MatView& b, void* dst, DType pt,
            bool gated = false);

// Workspace bytes for run(p, M, N, K, ..., c, ep, ws) with ws.threads =
// `threads`, an output of dtype c_dtype and row stride ldc, and ep.gated = gated.
size_t workspace_bytes(const Params& p, int64_t M, int64_t N, int64_t K, DType c_dtype, int64_t ldc,
                       bool gated, int threads);

// C = epilogue(A·B) with B packed by pack_b(p, K, N, ..., pt). Threaded.
// With ep.gated, N is B's 2H columns and C has H columns (c.ld >= H).
void run(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a, const void* packed_b,
         DType pt, const OutView& c, const Epilogue& ep, const Workspace& ws = {});

// B as the caller holds it (a plain tensor: the op form, not packed at create)
// instead of packed: each micro-panel is staged from `b` once per K-block for
// the row panels that use it, no packed copy of B. Takes what
// run_staged_b_ok accepts: not gated, B row-major (cs == 1) or transposed
// (rs == 1), and not the vdpbf16ps path (bf16 B on Params::bf16_dot, whose
// pairs need the packing). The bits are those of run() on B packed with pt
// (16-bit weights are widened exactly); ws as for run() (workspace_bytes).
bool run_staged_b_ok(const Params& p, const MatView& b, DType pt, bool gated);

void run_staged_b(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a,
                  const MatView& b, const OutView& c, const Epilogue& ep, const Workspace& ws = {});

// The AVX512_BF16 path (gemm_avx512bf16.cc).
int64_t bf16dot_packed_elems(int64_t K, int64_t N);
// Its K-block (even): twice p.kc, as the bf16 micro-panel is half the bytes
// of an f32 one; up to 1.5 times that, K stays one block (a second block
// re-reads a task's f32 partial sums, from L3 once they outgrow L2: Zen 4,
// K = 320: 4096x320x320 2.36-2.51 -> 2.04-2.16 ms, 4096x1280x320 7.8-8.1 ->
// 7.5-7.6 ms, the 1x1 convolution 320->640 at 32x32 1.01-1.04 -> 0.97 ms).
int64_t bf16dot_kc(const Params& p, int64_t K);
void bf16dot_pack_b(int64_t K, int64_t N, const MatView& b, void* dst, bool gated);
// bf16 B (row-major or transposed) read as held, packed panel by panel as
// consumed (run_staged_b on a Params::bf16_dot engine).
void bf16dot_run_staged(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a,
                        const MatView& b, const OutView& c, const Epilogue& ep,
                        const Workspace& ws);
void bf16dot_run(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a, const void* pb,
                 const OutView& c, const Epilogue& ep, const Workspace& ws);
// MACs per second of vdpbf16ps over those of vfmadd231ps on this CPU (a
// ~0.5 ms probe; call only where has_avx512_bf16()).
double bf16dot_mac_rate_over_fma();
// Whether AVX-512 GEMMs on bf16 weights use vdpbf16ps (Params::bf16_dot)
// rather than the f32 kernels with bf16 converted in their loads: where the
// CPU has AVX512_BF16 and its dot products outrun the FMAs per MAC (measured
// once per process: 2x on AMD Zen 4, 0.5x on an Intel Xeon, Emerald Rapids).
// OPSNN_BF16_DOT=0 or 1 overrides the measurement.
bool use_bf16_dot();

// Decode (A read in place, each B panel streamed once): up to this many rows
// of A, run as near-equal groups of at most MR rows over each K-block of B
// while it is in L1 (8 rows on a 6-row kernel: 4 + 4, not 6 + 2 with the
// 2-row kernel bound by FMA latency, nor B streamed twice).
inline constexpr int64_t kDirectMaxM = 16;
inline int64_t direct_max_m(int64_t mr) { return mr > kDirectMaxM ? mr : kDirectMaxM; }

// Where a run's scratch lies in its Workspace (floats; see workspace_bytes).
struct ScratchLayout {
  size_t a = 0, c = 0;          // per thread: the A block, the C tile
  size_t split = 0, pairs = 0;  // the caller's: split-K partial sums, bf16 pairs of A
  size_t slot() const { return a + c; }
};
ScratchLayout scratch_layout(const Params& p, int64_t M, int64_t N, int64_t K, DType c_dtype,
                             int64_t ldc, bool gated);

// Per-ISA tables (gemm_{scalar,avx2,avx512}.cc).
struct IsaFns {
  int num_kernels;
  const char* const* names;
  const int* mr;
  const int* nr;
  void (*pack_b)(const Params&, int64_t K, int64_t N, const MatView& b, void* dst, DType pt,
                 bool gated);
  void (*run)(const Params&, int64_t M, int64_t N, int64_t K, const MatView& a, const void* pb,
              DType pt, const OutView& c, const Epilogue& ep, const Workspace& ws);
  void (*run_raw)(const Params&, int64_t M, int64_t N, int64_t K, const MatView& a,
                  const MatView& b, const OutView& c, const Epilogue& ep, const Workspace& ws);
};
const IsaFns& fns_scalar();
const IsaFns& fns_avx2();
// Thrown for the kernel files, which build no strings themselves (see
// core/isa_namespace.h): a scratch slice past what scratch_layout sized.
[[noreturn]] void fail_scratch_overflow(size_t floats, size_t capacity);
const IsaFns& fns_avx512();

}  // namespace opsnn::gemm
