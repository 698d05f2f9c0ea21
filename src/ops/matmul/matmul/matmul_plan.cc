#include "ops/matmul/matmul/matmul_plan.h"

#include <algorithm>
#include <memory>
#include <string>

#include "kernels/gemm/gemm_unpacked.h"
#include "ops/common/checks.h"
#include "ops/common/kernel_names.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"
#include "opsnn/thread_pool.h"

namespace opsnn::matmul {

std::vector<int64_t> batch_strides(const Shape& shape, const Strides& strides, int mat_dims,
                                   const Shape& batch) {
  std::vector<int64_t> bs(batch.size(), 0);
  const int64_t own = static_cast<int64_t>(shape.size()) - mat_dims;  // own batch dims
  for (int64_t d = 0; d < own; ++d) {
    const int64_t ob = static_cast<int64_t>(batch.size()) - own + d;
    if (ob < 0) continue;
    bs[static_cast<size_t>(ob)] =
        shape[static_cast<size_t>(d)] == 1 ? 0 : strides[static_cast<size_t>(d)];
  }
  return bs;
}

bool reads_b_in_place(const Plan& plan) {
  return plan.M <= gemm::kUnpackedMaxM &&
         gemm::unpacked_layout_ok(plan.N, plan.K, plan.b.rs, plan.b.cs);
}

bool stages_b(const Plan& plan, const gemm::Params& params) {
  if (reads_b_in_place(plan) ||
      !gemm::run_staged_b_ok(params, {nullptr, plan.packed_dtype, plan.b.rs, plan.b.cs},
                             plan.packed_dtype, plan.gated))
    return false;
  // vdpbf16ps k-pair panels staged per task only up to 256 rows, where the
  // whole B packed per call is not paid back (Zen 4, bf16 op form, staged /
  // whole: 64x4096x4096 6.75-7.7 / 8.35-8.45 ms, 64x11008x4096 17.6 /
  // 21.7-23.7; 2048x768x768 not faster staged, its tasks pack B again).
  const bool dp = params.bf16_dot && plan.packed_dtype == DType::bf16;
  return !dp || plan.M <= 256;
}

size_t packed_b_bytes(const Plan& plan, const gemm::Params& params) {
  return gemm::packed_b_bytes(params, plan.K, plan.N, plan.packed_dtype);
}

namespace {

size_t round64(size_t b) { return (b + 63) / 64 * 64; }

const char* at(const Tensor& t, int64_t off) {
  return static_cast<const char*>(t.data()) + off * static_cast<int64_t>(dtype_size(t.dtype()));
}

// The workspace: [B packed per call][the engine's scratch for all threads],
// and over the same bytes after B, for batch-parallel calls, one slot per
// thread: [its batch's B (per-batch B only)][the engine's scratch for one thread].
struct WsLayout {
  size_t b = 0, all = 0, slot_b = 0, slot = 0;
  WsLayout() = default;
  WsLayout(const Plan& plan, const gemm::Params& params, bool b_packed_at_create) {
    const int64_t nout = plan.gated ? plan.N / 2 : plan.N;
    const bool staged = !b_packed_at_create && stages_b(plan, params);
    auto engine = [&](int threads) {
      return round64(gemm::workspace_bytes(params, plan.M, plan.N, plan.K, plan.out_dtype, nout,
                                           plan.gated, threads));
    };
    const size_t pb = b_packed_at_create || staged
                          ? 0
                          : round64(std::max<size_t>(packed_b_bytes(plan, params), 64));
    b = pb;
    all = engine(plan.threads);
    slot_b = plan.b_shared() ? 0 : pb;
    slot = slot_b + engine(1);
  }
  size_t bytes(int threads) const { return b + std::max(all, slot * static_cast<size_t>(threads)); }
};

// Batches whose GEMMs are too small to split well across the threads (a few
// tiles each, where the per-call thread hand-off costs as much as the work)
// run batch-parallel instead: one batch per task, each GEMM on one thread.
// The engine's K order never depends on who runs a tile: same bits.
bool batch_parallel(const Plan& plan, int64_t nbatch, int64_t threads) {
  const double macs = static_cast<double>(plan.M) * static_cast<double>(plan.N) *
                      static_cast<double>(std::max<int64_t>(plan.K, 1));
  return threads > 1 && nbatch >= threads && macs <= double(1 << 22);
}

}  // namespace

size_t unpacked_a_bytes(const Plan& plan) {
  return gemm::unpacked_workspace_bytes(plan.M, plan.K, plan.a_dtype, plan.a.cs);
}

size_t workspace_bytes(const Plan& plan, const gemm::Params& params, bool b_packed_at_create) {
  if (!b_packed_at_create && reads_b_in_place(plan)) return unpacked_a_bytes(plan);
  return WsLayout(plan, params, b_packed_at_create).bytes(plan.threads);
}

void run_plan(const Plan& plan, const gemm::Params& params, const Tensor* in, Tensor& out, void* ws,
              const void* packed_b) {
  int64_t nbatch = 1;
  for (int64_t d : plan.batch) nbatch *= d;
  if (nbatch == 0 || plan.M == 0 || plan.N == 0) return;
  const Tensor& A = in[plan.a.input];
  const Tensor& B = in[plan.b.input];
  const bool shared = plan.b_shared();
  const size_t nb = plan.batch.size();
  const int64_t nout = plan.gated ? plan.N / 2 : plan.N;
  const int64_t out_mat = plan.M * nout;
  const int threads = std::max(1, std::min(plan.threads, num_threads()));
  // The decode path reads B in place and needs no engine layout.
  const bool in_place = !packed_b && reads_b_in_place(plan);
  // Above the decode range, B staged from the tensor panel by panel.
  const bool staged = !packed_b && !in_place && stages_b(plan, params);
  const WsLayout l = in_place ? WsLayout() : WsLayout(plan, params, packed_b != nullptr);
  // (No workspace on the in-place path when A needs no conversion: ws may be null.)
  char* const scratch = ws ? static_cast<char*>(ws) + l.b : nullptr;
  auto offsets = [&](int64_t bi, int64_t* o) {  // o: a, b, add, res
    o[0] = o[1] = o[2] = o[3] = 0;
    for (size_t d = nb; d-- > 0;) {
      const int64_t i = bi % plan.batch[d];
      bi /= plan.batch[d];
      o[0] += i * plan.a.bs[d];
      o[1] += i * plan.b.bs[d];
      if (plan.add.input >= 0) o[2] += i * plan.add.bs[d];
      if (plan.res.input >= 0) o[3] += i * plan.res.bs[d];
    }
  };
  auto pack = [&](int64_t ob, void* dst) {
    gemm::pack_b(params, plan.K, plan.N, {at(B, ob), B.dtype(), plan.b.rs, plan.b.cs}, dst,
                 plan.packed_dtype, plan.gated);
  };
  // pb: packed B, or nullptr to read `b` in place (a_ws: run_unpacked's
  // workspace) or stage it (staged).
  auto gemm_one = [&](int64_t bi, const int64_t* o, const void* pb, const gemm::Workspace& gws,
                      const gemm::MatView& b = {}, void* a_ws = nullptr) {
    gemm::Epilogue ep;
    ep.gated = plan.gated;
    ep.alpha = plan.alpha;
    ep.beta = plan.beta;
    ep.act = plan.act;
    ep.out_scale = plan.out_scale;
    if (plan.add.input >= 0) {
      const Tensor& t = in[plan.add.input];
      ep.add = {at(t, o[2]), t.dtype(), plan.add.rs, plan.add.cs};
    }
    if (plan.res.input >= 0) {
      const Tensor& t = in[plan.res.input];
      ep.residual = {at(t, o[3]), t.dtype(), plan.res.rs, plan.res.cs};
    }
    gemm::OutView ov{static_cast<char*>(out.data()) +
                         bi * out_mat * static_cast<int64_t>(dtype_size(out.dtype())),
                     out.dtype(), nout};
    const gemm::MatView a{at(A, o[0]), A.dtype(), plan.a.rs, plan.a.cs};
    if (staged) return gemm::run_staged_b(params, plan.M, plan.N, plan.K, a, b, ov, ep, gws);
    if (!pb) return gemm::run_unpacked(params, plan.M, plan.N, plan.K, a, b, ov, ep, a_ws);
    gemm::run(params, plan.M, plan.N, plan.K, a, pb, plan.packed_dtype, ov, ep, gws);
  };
  const gemm::Workspace all{scratch, threads};
  if (packed_b) {  // constant B, packed at create; shared by every batch
    for (int64_t bi = 0; bi < nbatch; ++bi) {
      int64_t o[4];
      offsets(bi, o);
      gemm_one(bi, o, packed_b, all);
    }
    return;
  }
  if (in_place) {
    auto one = [&](int64_t bi, void* a_ws) {
      int64_t o[4];
      offsets(bi, o);
      gemm_one(bi, o, nullptr, all, {at(B, o[1]), B.dtype(), plan.b.rs, plan.b.cs}, a_ws);
    };
    // Small GEMMs of a batch each on one thread, when A needs no workspace.
    if (nbatch > 1 && batch_parallel(plan, nbatch, threads) && unpacked_a_bytes(plan) == 0)
      parallel_tasks(
          nbatch, [&](int64_t bi) { one(bi, nullptr); }, threads);
    else
      for (int64_t bi = 0; bi < nbatch; ++bi) one(bi, ws);
    return;
  }
  auto b_view = [&](const int64_t* o) -> gemm::MatView {
    return {at(B, o[1]), B.dtype(), plan.b.rs, plan.b.cs};
  };
  if (nbatch > 1 && batch_parallel(plan, nbatch, threads)) {
    if (shared && !staged) {
      int64_t o[4];
      offsets(0, o);
      pack(o[1], ws);
    }
    parallel_tasks(
        nbatch,
        [&](int64_t bi) {
          char* slot = scratch + static_cast<size_t>(thread_index()) * l.slot;
          int64_t o[4];
          offsets(bi, o);
          void* pb = staged ? nullptr : ws;
          if (!shared && !staged) {
            pb = slot;
            pack(o[1], pb);
          }
          gemm_one(bi, o, pb, {slot + l.slot_b, 1}, b_view(o));
        },
        threads);
    return;
  }
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    int64_t o[4];
    offsets(bi, o);
    if (staged) {
      gemm_one(bi, o, nullptr, all, b_view(o));
      continue;
    }
    if (bi == 0 || !shared) pack(o[1], ws);
    gemm_one(bi, o, ws, all);
  }
}

void register_gemm_kernels(Registry& r, const std::string& op, Plan (*plan_of)(const OpCall&)) {
  struct Instance : KernelInstance {
    Plan plan;
    gemm::Params params;
    std::shared_ptr<void> packed_b;  // a constant B, packed once at create
    size_t workspace_bytes() const override {
      return matmul::workspace_bytes(plan, params, packed_b != nullptr);
    }
    void run(const Tensor* in, Tensor* out, void* ws) override {
      run_plan(plan, params, in, out[0], ws, packed_b.get());
    }
  };
  for (Isa isa : {Isa::avx512, Isa::avx2, Isa::scalar}) {
    for (int k = 0; k < gemm::num_kernels(isa); ++k) {
      KernelDesc d;
      d.name = op + "_" + gemm::kernel_name(isa, k) + "_" + isa_name(isa);
      d.isa = isa;
      d.dtypes = ops::kFloatDTypes;
      d.contiguous_inputs = false;
      // Within an ISA, the microkernel preferred for B's dtype (input 1 of
      // every GEMM op) first, then the list's order.
      constexpr int kPreferred = 5;
      static_assert(kPreferred + 1 < ops::kPriorityIsaStep);
      d.priority_for = [isa, k](std::span<const DType> dt) {
        const bool preferred = dt.size() > 1 && k == gemm::preferred_kernel(isa, dt[1]);
        return ops::isa_priority(isa) + (preferred ? kPreferred : 0) - k;
      };
      const DType f32[] = {DType::f32, DType::f32};
      d.priority = d.priority_for(f32);
      d.create = [isa, k, plan_of](const OpCall& call,
                                   std::string*) -> std::unique_ptr<KernelInstance> {
        auto inst = std::make_unique<Instance>();
        inst->plan = plan_of(call);
        inst->plan.packed_dtype = call.in(inst->plan.b.input).dtype;
        inst->plan.a_dtype = call.in(inst->plan.a.input).dtype;
        inst->plan.out_dtype = call.out(0).dtype;
        inst->plan.threads = num_threads();
        inst->params = gemm::default_params(isa, k);
        const Plan& p = inst->plan;
        const Tensor* cb = call.constant(p.b.input);
        if (!(cb && p.b_shared()) && !reads_b_in_place(p) &&
            !(p.packed_dtype == DType::bf16 && inst->params.bf16_dot))
          // Packed per call for a large M: f32 panels (16-bit B converted while
          // packing) keep the conversion out of the microkernel's B loads.
          inst->plan.packed_dtype = DType::f32;
        if (const Tensor* b = cb; b && p.b_shared()) {
          const size_t bytes = matmul::packed_b_bytes(p, inst->params);
          inst->packed_b.reset(aligned_alloc_bytes(std::max<size_t>(bytes, 64)), aligned_free);
          gemm::pack_b(inst->params, p.K, p.N, {b->data(), b->dtype(), p.b.rs, p.b.cs},
                       inst->packed_b.get(), p.packed_dtype, p.gated);
        }
        return inst;
      };
      r.add_kernel(op, std::move(d));
    }
  }
}

}  // namespace opsnn::matmul
