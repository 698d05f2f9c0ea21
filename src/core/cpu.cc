#include "opsnn/cpu.h"

#include <cpuid.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "opsnn/error.h"
#include "opsnn/log.h"

namespace opsnn {
namespace {

uint64_t xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t{edx} << 32) | eax;
}

size_t sysconf_or(int name, size_t fallback) {
  long v = sysconf(name);
  return v > 0 ? static_cast<size_t>(v) : fallback;
}

CpuInfo detect() {
  CpuInfo c;
  unsigned a, b, cx, d;
  if (!__get_cpuid(0, &a, &b, &cx, &d)) return c;
  const unsigned max_leaf = a;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &cx, 4);
  c.vendor = vendor;

  __get_cpuid(1, &a, &b, &cx, &d);
  const unsigned base_family = (a >> 8) & 0xf;
  const unsigned family = base_family + (base_family == 0xf ? (a >> 20) & 0xff : 0);
  const unsigned model = ((a >> 4) & 0xf) | (base_family >= 0xf ? ((a >> 16) & 0xf) << 4 : 0);
  if (c.vendor == "AuthenticAMD" || c.vendor == "HygonGenuine") {
    // Family 19h models 10h-1Fh, 60h-7Fh and A0h-AFh are Zen 4 (T1/T2 to L2).
    const bool zen4 =
        family == 0x19 && ((model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0x7f) ||
                           (model >= 0xa0 && model <= 0xaf));
    c.prefetch_t1_fills_l1 = family < 0x19 || (family == 0x19 && !zen4);
  }
  const bool osxsave = cx & (1u << 27);
  const bool avx = cx & (1u << 28);
  c.fma = cx & (1u << 12);
  c.f16c = cx & (1u << 29);
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;
  const bool os_avx512 = (xcr0 & 0xe6) == 0xe6;
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;  // XTILECFG and XTILEDATA

  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, cx, d);
    c.avx2 = avx && os_avx && (b & (1u << 5));
    c.bmi2 = b & (1u << 8);
    c.avx512f = os_avx512 && (b & (1u << 16));
    c.avx512dq = c.avx512f && (b & (1u << 17));
    c.avx512bw = c.avx512f && (b & (1u << 30));
    c.avx512vl = c.avx512f && (b & (1u << 31));
    c.avx512_vnni = c.avx512f && (cx & (1u << 11));
    c.amx_bf16 = c.avx512f && os_amx && (d & (1u << 22)) && (d & (1u << 24));
    __cpuid_count(7, 1, a, b, cx, d);
    c.avx_vnni = c.avx2 && (a & (1u << 4));
    c.avx512_bf16 = c.avx512f && (a & (1u << 5));
  }
  c.fma = c.fma && os_avx;
  c.f16c = c.f16c && os_avx;

  char brand[49] = {};
  unsigned ext_max = __get_cpuid_max(0x80000000u, nullptr);
  if (ext_max >= 0x80000004u) {
    for (unsigned i = 0; i < 3; ++i) {
      __get_cpuid(0x80000002u + i, &a, &b, &cx, &d);
      std::memcpy(brand + 16 * i, &a, 4);
      std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &cx, 4);
      std::memcpy(brand + 16 * i + 12, &d, 4);
    }
  }
  c.brand = brand;
  c.l1d_bytes = sysconf_or(_SC_LEVEL1_DCACHE_SIZE, c.l1d_bytes);
  c.l1d_ways = static_cast<int>(sysconf_or(_SC_LEVEL1_DCACHE_ASSOC, 8));
  c.l2_bytes = sysconf_or(_SC_LEVEL2_CACHE_SIZE, c.l2_bytes);
  c.l3_bytes = sysconf_or(_SC_LEVEL3_CACHE_SIZE, c.l3_bytes);
  cpu_set_t set;
  c.logical_cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  if (c.logical_cores < 1) c.logical_cores = 1;
  return c;
}

// OPSNN_CPU_DISABLE=avx_vnni,avx512_vnni,avx512_bf16,amx_bf16 (any of them): treat
// those extensions as absent, to run and time the paths of CPUs without them
// (the AVX2 int8 kernel without VNNI, bf16 without the dot products) here.
void apply_disabled(CpuInfo& c) {
  const char* e = std::getenv("OPSNN_CPU_DISABLE");
  if (!e || !*e) return;
  std::stringstream list(e);
  std::string f;
  while (std::getline(list, f, ',')) {
    if (f == "avx_vnni")
      c.avx_vnni = false;
    else if (f == "avx512_vnni")
      c.avx512_vnni = false;
    else if (f == "avx512_bf16")
      c.avx512_bf16 = false;
    else if (f == "amx_bf16")
      c.amx_bf16 = false;
    else if (!f.empty())
      throw Error("cpu", "OPSNN_CPU_DISABLE",
                  "a comma-separated list of avx_vnni, avx512_vnni, avx512_bf16, amx_bf16",
                  "'" + f + "'");
  }
}

std::atomic<int>& isa_cap() {
  static std::atomic<int> cap = [] {
    const char* e = std::getenv("OPSNN_ISA");
    if (!e || !*e) return -1;  // no cap: the best the CPU has
    return static_cast<int>(isa_from_name(e));
  }();
  return cap;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar:
      return "scalar";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "?";
}

Isa isa_from_name(const std::string& name) {
  if (name == "scalar") return Isa::scalar;
  if (name == "avx2") return Isa::avx2;
  if (name == "avx512") return Isa::avx512;
  throw Error("cpu", "OPSNN_ISA", "one of scalar|avx2|avx512", "'" + name + "'");
}

Isa CpuInfo::best_isa() const {
  if (avx512f && avx512bw && avx512vl && avx512dq && fma && f16c && avx2) return Isa::avx512;
  if (avx2 && fma && f16c) return Isa::avx2;
  return Isa::scalar;
}

const CpuInfo& cpu_info() {
  static const CpuInfo info = [] {
    CpuInfo c = detect();
    apply_disabled(c);
    return c;
  }();
  return info;
}

Isa active_isa() {
  const Isa hw = cpu_info().best_isa();
  const int requested = isa_cap().load(std::memory_order_relaxed);
  if (requested < 0) return hw;
  const Isa cap = static_cast<Isa>(requested);
  if (cap > hw) {  // asked for by the user (OPSNN_ISA or set_isa_cap): say so once
    log_once(LogLevel::warn, "isa-cap",
             std::string("OPSNN_ISA=") + isa_name(cap) + " is more than this CPU has; using " +
                 isa_name(hw));
    return hw;
  }
  return cap;
}

void set_isa_cap(Isa cap) { isa_cap().store(static_cast<int>(cap)); }

bool has_avx512_bf16() { return active_isa() == Isa::avx512 && cpu_info().avx512_bf16; }
bool has_avx512_vnni() { return active_isa() == Isa::avx512 && cpu_info().avx512_vnni; }
bool has_avx_vnni() { return active_isa() >= Isa::avx2 && cpu_info().avx_vnni; }

bool has_amx_bf16() {
  if (active_isa() != Isa::avx512 || !cpu_info().amx_bf16) return false;
  // Linux keeps the 8 KiB tile data state off until a process asks for it
  // (the kernel then sizes every thread's save area for it).
  static const bool granted = [] {
    constexpr long kReqXcompPerm = 0x1023, kXfeatureTileData = 18;
    const bool ok = syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureTileData) == 0;
    if (!ok)
      log_once(LogLevel::warn, "amx-perm",
               "the CPU has AMX but Linux refused the tile state (arch_prctl); using AVX-512");
    return ok;
  }();
  return granted;
}

}  // namespace opsnn
