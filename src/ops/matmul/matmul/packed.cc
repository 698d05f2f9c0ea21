// PackedMatrix: B packed once for the active ISA's preferred microkernel
// (gemm::preferred_kernel for B's dtype).
#include <memory>
#include <string>

#include "kernels/act/act.h"
#include "kernels/gemm/gemm.h"
#include "opsnn/error.h"
#include "opsnn/gemm.h"
#include "opsnn/memory.h"

namespace opsnn {

struct PackedMatrix::Impl {
  gemm::Params params;
  int64_t K = 0, N = 0;
  void* data = nullptr;
  DType pt = DType::f32;
  bool gated = false;
  size_t nbytes = 0;
  ~Impl() { aligned_free(data); }
};

int64_t PackedMatrix::k() const { return impl_ ? impl_->K : 0; }
int64_t PackedMatrix::n() const { return impl_ ? impl_->N : 0; }
size_t PackedMatrix::bytes() const { return impl_ ? impl_->nbytes : 0; }
const void* PackedMatrix::data() const { return impl_ ? impl_->data : nullptr; }
bool PackedMatrix::gated() const { return impl_ && impl_->gated; }
std::string PackedMatrix::kernel() const {
  if (!impl_) return "";
  return std::string(gemm::kernel_name(impl_->params.isa, impl_->params.kernel)) + "_" +
         isa_name(impl_->params.isa);
}

PackedMatrix pack_matrix(const Tensor& b, bool transposed, bool gated) {
  if (b.rank() != 2) throw Error("pack_matrix", "b", "rank 2", "rank " + std::to_string(b.rank()));
  if (!is_float(b.dtype()))
    throw Error("pack_matrix", "b", "dtype f32, bf16 or f16", dtype_name(b.dtype()));
  auto impl = std::make_shared<PackedMatrix::Impl>();
  impl->params =
      gemm::default_params(active_isa(), gemm::preferred_kernel(active_isa(), b.dtype()));
  const Strides& s = b.strides();
  impl->K = transposed ? b.dim(1) : b.dim(0);
  impl->N = transposed ? b.dim(0) : b.dim(1);
  impl->pt = b.dtype();
  if (gated && impl->N % 2 != 0)
    throw Error("pack_matrix", "b", "an even number of columns (gate | value) when gated",
                std::to_string(impl->N));
  impl->gated = gated;
  impl->nbytes = gemm::packed_b_bytes(impl->params, impl->K, impl->N, impl->pt);
  impl->data = aligned_alloc_bytes(std::max<size_t>(impl->nbytes, 64));
  const gemm::MatView v{b.data(), b.dtype(), transposed ? s[1] : s[0], transposed ? s[0] : s[1]};
  gemm::pack_b(impl->params, impl->K, impl->N, v, impl->data, impl->pt, gated);
  PackedMatrix m;
  m.impl_ = std::move(impl);
  return m;
}

void matmul_packed(const Tensor& a, const PackedMatrix& b, Tensor& y, const MatmulEpilogue& ep) {
  const char* op = "matmul_packed";
  if (!b.defined()) throw Error(op, "b", "a packed matrix", "an empty one");
  const PackedMatrix::Impl& p = *b.impl();
  if (a.rank() < 1 || a.shape().back() != p.K)
    throw Error(op, "a", "[..., " + std::to_string(p.K) + "]", shape_str(a.shape()));
  if (!is_float(a.dtype())) throw Error(op, "a", "dtype f32, bf16 or f16", dtype_name(a.dtype()));
  const int64_t nout = p.gated ? p.N / 2 : p.N;
  Shape ys = a.shape();
  ys.back() = nout;
  if (y.shape() != ys || y.dtype() != a.dtype() || !y.is_contiguous())
    throw Error(op, "y", "contiguous " + TensorDesc(a.dtype(), ys).str(), y.desc().str());
  if (!a.is_contiguous())
    throw Error(op, "a", "contiguous rows", "strides " + shape_str(a.strides()));
  const int64_t M = p.K ? a.numel() / p.K : y.numel() / std::max<int64_t>(nout, 1);
  gemm::Epilogue e;
  e.gated = p.gated;
  e.alpha = ep.alpha;
  e.act = act::from_name("matmul_packed", ep.activation);
  if (ep.bias) {
    if (ep.bias->shape() != Shape{p.N} || ep.bias->dtype() != a.dtype())
      throw Error(op, "bias", TensorDesc(a.dtype(), {p.N}).str(), ep.bias->desc().str());
    e.add = {ep.bias->data(), ep.bias->dtype(), 0, ep.bias->strides()[0]};
  }
  if (ep.residual) {
    if (ep.residual->shape() != ys || ep.residual->dtype() != a.dtype() ||
        !ep.residual->is_contiguous())
      throw Error(op, "residual", "contiguous " + TensorDesc(a.dtype(), ys).str(),
                  ep.residual->desc().str());
    e.residual = {ep.residual->data(), ep.residual->dtype(), nout, 1};
  }
  gemm::run(p.params, M, p.N, p.K, {a.data(), a.dtype(), p.K, 1}, p.data, p.pt,
            {y.data(), y.dtype(), nout}, e);
}

}  // namespace opsnn
