// Registration of an op's kernels written once and instantiated per ISA
// (the unary model: kernels/<op>_{scalar,avx2,avx512}.cc): one KernelDesc per
// ISA level, best first.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ops/common/checks.h"
#include "ops/common/kernel_names.h"
#include "opsnn/cpu.h"
#include "opsnn/op.h"

namespace opsnn::ops {

// One entry point per ISA level, e.g. {run_avx512(), run_avx2(), run_scalar()}.
template <class Fn>
struct PerIsa {
  Fn avx512, avx2, scalar;
};

// Adds kernels `<stem><isa>` (stem defaults to "<op>_") for avx512, avx2 and
// scalar with priorities 20, 10 and 0 (above the reference kernel), each for
// `dtypes`; make(fn, isa) returns the KernelFactory of that ISA's entry point.
template <class Fn, class Make>
void add_isa_kernels(Registry& r, const std::string& op, const PerIsa<Fn>& fns, Make&& make,
                     std::string stem = "", const std::vector<DType>& dtypes = kFloatDTypes) {
  const std::pair<Isa, Fn> isas[] = {
      {Isa::avx512, fns.avx512}, {Isa::avx2, fns.avx2}, {Isa::scalar, fns.scalar}};
  for (const auto& [isa, fn] : isas) {
    KernelDesc k;
    k.name = stem.empty() ? kernel_name(op, "", isa) : stem + isa_name(isa);
    k.isa = isa;
    k.dtypes = dtypes;
    k.priority = isa_priority(isa);
    k.create = make(fn, isa);
    r.add_kernel(op, std::move(k));
  }
}

}  // namespace opsnn::ops
