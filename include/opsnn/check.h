// The precision checker: runs an op's case table against its float64
// reference (what `opsnn check` and the tests use).
#pragma once

#include <string>
#include <vector>

#include "opsnn/op.h"

namespace opsnn {

struct CaseResult {
  std::string op, case_name, kernel;
  DType dtype = DType::f32;
  double max_abs_err = 0, max_rel_err = 0;
  double worst_ratio = 0;  // max |err| / (atol + rtol |ref|); <= 1 passes
  bool passed = false;
  bool declined = false;  // the forced kernel does not take this case (not run, not failed)
  std::string message;    // why it failed, threw or was declined
};

struct CheckOptions {
  DType dtype = DType::f32;
  std::string kernel;        // empty: the one dispatch picks
  bool determinism = false;  // also compare 1-thread vs N-thread outputs bit for bit
  uint64_t seed = 1234;
  // Also run each case (up to 64 Ki elements) with special values written
  // over its float inputs: NaN, +-inf, +-FLT_MAX, -0, subnormals and values
  // around the activations' overflow thresholds. NaN must match NaN.
  bool special_values = true;
};

std::vector<CaseResult> check_op(const std::string& op, const CheckOptions& options);

// Runs `op`'s float64 reference on `inputs` and compares `outputs` (what
// `op` computed from them) with it, as check_op does; `tol_scale` multiplies
// the op's tolerance. NaN must match NaN.
CaseResult compare_with_reference(const Op& op, const std::vector<Tensor>& inputs,
                                  const std::vector<Tensor>& outputs, double tol_scale = 1.0);

// Inputs for a case: allocated (strided descs get a buffer spanning their
// strides) and filled with seeded uniform values in the case's ranges.
std::vector<Tensor> make_case_inputs(const CheckCase& c, DType dtype, uint64_t seed);
// The case's input descs with float dtypes replaced by `dtype` (unless keep_dtypes).
std::vector<TensorDesc> case_descs(const CheckCase& c, DType dtype);

}  // namespace opsnn
