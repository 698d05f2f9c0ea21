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

void compare(const RefTensor& ref, const Tensor& got, const Tolerance& tol, CaseResult& r) {
  const int64_t n = got.numel();
  const bool exact = !is_float(got.dtype());
  for (int64_t i = 0; i < n; ++i) {
    const double e = ref.data[static_cast<size_t>(i)];
    double g = got.flat_get(i);
    double expect = e;
    if (exact) {
      Tensor one = Tensor::empty({1}, got.dtype());
      one.flat_set(0, e);
      expect = one.flat_get(0);
    }
    if (std::isnan(expect) || std::isnan(g)) {
      if (std::isnan(expect) != std::isnan(g)) {
        r.worst_ratio = INFINITY;
        if (r.message.empty())
          r.message = "element " + std::to_string(i) + ": expected " + std::to_string(expect) +
                      ", got " + std::to_string(g);
      }
      continue;
    }
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

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0);
}

}  // namespace

std::vector<CaseResult> check_op(const std::string& op, const CheckOptions& opt) {
  const OpSchema& schema = Registry::global().schema(op);
  if (!schema.cases) throw Error(op, "cases", "a case table", "none");
  if (!schema.reference) throw Error(op, "reference", "a float64 reference", "none");
  std::vector<CaseResult> results;
  uint64_t seed = opt.seed;
  for (const CheckCase& c : schema.cases(opt.dtype)) {
    CaseResult r;
    r.op = op;
    r.case_name = c.name;
    r.dtype = opt.dtype;
    try {
      std::vector<Tensor> ins = make_case_inputs(c, opt.dtype, ++seed);
      Op o = Op::create(op, ins, c.attrs, opt.kernel);
      r.kernel = o.kernel_name();
      std::vector<Tensor> outs = o(ins);
      std::vector<RefTensor> rin(ins.size()), rout(outs.size());
      for (size_t i = 0; i < ins.size(); ++i)
        if (o.call().has_input(i)) rin[i] = to_ref(ins[i]);
      for (size_t i = 0; i < outs.size(); ++i) {
        rout[i].shape = outs[i].shape();
        rout[i].data.assign(static_cast<size_t>(outs[i].numel()), 0.0);
      }
      schema.reference(o.call(), rin, rout);
      for (size_t i = 0; i < outs.size(); ++i) {
        Tolerance tol = schema.tolerance ? schema.tolerance(outs[i].dtype())
                                         : default_tolerance(outs[i].dtype());
        tol.atol *= c.tol_scale;
        tol.rtol *= c.tol_scale;
        compare(rout[i], outs[i], tol, r);
      }
      r.passed = r.worst_ratio <= 1;
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
    } catch (const std::exception& e) {
      r.passed = false;
      r.message = std::string("threw: ") + e.what();
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace opsnn
