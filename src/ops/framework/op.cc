#include "opsnn/op.h"

#include <atomic>
#include <cstring>
#include <new>
#include <string>

#include "opsnn/error.h"
#include "opsnn/log.h"
#include "opsnn/memory.h"

namespace opsnn {

struct Op::Staging {
  std::vector<Tensor> inputs;  // shaped like the call's: assigning an input reuses the storage
  std::atomic_flag busy = ATOMIC_FLAG_INIT;
};

const std::string& OpCall::op() const { return schema->name; }

void OpCall::fail(const std::string& arg, const std::string& expected,
                  const std::string& got) const {
  throw Error(op(), arg, expected, got);
}

int64_t OpCall::checked_add(const std::string& arg, int64_t a, int64_t b) const {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    fail(arg, "sizes whose sum fits in int64",
         std::to_string(a) + " + " + std::to_string(b) + " overflows");
  return r;
}

int64_t OpCall::checked_mul(const std::string& arg, int64_t a, int64_t b) const {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    fail(arg, "sizes whose product fits in int64",
         std::to_string(a) + " * " + std::to_string(b) + " overflows");
  return r;
}

int64_t OpCall::axis(std::string_view arg, int64_t a, int64_t rank) const {
  const int64_t lo = rank > 0 ? -rank : -1, hi = rank > 0 ? rank : 1;
  if (a < lo || a >= hi)
    fail(std::string(arg), "an axis in [" + std::to_string(lo) + ", " + std::to_string(hi) + ")",
         std::to_string(a));
  return a < 0 ? a + (rank > 0 ? rank : 1) : a;
}

namespace {

bool attr_matches(AttrType t, const AttrValue& v) {
  switch (t) {
    case AttrType::i64:
      return std::holds_alternative<int64_t>(v);
    case AttrType::f64:
      return std::holds_alternative<double>(v) || std::holds_alternative<int64_t>(v);
    case AttrType::str:
      return std::holds_alternative<std::string>(v);
    case AttrType::i64s:
      return std::holds_alternative<std::vector<int64_t>>(v);
    case AttrType::f64s:
      return std::holds_alternative<std::vector<double>>(v) ||
             std::holds_alternative<std::vector<int64_t>>(v);
  }
  return false;
}

// The shape checks of the tensor layer (negative dims, element count or
// byte size beyond int64), reported for the op and the argument.
void check_shape(const std::string& op, const std::string& arg, const TensorDesc& d) {
  try {
    (void)d.numel();
  } catch (const Error& e) {
    throw Error(op, arg, e.expected(), e.got());
  }
}

}  // namespace

OpCall make_call(const OpSchema& schema, std::vector<TensorDesc> inputs, const Attrs& attrs) {
  OpCall call;
  call.schema = &schema;
  const size_t nspec = schema.inputs.size();
  const bool variadic = nspec && schema.inputs.back().variadic;
  size_t required = 0;
  for (const ArgSpec& a : schema.inputs)
    if (!a.optional && !a.variadic) ++required;
  std::vector<bool> present(inputs.size(), true);
  for (size_t i = 0; i < inputs.size(); ++i) present[i] = !inputs[i].absent;
  // Trailing optional inputs may be omitted.
  if (inputs.size() < required || (!variadic && inputs.size() > nspec)) {
    std::string expected =
        variadic ? "at least " + std::to_string(required)
                 : (required == nspec ? std::to_string(nspec)
                                      : std::to_string(required) + " to " + std::to_string(nspec));
    throw Error(schema.name, "inputs", expected + " inputs", std::to_string(inputs.size()));
  }
  while (!variadic && inputs.size() < nspec) {
    inputs.push_back(TensorDesc::none());
    present.push_back(false);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ArgSpec& spec = schema.inputs[std::min(i, nspec - 1)];
    if (!present[i] && !spec.optional)
      throw Error(schema.name, "input '" + spec.name + "'", "a tensor", "none");
    if (present[i]) check_shape(schema.name, "input '" + spec.name + "'", inputs[i]);
  }
  call.inputs = std::move(inputs);
  call.present = std::move(present);

  for (const auto& [name, value] : attrs.values()) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& a : schema.attrs)
      if (a.name == name) spec = &a;
    if (!spec) {
      std::string known;
      for (const AttrSpec& a : schema.attrs) known += (known.empty() ? "" : ", ") + a.name;
      throw Error(schema.name, "attribute '" + name + "'",
                  known.empty() ? "no attributes" : "one of: " + known, "'" + name + "'");
    }
    if (!attr_matches(spec->type, value))
      throw Error(schema.name, "attribute '" + name + "'",
                  std::string("a value of type ") + attr_type_name(spec->type), "another type");
    call.attrs.set(name, value);
  }
  for (const AttrSpec& a : schema.attrs) {
    if (call.attrs.has(a.name)) continue;
    if (!a.default_value)
      throw Error(schema.name, "attribute '" + a.name + "'", "a value (required)", "none");
    call.attrs.set(a.name, *a.default_value);
  }
  call.outputs = schema.infer(call);
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    const size_t spec = std::min(i, schema.outputs.size() - 1);
    check_shape(
        schema.name,
        "output '" + (schema.outputs.empty() ? std::to_string(i) : schema.outputs[spec].name) + "'",
        call.outputs[i]);
  }
  return call;
}

namespace {

// A kernel may build tables or pack constant operands at create; when they
// do not fit in memory the caller gets the op's error, not std::bad_alloc.
std::unique_ptr<KernelInstance> create_instance(const KernelDesc& k, const OpCall& call,
                                                std::string* why) {
  try {
    return k.create(call, why);
  } catch (const std::bad_alloc&) {
    throw Error(call.op(), "kernel " + k.name, "memory for its tables and packed operands",
                "an allocation that failed");
  }
}

}  // namespace

Op Op::create(const std::string& op, std::vector<TensorDesc> inputs, const Attrs& attrs,
              const std::string& force_kernel) {
  const Registry& reg = Registry::global();
  const OpSchema& schema = reg.schema(op);
  Op result;
  result.call_ = std::make_shared<OpCall>(make_call(schema, std::move(inputs), attrs));
  const OpCall& call = *result.call_;
  const Isa isa = active_isa();
  std::string declined;
  std::vector<DType> input_dtypes;
  for (const TensorDesc& d : call.inputs) input_dtypes.push_back(d.dtype);
  for (const KernelDesc* kp : reg.ranked(op, input_dtypes)) {
    const KernelDesc& k = *kp;
    if (!force_kernel.empty() && k.name != force_kernel) continue;
    std::string why;
    if (k.isa > isa) {
      why = std::string("needs ") + isa_name(k.isa) + ", active ISA is " + isa_name(isa);
    } else if (k.cpu_ok && !k.cpu_ok()) {
      why = "CPU lacks a feature it needs";
    } else if (auto inst = create_instance(k, call, &why)) {
      result.kernel_ = std::move(inst);
      result.kernel_name_ = k.name;
      size_t off = 0;
      result.pack_offsets_.assign(call.inputs.size(), SIZE_MAX);
      if (k.contiguous_inputs) {
        for (size_t i = 0; i < call.inputs.size(); ++i) {
          if (!call.has_input(i) || call.inputs[i].is_contiguous()) continue;
          result.pack_offsets_[i] = off;
          const size_t bytes =
              static_cast<size_t>(call.inputs[i].numel()) * dtype_size(call.inputs[i].dtype);
          off += (bytes + kAlignment - 1) / kAlignment * kAlignment;
        }
      }
      result.kernel_ws_offset_ = off;
      result.workspace_ = off + result.kernel_->workspace_bytes();
      // One tensor per input shaped like the call's desc (with room for its
      // strides), constants with their data.
      result.staging_ = std::make_shared<Staging>();
      std::vector<Tensor>& staged = result.staging_->inputs;
      staged.resize(call.inputs.size());
      for (size_t i = 0; i < staged.size(); ++i) {
        if (!call.has_input(i)) continue;
        if (const Tensor* c = call.constant(i)) {
          staged[i] = *c;
        } else {
          const size_t rank = call.inputs[i].shape.size();
          staged[i].set_desc(TensorDesc(call.inputs[i].dtype, Shape(rank, 0), Strides(rank, 0)));
        }
      }
      break;
    }
    declined += "; " + k.name + " declined: " + (why.empty() ? "no reason given" : why);
  }
  if (!result.kernel_) {
    if (!force_kernel.empty() && declined.empty())
      throw Error(op, "kernel", "a kernel registered for this op", "'" + force_kernel + "'");
    if (!force_kernel.empty())
      throw KernelDeclined(op, "inputs", "a case kernel '" + force_kernel + "' accepts",
                           declined.substr(2));
    throw Error(op, "inputs", "a case some kernel accepts",
                declined.empty() ? "no kernels" : declined.substr(2));
  }
  if (log_level() >= LogLevel::info) {
    std::string sig = op + "(";
    for (size_t i = 0; i < call.inputs.size(); ++i)
      sig += (i ? ", " : "") + (call.has_input(i) ? call.inputs[i].str() : std::string("none"));
    sig += ")" + (call.attrs.values().empty() ? std::string() : " {" + call.attrs.str() + "}");
    log_once(LogLevel::info, sig + result.kernel_name_,
             sig + " -> " + result.kernel_name_ +
                 (declined.empty() ? "" : " (" + declined.substr(2) + ")"));
  }
  return result;
}

Op Op::create(const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
              const std::string& force_kernel) {
  std::vector<TensorDesc> descs;
  descs.reserve(inputs.size());
  for (const Tensor& t : inputs) descs.push_back(t.defined() ? t.desc() : TensorDesc::none());
  return create(op, std::move(descs), attrs, force_kernel);
}

const OpCall& Op::checked() const {
  if (!call_ || !kernel_)
    throw Error("Op", "this", "an Op made by Op::create", "a default-constructed or moved-from Op");
  return *call_;
}

void Op::run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
             std::span<std::byte> workspace) const {
  const OpCall& call = checked();
  const std::string& name = call.op();
  if (inputs.size() != call.inputs.size() && !(inputs.size() < call.inputs.size() && [&] {
        for (size_t i = inputs.size(); i < call.inputs.size(); ++i)
          if (call.has_input(i) && !call.constant(i)) return false;
        return true;
      }()))
    throw Error(name, "inputs", std::to_string(call.inputs.size()) + " tensors",
                std::to_string(inputs.size()));
  if (outputs.size() != call.outputs.size())
    throw Error(name, "outputs", std::to_string(call.outputs.size()) + " tensors",
                std::to_string(outputs.size()));
  if (workspace.size() < workspace_)
    throw Error(name, "workspace", "at least " + std::to_string(workspace_) + " bytes",
                std::to_string(workspace.size()) + " bytes");
  if (workspace_ && reinterpret_cast<uintptr_t>(workspace.data()) % kAlignment != 0)
    throw Error(name, "workspace", "a " + std::to_string(kAlignment) + "-byte aligned address",
                "a misaligned one");
  char* const ws = reinterpret_cast<char*>(workspace.data());
  // O(rank) checks only: the tensors must be the ones phase one was asked
  // about. The caller's array goes to the kernel as it is unless an input has
  // to be replaced (packed into the workspace, a constant operand passed as
  // Tensor(), omitted trailing inputs); only then is a local array built.
  bool direct = inputs.size() == call.inputs.size();
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (!call.has_input(i)) continue;
    const Tensor* c = call.constant(i);
    if (i >= inputs.size() || !inputs[i].defined()) {
      if (!c) throw Error(name, "input " + std::to_string(i), call.inputs[i].str(), "no tensor");
      direct = false;
      continue;
    }
    const Tensor& t = inputs[i];
    if (t.dtype() != call.inputs[i].dtype || t.shape() != call.inputs[i].shape ||
        (!call.inputs[i].is_contiguous() && t.strides() != call.inputs[i].strides) ||
        (call.inputs[i].is_contiguous() && !t.is_contiguous()))
      throw Error(name, "input " + std::to_string(i), call.inputs[i].str(), t.desc().str());
    // A constant's kernel may have packed it at create: it runs on what it was made with.
    if ((c && t.data() != c->data()) || pack_offsets_[i] != SIZE_MAX) direct = false;
  }
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    if (t.dtype() != call.outputs[i].dtype || t.shape() != call.outputs[i].shape ||
        !t.is_contiguous() || (t.numel() > 0 && t.data() == nullptr))
      throw Error(name, "output " + std::to_string(i), "contiguous " + call.outputs[i].str(),
                  t.desc().str());
  }
  // Outputs with no element: nothing to write (and a kernel's loops over the
  // other dims of an empty tensor, such as [2^31, 3, 40, 0], could take hours).
  bool any_output = call.outputs.empty();
  for (const TensorDesc& d : call.outputs) any_output |= d.numel() > 0;
  if (!any_output) return;
  char* const kernel_ws = ws ? ws + kernel_ws_offset_ : nullptr;
  if (direct) {
    kernel_->run(inputs.data(), outputs.data(), kernel_ws);
    return;
  }
  // The staged array is overwritten in place (same ranks: no allocation).
  // Another thread running this Op at the same time gets a copy of its own.
  Staging& st = *staging_;
  const bool mine = !st.busy.test_and_set(std::memory_order_acquire);
  std::vector<Tensor> copy;
  if (!mine) copy = st.inputs;
  std::vector<Tensor>& ins = mine ? st.inputs : copy;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (!call.has_input(i) || call.constant(i)) continue;
    Tensor& t = ins[i];
    if (pack_offsets_[i] != SIZE_MAX) {
      t.rebind_contiguous(inputs[i].shape(), inputs[i].dtype(), ws + pack_offsets_[i]);
      copy_into(inputs[i], t);
    } else {
      t = inputs[i];
    }
  }
  // Done: the staged tensors stop sharing the caller's storage, the array is free.
  auto release = [&] {
    if (!mine) return;
    for (size_t i = 0; i < st.inputs.size(); ++i)
      if (!call.constant(i)) st.inputs[i].storage_.reset();
    st.busy.clear(std::memory_order_release);
  };
  try {
    kernel_->run(ins.data(), outputs.data(), kernel_ws);
  } catch (...) {
    release();
    throw;
  }
  release();
}

std::vector<Tensor> Op::operator()(const std::vector<Tensor>& inputs) const {
  std::vector<Tensor> outs;
  outs.reserve(checked().outputs.size());
  for (const TensorDesc& d : call_->outputs) outs.push_back(Tensor::empty(d.shape, d.dtype));
  std::shared_ptr<void> ws;
  if (workspace_) ws.reset(aligned_alloc_bytes(workspace_), aligned_free);
  run(inputs, outs, {static_cast<std::byte*>(ws.get()), workspace_});
  return outs;
}

std::vector<Tensor> call(const std::string& op, const std::vector<Tensor>& inputs,
                         const Attrs& attrs) {
  return Op::create(op, inputs, attrs)(inputs);
}

KernelFactory simple_kernel(KernelFn fn, std::function<bool(const OpCall&, std::string*)> accepts,
                            std::function<size_t(const OpCall&)> workspace) {
  struct Instance : KernelInstance {
    const OpCall& call;
    KernelFn fn;
    size_t ws;
    Instance(const OpCall& c, KernelFn f, size_t w) : call(c), fn(std::move(f)), ws(w) {}
    size_t workspace_bytes() const override { return ws; }
    void run(const Tensor* in, Tensor* out, void* w) override { fn(call, in, out, w); }
  };
  return [fn = std::move(fn), accepts = std::move(accepts), workspace = std::move(workspace)](
             const OpCall& call, std::string* why) -> std::unique_ptr<KernelInstance> {
    if (accepts && !accepts(call, why)) return nullptr;
    return std::make_unique<Instance>(call, fn, workspace ? workspace(call) : 0);
  };
}

std::vector<double> to_double(const Tensor& t) {
  const int64_t n = t.numel();
  std::vector<double> r(static_cast<size_t>(n));
  if (t.is_contiguous() && t.dtype() == DType::f32) {
    const float* p = t.data_as<float>();
    for (int64_t i = 0; i < n; ++i) r[static_cast<size_t>(i)] = p[i];
    return r;
  }
  for (int64_t i = 0; i < n; ++i) r[static_cast<size_t>(i)] = t.flat_get(i);
  return r;
}

RefTensor to_ref(const Tensor& t) { return RefTensor{t.shape(), to_double(t)}; }

void from_ref(const RefTensor& r, Tensor& t) {
  const int64_t n = t.numel();
  if (static_cast<int64_t>(r.data.size()) != n)
    throw Error("reference", "output", std::to_string(n) + " values",
                std::to_string(r.data.size()));
  for (int64_t i = 0; i < n; ++i) t.flat_set(i, r.data[static_cast<size_t>(i)]);
}

}  // namespace opsnn
