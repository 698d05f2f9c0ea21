#include "ops/conv/depthwise.h"

#include <algorithm>
#include <cstring>

#include "core/convert.h"
#include "ops/conv/layout_transpose.h"

namespace opsnn::conv {
namespace {

DepthwiseFn fn_for(Isa isa) {
  if (isa == Isa::avx512) return depthwise_fn_avx512();
  if (isa == Isa::avx2) return depthwise_fn_avx2();
  return depthwise_fn_scalar();
}

class DepthwiseInstance : public KernelInstance {
 public:
  DepthwiseInstance(const ConvPlan& p, Isa isa, bool residual)
      : p_(p), fn_(fn_for(isa)), tiles_(layout_tiles(isa)) {
    taps_ = p_.w.taps();
    cp_ = (p_.cin + 15) / 16 * 16;
    wbytes_ = round64(static_cast<size_t>(taps_ * cp_) * sizeof(float));
    wtmp_ = round64(static_cast<size_t>(taps_ * p_.cin) * sizeof(float));
    bbytes_ = round64(static_cast<size_t>(cp_) * sizeof(float));
    if (!p_.cl && !dw_nchw_ok(p_.w)) {
      const size_t es = dtype_size(p_.xt);
      xcl_ = round64(static_cast<size_t>(p_.n * p_.cin * p_.w.in_size()) * es);
      ycl_ = round64(static_cast<size_t>(p_.n * p_.cout * p_.w.out_size()) * es);
      rcl_ = residual ? ycl_ : 0;
    }
  }

  void prepack(const Tensor& w) {
    packed_ = Tensor::empty({static_cast<int64_t>(wbytes_ / sizeof(float))}, DType::f32);
    Tensor tmp = Tensor::empty({static_cast<int64_t>(wtmp_ / sizeof(float))}, DType::f32);
    pack(w, packed_.data_as<float>(), tmp.data_as<float>());
  }

  size_t workspace_bytes() const override {
    return (packed_.data() ? 0 : wbytes_ + wtmp_) + bbytes_ + xcl_ + ycl_ + rcl_;
  }

  void run(const Tensor* in, Tensor* out, void* ws) override {
    std::byte* cur = static_cast<std::byte*>(ws);
    DepthwiseArgs a;
    a.w = p_.w;
    a.n = p_.n;
    a.c = p_.cin;
    a.cp = cp_;
    a.t = p_.xt;
    a.act = p_.act;
    if (packed_.data()) {
      a.wt = packed_.data_as<float>();
    } else {
      float* dst = reinterpret_cast<float*>(cur);
      pack(in[1], dst, reinterpret_cast<float*>(cur + wbytes_));
      a.wt = dst;
      cur += wbytes_ + wtmp_;
    }
    if (in[2].data()) {
      float* b = reinterpret_cast<float*>(cur);
      convert_contiguous(in[2].data(), in[2].dtype(), b, DType::f32, static_cast<size_t>(p_.cin));
      std::fill(b + p_.cin, b + cp_, 0.0f);
      a.bias = b;
    }
    cur += bbytes_;
    a.x = in[0].data();
    a.y = out[0].data();
    a.residual = in[3].data();
    const size_t es = dtype_size(p_.xt);
    const int64_t in_px = p_.w.in_size(), out_px = p_.w.out_size();
    a.cl = p_.cl || xcl_;
    if (xcl_) {
      // Channels first, rows too long for the channels-first kernel's
      // staging (or a stride along W): x (and the residual) to channels
      // last, y back.
      transpose_images(a.x, cur, es, p_.n, p_.cin, in_px, tiles_);
      a.x = cur;
      a.y = cur + xcl_;
      if (a.residual) {
        transpose_images(a.residual, cur + xcl_ + ycl_, es, p_.n, p_.cout, out_px, tiles_);
        a.residual = cur + xcl_ + ycl_;
      }
    }
    fn_(a);
    if (xcl_) transpose_images(a.y, out[0].data(), es, p_.n, out_px, p_.cout, tiles_);
  }

 private:
  // w [C, 1, k...] in any float dtype -> f32 [taps][cp], padding channels 0.
  void pack(const Tensor& w, float* dst, float* tmp) const {
    convert_contiguous(w.data(), w.dtype(), tmp, DType::f32, static_cast<size_t>(taps_ * p_.cin));
    for (int64_t t = 0; t < taps_; ++t) {
      float* row = dst + t * cp_;
      for (int64_t c = 0; c < p_.cin; ++c) row[c] = tmp[c * taps_ + t];
      std::fill(row + p_.cin, row + cp_, 0.0f);
    }
  }

  ConvPlan p_;
  DepthwiseFn fn_;
  shape::TileKernels tiles_;
  int64_t taps_ = 0, cp_ = 0;
  size_t wbytes_ = 0, wtmp_ = 0, bbytes_ = 0;
  size_t xcl_ = 0, ycl_ = 0, rcl_ = 0;  // channels-first x, y, residual as channels last
  Tensor packed_;                       // the weight packed at create (constant operand)
};

}  // namespace

bool depthwise_ok(const OpCall& call, const ConvPlan& p) {
  const DType t = p.xt;
  const bool float_t = t == DType::f32 || t == DType::bf16 || t == DType::f16;
  return p.cin_g == 1 && p.cout_g == 1 && float_t && p.ot == t &&
         (!call.has_input(3) || call.in(3).dtype == t) && p.w.k[0] * (p.w.k[1] + 1) <= kDwMaxRows;
}

std::unique_ptr<KernelInstance> make_depthwise_instance(const OpCall& call, const ConvPlan& p,
                                                        Isa isa) {
  return with_weight(call, std::make_unique<DepthwiseInstance>(p, isa, call.has_input(3)));
}

}  // namespace opsnn::conv
