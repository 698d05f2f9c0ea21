// CPU feature detection and the ISA level used by dispatch.
#pragma once

#include <cstddef>
#include <string>

namespace opsnn {

enum class Isa : int { scalar = 0, avx2 = 1, avx512 = 2 };
const char* isa_name(Isa isa);
Isa isa_from_name(const std::string& name);  // throws opsnn::Error

struct CpuInfo {
  std::string vendor, brand;
  bool avx2 = false, fma = false, f16c = false, bmi2 = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512_bf16 = false, avx512_vnni = false, avx_vnni = false;
  // AMX tiles with bf16 dot products (TMUL), enabled by the OS (XCR0).
  bool amx_bf16 = false;
  size_t l1d_bytes = 32 << 10, l2_bytes = 1 << 20, l3_bytes = 8 << 20;  // per core L1/L2
  int l1d_ways = 8;
  // prefetcht1/t2 fill L1 as prefetcht0 does (AMD up to Zen 3; Zen 4 and
  // Intel put them in L2 only): a prefetch "into L2" evicts L1 lines there.
  bool prefetch_t1_fills_l1 = false;
  int logical_cores = 1;

  Isa best_isa() const;  // what the hardware supports
};

// What the CPU has, less the extensions named in OPSNN_CPU_DISABLE (a comma
// list of avx_vnni, avx512_vnni, avx512_bf16, amx_bf16; anything else
// throws).
const CpuInfo& cpu_info();

// The ISA level dispatch may use: the hardware's best, capped by OPSNN_ISA
// (scalar|avx2|avx512) or set_isa_cap(). Asking for more than the hardware
// has is capped to the hardware (with a warning).
Isa active_isa();
void set_isa_cap(Isa cap);  // for tests and tools
// Feature bits beyond the level (bf16 dot products, VNNI) are usable only when
// the active level is avx512 (or avx2 for avx_vnni) and the CPU has them.
bool has_avx512_bf16();
bool has_avx512_vnni();
bool has_avx_vnni();
// AMX bf16 at the avx512 level, once Linux has granted this process the tile
// data state (arch_prctl ARCH_REQ_XCOMP_PERM, asked for on the first call;
// refused: false, logged once).
bool has_amx_bf16();

}  // namespace opsnn
