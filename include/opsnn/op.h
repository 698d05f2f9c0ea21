// The operator framework: schemas, kernels, the registry and the two-phase API.
//
//   phase one  Op op = Op::create("layer_norm", {x_desc, w_desc, b_desc}, {{"axis", -1}});
//              validates dtypes/shapes/attributes, infers outputs, picks the
//              kernel (best first), reports op.workspace_bytes().
//   phase two  op.run(inputs, outputs, workspace);   // as often as wanted,
//              no allocation, no re-validation beyond O(rank) shape checks.
//   one call   auto y = opsnn::call("gelu", {x});
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "opsnn/cpu.h"
#include "opsnn/tensor.h"

namespace opsnn {

// ---- attributes -----------------------------------------------------------
using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;
enum class AttrType { i64, f64, str, i64s, f64s };
const char* attr_type_name(AttrType t);

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> init) : values_(init) {}

  Attrs& set(const std::string& name, AttrValue v);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  int64_t i(const std::string& name) const;
  double f(const std::string& name) const;  // accepts an integer value too
  const std::string& s(const std::string& name) const;
  const std::vector<int64_t>& ints(const std::string& name) const;
  std::vector<double> floats(const std::string& name) const;
  const std::map<std::string, AttrValue>& values() const { return values_; }
  std::string str() const;  // "axis=-1,eps=1e-05"

 private:
  const AttrValue& get(const std::string& name) const;
  std::map<std::string, AttrValue> values_;
};

struct AttrSpec {
  std::string name;
  AttrType type;
  std::optional<AttrValue> default_value;  // nullopt: required
  std::string doc;
};

struct ArgSpec {
  std::string name;
  std::string doc;
  bool optional = false;  // may be absent (TensorDesc::none() / Tensor())
  bool variadic = false;  // last input only: zero or more further tensors
  // A model's weight: given as a constant operand (TensorDesc::constant) the
  // op's kernels may pack it at create. `opsnn bench ... packed=1` does that.
  bool weight = false;
};

// ---- one call of an op: what phase one sees ------------------------------
struct OpSchema;
struct OpCall {
  const OpSchema* schema = nullptr;
  std::vector<TensorDesc> inputs;
  std::vector<bool> present;  // false for an absent optional input
  Attrs attrs;                // complete: defaults filled in
  std::vector<TensorDesc> outputs;

  const std::string& op() const;
  bool has_input(size_t i) const { return i < inputs.size() && present[i]; }
  const TensorDesc& in(size_t i) const { return inputs.at(i); }
  // Input i's data when it was given as a constant operand
  // (TensorDesc::constant), else nullptr. A kernel may pack it at create.
  const Tensor* constant(size_t i) const {
    return has_input(i) ? inputs[i].constant_value() : nullptr;
  }
  const TensorDesc& out(size_t i) const { return outputs.at(i); }
  // Throws the standard error: "<op>: <arg>: expected <expected>, got <got>".
  [[noreturn]] void fail(const std::string& arg, const std::string& expected,
                         const std::string& got) const;
  // Shape arithmetic checked for int64 overflow: fails naming `arg`.
  int64_t checked_add(const std::string& arg, int64_t a, int64_t b) const;
  int64_t checked_mul(const std::string& arg, int64_t a, int64_t b) const;
  // Normalises a possibly negative axis against `rank`, or fails naming `arg`
  // (a string_view: kernels call this in run, which must not allocate).
  int64_t axis(std::string_view arg, int64_t axis, int64_t rank) const;
};

// ---- float64 reference (the oracle of tests and `opsnn check`) ------------
struct RefTensor {
  Shape shape;
  std::vector<double> data;  // contiguous, row-major
};
using InferFn = std::function<std::vector<TensorDesc>(const OpCall&)>;
using RefFn = std::function<void(const OpCall&, const std::vector<RefTensor>& inputs,
                                 std::vector<RefTensor>& outputs)>;

// ---- case tables for `opsnn check` and the tests --------------------------
struct ValueRange {
  double lo = -3, hi = 3;
  bool integer = false;  // draw integers in [lo, hi]
};
struct Tolerance {
  double atol = 0, rtol = 0;
};
struct CheckCase {
  std::string name;
  std::vector<TensorDesc> inputs;  // dtype of float inputs is replaced per run
  Attrs attrs;
  std::vector<ValueRange> ranges;  // per input; default [-3, 3]
  double tol_scale = 1.0;          // multiplies the per-dtype tolerance
  bool keep_dtypes = false;        // true: inputs' dtypes are used as written
};
using CaseFn = std::function<std::vector<CheckCase>(DType)>;

// ---- kernels ---------------------------------------------------------------
class KernelInstance {
 public:
  virtual ~KernelInstance() = default;
  virtual size_t workspace_bytes() const { return 0; }
  // `inputs` has one entry per schema input (undefined tensors for absent
  // optional ones); outputs are allocated by the caller with the inferred shapes.
  virtual void run(const Tensor* inputs, Tensor* outputs, void* workspace) = 0;
};

using KernelFactory =
    std::function<std::unique_ptr<KernelInstance>(const OpCall&, std::string* why_not)>;

struct KernelDesc {
  std::string name;  // tile × ISA in the name: "layer_norm_f32x16_avx512"
  Isa isa = Isa::scalar;
  std::vector<DType> dtypes;  // for listings; the factory has the final say
  // Extra CPU features beyond the ISA level (bf16 dot products, VNNI).
  std::function<bool()> cpu_ok;
  // Inputs given to the kernel are contiguous; the framework packs strided
  // inputs into the workspace first (counted in workspace_bytes()).
  bool contiguous_inputs = true;
  int priority = 0;  // higher first; the reference kernel has the lowest
  // Where set: this kernel's priority for a call whose inputs have these
  // dtypes (one per schema input; a listing passes its dtype for all), in
  // place of `priority`. For kernels whose order depends on the CPU and the
  // operand dtype (the GEMM microkernels, gemm::preferred_kernel).
  std::function<int(std::span<const DType> input_dtypes)> priority_for;
  KernelFactory create;
};

// Convenience: a stateless kernel from a plain function.
using KernelFn = std::function<void(const OpCall&, const Tensor* in, Tensor* out, void* ws)>;
KernelFactory simple_kernel(KernelFn fn, std::function<bool(const OpCall&, std::string*)> accepts,
                            std::function<size_t(const OpCall&)> workspace = nullptr);

// ---- schema ---------------------------------------------------------------
// An op's pre-packed form for `opsnn bench ... packed=1`: packed copies of
// the weight input are made up front (bench_packed_copies of them), and each
// call of `run` computes the op's outputs with the next copy, so each call
// streams its weights from memory as a model's layer does.
struct PackedBench {
  std::function<void()> run;
  std::string kernel;
};
// The packed copies a bench_packed hook cycles through: pack() (a packed
// object with bytes()) called until they take 512 MiB in all, 2 to 64 copies.
template <class PackFn>
auto bench_packed_copies(PackFn pack) {
  using Packed = decltype(pack());
  auto copies = std::make_shared<std::vector<Packed>>();
  copies->push_back(pack());
  const size_t budget = size_t{512} << 20;
  const size_t n = std::clamp<size_t>(budget / std::max<size_t>(copies->front().bytes(), 1), 2, 64);
  while (copies->size() < n) copies->push_back(pack());
  return copies;
}

struct OpSchema {
  std::string name;
  std::string family;  // elementwise, activation, reduce, norm, ...
  std::string doc;
  std::vector<ArgSpec> inputs;
  std::vector<ArgSpec> outputs;  // a variadic last output repeats (split)
  std::vector<AttrSpec> attrs;
  std::vector<DType> dtypes;  // float dtypes this op computes in
  InferFn infer;              // validates and returns the output descs
  RefFn reference;            // float64 oracle; also drives the reference kernel
  CaseFn cases;               // case table for check/tests
  // Tolerance per output dtype vs the float64 reference (|err| <= atol + rtol*|ref|).
  std::function<Tolerance(DType)> tolerance;
  bool deterministic_output = true;  // outputs compared bit-exactly across thread counts
  // `opsnn bench --case k=v,...`: builds the case from the keys (nullptr: the
  // generic form, shape=AxBxC for every input, other keys become attributes).
  std::function<CheckCase(const std::map<std::string, std::string>&, DType)> bench_case;
  // Work of one call for the benchmark's GB/s and GFLOP/s (nullptr: bytes of
  // all inputs and outputs, no flops).
  std::function<void(const OpCall&, double* bytes, double* flops)> cost;
  // `opsnn bench --case ...,packed=1`: the op's deployment form with its
  // weight packed beforehand, as at model load, cycling through packed copies
  // (nullptr: packed=1 passes the inputs marked `weight` as constant operands).
  std::function<PackedBench(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                            const Attrs& attrs)>
      bench_packed;
};

Tolerance default_tolerance(DType t);

// ---- registry ---------------------------------------------------------------
class Registry {
 public:
  // The process-wide registry, with every built-in op registered.
  static Registry& global();

  // Adds an op; throws if the name exists. A reference kernel (float64
  // oracle, any dtype, strided) is added automatically when `reference` is set.
  void add_op(OpSchema schema);
  void add_kernel(const std::string& op, KernelDesc kernel);
  const OpSchema& schema(const std::string& op) const;  // throws if unknown
  const OpSchema* find(const std::string& op) const;
  std::vector<std::string> op_names() const;  // sorted
  // Ordered best first, reference last.
  const std::vector<KernelDesc>& kernels(const std::string& op) const;
  // The order a call with these input dtypes tries the kernels in: kernels()
  // reordered (stably) by KernelDesc::priority_for where a kernel has one.
  std::vector<const KernelDesc*> ranked(const std::string& op,
                                        std::span<const DType> input_dtypes) const;

 private:
  struct Entry {
    OpSchema schema;
    std::vector<KernelDesc> kernels;
  };
  std::map<std::string, Entry> ops_;
};

// Validates `inputs`/`attrs` against the schema and infers outputs (no kernel).
OpCall make_call(const OpSchema& schema, std::vector<TensorDesc> inputs, const Attrs& attrs);

// ---- the two-phase operator ----------------------------------------------
class Op {
 public:
  Op() = default;
  // Phase one. `force_kernel` (empty: best) selects a kernel by name, for tests.
  static Op create(const std::string& op, std::vector<TensorDesc> inputs, const Attrs& attrs = {},
                   const std::string& force_kernel = "");
  static Op create(const std::string& op, const std::vector<Tensor>& inputs,
                   const Attrs& attrs = {}, const std::string& force_kernel = "");

  // All accessors and run() throw opsnn::Error on an Op that Op::create did
  // not make (default-constructed or moved-from).
  const OpCall& call() const { return checked(); }
  const std::vector<TensorDesc>& outputs() const { return checked().outputs; }
  size_t workspace_bytes() const { return workspace_; }
  const std::string& kernel_name() const { return (void)checked(), kernel_name_; }

  // Phase two. `workspace` must hold at least workspace_bytes() and start on
  // a 64-byte boundary (an empty span when workspace_bytes() is 0). A
  // constant input (TensorDesc::constant) may be passed as an undefined
  // Tensor(): the kernel uses the data it was created with.
  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           std::span<std::byte> workspace = {}) const;
  // Allocates outputs (and workspace) and runs.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;

 private:
  const OpCall& checked() const;
  std::shared_ptr<OpCall> call_;
  std::shared_ptr<KernelInstance> kernel_;
  std::string kernel_name_;
  std::vector<size_t> pack_offsets_;  // per input: offset in workspace, or SIZE_MAX
  size_t kernel_ws_offset_ = 0, workspace_ = 0;
  // The input array given to the kernel when the caller's cannot be (a
  // constant, a packed or an omitted input), built at create so that run
  // only overwrites it in place; see Op::run.
  struct Staging;
  std::shared_ptr<Staging> staging_;
};

// One-call convenience: create + allocate + run.
std::vector<Tensor> call(const std::string& op, const std::vector<Tensor>& inputs,
                         const Attrs& attrs = {});

// Helpers for writing kernels and references.
std::vector<double> to_double(const Tensor& t);  // row-major, any dtype/strides
RefTensor to_ref(const Tensor& t);
void from_ref(const RefTensor& r, Tensor& t);  // converts into t's dtype
// The call's float64 reference on `inputs` (one per call input; absent ones
// skipped, an undefined one that is a constant operand read from the call):
// its outputs, shaped as the call's. When every output is empty the reference is not run
// (nothing to compute, and the inputs may be empty with dims near INT64_MAX).
std::vector<RefTensor> run_reference(const OpCall& call, const Tensor* inputs);

}  // namespace opsnn
