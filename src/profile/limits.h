// Per-ISA loops behind the machine-limit measurements.
#pragma once

#include <cstddef>
#include <cstdint>

namespace opsnn::detail {

// Runs `iters` iterations of independent FMA chains; returns flops executed.
double fma_loop_scalar(int64_t iters);
double fma_loop_avx2(int64_t iters);
double fma_loop_avx512(int64_t iters);
// XOR of n 32-bit words (integer ops: the time does not depend on the values).
uint32_t read_words_avx2(const uint32_t* p, size_t n);
uint32_t read_words_avx512(const uint32_t* p, size_t n);
// dst[i] = src[i] with non-temporal (streaming) stores; dst and src 64-byte
// aligned, n a multiple of 64 floats.
void stream_copy_avx2(float* dst, const float* src, size_t n);
void stream_copy_avx512(float* dst, const float* src, size_t n);

}  // namespace opsnn::detail
