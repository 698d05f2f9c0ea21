#include "calls.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <unordered_map>

#include "attrs.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"
#include "opsnn/op.h"
#include "tensors.h"

namespace ops_nn {
namespace {

using opsnn::Tensor;
using opsnn::TensorDesc;

// Per thread, grown when an op needs more and then reused: a call allocates
// no workspace once warm, and threads running ops concurrently never share one.
void* thread_workspace(size_t bytes) {
  struct Buffer {
    void* p = nullptr;
    size_t size = 0;
    ~Buffer() { opsnn::aligned_free(p); }
  };
  thread_local Buffer b;
  if (bytes == 0) return nullptr;
  if (bytes > b.size) {
    opsnn::aligned_free(b.p);
    b.p = opsnn::aligned_alloc_bytes(bytes);
    b.size = bytes;
  }
  return b.p;
}

void append_desc(std::string& key, const Tensor& t) {
  if (!t.defined()) {
    key.push_back('-');
    return;
  }
  key.push_back(static_cast<char>(t.dtype()));
  key.push_back(static_cast<char>(t.rank()));
  key.append(reinterpret_cast<const char*>(t.shape().data()), t.shape().size() * 8);
  if (t.is_contiguous()) {
    key.push_back('c');
  } else {
    key.push_back('s');
    key.append(reinterpret_cast<const char*>(t.strides().data()), t.strides().size() * 8);
  }
}

std::string input_arg(const opsnn::OpSchema& s, size_t i) {
  const size_t n = s.inputs.size();
  if (n == 0) return "input " + std::to_string(i);
  const opsnn::ArgSpec& a = s.inputs[std::min(i, n - 1)];
  return "input '" + a.name + "'" + (a.variadic ? " #" + std::to_string(i - (n - 1)) : "");
}

// Inputs of one call, converted in place (no copy).
struct Inputs {
  std::vector<Tensor> tensors;
  std::vector<nb::object> keep;
  Kind kind = Kind::numpy;
};

Inputs convert_inputs(const opsnn::OpSchema& s, nb::handle seq) {
  Inputs r;
  const size_t n = static_cast<size_t>(nb::len(seq));
  r.tensors.resize(n);
  bool first = true;
  for (size_t i = 0; i < n; ++i) {
    nb::handle x = seq[i];
    if (x.is_none()) continue;  // an absent optional input
    nb::object keep;
    r.tensors[i] = to_tensor(x, s.name, input_arg(s, i), &keep);
    if (keep.is_valid()) r.keep.push_back(std::move(keep));
    if (first) r.kind = kind_of(x);
    first = false;
  }
  return r;
}

thread_local std::vector<uintptr_t> last_in, last_out;

// Runs `op` on the inputs into fresh outputs (of the inputs' kind) or `out`.
nb::object run_op(const opsnn::Op& op, const Inputs& in, nb::handle out) {
  const auto& descs = op.outputs();
  const std::string& name = op.call().op();
  std::vector<Tensor> outs(descs.size());
  std::vector<nb::object> keep;
  if (out.is_none()) {
    for (size_t i = 0; i < descs.size(); ++i)
      outs[i] = Tensor::empty(descs[i].shape, descs[i].dtype);
  } else {
    const bool seq = nb::isinstance<nb::tuple>(out) || nb::isinstance<nb::list>(out);
    const size_t n = seq ? nb::len(out) : 1;
    if (n != descs.size())
      throw opsnn::Error(name, "out", std::to_string(descs.size()) + " tensor(s)",
                         std::to_string(n));
    for (size_t i = 0; i < n; ++i) {
      nb::object k;
      nb::handle o = seq ? out[i] : out;
      nb::object flags = nb::getattr(o, "flags", nb::none());
      if (!flags.is_none() && nb::hasattr(flags, "writeable") &&
          !nb::cast<bool>(flags.attr("writeable")))
        throw opsnn::Error(name, "out", "a writeable array", "a read-only one");
      outs[i] = to_tensor(o, name, "out", &k);
      if (k.is_valid()) keep.push_back(std::move(k));
    }
  }
  last_in.clear();
  last_out.clear();
  for (const Tensor& t : in.tensors) last_in.push_back(reinterpret_cast<uintptr_t>(t.data()));
  for (const Tensor& t : outs) last_out.push_back(reinterpret_cast<uintptr_t>(t.data()));
  {
    const size_t bytes = op.workspace_bytes();
    std::span<std::byte> ws(static_cast<std::byte*>(thread_workspace(bytes)), bytes);
    nb::gil_scoped_release release;
    op.run(in.tensors, outs, ws);
  }
  if (!out.is_none()) return nb::borrow(out);
  if (outs.size() == 1) return from_tensor(std::move(outs[0]), in.kind);
  nb::list l;
  for (Tensor& t : outs) l.append(from_tensor(std::move(t), in.kind));
  return nb::tuple(l);
}

// One op of ops_nn.functional: converts the call, finds (or creates) the Op
// for its input descriptions and attributes, runs it.
class Function {
 public:
  explicit Function(const std::string& name)
      : name_(name), schema_(&opsnn::Registry::global().schema(name)) {}

  // inputs: tensors in schema order (None for an absent optional one);
  // attrs: one value per schema attribute, in schema order (None: its default).
  nb::object call(nb::handle inputs, nb::handle attrs, nb::handle out) {
    Inputs in = convert_inputs(*schema_, inputs);
    const size_t na = schema_->attrs.size();
    if (static_cast<size_t>(nb::len(attrs)) != na)
      throw opsnn::Error(name_, "attributes", std::to_string(na) + " values",
                         std::to_string(nb::len(attrs)));
    // Per thread: converting the call may run Python code that lets another
    // thread into this function. Reused, so a warm call allocates no key.
    thread_local std::string key;
    thread_local std::vector<opsnn::AttrValue> values;
    key.clear();
    for (const Tensor& t : in.tensors) append_desc(key, t);
    key.push_back('|');
    values.clear();
    for (size_t i = 0; i < na; ++i) {
      nb::handle v = attrs[i];
      if (v.is_none()) {
        key.push_back('d');
        values.emplace_back(int64_t{0});
        continue;
      }
      values.push_back(attr_from_py(v, schema_->attrs[i], name_));
      append_key(key, values.back());
    }
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      opsnn::Attrs a;
      for (size_t i = 0; i < na; ++i)
        if (!attrs[i].is_none()) a.set(schema_->attrs[i].name, values[i]);
      std::vector<TensorDesc> descs;
      for (const Tensor& t : in.tensors)
        descs.push_back(t.defined() ? t.desc() : TensorDesc::none());
      auto op = std::make_shared<opsnn::Op>(opsnn::Op::create(name_, std::move(descs), a));
      if (cache_.size() >= kMaxCached) cache_.clear();  // bounded: shapes that keep changing
      it = cache_.emplace(key, std::move(op)).first;
    }
    std::shared_ptr<opsnn::Op> op = it->second;  // kept alive if another thread clears the cache
    return run_op(*op, in, out);
  }

  size_t cached() const { return cache_.size(); }
  void clear() { cache_.clear(); }

 private:
  static constexpr size_t kMaxCached = 256;
  std::string name_;
  const opsnn::OpSchema* schema_;
  std::unordered_map<std::string, std::shared_ptr<opsnn::Op>> cache_;
};

// Input description of ops_nn.Op: a TensorDesc, an example array or None.
TensorDesc desc_of(nb::handle x, const opsnn::OpSchema& s, size_t i) {
  if (x.is_none()) return TensorDesc::none();
  if (nb::isinstance<TensorDesc>(x)) return nb::cast<TensorDesc>(x);
  return to_tensor(x, s.name, input_arg(s, i)).desc();
}

class PyOp {
 public:
  PyOp(const std::string& name, nb::handle inputs, nb::dict attrs, const std::string& kernel) {
    const opsnn::OpSchema& s = opsnn::Registry::global().schema(name);
    std::vector<TensorDesc> descs;
    const size_t n = nb::len(inputs);
    for (size_t i = 0; i < n; ++i) descs.push_back(desc_of(inputs[i], s, i));
    opsnn::Attrs a;
    for (auto [k, v] : attrs) {
      const std::string key = nb::cast<std::string>(k);
      const opsnn::AttrSpec* spec = nullptr;
      for (const opsnn::AttrSpec& as : s.attrs)
        if (as.name == key) spec = &as;
      if (!spec) {  // make_call names the known attributes
        a.set(key, int64_t{0});
        continue;
      }
      a.set(key, attr_from_py(v, *spec, name));
    }
    op_ = opsnn::Op::create(name, std::move(descs), a, kernel);
  }

  nb::object call(nb::args inputs, nb::handle out) {
    Inputs in = convert_inputs(*op_.call().schema, inputs);
    // Trailing constant operands may be left out (the Op holds their data).
    const auto& descs = op_.call().inputs;
    for (size_t i = in.tensors.size(); i < descs.size(); ++i) {
      if (descs[i].constant_value() == nullptr && op_.call().has_input(i))
        throw opsnn::Error(op_.call().op(), input_arg(*op_.call().schema, i), "a tensor",
                           "none (only constant operands may be left out)");
      in.tensors.emplace_back();
    }
    return run_op(op_, in, out);
  }

  const opsnn::Op& op() const { return op_; }

 private:
  opsnn::Op op_;
};

}  // namespace

nb::tuple last_pointers() { return nb::make_tuple(nb::cast(last_in), nb::cast(last_out)); }

void bind_calls(nb::module_& m) {
  nb::class_<TensorDesc>(m, "TensorDesc",
                         "What phase one of an op needs to know about a tensor: dtype, shape, "
                         "strides (in elements; empty: contiguous).")
      .def(
          "__init__",
          [](TensorDesc* self, nb::handle dtype, std::vector<int64_t> shape,
             std::vector<int64_t> strides) {
            new (self) TensorDesc(dtype_from_py(dtype), std::move(shape), std::move(strides));
          },
          nb::arg("dtype"), nb::arg("shape"), nb::arg("strides") = std::vector<int64_t>{})
      .def_prop_ro("dtype",
                   [](const TensorDesc& d) { return std::string(opsnn::dtype_name(d.dtype)); })
      .def_prop_ro("shape", [](const TensorDesc& d) { return nb::tuple(nb::cast(d.shape)); })
      .def_prop_ro("strides",
                   [](const TensorDesc& d) { return nb::tuple(nb::cast(d.effective_strides())); })
      .def_prop_ro("is_constant", [](const TensorDesc& d) { return d.constant_value() != nullptr; })
      .def("__repr__", [](const TensorDesc& d) {
        return "TensorDesc(" + d.str() + (d.constant_value() ? ", constant" : "") + ")";
      });

  m.def(
      "desc", [](nb::handle x) { return to_tensor(x, "desc", "x").desc(); }, nb::arg("x"),
      "The TensorDesc of an array or tensor (no copy).");

  m.def(
      "constant",
      [](nb::handle x) {
        // Copied once into the library: the Op keeps it, whatever the caller does with x.
        return TensorDesc::constant(to_tensor(x, "constant", "x").clone());
      },
      nb::arg("x"),
      "A constant operand for ops_nn.Op: the description of x carrying a copy of its data, "
      "which the kernel may pack at create (the GEMM family packs B once).");

  nb::class_<Function>(m, "_Function")
      .def(nb::init<const std::string&>())
      .def("__call__", &Function::call, nb::arg("inputs"), nb::arg("attrs"), nb::arg("out").none())
      .def_prop_ro("cached", &Function::cached)
      .def("clear", &Function::clear);

  nb::class_<PyOp>(m, "Op",
                   "Op(name, inputs, **attrs): phase one (validate, infer outputs, pick the "
                   "kernel) once; then op(*tensors, out=None) runs it as often as wanted.")
      .def(nb::init<const std::string&, nb::handle, nb::dict, const std::string&>(),
           nb::arg("name"), nb::arg("inputs"), nb::arg("attrs"), nb::arg("kernel") = "")
      .def("__call__", &PyOp::call, nb::arg("inputs"), nb::kw_only(),
           nb::arg("out").none() = nb::none())
      .def_prop_ro("name", [](const PyOp& o) { return o.op().call().op(); })
      .def_prop_ro("kernel", [](const PyOp& o) { return o.op().kernel_name(); })
      .def_prop_ro("workspace_bytes", [](const PyOp& o) { return o.op().workspace_bytes(); })
      .def_prop_ro("outputs", [](const PyOp& o) { return o.op().outputs(); })
      .def_prop_ro("inputs", [](const PyOp& o) { return o.op().call().inputs; })
      .def("__repr__", [](const PyOp& o) {
        return "<ops_nn.Op " + o.op().call().op() + " kernel " + o.op().kernel_name() + ">";
      });
}

}  // namespace ops_nn
