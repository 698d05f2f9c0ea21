// Kernel names and priorities, one pattern for every op: "<op>_<isa>" or
// "<op>_<variant>_<isa>", where <isa> is the ISA the kernel's code runs at
// (the name `opsnn ops` lists and Op::kernel_name() reports). Priorities:
// higher first; a per-ISA set takes the tier's base plus the ISA's step.
#pragma once

#include <string>
#include <string_view>

#include "opsnn/cpu.h"

namespace opsnn::ops {

inline std::string kernel_name(std::string_view op, std::string_view variant, Isa isa) {
  std::string n(op);
  if (!variant.empty()) n.append("_").append(variant);
  return n.append("_").append(isa_name(isa));
}

// Per-ISA kernels of the main tier: avx512 20, avx2 10, scalar 0.
inline constexpr int kPriorityIsaStep = 10;
inline constexpr int isa_priority(Isa isa, int base = 0) {
  return base + (isa == Isa::avx512 ? 2 : isa == Isa::avx2 ? 1 : 0) * kPriorityIsaStep;
}
// Special-purpose kernels that beat every per-ISA kernel of the main tier
// where they accept (AVX512_BF16 forms).
inline constexpr int kPrioritySpecial = 25;
// Fallbacks tried only after every main-tier kernel declined (before the
// float64 reference kernel, INT_MIN).
inline constexpr int kPriorityFallback = -100;

}  // namespace opsnn::ops
