#include "ops/conv/conv_engine.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "core/convert.h"
#include "ops/conv/conv_act.h"
#include "ops/conv/conv_direct.h"
#include "ops/conv/depthwise.h"
#include "ops/conv/layout_transpose.h"
#include "opsnn/error.h"
#include "opsnn/log.h"
#include "opsnn/thread_pool.h"

namespace opsnn::conv {
namespace {

// Element types by size: gathering copies raw elements (zero bits are +0 in
// every float dtype), so one gather serves f32, bf16 and f16.
template <class E>
void gather_cf(const ConvPlan& p, const char* x_img, int64_t g, int64_t m0, int64_t mc, E* col,
               int64_t ldc) {
  const Window& w = p.w;
  const int64_t taps = w.taps(), plane = w.in_size();
  const E* xg = reinterpret_cast<const E*>(x_img) + g * p.cin_g * plane;
  parallel_for(p.kg, 8, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t ic = k / taps, t = k % taps;
      const int64_t kd = t / (w.k[1] * w.k[2]), kh = t / w.k[2] % w.k[1], kw = t % w.k[2];
      const E* xc = xg + ic * plane;
      E* row = col + k * ldc;
      int64_t m = m0;
      while (m < m0 + mc) {
        const int64_t od = m / (w.out[1] * w.out[2]), oh = m / w.out[2] % w.out[1],
                      ow = m % w.out[2];
        const int64_t seg = std::min(w.out[2] - ow, m0 + mc - m);
        E* dst = row + (m - m0);
        const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
        const int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1];
        if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
          std::fill(dst, dst + seg, E{0});
        } else {
          const E* xr = xc + (id * w.in[1] + ih) * w.in[2];
          const int64_t off = kw * w.d[2] - w.pb[2];  // iw = ow * s + off
          for (int64_t j = 0; j < seg; ++j) {
            const int64_t iw = (ow + j) * w.s[2] + off;
            dst[j] = iw >= 0 && iw < w.in[2] ? xr[iw] : E{0};
          }
        }
        m += seg;
      }
    }
  });
}

void gather_cl(const ConvPlan& p, const char* x_img, int64_t g, int64_t m0, int64_t mc, char* col,
               size_t es) {
  const Window& w = p.w;
  const size_t row_bytes = static_cast<size_t>(p.cin_g) * es;
  parallel_for(mc, 4, [&](int64_t a, int64_t b) {
    for (int64_t mi = a; mi < b; ++mi) {
      const int64_t m = m0 + mi;
      const int64_t od = m / (w.out[1] * w.out[2]), oh = m / w.out[2] % w.out[1], ow = m % w.out[2];
      char* dst = col + static_cast<size_t>(mi * p.kg) * es;
      for (int64_t kd = 0; kd < w.k[0]; ++kd)
        for (int64_t kh = 0; kh < w.k[1]; ++kh)
          for (int64_t kw = 0; kw < w.k[2]; ++kw, dst += row_bytes) {
            const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
            const int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1];
            const int64_t iw = ow * w.s[2] - w.pb[2] + kw * w.d[2];
            if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1] || iw < 0 || iw >= w.in[2]) {
              std::memset(dst, 0, row_bytes);
              continue;
            }
            const int64_t pix = (id * w.in[1] + ih) * w.in[2] + iw;
            std::memcpy(dst, x_img + static_cast<size_t>(pix * p.cin + g * p.cin_g) * es,
                        row_bytes);
          }
    }
  });
}

// f32 tile [mc, cout_g] -> channels-first output rows (dtype conversion).
template <class T>
void untile(const float* tile, int64_t mc, int64_t cout_g, T* out, int64_t plane) {
  parallel_for(cout_g, 4, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      T* o = out + c * plane;
      for (int64_t m = 0; m < mc; ++m) {
        const float v = tile[m * cout_g + c];
        if constexpr (std::is_same_v<T, float>)
          o[m] = v;
        else if constexpr (std::is_same_v<T, bf16>)
          o[m] = to_bf16(v);
        else
          o[m] = to_f16(v);
      }
    }
  });
}

class ConvInstance : public KernelInstance {
 public:
  ConvInstance(const ConvPlan& plan, Isa isa) : p_(plan), tiles_(layout_tiles(isa)) {
    gp_ = gemm::default_params(isa, 0);
    const bool direct_isa = direct_fn(isa) && gp_.nr == direct_nr(isa);
    bf16_runs_ = p_.direct_bf16_runs_ok && isa == Isa::avx512 && gp_.bf16_dot;
    const bool widen_ok =
        !bf16_runs_ && (p_.direct_widen_ok || (p_.direct_widen_many_ok && isa == Isa::avx2));
    direct_ = (p_.direct_ok || widen_ok) && direct_isa ? direct_fn(isa) : nullptr;
    widen_ = direct_ && widen_ok;
    pt_ = widen_ ? DType::f32 : p_.wt;
    group_pack_ = round64(gemm::packed_b_bytes(gp_, p_.kg, p_.cout_g, pt_));
    const size_t es = widen_ ? sizeof(float) : dtype_size(p_.xt);
    if (widen_) {
      // f32 copies of x (as laid out), y and the bias.
      xf_ = round64(static_cast<size_t>(p_.n * p_.cin * p_.w.in_size()) * sizeof(float));
      yf_ = round64(static_cast<size_t>(p_.n * p_.cout * p_.w.out_size()) * sizeof(float));
      bf_ = round64(static_cast<size_t>(p_.cout) * sizeof(float));
    }
    sub_ = direct_sub_block(p_.w.taps(), p_.cin_g, isa);
    bf16_direct_ = bf16_runs_ || (p_.direct_bf16_ok && isa == Isa::avx512 && gp_.bf16_dot);
    // The padding row: one kernel row of taps (the direct kernel's merged runs).
    if (direct_ || bf16_direct_)
      zeros_ = Tensor::zeros({p_.cin_g * p_.w.k[2]}, widen_ ? DType::f32 : p_.xt);
    // Channels last and the direct kernels read k = (tap, ic).
    tap_major_ = (p_.cl || direct_ || bf16_direct_) && p_.w.taps() > 1;
    reorder_ = tap_major_ ? round64(static_cast<size_t>(p_.kg * p_.cout_g) * dtype_size(p_.wt)) : 0;
    const bool any_direct = direct_ || bf16_direct_;
    if (any_direct && !p_.cl) {
      // Channels first through a direct kernel: x and y converted to
      // channels last in the workspace (the boundary conversion).
      xcl_ = round64(static_cast<size_t>(p_.n * p_.cin * p_.w.in_size()) * es);
      ycl_ = round64(static_cast<size_t>(p_.n * p_.cout * p_.w.out_size()) * es);
    }
    col_ = p_.pointwise || any_direct ? 0 : round64(static_cast<size_t>(p_.mt * p_.kg) * es);
    tile_ =
        p_.cl || any_direct ? 0 : round64(static_cast<size_t>(p_.mt * p_.cout_g) * sizeof(float));
    // One gather/tile slot per thread (the thread count at create; more
    // threads later run the tiles one by one).
    slots_ = std::clamp(num_threads(), 1, 32);
    // The GEMM's scratch: one region per slot for the tiles a thread runs
    // alone, one sized for all slots for the tiles threaded inside.
    const DType ct = p_.cl ? p_.ot : DType::f32;
    const int64_t ldc = p_.cl ? p_.cout : p_.cout_g;
    gemm_one_ = round64(gemm::workspace_bytes(gp_, p_.mt, p_.cout_g, p_.kg, ct, ldc, false, 1));
    gemm_all_ =
        round64(gemm::workspace_bytes(gp_, p_.mt, p_.cout_g, p_.kg, ct, ldc, false, slots_));
  }

  // Packs a constant weight once (phase one).
  void prepack(const Tensor& w) {
    packed_ = Tensor::empty({static_cast<int64_t>(weights_bytes())}, DType::u8);
    std::byte* scratch = nullptr;
    Tensor tmp;
    if (reorder_) {
      tmp = Tensor::empty({static_cast<int64_t>(reorder_)}, DType::u8);
      scratch = static_cast<std::byte*>(tmp.data());
    }
    pack(w, static_cast<std::byte*>(packed_.data()), scratch);
    prepacked_ = true;
  }

  size_t workspace_bytes() const override {
    const bool gemm = !direct_ && !bf16_direct_;
    return (prepacked_ ? 0 : weights_bytes() + reorder_) + xcl_ + ycl_ + xf_ + yf_ + bf_ +
           (gemm ? slot_bytes() * static_cast<size_t>(slots_) + gemm_all_ : 0);
  }

  void run(const Tensor* in, Tensor* out, void* ws) override {
    reject_residual_in_output(p_, in[3], out[0]);
    std::byte* cur = static_cast<std::byte*>(ws);
    const std::byte* packed = nullptr;
    if (prepacked_) {
      packed = static_cast<const std::byte*>(packed_.data());
    } else {
      std::byte* dst = cur;
      cur += weights_bytes();
      pack(in[1], dst, cur);
      cur += reorder_;
      packed = dst;
    }
    if (bf16_direct_) {
      DirectBf16Args a;
      set_geometry(p_, a);
      a.x = in[0].data_as<bf16>();
      a.y = out[0].data_as<bf16>();
      if (xcl_) {
        bf16* xc = reinterpret_cast<bf16*>(cur);
        bf16* yc = reinterpret_cast<bf16*>(cur + xcl_);
        transpose_images(a.x, xc, sizeof(*xc), p_.n, p_.cin, p_.w.in_size(), tiles_);
        a.x = xc;
        a.y = yc;
      }
      a.packed = reinterpret_cast<const uint16_t*>(packed);
      a.group_stride = static_cast<int64_t>(group_pack_ / sizeof(uint16_t));
      a.zeros = zeros_.data_as<bf16>();
      set_bias_residual(in, a);
      a.act = p_.act;
      a.runs = bf16_runs_;
      // Straight into the caller's tensor, whole 32-channel panels (Zen 4,
      // 2 threads: 128->128 512x512 174.0 -> 172.5 ms, 256->256 256x256
      // 170.7 -> 169.3, min of 3).
      a.stream = !xcl_ && streams_output(out[0], a.y, 32);
      direct_bf16_avx512bf16(a);
      if (xcl_)
        transpose_images(a.y, out[0].data_as<bf16>(), sizeof(bf16), p_.n, p_.w.out_size(), p_.cout,
                         tiles_);
      return;
    }
    if (direct_) {
      DirectArgs a;
      set_geometry(p_, a);
      float* xf = reinterpret_cast<float*>(cur + xcl_ + ycl_);
      float* yf = reinterpret_cast<float*>(cur + xcl_ + ycl_ + xf_);
      float* bf = reinterpret_cast<float*>(cur + xcl_ + ycl_ + xf_ + yf_);
      // t (f32, bf16 or f16) as f32 into dst; returns dst.
      auto widen = [](const Tensor& t, float* dst) {
        convert_contiguous(t.data(), t.dtype(), dst, DType::f32, static_cast<size_t>(t.numel()));
        return dst;
      };
      if (widen_) {
        widen(in[0], xf);
        a.x = xf;
        a.y = yf;
      } else {
        a.x = in[0].data_as<float>();
        a.y = out[0].data_as<float>();
      }
      if (xcl_) {
        float* xc = reinterpret_cast<float*>(cur);
        float* yc = reinterpret_cast<float*>(cur + xcl_);
        transpose_images(a.x, xc, sizeof(*xc), p_.n, p_.cin, p_.w.in_size(), tiles_);
        a.x = xc;
        a.y = yc;
      }
      a.packed = reinterpret_cast<const float*>(packed);
      a.sub = sub_;
      a.group_stride = static_cast<int64_t>(group_pack_ / sizeof(float));
      a.zeros = zeros_.data_as<float>();
      a.bias = in[2].data() && widen_ ? widen(in[2], bf)
               : in[2].data()         ? in[2].data_as<float>()
                                      : nullptr;
      a.residual = in[3].data() ? in[3].data_as<float>() : nullptr;
      a.act = p_.act;
      if (widen_ && !xcl_) {
        // The kernel rounds its finished outputs into the 16-bit y itself
        // (no f32 y pass; AVX-512 bf16 stem 0.61-0.64 -> 0.51 ms).
        a.y_out = out[0].data();
        a.y_out_t = out[0].dtype();
      }
      // Only straight into the caller's f32 tensor.
      a.stream = !a.y_out && a.y == out[0].data() && streams_output(out[0], a.y, 16);
      direct_(a);
      if (a.y_out) return;
      float* y = widen_ ? yf : out[0].data_as<float>();
      if (xcl_) transpose_images(a.y, y, sizeof(float), p_.n, p_.w.out_size(), p_.cout, tiles_);
      if (widen_)
        convert_contiguous(yf, DType::f32, out[0].data(), out[0].dtype(),
                           static_cast<size_t>(out[0].numel()));
      return;
    }
    compute(in, out[0], packed, reinterpret_cast<char*>(cur));
  }

 private:
  size_t weights_bytes() const { return group_pack_ * static_cast<size_t>(p_.groups); }
  // Whether a direct kernel writes its output y with non-temporal stores,
  // as the GEMM's (Params::stream_min_bytes): a large output, 64-byte
  // aligned, whose channels (and each group's) fill whole `lanes` vectors.
  bool streams_output(const Tensor& out, const void* y, int64_t lanes) const {
    return gp_.stream_min_bytes > 0 && static_cast<int64_t>(out.nbytes()) >= gp_.stream_min_bytes &&
           reinterpret_cast<uintptr_t>(y) % 64 == 0 && p_.cout % lanes == 0 &&
           p_.cout_g % lanes == 0;
  }
  // A thread's slot: gathered columns, the C tile, the GEMM's scratch.
  size_t slot_bytes() const { return col_ + tile_ + gemm_one_; }

  void pack(const Tensor& w, std::byte* dst, std::byte* scratch) const {
    const size_t es = dtype_size(p_.wt);
    const int64_t taps = p_.w.taps();
    for (int64_t g = 0; g < p_.groups; ++g) {
      const char* wg =
          static_cast<const char*>(w.data()) + static_cast<size_t>(g * p_.cout_g * p_.kg) * es;
      gemm::MatView v{wg, p_.wt, 1, p_.kg};  // W[oc][ic][taps]: k = (ic, tap)
      if (tap_major_) {
        // Channels last gathers k = (tap, ic), the f32 direct kernel walks
        // k = (ic sub-block, tap, ic) (conv_direct.h): reorder W_g to [k][oc].
        char* r = reinterpret_cast<char*>(scratch);
        const int64_t sub = direct_ ? sub_ : p_.cin_g;
        for (int64_t oc = 0; oc < p_.cout_g; ++oc)
          for (int64_t ic = 0; ic < p_.cin_g; ++ic)
            for (int64_t t = 0; t < taps; ++t)
              std::memcpy(
                  r + static_cast<size_t>(direct_row(t, ic, taps, p_.cin_g, sub) * p_.cout_g + oc) *
                          es,
                  wg + static_cast<size_t>(oc * p_.kg + ic * taps + t) * es, es);
        v = {r, p_.wt, p_.cout_g, 1};
      }
      gemm::pack_b(gp_, p_.kg, p_.cout_g, v, dst + static_cast<size_t>(g) * group_pack_, pt_);
    }
  }

  // One tile of output pixels [m0, m0 + mc) of image n, all groups.
  void tile(const Tensor* in, Tensor& out, const std::byte* packed, char* col, float* tile,
            const gemm::Workspace& gws, int64_t n, int64_t m0) const {
    const Window& w = p_.w;
    const int64_t P = w.out_size(), plane = w.in_size();
    const int64_t mc = std::min(p_.mt, P - m0);
    const size_t es = dtype_size(p_.xt), eo = dtype_size(p_.ot);
    const Tensor* bias = in[2].data() ? &in[2] : nullptr;
    const Tensor* res = in[3].data() ? &in[3] : nullptr;
    const char* x_img =
        static_cast<const char*>(in[0].data()) + static_cast<size_t>(n * p_.cin * plane) * es;
    char* y = static_cast<char*>(out.data());
    for (int64_t g = 0; g < p_.groups; ++g) {
      gemm::MatView a;
      if (p_.pointwise) {
        a = p_.cl ? gemm::MatView{x_img + static_cast<size_t>(m0 * p_.cin + g * p_.cin_g) * es,
                                  p_.xt, p_.cin, 1}
                  : gemm::MatView{x_img + static_cast<size_t>(g * p_.cin_g * P + m0) * es, p_.xt, 1,
                                  P};
      } else if (p_.cl) {
        gather_cl(p_, x_img, g, m0, mc, col, es);
        a = {col, p_.xt, p_.kg, 1};
      } else {
        if (es == 4)
          gather_cf(p_, x_img, g, m0, mc, reinterpret_cast<uint32_t*>(col), p_.mt);
        else
          gather_cf(p_, x_img, g, m0, mc, reinterpret_cast<uint16_t*>(col), p_.mt);
        a = {col, p_.xt, 1, p_.mt};
      }
      gemm::Epilogue ep;
      ep.act = p_.act;
      if (bias)
        ep.add = {static_cast<const char*>(bias->data()) +
                      static_cast<size_t>(g * p_.cout_g) * dtype_size(bias->dtype()),
                  bias->dtype(), 0, 1};
      if (res) {
        const size_t er = dtype_size(res->dtype());
        const char* r = static_cast<const char*>(res->data());
        ep.residual =
            p_.cl ? gemm::MatView{r + static_cast<size_t>((n * P + m0) * p_.cout + g * p_.cout_g) *
                                          er,
                                  res->dtype(), p_.cout, 1}
                  : gemm::MatView{
                        r + static_cast<size_t>((n * p_.cout + g * p_.cout_g) * P + m0) * er,
                        res->dtype(), 1, P};
      }
      const void* pb = packed + static_cast<size_t>(g) * group_pack_;
      if (p_.cl) {
        gemm::OutView ov{y + static_cast<size_t>((n * P + m0) * p_.cout + g * p_.cout_g) * eo,
                         p_.ot, p_.cout};
        gemm::run(gp_, mc, p_.cout_g, p_.kg, a, pb, pt_, ov, ep, gws);
      } else {
        gemm::run(gp_, mc, p_.cout_g, p_.kg, a, pb, pt_, {tile, DType::f32, p_.cout_g}, ep, gws);
        char* o = y + static_cast<size_t>((n * p_.cout + g * p_.cout_g) * P + m0) * eo;
        if (p_.ot == DType::f32)
          untile(tile, mc, p_.cout_g, reinterpret_cast<float*>(o), P);
        else if (p_.ot == DType::bf16)
          untile(tile, mc, p_.cout_g, reinterpret_cast<bf16*>(o), P);
        else
          untile(tile, mc, p_.cout_g, reinterpret_cast<f16*>(o), P);
      }
    }
  }

  // Many tiles: each thread takes whole tiles (gather + GEMM in its own
  // scratch slot, no synchronisation inside a tile). Few tiles: one tile at a
  // time, the gather and the GEMM threaded inside. Every tile is computed the
  // same way either way, so the output does not depend on the thread count.
  void compute(const Tensor* in, Tensor& out, const std::byte* packed, char* ws) const {
    const int64_t P = p_.w.out_size();
    const int64_t per_img = (P + p_.mt - 1) / p_.mt, ntiles = p_.n * per_img;
    const int threads = num_threads();
    const size_t slot = slot_bytes();
    auto col_of = [&](int s) { return ws + static_cast<size_t>(s) * slot; };
    auto tile_of = [&](char* c) { return reinterpret_cast<float*>(c + col_); };
    if (threads > 1 && threads <= slots_ && ntiles >= 2 * threads) {
      std::atomic<uint32_t> busy{0};
      parallel_tasks(ntiles, [&](int64_t t) {
        int s = 0;
        for (;; s = (s + 1) % slots_) {
          uint32_t cur = busy.load();
          if (!(cur >> s & 1u) && busy.compare_exchange_weak(cur, cur | (1u << s))) break;
        }
        char* c = col_of(s);
        tile(in, out, packed, c, tile_of(c), {c + col_ + tile_, 1}, t / per_img,
             t % per_img * p_.mt);
        busy.fetch_and(~(1u << s));
      });
      return;
    }
    const gemm::Workspace all{ws + slot * static_cast<size_t>(slots_), slots_};
    for (int64_t t = 0; t < ntiles; ++t)
      tile(in, out, packed, col_of(0), tile_of(col_of(0)), all, t / per_img, t % per_img * p_.mt);
  }

  ConvPlan p_;
  shape::TileKernels tiles_;  // the layout transposes
  gemm::Params gp_;
  DType pt_ = DType::f32;
  size_t group_pack_ = 0, reorder_ = 0, col_ = 0, tile_ = 0;
  size_t gemm_one_ = 0, gemm_all_ = 0;  // GEMM scratch: one thread's, all slots'
  int slots_ = 1;
  DirectFn direct_ = nullptr;        // the direct kernel, when it takes this case
  bool widen_ = false;               // ... on f32 copies of 16-bit x, bias and y
  size_t xf_ = 0, yf_ = 0, bf_ = 0;  // those copies
  int64_t sub_ = 0;                  // its input-channel sub-block
  bool bf16_direct_ = false;         // the bf16 direct kernel takes it
  bool bf16_runs_ = false;           // ... on its runs path (few input channels)
  bool tap_major_ = false;           // packed weight rows k = (tap, ic)
  size_t xcl_ = 0, ycl_ = 0;  // channels-first input / output converted for the direct kernel
  Tensor zeros_;              // the direct kernel's padding row
  Tensor packed_;             // the weight packed at create (constant operand)
  bool prepacked_ = false;
};

}  // namespace

ConvPlan conv_plan(const OpCall& call, const Window& w, bool cl) {
  ConvPlan p;
  p.op = call.op();
  p.w = w;
  p.cl = cl;
  const Shape& xs = call.in(0).shape;
  const Shape& ws = call.in(1).shape;
  p.n = xs[0];
  p.cin = cl ? xs.back() : xs[1];
  p.cout = ws[0];
  p.groups = call.attrs.i("group");
  p.cin_g = p.cin / p.groups;
  p.cout_g = p.cout / p.groups;
  p.kg = p.cin_g * w.taps();
  p.pointwise = w.taps() == 1;
  for (int i = 0; i < 3; ++i)
    if (w.s[i] != 1 || w.pb[i] != 0 || w.pe[i] != 0) p.pointwise = false;
  p.act = act_of(call);
  p.xt = call.in(0).dtype;
  p.wt = call.in(1).dtype;
  p.ot = call.out(0).dtype;
  // Tile: a gathered block of about 4 MiB (L2/L3 resident), at least 256
  // pixels so that the GEMM has rows for both cores; fixed by the shape only.
  const int64_t P = w.out_size();
  const int64_t row = std::max<int64_t>(p.kg * static_cast<int64_t>(dtype_size(p.xt)), 1);
  int64_t mt = std::max<int64_t>((int64_t{4} << 20) / row, 256) / 32 * 32;
  p.mt = std::max<int64_t>(std::min(mt, P), 1);
  auto f32_or_absent = [&](size_t i) {
    return !call.has_input(i) || call.in(i).dtype == DType::f32;
  };
  // The bf16 direct kernel pays per tap for the tile's input pointers: with
  // few input channels (the UNet's 4-channel stem) the gather + GEMM is faster
  // (measured 4 -> 320 at 64x64: 0.9 ms vs 6.4 ms). The f32 one builds them
  // once per tile for all its panels and reads a kernel row's taps as one
  // run: on the stem it matches the gather + GEMM bare and keeps bias + SiLU
  // in registers (Xeon, 2026-12-04: fused / bare 1.01 vs 1.4 on AVX-512,
  // 1.15 vs 1.36 on AVX2).
  const bool enough_channels = p.cin_g >= 32;
  p.direct_bf16_ok = enough_channels && !p.pointwise && p.xt == DType::bf16 &&
                     p.wt == DType::bf16 && p.ot == DType::bf16 && p.cin_g % 2 == 0 &&
                     f32_bf16_or_absent(call, 2) &&
                     (cl ? f32_bf16_or_absent(call, 3) : !call.has_input(3));
  // Few channels on vdpbf16ps: the tile's pairs are copied once for all
  // panels (the pointer-per-tap walk above is what the stem could not pay).
  // Zen 4, 2 threads, bf16 stem 4 -> 320 at 64x64: 0.52-0.58 ms on the
  // widened f32 kernel, 0.28 on this path (oneDNN 0.22-0.31).
  p.direct_bf16_runs_ok = !p.pointwise && p.xt == DType::bf16 && p.wt == DType::bf16 &&
                          p.ot == DType::bf16 && p.cin_g >= 4 && p.cin_g < 32 && p.cin_g % 2 == 0 &&
                          w.taps() * p.cin_g / 2 <= kDirectBf16RunPairs &&
                          w.in_size() * p.cin / 2 < (int64_t{1} << 31) &&  // 32-bit gathers
                          f32_bf16_or_absent(call, 2) &&
                          (cl ? f32_bf16_or_absent(call, 3) : !call.has_input(3));
  const bool half = p.xt == DType::bf16 || p.xt == DType::f16;
  const bool widen_types =
      !p.pointwise && half && p.wt == p.xt && p.ot == p.xt && !call.has_input(3) &&
      (!call.has_input(2) || call.in(2).dtype == DType::f32 || call.in(2).dtype == p.xt);
  p.direct_widen_ok = widen_types && p.cin_g >= 4 && p.cin_g < 32;
  // The f32 copies are workspace: at most 32 MiB of them (the large VAE maps,
  // 256 MiB of copies at 512x512x128, keep the gather + GEMM's few MiB).
  const double copies = 4.0 * static_cast<double>(p.n) *
                        static_cast<double>(p.cin * w.in_size() + p.cout * w.out_size());
  p.direct_widen_many_ok = widen_types && p.cin_g >= 32 && copies <= 32.0 * (1 << 20);
  p.direct_ok = p.cin_g >= 4 && !p.pointwise && p.xt == DType::f32 && p.wt == DType::f32 &&
                p.ot == DType::f32 && f32_or_absent(2) &&
                (cl ? f32_or_absent(3) : !call.has_input(3));
  return p;
}

std::unique_ptr<KernelInstance> make_conv_instance(const OpCall& call, const ConvPlan& plan,
                                                   Isa isa) {
  if (depthwise_ok(call, plan)) return make_depthwise_instance(call, plan, isa);
  return with_weight(call, std::make_unique<ConvInstance>(plan, isa));
}

void reject_residual_in_output(const ConvPlan& p, const Tensor& residual, const Tensor& out) {
  if (!residual.data()) return;
  const auto* r = static_cast<const std::byte*>(residual.data());
  const auto* o = static_cast<const std::byte*>(out.data());
  if (r < o + out.nbytes() && o < r + residual.nbytes())
    throw Error(p.op, "residual",
                "memory apart from the output (in place only for depthwise convolutions)",
                "a tensor that overlaps the output");
}

void note_weight_per_call(const OpCall& call) {
  log_once(LogLevel::info, "conv-weight-per-call:" + call.op(),
           call.op() +
               ": weight is not a constant operand; packed per call into the workspace "
               "(correct, slower: pass it with TensorDesc::constant to pack it once)");
}

}  // namespace opsnn::conv
