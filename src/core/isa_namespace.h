// OPSNN_ISA_NAMESPACE: an inline namespace named after the ISA flags the
// including file is compiled with. Kernel files are compiled with their ISA's
// flags (cmake/opsnn_isa.cmake), and every inline function or template they
// instantiate from a shared header is emitted with those flags under the same
// symbol name as the portable file's copy; the linker keeps one copy for the
// whole library, whichever it meets first, so portable code could run AVX-512
// instructions on a CPU without them. A shared header's inline helpers that
// kernel files call go in
//   namespace opsnn::x { inline namespace OPSNN_ISA_NAMESPACE { ... } }
// so that each flag set gets its own symbols (callers' code is unchanged).
// Types that cross between files (parameters of out-of-line functions) stay
// outside: their names must be the same everywhere. The test
// isa_objects_share_no_inline_code checks the built objects.
#pragma once

#if defined(__AMX_TILE__)
#define OPSNN_ISA_NAMESPACE isa_amx
#elif defined(__AVX512BF16__)
#define OPSNN_ISA_NAMESPACE isa_avx512bf16
#elif defined(__AVX512VNNI__)
#define OPSNN_ISA_NAMESPACE isa_avx512vnni
#elif defined(__AVX512F__)
#define OPSNN_ISA_NAMESPACE isa_avx512
#elif defined(__AVXVNNI__)
#define OPSNN_ISA_NAMESPACE isa_avxvnni
#elif defined(__AVX2__)
#define OPSNN_ISA_NAMESPACE isa_avx2
#else
#define OPSNN_ISA_NAMESPACE isa_base
#endif
