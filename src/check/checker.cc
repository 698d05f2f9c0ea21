#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "opsnn/check.h"
#include "opsnn/error.h"
#include "opsnn/thread_pool.h"

namespace opsnn {

std::vector<TensorDesc> case_descs(const CheckCase& c, DType dtype) {
  std::vector<TensorDesc> d = c.inputs;
  if (!c.keep_dtypes)
    for (TensorDesc& t : d)
      if (!t.absent && is_float(t.dtype)) t.dtype = dtype;
  return d;
}

std::vector<Tensor> make_case_inputs(const CheckCase& c, DType dtype, uint64_t seed) {
  std::vector<TensorDesc> descs = case_descs(c, dtype);
  std::vector<Tensor> ins;
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < descs.size(); ++i) {
    const TensorDesc& d = descs[i];
    if (d.absent) {
      ins.emplace_back();
      continue;
    }
    Tensor t = d.is_contiguous() ? Tensor::zeros(d.shape, d.dtype)
                                 : Tensor::zeros_strided(d.shape, d.strides, d.dtype);
    const ValueRange r = i < c.ranges.size() ? c.ranges[i] : ValueRange{};
    const bool integer = r.integer || !is_float(d.dtype);
    const int64_t n = t.numel();
    for (int64_t k = 0; k < n; ++k) {
      double v;
      if (integer) {
        std::uniform_int_distribution<int64_t> u(static_cast<int64_t>(std::ceil(r.lo)),
                                                 static_cast<int64_t>(std::floor(r.hi)));
        v = static_cast<double>(u(rng));
      } else {
        v = std::uniform_real_distribution<double>(r.lo, r.hi)(rng);
      }
      t.flat_set(k, v);
    }
    ins.push_back(t);
  }
  return ins;
}

namespace {

// Written over a case's float inputs, every kSpecialStride-th element (the
// rest keep their ordinary values, so rows mix both).
constexpr int64_t kSpecialStride = 5;
const double kSpecials[] = {NAN,      INFINITY, -INFINITY, -0.0, 1e-40, -1e-40, FLT_MAX,
                            -FLT_MAX, 1e32,     -1e32,     88.5, -88.5, 100,    -100,
                            -3e38,    1e5,      -1e5,      15,   -15,   0.0};
constexpr size_t kNumSpecials = sizeof(kSpecials) / sizeof(kSpecials[0]);

// Pointwise ops (one input, or the elementwise family) get every special
// value. The others get NaN, +-inf and -0 only: in reductions,
// norms, GEMMs and attention huge finite values cancel in an order-dependent
// way, and where an output multiplies a function of one element by another
// (gated activations) a huge factor magnifies the function's absolute error
// beyond any relative tolerance.
size_t specials_for(const OpSchema& s) {
  const bool pointwise =
      s.family == "elementwise" ||
      (s.family == "activation" && s.inputs.size() == 1 && s.name != "swiglu" && s.name != "geglu");
  // No subnormals there either: the bf16 dot-product instructions (vdpbf16ps)
  // read bf16 subnormals as zero (docs/special_values.md).
  return pointwise ? kNumSpecials : 4;
}

void write_specials(const OpCall& call, std::vector<Tensor>& ins, size_t phase) {
  const size_t count = specials_for(*call.schema);
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!call.has_input(i) || !is_float(ins[i].dtype())) continue;
    const int64_t n = ins[i].numel();
    for (int64_t k = static_cast<int64_t>((i + phase) % kSpecialStride); k < n; k += kSpecialStride)
      ins[i].flat_set(k, kSpecials[static_cast<size_t>(k / kSpecialStride + i + phase) % count]);
  }
}

// The reference's value as the output dtype holds it (finite values beyond
// its range become infinities).
double dtype_max(DType t) {
  return t == DType::f16 ? 65504.0 : t == DType::f32 ? FLT_MAX : t == DType::bf16 ? 3.3895e38 : 0;
}

double in_dtype(double e, DType t) {
  Tensor one = Tensor::empty({1}, t);
  one.flat_set(0, e);
  return one.flat_get(0);
}

void compare(const RefTensor& ref, const Tensor& got, const Tolerance& tol, CaseResult& r) {
  const int64_t n = got.numel();
  const bool exact = !is_float(got.dtype());
  for (int64_t i = 0; i < n; ++i) {
    const double e = ref.data[static_cast<size_t>(i)];
    double g = got.flat_get(i);
    const double expect =
        exact || !std::isfinite(e) || std::fabs(e) > 6e4 ? in_dtype(e, got.dtype()) : e;
    if (std::isnan(expect) || std::isnan(g)) {
      if (std::isnan(expect) != std::isnan(g)) {
        r.worst_ratio = INFINITY;
        if (r.message.empty())
          r.message = "element " + std::to_string(i) + ": expected " + std::to_string(expect) +
                      ", got " + std::to_string(g);
      }
      continue;
    }
    // A result within a factor 8 of the dtype's largest value may overflow an
    // intermediate (x * 6 / 6): the same-signed infinity is accepted there.
    if (std::isinf(g) && std::isfinite(expect) && std::fabs(expect) * 8 > dtype_max(got.dtype()) &&
        std::signbit(g) == std::signbit(expect))
      continue;
    if (std::isinf(expect) || std::isinf(g)) {
      // An infinite reference must be matched exactly, or by the largest finite value of a 16-bit
      // type.
      if (expect != g) {
        r.worst_ratio = INFINITY;
        if (r.message.empty())
          r.message = "element " + std::to_string(i) + ": expected " + std::to_string(expect) +
                      ", got " + std::to_string(g);
      }
      continue;
    }
    const double err = std::fabs(g - expect);
    const double rel = err / std::max(std::fabs(expect), 1e-30);
    r.max_abs_err = std::max(r.max_abs_err, err);
    if (err > 0) r.max_rel_err = std::max(r.max_rel_err, rel);
    const double allowed = exact ? 0 : tol.atol + tol.rtol * std::fabs(expect);
    const double ratio = err == 0 ? 0 : (allowed > 0 ? err / allowed : INFINITY);
    if (ratio > r.worst_ratio) {
      r.worst_ratio = ratio;
      if (ratio > 1)
        r.message = "element " + std::to_string(i) + ": expected " + std::to_string(expect) +
                    ", got " + std::to_string(g) + " (allowed +-" + std::to_string(allowed) + ")";
    }
  }
}

// Bit-identical, except that any two NaNs match: the sign and payload of a
// NaN are not part of the result (x86 gives the default NaN its sign bit set).
bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.nbytes() != b.nbytes()) return false;
  if (a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0) return true;
  if (!is_float(a.dtype())) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.flat_get(i), y = b.flat_get(i);
    if (std::isnan(x) != std::isnan(y)) return false;
    if (!std::isnan(x) && std::memcmp(&x, &y, sizeof x) != 0) return false;
  }
  return true;
}

void compare_outputs(const Op& o, const std::vector<Tensor>& ins, const std::vector<Tensor>& outs,
                     double tol_scale, CaseResult& r) {
  const OpSchema& schema = *o.call().schema;
  if (!schema.reference) throw Error(schema.name, "reference", "a float64 reference", "none");
  r.op = schema.name;
  r.kernel = o.kernel_name();
  const OpCall& call = o.call();
  if (ins.size() > call.inputs.size() || outs.size() != call.outputs.size())
    throw Error(schema.name, "compare_with_reference",
                "up to " + std::to_string(call.inputs.size()) + " inputs and " +
                    std::to_string(call.outputs.size()) + " outputs",
                std::to_string(ins.size()) + " and " + std::to_string(outs.size()));
  // Omitted trailing inputs are absent (or constants the call holds).
  std::vector<Tensor> all = ins;
  all.resize(call.inputs.size());
  const std::vector<RefTensor> rout = run_reference(call, all.data());
  auto tolerance_of = [&](DType t) {
    return schema.tolerance ? schema.tolerance(t) : default_tolerance(t);
  };
  // Mixed dtypes compute at the precision of the coarsest float operand (a
  // bf16 weight makes the GEMM round its other operand to bf16 too).
  Tolerance coarsest{0, 0};
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (call.has_input(i) && is_float(call.inputs[i].dtype)) {
      const Tolerance t = tolerance_of(call.inputs[i].dtype);
      coarsest = {std::max(coarsest.atol, t.atol), std::max(coarsest.rtol, t.rtol)};
    }
  for (size_t i = 0; i < outs.size(); ++i) {
    Tolerance tol = tolerance_of(outs[i].dtype());
    if (is_float(outs[i].dtype()))
      tol = {std::max(tol.atol, coarsest.atol), std::max(tol.rtol, coarsest.rtol)};
    tol.atol *= tol_scale;
    tol.rtol *= tol_scale;
    compare(rout[i], outs[i], tol, r);
  }
  r.passed = r.worst_ratio <= 1;
}

}  // namespace

CaseResult compare_with_reference(const Op& op, const std::vector<Tensor>& inputs,
                                  const std::vector<Tensor>& outputs, double tol_scale) {
  CaseResult r;
  if (!op.call().outputs.empty()) r.dtype = op.call().outputs[0].dtype;
  compare_outputs(op, inputs, outputs, tol_scale, r);
  return r;
}

std::vector<CaseResult> check_op(const std::string& op, const CheckOptions& opt) {
  const OpSchema& schema = Registry::global().schema(op);
  if (!schema.cases) throw Error(op, "cases", "a case table", "none");
  if (!schema.reference) throw Error(op, "reference", "a float64 reference", "none");
  std::vector<CaseResult> results;
  uint64_t seed = opt.seed;
  std::vector<std::pair<const CheckCase*, size_t>> runs;  // case, special phase (0: none)
  const std::vector<CheckCase> cases = schema.cases(opt.dtype);
  for (const CheckCase& c : cases) runs.push_back({&c, 0});
  if (opt.special_values)
    for (const CheckCase& c : cases) {
      int64_t n = 0;
      for (const TensorDesc& d : case_descs(c, opt.dtype))
        if (!d.absent && is_float(d.dtype)) n = std::max(n, d.numel());
      if (n > 0 && n <= (int64_t{1} << 16))
        for (size_t phase = 1; phase <= 2; ++phase) runs.push_back({&c, phase});
    }
  for (const auto& [cp, phase] : runs) {
    const CheckCase& c = *cp;
    CaseResult r;
    r.op = op;
    r.case_name = phase ? c.name + "+special" + std::to_string(phase) : c.name;
    r.dtype = opt.dtype;
    try {
      std::vector<Tensor> ins = make_case_inputs(c, opt.dtype, ++seed);
      Op o = Op::create(op, ins, c.attrs, opt.kernel);
      if (phase) {
        // Integer outputs cannot carry NaN or inf: for them (quantize,
        // integer-output matmul_int8) non-finite inputs are documented as
        // giving unspecified values, so there is nothing to compare.
        bool float_out = true;
        for (const TensorDesc& d : o.outputs()) float_out &= is_float(d.dtype);
        if (!float_out) continue;
        write_specials(o.call(), ins, phase);
      }
      r.kernel = o.kernel_name();
      std::vector<Tensor> outs = o(ins);
      compare_outputs(o, ins, outs, c.tol_scale, r);
      if (r.passed && opt.determinism && schema.deterministic_output) {
        const int saved = num_threads();
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          std::vector<Tensor> again = o(ins);
          for (size_t i = 0; i < outs.size(); ++i)
            if (!same_bits(outs[i], again[i])) {
              r.passed = false;
              r.message = "output " + std::to_string(i) + " differs bitwise with " +
                          std::to_string(threads) + " thread(s)";
            }
        }
        set_num_threads(saved);
      }
    } catch (const KernelDeclined& e) {
      r.declined = true;
      r.message = e.what();
    } catch (const std::exception& e) {
      r.passed = false;
      r.message = std::string("threw: ") + e.what();
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace opsnn
