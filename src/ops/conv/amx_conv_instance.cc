#include <algorithm>
#include <cstring>

#include "ops/conv/conv_amx.h"
#include "ops/conv/depthwise.h"
#include "ops/conv/layout_transpose.h"
#include "opsnn/cpu.h"
#include "opsnn/thread_pool.h"

namespace opsnn::conv {
namespace {

// Pixels per task: up to kMaxPxPerTask (the weights stream once per task),
// fewer where their f32 sums (all output channels) pass kSumsBytes.
constexpr int64_t kMaxPxPerTask = 256;
constexpr int64_t kSumsBytes = 1 << 20;
// K per block: the task's pixels are gathered one K block at a time, so a
// 32-pixel slice (32 x 256 bf16, 16 KiB) is in L1 while the weights of each
// 32 output channels for that block (16 KiB) stream past it from L2. One
// core, 2026-12-05: 320 -> 320 at 64x64 955 -> 1370 GFLOP/s, 640 -> 640 at
// 32x32 910 -> 1450, against whole rows of K per pixel; 128 and 512 per block
// were slower, as was software prefetching of either operand.
constexpr int64_t kKBlock = 256;
// ... unless K is short: then one block (no sums kept between blocks; 128
// channels 3x3, K = 1152: 12% faster as one block).
constexpr int64_t kOneBlockK = 1536;
// Output channels are split between tasks when there are fewer runs of
// pixels than this (small deep maps: both cores busy).
constexpr int64_t kMinTasks = 4;

class AmxConvInstance : public KernelInstance {
 public:
  AmxConvInstance(const ConvPlan& p, bool residual)
      : p_(p), tiles_(layout_tiles(Isa::avx512)), residual_(residual) {
    taps_ = p_.w.taps();
    kpad_ = (taps_ * p_.cin_g + kAmxK - 1) / kAmxK * kAmxK;
    // K blocks of equal size near kKBlock
    const int64_t steps = kpad_ / kAmxK;
    const int64_t nkb = kpad_ <= kOneBlockK ? 1 : (kpad_ + kKBlock - 1) / kKBlock;
    k_block_ = (steps + nkb - 1) / nkb * kAmxK;
    // An even number of 64-byte steps per row would put a tile's 16 rows in
    // few L1 sets when the row is a multiple of 4 KiB: one step more.
    lda_ = k_block_ / kAmxK % 2 == 0 ? k_block_ + kAmxK : k_block_;
    const int64_t nb = (p_.cout_g + kAmxN - 1) / kAmxN;
    const int64_t sums_row = nb * kAmxN * static_cast<int64_t>(sizeof(float));
    px_ = std::clamp<int64_t>(kSumsBytes / sums_row / kAmxM * kAmxM, kAmxM, kMaxPxPerTask);
    px_ = std::max(kAmxM, std::min(px_, (p_.w.out_size() + kAmxM - 1) / kAmxM * kAmxM));
    // (empty batches and maps: one run, no tasks)
    const int64_t runs =
        std::max<int64_t>(1, p_.n * p_.groups * ((p_.w.out_size() + px_ - 1) / px_));
    parts_ = std::max<int64_t>(1, std::min((kMinTasks + runs - 1) / runs, nb));
    const int64_t per_part = (nb + parts_ - 1) / parts_;
    sums_ = nkb > 1 ? round64(static_cast<size_t>(px_ * per_part * kAmxN) * sizeof(float)) : 0;
    gather_ = round64(static_cast<size_t>(px_ * lda_) * sizeof(bf16));
    slots_ = std::clamp(num_threads(), 1, 64);
    wbytes_ = round64(static_cast<size_t>(p_.groups * amx_packed_elems(kpad_, p_.cout_g)) *
                      sizeof(uint16_t));
    if (!p_.cl) {
      xcl_ = round64(static_cast<size_t>(p_.n * p_.cin * p_.w.in_size()) * sizeof(bf16));
      ycl_ = round64(static_cast<size_t>(p_.n * p_.cout * p_.w.out_size()) * sizeof(bf16));
    }
  }

  void prepack(const Tensor& w) {
    packed_ = Tensor::empty({static_cast<int64_t>(wbytes_)}, DType::u8);
    pack(w, static_cast<uint16_t*>(packed_.data()));
  }

  size_t workspace_bytes() const override {
    return (packed_.data() ? 0 : wbytes_) + (gather_ + sums_) * static_cast<size_t>(slots_) + xcl_ +
           ycl_ + rcl_bytes();
  }

  void run(const Tensor* in, Tensor* out, void* ws) override {
    reject_residual_in_output(p_, in[3], out[0]);
    std::byte* cur = static_cast<std::byte*>(ws);
    AmxConvArgs a;
    set_geometry(p_, a);
    a.kpad = kpad_;
    a.lda = lda_;
    a.px_per_task = px_;
    a.oc_parts = parts_;
    a.k_block = k_block_;
    a.act = p_.act;
    if (packed_.data()) {
      a.packed = static_cast<const uint16_t*>(packed_.data());
    } else {
      uint16_t* dst = reinterpret_cast<uint16_t*>(cur);
      pack(in[1], dst);
      a.packed = dst;
      cur += wbytes_;
    }
    a.gather = reinterpret_cast<bf16*>(cur);
    a.gather_stride = gather_ / sizeof(bf16);
    a.slots = slots_;
    cur += gather_ * static_cast<size_t>(slots_);
    a.sums = reinterpret_cast<float*>(cur);
    a.sums_stride = sums_ / sizeof(float);
    cur += sums_ * static_cast<size_t>(slots_);
    set_bias_residual(in, a);
    a.x = in[0].data_as<bf16>();
    a.y = out[0].data_as<bf16>();
    const int64_t in_px = p_.w.in_size(), out_px = p_.w.out_size();
    if (!p_.cl) {
      // Channels first: x (and the residual) to channels last, y back.
      transpose_images(a.x, cur, sizeof(bf16), p_.n, p_.cin, in_px, tiles_);
      a.x = reinterpret_cast<const bf16*>(cur);
      a.y = reinterpret_cast<bf16*>(cur + xcl_);
      if (a.residual) {
        std::byte* r = cur + xcl_ + ycl_;
        transpose_images(a.residual, r, dtype_size(a.res_t), p_.n, p_.cout, out_px, tiles_);
        a.residual = r;
      }
    }
    conv_amx_bf16(a);
    if (!p_.cl) transpose_images(a.y, out[0].data(), sizeof(bf16), p_.n, out_px, p_.cout, tiles_);
  }

 private:
  size_t rcl_bytes() const {
    // a residual of either dtype, as channels last (channels first only)
    return !p_.cl && residual_
               ? round64(static_cast<size_t>(p_.n * p_.cout * p_.w.out_size()) * sizeof(float))
               : 0;
  }

  void pack(const Tensor& w, uint16_t* dst) const {
    const auto* src = static_cast<const uint16_t*>(w.data());
    const int64_t per_group = p_.cout_g * p_.cin_g * taps_;
    for (int64_t g = 0; g < p_.groups; ++g)
      amx_pack_group(src + g * per_group, p_.cin_g, taps_, p_.cout_g, kpad_,
                     dst + g * amx_packed_elems(kpad_, p_.cout_g));
  }

  ConvPlan p_;
  shape::TileKernels tiles_;
  bool residual_ = false;
  int64_t taps_ = 0, kpad_ = 0, lda_ = 0, px_ = 0, parts_ = 1, k_block_ = 0;
  int slots_ = 1;
  size_t gather_ = 0, sums_ = 0, wbytes_ = 0, xcl_ = 0, ycl_ = 0;
  Tensor packed_;  // the weight packed at create (constant operand)
};

}  // namespace

int64_t amx_packed_elems(int64_t kpad, int64_t cout_g) {
  return (cout_g + kAmxN - 1) / kAmxN * kpad * kAmxN;
}

void amx_pack_group(const uint16_t* w, int64_t cin_g, int64_t taps, int64_t cout_g, int64_t kpad,
                    uint16_t* dst) {
  // dst[b][s][tile][r][col][e] holds channel oc = 32 b + 16 tile + col at
  // K index kk = 32 s + 2 r + e = tap * cin_g + ic. One pass over w in its
  // own order (per call, when the weight is not a constant).
  std::fill(dst, dst + amx_packed_elems(kpad, cout_g), uint16_t{0});
  for (int64_t oc = 0; oc < cout_g; ++oc) {
    uint16_t* base = dst + oc / kAmxN * kpad * kAmxN + oc % kAmxN / 16 * kAmxTile + oc % 16 * 2;
    const uint16_t* src = w + oc * cin_g * taps;
    for (int64_t ic = 0; ic < cin_g; ++ic)
      for (int64_t t = 0, kk = ic; t < taps; ++t, kk += cin_g)
        base[kk / kAmxK * 2 * kAmxTile + kk % kAmxK / 2 * 32 + kk % 2] = src[ic * taps + t];
  }
}

bool amx_conv_ok(const OpCall& call, const ConvPlan& p) {
  return p.xt == DType::bf16 && p.wt == DType::bf16 && p.ot == DType::bf16 &&
         f32_bf16_or_absent(call, 2) && f32_bf16_or_absent(call, 3) && !depthwise_ok(call, p);
}

std::unique_ptr<KernelInstance> make_amx_conv_instance(const OpCall& call, const ConvPlan& p) {
  return with_weight(call, std::make_unique<AmxConvInstance>(p, call.has_input(3)));
}

}  // namespace opsnn::conv
