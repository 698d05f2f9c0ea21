// int8 x int8 -> int32 GEMM (W8A8) with a fused dequantize / requantize epilogue.
//
//   acc[m, n] = sum_k (a[m, k] - c) * w[n, k]      exact int32 (K <= 65536)
//   y = acc                                        (out i32)
//   y = act(acc * a_scale[m] * w_scale[n] + bias)  (out f32 / bf16 / f16)
//   y = saturate(round(v / y_scale) + y_zp)        (out i8 / u8, v as above, act none|relu)
//
// Signedness: the dot-product instruction (vpdpbusd) multiplies unsigned bytes
// by signed bytes. A is therefore packed as u8: s8 activations are shifted by
// +128 (x ^ 0x80) and u8 activations kept; with c = 128 (s8) or 0 (u8), plus
// the activation zero point, acc = dot(a_u8, w) - c * colsum(w)[n], where
// colsum is computed once when W is packed. Integer sums are exact, so the
// int32 result is the same for any blocking and thread count.
//
// W is packed into panels of NR columns: for each group of 4 k, NR x 4 bytes
// (k padded with zeros to a multiple of 4), then colsum[N] int32.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/act/act.h"
#include "kernels/qgemm/qpack.h"
#include "opsnn/dtype.h"

namespace opsnn::qgemm {

enum class Out : int { i32, f32, bf16, f16, i8, u8 };
using Act = act::Kind;  // the shared activation vocabulary

struct Epilogue {
  Out out = Out::i32;
  const float* a_scale = nullptr;  // per row (a_scale_rs = 1) or per tensor (0)
  int64_t a_scale_rs = 0;
  const float* w_scale = nullptr;  // per column (w_scale_cs = 1) or per tensor (0)
  int64_t w_scale_cs = 0;
  const float* bias = nullptr;  // [N] f32 or nullptr
  Act act = Act::none;
  float y_scale = 1.0f;
  int32_t y_zp = 0;
};

struct Args {
  int64_t M = 0, N = 0, K = 0;
  const void* a = nullptr;  // [M, K] rows lda apart (elements)
  int64_t lda = 0;
  bool a_signed = true;  // s8 (true) or u8
  int32_t a_zp = 0;      // activation zero point (in a's own domain)
  const void* packed_w = nullptr;
  void* y = nullptr;  // [M, N] rows ldy apart (elements)
  int64_t ldy = 0;
  Epilogue ep;
  void* ws = nullptr;  // workspace_bytes(fns, M, N, K, threads)
  int threads = 1;     // the threads ws was sized for
};

// One ISA's kernel: panel width, rows per microkernel, and the driver.
struct KernelFns {
  const char* name;
  int nr, mr;
  void (*run)(const Args& a);
  int a_k4_bytes = 4;  // bytes of packed A per row and step of 4 k
  int w_k4_bytes = 0;  // per thread: bytes of W scratch per column and step of 4 k
  int64_t kc4 = 0;     // the driver's K block in steps of 4 k (0: kc4_max)
  int64_t mc = 0;      // the driver's rows per block of C (0: block_rows(mr))
};
// The K block (steps of 4 k) of kernel f's driver.
int64_t kc4_of(const KernelFns& f);
const KernelFns& fns_scalar();
const KernelFns& fns_avx2();             // plain AVX2 (exact 16-bit vpmaddwd, no vpmaddubsw)
const KernelFns& fns_avxvnni();          // AVX-VNNI (256-bit vpdpbusd)
const KernelFns& fns_avx2_w7();          // plain AVX2, weights in [-64, 64] (vpmaddubsw)
const KernelFns& fns_avx512vnni();       // AVX-512 VNNI, 12x32 (K < 1024)
const KernelFns& fns_avx512vnni_wide();  // AVX-512 VNNI, 6x64 (K >= 1024)
inline constexpr int64_t kWideMinK = 1024;

int64_t k4_of(int64_t K);
// Largest K block (in steps of 4 k) of the driver for a mr x nr microkernel.
int64_t kc4_max(int mr, int nr);
size_t packed_bytes(int nr, int64_t N, int64_t K);
// Every w[n, k] (N x K, rows ldw apart) within [-64, 64] (ONNX Runtime's
// 7-bit reduce_range levels): fns_avx2_w7 is then exact (its 16-bit pair
// sums are at most 2 * 255 * 64 = 32640 in magnitude).
bool weights_fit_7bit(const int8_t* w, int64_t N, int64_t K, int64_t ldw);
// f, or fns_avx2_w7 where f is fns_avx2 and the weights fit (the same
// panel width and packing, so either runs on the same packed W).
const KernelFns& for_weights(const KernelFns& f, const int8_t* w, int64_t N, int64_t K,
                             int64_t ldw);
// w [N, K] int8 with row stride ldw (elements).
void pack_w(int nr, int64_t N, int64_t K, const int8_t* w, int64_t ldw, void* dst);
const int32_t* packed_colsum(const void* packed, int nr, int64_t N, int64_t K);
// Packed A, the column corrections and, when K is blocked, one int32 tile
// buffer (the driver's MC x NC block) per thread.
size_t workspace_bytes(const KernelFns& f, int64_t M, int64_t N, int64_t K, int threads);
// The driver's block of C: mr * 8 rows by nr * 8 columns.
inline int64_t block_rows(int mr) { return int64_t{mr} * 8; }
inline int64_t block_cols(int nr) { return int64_t{nr} * 8; }

}  // namespace opsnn::qgemm
