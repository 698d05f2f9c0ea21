// Fuzz target of the op API. The input picks an op, its input descriptors
// (dtypes, shapes including extreme ones, strides, constant operands),
// attributes and data, usually starting from a case of the op's own case
// table and mutating it. Then it calls make_call, Op::create and run. Each
// step must either succeed or throw opsnn::Error; on small shapes with
// ordinary data the outputs must match the float64 reference. Anything
// else (another exception, a crash, a sanitizer report, a mismatch) aborts.
// Built two ways:
//  * with libFuzzer (clang, -DOPSNN_FUZZ=ON): opsnn_op_fuzz CORPUS_DIR ...
//  * without it: opsnn_op_fuzz_replay runs the seeds, mutations of them and
//    seeded random inputs (CTest, also under ASan/UBSan in `make test`).
#include "op_api_fuzz.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "opsnn/check.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"
#include "opsnn/op.h"

namespace {

using opsnn::Attrs;
using opsnn::AttrSpec;
using opsnn::AttrType;
using opsnn::AttrValue;
using opsnn::CheckCase;
using opsnn::DType;
using opsnn::OpSchema;
using opsnn::Registry;
using opsnn::Tensor;
using opsnn::TensorDesc;

// Shapes up to this many elements (every input and output) are run; larger
// ones only go through validation and kernel creation.
constexpr int64_t kRunElems = 4096;
// Ops with a tensor beyond this are not created: a kernel may build
// per-output tables at create (beyond memory, Op::create throws opsnn::Error,
// but under ASan or libFuzzer's malloc limit it is a report). An empty tensor
// with huge dims is created: empty outputs must cost nothing.
constexpr int64_t kCreateElems = int64_t{1} << 24;
constexpr size_t kMaxWorkspace = size_t{256} << 20;
// The reference check looks for wrong results, not for the last bits: the
// case tolerances are set for the checker's fixed seeds, and other draws
// can be worse conditioned (a group norm over two nearly equal values
// amplifies f32 rounding of the mean by 1/sqrt(eps)). Precision is the
// checker's job; a wrong index, formula or tail is off by far more.
constexpr double kToleranceSlack = 8;

OpFuzzStats stats;

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  uint8_t u8() { return p_ < end_ ? *p_++ : 0; }
  uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
  size_t below(size_t n) { return n ? (n <= 256 ? u8() % n : u16() % n) : 0; }
  bool bit() { return u8() & 1; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

int64_t fuzz_dim(Reader& r) {
  static constexpr int64_t kExtreme[] = {-1,
                                         -3,
                                         0,
                                         1,
                                         64,
                                         int64_t{1} << 31,
                                         int64_t{1} << 40,
                                         int64_t{1} << 62,
                                         std::numeric_limits<int64_t>::max(),
                                         std::numeric_limits<int64_t>::min()};
  const uint8_t v = r.u8();
  return v < 224 ? v % 18 : kExtreme[v % std::size(kExtreme)];
}

int64_t fuzz_int(Reader& r) {
  static constexpr int64_t kExtreme[] = {-100,
                                         100,
                                         int64_t{1} << 31,
                                         -(int64_t{1} << 31),
                                         int64_t{1} << 62,
                                         std::numeric_limits<int64_t>::max(),
                                         std::numeric_limits<int64_t>::min()};
  const uint8_t v = r.u8();
  return v < 224 ? static_cast<int64_t>(v % 13) - 4 : kExtreme[v % std::size(kExtreme)];
}

double fuzz_double(Reader& r) {
  static constexpr double kValues[] = {0,        1,         -1,     0.5,     2,     1e-5,
                                       1e-12,    -0.0,      3.4e38, -3.4e38, 1e300, NAN,
                                       INFINITY, -INFINITY, 1e-45,  0.125,   7,     -2.5};
  return kValues[r.u8() % std::size(kValues)];
}

// Every string an attribute takes somewhere: the schemas' defaults and the
// case tables' values, plus a few that no op accepts.
const std::vector<std::string>& known_strings() {
  static const std::vector<std::string> strings = [] {
    std::set<std::string> s = {"", "bogus", "NOTSET", "relu", "silu", "gelu", "gelu_tanh", "none"};
    const Registry& reg = Registry::global();
    for (const std::string& name : reg.op_names()) {
      const OpSchema& schema = reg.schema(name);
      for (const AttrSpec& a : schema.attrs)
        if (a.default_value && std::holds_alternative<std::string>(*a.default_value))
          s.insert(std::get<std::string>(*a.default_value));
      if (!schema.cases) continue;
      for (const CheckCase& c : schema.cases(schema.dtypes.empty() ? DType::f32 : schema.dtypes[0]))
        for (const auto& [k, v] : c.attrs.values())
          if (std::holds_alternative<std::string>(v)) s.insert(std::get<std::string>(v));
    }
    return std::vector<std::string>(s.begin(), s.end());
  }();
  return strings;
}

AttrValue fuzz_attr(Reader& r, AttrType type) {
  switch (type) {
    case AttrType::i64:
      return fuzz_int(r);
    case AttrType::f64:
      return fuzz_double(r);
    case AttrType::str: {
      const auto& s = known_strings();
      return s[r.below(s.size())];
    }
    case AttrType::i64s: {
      std::vector<int64_t> v(r.u8() % 7);
      for (int64_t& x : v) x = fuzz_int(r);
      return v;
    }
    case AttrType::f64s: {
      std::vector<double> v(r.u8() % 5);
      for (double& x : v) x = fuzz_double(r);
      return v;
    }
  }
  return int64_t{0};
}

DType fuzz_dtype(Reader& r, const OpSchema& schema) {
  // Mostly a dtype the op lists, sometimes any.
  if (!schema.dtypes.empty() && r.u8() < 192) return schema.dtypes[r.below(schema.dtypes.size())];
  return opsnn::kAllDTypes[r.u8() % std::size(opsnn::kAllDTypes)];
}

// What one fuzz input asks for.
struct Request {
  const OpSchema* schema = nullptr;
  std::vector<TensorDesc> descs;
  Attrs attrs;
  std::vector<opsnn::ValueRange> ranges;
  double tol_scale = 1;
  bool from_case = false, shapes_mutated = false;
  // A float attribute set to a value of magnitude outside [1e-6, 1e6] (or
  // non-finite): the op may still run, but f32 kernels and the float64
  // reference part ways where intermediates overflow (an attention scale of
  // 3.4e38), so that is not ordinary data.
  bool extreme_float_attr = false;
};

void mutate(Reader& r, Request& q) {
  const OpSchema& schema = *q.schema;
  const size_t nin = q.descs.size();
  switch (r.u8() % 6) {
    case 0:
    case 1: {  // one dim, or the rank
      if (!nin) return;
      TensorDesc& d = q.descs[r.below(nin)];
      if (d.absent) return;
      if (r.bit() && d.rank() > 0)
        d.shape[r.below(d.shape.size())] = fuzz_dim(r);
      else if (r.bit() && d.rank() > 0)
        d.shape.pop_back();
      else
        d.shape.push_back(fuzz_dim(r));
      d.strides.clear();
      q.shapes_mutated = true;
      return;
    }
    case 2: {
      if (!nin) return;
      TensorDesc& d = q.descs[r.below(nin)];
      if (!d.absent) d.dtype = opsnn::kAllDTypes[r.u8() % std::size(opsnn::kAllDTypes)];
      return;
    }
    case 3: {  // an attribute of the schema's, or one it does not have
      if (schema.attrs.empty() || r.u8() < 16) {
        q.attrs.set("no_such_attr", fuzz_int(r));
        return;
      }
      const AttrSpec& a = schema.attrs[r.below(schema.attrs.size())];
      // Sometimes a value of the wrong type.
      const AttrType t = r.u8() < 24 ? static_cast<AttrType>(r.u8() % 5) : a.type;
      const AttrValue v = fuzz_attr(r, t);
      if (const double* f = std::get_if<double>(&v))
        q.extreme_float_attr |= !(std::fabs(*f) >= 1e-6 && std::fabs(*f) <= 1e6) && *f != 0;
      q.attrs.set(a.name, v);
      return;
    }
    case 4: {  // back to the default
      if (schema.attrs.empty()) return;
      Attrs kept;
      const std::string& drop = schema.attrs[r.below(schema.attrs.size())].name;
      for (const auto& [k, v] : q.attrs.values())
        if (k != drop) kept.set(k, v);
      q.attrs = kept;
      return;
    }
    default: {  // an input absent, or an extra one
      if (r.bit() && nin) {
        q.descs[r.below(nin)] = TensorDesc::none();
      } else {
        q.descs.push_back(TensorDesc(fuzz_dtype(r, schema), {fuzz_dim(r)}));
      }
      q.shapes_mutated = true;
    }
  }
}

Request read_request(Reader& r) {
  static const std::vector<std::string> names = Registry::global().op_names();
  Request q;
  q.schema = &Registry::global().schema(names[r.below(names.size())]);
  const OpSchema& schema = *q.schema;
  if (schema.cases && r.u8() < 224) {
    // Case tables are written for the dtypes the op lists.
    const DType dtype =
        schema.dtypes.empty() ? DType::f32 : schema.dtypes[r.below(schema.dtypes.size())];
    const std::vector<CheckCase> cases = schema.cases(dtype);
    if (!cases.empty()) {
      const CheckCase& c = cases[r.below(cases.size())];
      q.from_case = true;
      q.descs = opsnn::case_descs(c, dtype);
      q.attrs = c.attrs;
      q.ranges = c.ranges;
      q.tol_scale = c.tol_scale;
    }
  }
  if (!q.from_case) {
    for (const opsnn::ArgSpec& a : schema.inputs) {
      if (a.optional && r.bit()) {
        q.descs.push_back(TensorDesc::none());
        continue;
      }
      opsnn::Shape shape(r.u8() % 5);
      for (int64_t& d : shape) d = fuzz_dim(r);
      q.descs.emplace_back(fuzz_dtype(r, schema), shape);
    }
    for (const AttrSpec& a : schema.attrs)
      if (!a.default_value || r.u8() < 64) q.attrs.set(a.name, fuzz_attr(r, a.type));
  }
  for (int m = r.u8() % 4; m > 0; --m) mutate(r, q);
  return q;
}

// Fills `t`. mode 0: seeded uniform values in the case's range, as the
// checker draws them (the case tolerances assume such data: values taken
// from the fuzz input, mostly zeros once it runs out, make rows nearly
// constant, which no tolerance covers in a layer norm); 1: values from the
// fuzz input mixed with special ones; 2: raw bytes (bool: 0 or 1).
void fill(Reader& r, std::mt19937_64& rng, Tensor& t, int mode, const opsnn::ValueRange& range) {
  static constexpr double kSpecial[] = {NAN,      INFINITY, -INFINITY, -0.0, 1e-40, FLT_MAX,
                                        -FLT_MAX, 1e32,     -88.5,     88.5, 65504, 70000};
  const int64_t n = t.numel();
  const bool integer = range.integer || !opsnn::is_float(t.dtype());
  for (int64_t i = 0; i < n; ++i) {
    if (mode == 2) {
      uint64_t bits = 0;
      for (size_t b = 0; b < opsnn::dtype_size(t.dtype()); ++b)
        bits |= static_cast<uint64_t>(r.u8()) << (8 * b);
      double v;
      switch (t.dtype()) {
        case DType::f32: {
          float f;
          const uint32_t b32 = static_cast<uint32_t>(bits);
          std::memcpy(&f, &b32, 4);
          v = f;
          break;
        }
        case DType::f16:
          v = opsnn::f16_bits_to_f32(static_cast<uint16_t>(bits));
          break;
        case DType::bf16:
          v = opsnn::bf16_bits_to_f32(static_cast<uint16_t>(bits));
          break;
        case DType::i8:
          v = static_cast<int8_t>(bits);
          break;
        case DType::u8:
          v = static_cast<uint8_t>(bits);
          break;
        case DType::i32:
          v = static_cast<int32_t>(bits);
          break;
        case DType::i64:
          v = static_cast<double>(static_cast<int64_t>(bits));
          break;
        default:
          v = static_cast<double>(bits & 1);
      }
      t.flat_set(i, v);
      continue;
    }
    if (mode == 1 && opsnn::is_float(t.dtype()) && r.u8() < 64) {
      t.flat_set(i, kSpecial[r.u8() % std::size(kSpecial)]);
      continue;
    }
    const double u =
        mode == 0 ? std::uniform_real_distribution<double>(0, 1)(rng) : r.u16() / 65535.0;
    double v = range.lo + (range.hi - range.lo) * u;
    if (integer) v = std::clamp(std::floor(v + 0.5), std::ceil(range.lo), std::floor(range.hi));
    t.flat_set(i, v);
  }
}

int64_t elems_or_max(const TensorDesc& d) {
  try {
    return d.absent ? 0 : d.numel();
  } catch (const opsnn::Error&) {
    return std::numeric_limits<int64_t>::max();
  }
}

void describe(const Request& q, const std::string& what) {
  std::fprintf(stderr, "op-API fuzz: %s: %s\n  inputs:", q.schema->name.c_str(), what.c_str());
  for (const TensorDesc& d : q.descs) std::fprintf(stderr, " %s", d.str().c_str());
  std::fprintf(stderr, "\n  attrs: %s\n", q.attrs.str().c_str());
}

[[noreturn]] void fail(const Request& q, const std::string& what) {
  describe(q, what);
  std::abort();
}

void run_request(Reader& r, Request& q) {
  const OpSchema& schema = *q.schema;
  const int data_mode = r.u8() % 4 == 3 ? 1 + r.u8() % 2 : 0;
  std::mt19937_64 rng(r.u16());
  const bool strided = r.u8() < 48, use_constants = r.u8() < 64;
  const std::vector<opsnn::KernelDesc>& kernels = Registry::global().kernels(schema.name);
  const std::string kernel = r.u8() < 96 ? kernels[r.below(kernels.size())].name : "";

  if (std::getenv("OPSNN_FUZZ_VERBOSE")) describe(q, "request");
  opsnn::OpCall call;
  try {
    call = opsnn::make_call(schema, q.descs, q.attrs);
  } catch (const opsnn::Error&) {
    ++stats.rejected_by_schema;
    return;
  }
  int64_t largest = 0;
  for (const auto* descs : {&q.descs, &call.outputs})
    for (const TensorDesc& d : *descs) largest = std::max(largest, elems_or_max(d));
  if (largest > kCreateElems) return;
  const bool runnable = largest <= kRunElems;

  // Data first: a constant operand carries its data into create.
  std::vector<Tensor> ins(q.descs.size());
  if (runnable) {
    for (size_t i = 0; i < q.descs.size(); ++i) {
      TensorDesc& d = q.descs[i];
      if (d.absent) continue;
      if (strided && d.rank() > 0 && d.shape.back() > 1 && d.shape.back() <= kRunElems) {
        opsnn::Shape wide = d.shape;
        wide.back() *= 2;
        opsnn::Strides st = opsnn::contiguous_strides(wide);
        st.back() = 2;
        d.strides = st;
        ins[i] = Tensor::zeros_strided(d.shape, d.strides, d.dtype);
      } else {
        ins[i] = Tensor::zeros(d.shape, d.dtype);
      }
      const opsnn::ValueRange range = i < q.ranges.size() ? q.ranges[i] : opsnn::ValueRange{};
      fill(r, rng, ins[i], data_mode, range);
      if (use_constants && r.bit()) d = TensorDesc::constant(ins[i]);
    }
  }
  opsnn::Op op;
  try {
    op = opsnn::Op::create(schema.name, q.descs, q.attrs, kernel);
  } catch (const opsnn::Error&) {
    ++stats.rejected_at_create;
    return;
  }
  ++stats.created;
  if (op.outputs().size() != call.outputs.size()) fail(q, "create and make_call disagree");
  if (!runnable || op.workspace_bytes() > kMaxWorkspace) return;

  std::vector<Tensor> outs;
  for (const TensorDesc& d : op.outputs()) outs.push_back(Tensor::empty(d.shape, d.dtype));
  const size_t ws_bytes = op.workspace_bytes();
  opsnn::Arena arena(ws_bytes, false);
  const std::span<std::byte> ws = ws_bytes ? arena.span(ws_bytes) : std::span<std::byte>{};
  std::vector<Tensor> run_ins = ins;
  for (size_t i = 0; i < q.descs.size(); ++i)
    if (q.descs[i].constant_value() && r.bit()) run_ins[i] = Tensor();  // allowed for constants
  try {
    op.run(run_ins, outs, ws);
  } catch (const opsnn::Error&) {
    ++stats.rejected_at_run;
    return;
  }
  ++stats.ran;
  // Compare with the reference where the case table's tolerance applies:
  // the case's own shapes and its value ranges.
  if (!q.from_case || q.shapes_mutated || q.extreme_float_attr || data_mode != 0 ||
      !schema.reference)
    return;
  opsnn::CaseResult res;
  try {
    res = opsnn::compare_with_reference(op, ins, outs, kToleranceSlack * q.tol_scale);
  } catch (const opsnn::Error& e) {
    fail(q, std::string("the kernel ran but the reference threw: ") + e.what());
  }
  if (!res.passed)
    fail(q, "kernel " + op.kernel_name() + " differs from the reference: " + res.message);
  ++stats.compared;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r(data, size);
  Request q = read_request(r);
  run_request(r, q);
  return 0;
}

const OpFuzzStats& op_api_fuzz_stats() { return stats; }

std::vector<std::vector<uint8_t>> op_api_fuzz_seeds(size_t max_cases) {
  std::vector<std::vector<uint8_t>> seeds;
  const Registry& reg = Registry::global();
  const std::vector<std::string> names = reg.op_names();
  for (size_t op = 0; op < names.size(); ++op) {
    const OpSchema& schema = reg.schema(names[op]);
    if (!schema.cases) continue;
    const size_t ndt = std::max<size_t>(schema.dtypes.size(), 1);
    for (size_t dt = 0; dt < ndt; ++dt) {
      const size_t ncases =
          schema.cases(schema.dtypes.empty() ? DType::f32 : schema.dtypes[dt]).size();
      for (size_t c = 0; c < std::min(ncases, max_cases); ++c) {
        // op (u16 or u8), "from a case", dtype index, case, no
        // mutation, then data mode 0, not strided, no constants, best kernel.
        std::vector<uint8_t> s;
        if (names.size() <= 256) {
          s.push_back(static_cast<uint8_t>(op));
        } else {
          s.push_back(static_cast<uint8_t>(op & 0xff));
          s.push_back(static_cast<uint8_t>(op >> 8));
        }
        s.push_back(0);
        if (!schema.dtypes.empty()) s.push_back(static_cast<uint8_t>(dt));
        if (ncases <= 256) {
          s.push_back(static_cast<uint8_t>(c));
        } else {
          s.push_back(static_cast<uint8_t>(c & 0xff));
          s.push_back(static_cast<uint8_t>(c >> 8));
        }
        s.push_back(0);                               // mutations
        s.insert(s.end(), {0, 1, 0, 255, 255, 255});  // data, its seed, strided, constants, kernel
        for (int k = 0; k < 64; ++k) s.push_back(static_cast<uint8_t>(37 * k + 11));  // data
        seeds.push_back(std::move(s));
      }
    }
  }
  return seeds;
}
