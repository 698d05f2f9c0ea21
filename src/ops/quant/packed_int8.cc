// PackedInt8Matrix: int8 weights packed once for the active ISA's int8 GEMM.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/act/act.h"
#include "kernels/qgemm/qgemm.h"
#include "opsnn/cpu.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"
#include "opsnn/quant.h"
#include "opsnn/thread_pool.h"

namespace opsnn {

struct PackedInt8Matrix::Impl {
  const qgemm::KernelFns* fns = nullptr;
  int64_t N = 0, K = 0;
  void* data = nullptr;
  size_t nbytes = 0;
  std::mutex ws_mutex;  // guards the workspace below (one call at a time per matrix)
  void* ws = nullptr;
  size_t ws_bytes = 0;
  ~Impl() {
    aligned_free(data);
    aligned_free(ws);
  }
};

int64_t PackedInt8Matrix::n() const { return impl_ ? impl_->N : 0; }
int64_t PackedInt8Matrix::k() const { return impl_ ? impl_->K : 0; }
size_t PackedInt8Matrix::bytes() const { return impl_ ? impl_->nbytes : 0; }
std::string PackedInt8Matrix::kernel() const { return impl_ ? impl_->fns->name : ""; }

namespace {
const qgemm::KernelFns& active_fns(int64_t K) {
  if (has_avx512_vnni())
    return K >= qgemm::kWideMinK ? qgemm::fns_avx512vnni_wide() : qgemm::fns_avx512vnni();
  if (active_isa() >= Isa::avx2) return has_avx_vnni() ? qgemm::fns_avxvnni() : qgemm::fns_avx2();
  return qgemm::fns_scalar();
}
}  // namespace

PackedInt8Matrix pack_int8_matrix(const Tensor& w) {
  const char* op = "pack_int8_matrix";
  if (w.rank() != 2) throw Error(op, "w", "rank 2 [N, K]", "rank " + std::to_string(w.rank()));
  if (w.dtype() != DType::i8) throw Error(op, "w", "dtype i8", dtype_name(w.dtype()));
  if (w.dim(1) > 65536) throw Error(op, "w", "K <= 65536", std::to_string(w.dim(1)));
  const Tensor wc = w.contiguous();
  auto impl = std::make_shared<PackedInt8Matrix::Impl>();
  impl->fns =
      &qgemm::for_weights(active_fns(w.dim(1)), wc.data_as<int8_t>(), w.dim(0), w.dim(1), w.dim(1));
  impl->N = w.dim(0);
  impl->K = w.dim(1);
  impl->nbytes = qgemm::packed_bytes(impl->fns->nr, impl->N, impl->K);
  impl->data = aligned_alloc_bytes(std::max<size_t>(impl->nbytes, 64));
  qgemm::pack_w(impl->fns->nr, impl->N, impl->K, wc.data_as<int8_t>(), impl->K, impl->data);
  PackedInt8Matrix m;
  m.impl_ = std::move(impl);
  return m;
}

void matmul_int8_packed(const Tensor& a, const PackedInt8Matrix& w, Tensor& y,
                        const Int8MatmulParams& p) {
  const char* op = "matmul_int8_packed";
  if (!w.defined()) throw Error(op, "w", "a packed matrix", "an empty one");
  PackedInt8Matrix::Impl& im = const_cast<PackedInt8Matrix::Impl&>(*w.impl());
  if (a.dtype() != DType::i8 && a.dtype() != DType::u8)
    throw Error(op, "a", "dtype i8 or u8", dtype_name(a.dtype()));
  if (a.rank() < 1 || a.shape().back() != im.K || !a.is_contiguous())
    throw Error(op, "a", "contiguous [..., " + std::to_string(im.K) + "]", a.desc().str());
  Shape ys = a.shape();
  ys.back() = im.N;
  if (y.shape() != ys || !y.is_contiguous())
    throw Error(op, "y", "contiguous " + shape_str(ys), y.desc().str());
  const int64_t M = im.K ? a.numel() / im.K : y.numel() / std::max<int64_t>(im.N, 1);
  qgemm::Args g;
  g.M = M;
  g.N = im.N;
  g.K = im.K;
  g.a = a.data();
  g.lda = im.K;
  g.a_signed = a.dtype() == DType::i8;
  g.a_zp = p.a_zero_point;
  g.packed_w = im.data;
  g.y = y.data();
  g.ldy = im.N;
  switch (y.dtype()) {
    case DType::i32:
      g.ep.out = qgemm::Out::i32;
      break;
    case DType::f32:
      g.ep.out = qgemm::Out::f32;
      break;
    case DType::bf16:
      g.ep.out = qgemm::Out::bf16;
      break;
    case DType::f16:
      g.ep.out = qgemm::Out::f16;
      break;
    case DType::i8:
      g.ep.out = qgemm::Out::i8;
      break;
    case DType::u8:
      g.ep.out = qgemm::Out::u8;
      break;
    default:
      throw Error(op, "y", "dtype i32, f32, bf16, f16, i8 or u8", dtype_name(y.dtype()));
  }
  g.ep.act = act::from_name(op, p.activation);
  if (g.ep.out != qgemm::Out::i32) {
    if (!p.a_scale || !p.w_scale)
      throw Error(op, "a_scale/w_scale", "given for a dequantized output", "absent");
    if (p.a_scale->dtype() != DType::f32 || (p.a_scale->numel() != 1 && p.a_scale->numel() != M))
      throw Error(op, "a_scale", "f32 with 1 or M values", p.a_scale->desc().str());
    if (p.w_scale->dtype() != DType::f32 || (p.w_scale->numel() != 1 && p.w_scale->numel() != im.N))
      throw Error(op, "w_scale", "f32 with 1 or N values", p.w_scale->desc().str());
    g.ep.a_scale = p.a_scale->data_as<float>();
    g.ep.a_scale_rs = p.a_scale->numel() == 1 ? 0 : 1;
    g.ep.w_scale = p.w_scale->data_as<float>();
    g.ep.w_scale_cs = p.w_scale->numel() == 1 && im.N != 1 ? 0 : 1;
    if (p.bias) {
      if (p.bias->dtype() != DType::f32 || p.bias->numel() != im.N)
        throw Error(op, "bias", "f32 [N]", p.bias->desc().str());
      g.ep.bias = p.bias->data_as<float>();
    }
  }
  g.ep.y_scale = p.y_scale;
  g.ep.y_zp = p.y_zero_point;
  std::lock_guard<std::mutex> lock(im.ws_mutex);
  const int threads = num_threads();
  const size_t need = qgemm::workspace_bytes(*im.fns, M, im.N, im.K, threads);
  if (need > im.ws_bytes) {
    aligned_free(im.ws);
    im.ws = aligned_alloc_bytes(need);
    im.ws_bytes = need;
  }
  g.ws = im.ws;
  g.threads = threads;
  im.fns->run(g);
}

}  // namespace opsnn
