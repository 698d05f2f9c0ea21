// Bad input for every registered op: wrong input counts, unknown attributes,
// wrong dtypes, negative and overflowing dims, ranks changed. Each must be
// answered with opsnn::Error (or, where the mutated call is valid, run
// correctly) — never a crash, an out-of-bounds access (the sanitizer build
// runs this too) or another exception type.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opsnn/check.h"
#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

enum class Outcome { ok, opsnn_error, other_error };

Outcome try_call(const std::string& op, const std::vector<TensorDesc>& descs, const Attrs& attrs,
                 const CheckCase& base, std::string* what) {
  try {
    CheckCase c = base;
    c.inputs = descs;
    c.keep_dtypes = true;
    std::vector<Tensor> ins = make_case_inputs(c, DType::f32, 7);
    Op o = Op::create(op, ins, attrs);
    (void)o(ins);
    return Outcome::ok;
  } catch (const Error& e) {
    *what = e.what();
    return Outcome::opsnn_error;
  } catch (const std::exception& e) {
    *what = e.what();
    return Outcome::other_error;
  }
}

std::vector<std::string> ops_with_cases() {
  std::vector<std::string> r;
  for (const std::string& op : Registry::global().op_names())
    if (Registry::global().schema(op).cases) r.push_back(op);
  return r;
}

class BadInput : public ::testing::TestWithParam<std::string> {};

TEST_P(BadInput, IsRejectedWithOpsnnError) {
  const std::string& op = GetParam();
  const OpSchema& s = Registry::global().schema(op);
  std::vector<CheckCase> cases = s.cases(DType::f32);
  ASSERT_FALSE(cases.empty());
  // A small case as the starting point.
  CheckCase base = cases.front();
  for (const CheckCase& c : cases) {
    int64_t n = 0;
    for (const TensorDesc& d : c.inputs) n += d.absent ? 0 : d.numel();
    if (n > 0 && n < 4096) {
      base = c;
      break;
    }
  }
  const std::vector<TensorDesc> good = case_descs(base, DType::f32);
  std::string what;

  // Unknown attribute.
  Attrs bad_attrs = base.attrs;
  bad_attrs.set("no_such_attribute", int64_t{1});
  EXPECT_EQ(try_call(op, good, bad_attrs, base, &what), Outcome::opsnn_error) << what;
  EXPECT_NE(what.find(op), std::string::npos) << what;

  // One input too many (unless the last input is variadic).
  if (s.inputs.empty() || !s.inputs.back().variadic) {
    std::vector<TensorDesc> more = good;
    more.push_back(TensorDesc(DType::f32, {3}));
    EXPECT_EQ(try_call(op, more, base.attrs, base, &what), Outcome::opsnn_error) << what;
  }

  // Negative and overflowing dims in each input.
  for (size_t i = 0; i < good.size(); ++i) {
    if (good[i].absent) continue;
    std::vector<TensorDesc> d = good;
    d[i] = TensorDesc(d[i].dtype, {2, -3});
    EXPECT_EQ(try_call(op, d, base.attrs, base, &what), Outcome::opsnn_error) << "input " << i;
    d[i] = TensorDesc(good[i].dtype, {int64_t{1} << 40, int64_t{1} << 40});
    EXPECT_EQ(try_call(op, d, base.attrs, base, &what), Outcome::opsnn_error) << "input " << i;
  }

  // Changed dtypes and ranks: an error or a valid call, nothing else.
  for (size_t i = 0; i < good.size(); ++i) {
    if (good[i].absent) continue;
    for (DType t : {DType::i32, DType::u8, DType::boolean, DType::i64, DType::bf16}) {
      std::vector<TensorDesc> d = good;
      d[i].dtype = t;
      d[i].strides.clear();
      EXPECT_NE(try_call(op, d, base.attrs, base, &what), Outcome::other_error) << what;
    }
    for (const Shape& sh : {Shape{}, Shape{5}, Shape{2, 3, 4, 5, 6}, Shape{0, 3}}) {
      std::vector<TensorDesc> d = good;
      d[i] = TensorDesc(good[i].dtype, sh);
      EXPECT_NE(try_call(op, d, base.attrs, base, &what), Outcome::other_error) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, BadInput, ::testing::ValuesIn(ops_with_cases()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace opsnn
