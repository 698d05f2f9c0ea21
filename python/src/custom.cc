#include "custom.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>

#include "attrs.h"
#include "opsnn/error.h"
#include "opsnn/op.h"
#include "tensors.h"

namespace ops_nn {
namespace nb = nanobind;
using opsnn::Tensor;
using opsnn::TensorDesc;

namespace {

// The Python functions of one op. Never freed: the registry outlives the
// interpreter, and a reference dropped after it has ended would crash.
struct PyFns {
  nb::object infer, reference, kernel;
};

nb::dict attrs_dict(const opsnn::OpCall& call) {
  nb::dict d;
  for (const auto& [k, v] : call.attrs.values()) d[k.c_str()] = attr_to_py(v);
  return d;
}

// Calls a user function; a Python exception becomes an opsnn::Error naming the op.
template <class F>
auto guarded(const std::string& op, const char* what, F f) {
  try {
    return f();
  } catch (nb::python_error& e) {
    const std::string msg = nb::steal<nb::str>(PyObject_Str(e.value().ptr())).c_str();
    throw opsnn::Error(op, what, "a function that returns",
                       std::string(nb::type_name(e.type()).c_str()) + ": " + msg);
  } catch (nb::cast_error& e) {
    throw opsnn::Error(op, what, "a result of the documented type", e.what());
  }
}

std::vector<TensorDesc> infer(const PyFns& fns, const opsnn::OpCall& call) {
  nb::gil_scoped_acquire gil;
  return guarded(call.op(), "infer", [&] {
    nb::list descs;
    for (size_t i = 0; i < call.inputs.size(); ++i)
      descs.append(call.has_input(i) ? nb::cast(call.in(i)) : nb::none());
    nb::object r = fns.infer(descs, attrs_dict(call));
    std::vector<TensorDesc> outs;
    for (nb::handle h : r) {
      if (nb::isinstance<TensorDesc>(h)) {
        outs.push_back(nb::cast<TensorDesc>(h));
      } else {  // (dtype, shape)
        nb::tuple t = nb::cast<nb::tuple>(h);
        outs.emplace_back(dtype_from_py(t[0]), nb::cast<std::vector<int64_t>>(t[1]));
      }
    }
    return outs;
  });
}

// Results of a user function: one array or a tuple/list of them.
std::vector<nb::handle> results(const nb::object& r) {
  std::vector<nb::handle> v;
  if (nb::isinstance<nb::tuple>(r) || nb::isinstance<nb::list>(r))
    for (nb::handle h : r) v.push_back(h);
  else
    v.push_back(r);
  return v;
}

void reference(const PyFns& fns, const opsnn::OpCall& call, const std::vector<opsnn::RefTensor>& in,
               std::vector<opsnn::RefTensor>& out) {
  nb::gil_scoped_acquire gil;
  guarded(call.op(), "reference", [&] {
    nb::module_ np = nb::module_::import_("numpy");
    nb::list args;
    for (const opsnn::RefTensor& r : in) {
      // A float64 copy the function may keep or modify.
      args.append(numpy_f64(r.data, r.shape));
    }
    nb::object res = fns.reference(*nb::tuple(args), **attrs_dict(call));
    std::vector<nb::handle> rs = results(res);
    if (rs.size() != out.size())
      throw opsnn::Error(call.op(), "reference", std::to_string(out.size()) + " result(s)",
                         std::to_string(rs.size()));
    for (size_t i = 0; i < rs.size(); ++i) {
      nb::object a = np.attr("ascontiguousarray")(rs[i], "float64");
      std::vector<int64_t> shape = nb::cast<std::vector<int64_t>>(a.attr("shape"));
      if (shape != out[i].shape)
        throw opsnn::Error(call.op(), "reference result " + std::to_string(i),
                           "shape " + opsnn::shape_str(out[i].shape), opsnn::shape_str(shape));
      nb::ndarray<nb::ro, double, nb::c_contig> v;
      if (!nb::try_cast(a, v, false))
        throw opsnn::Error(call.op(), "reference result " + std::to_string(i), "a float64 array",
                           "another type");
      out[i].data.assign(v.data(), v.data() + v.size());
    }
    return 0;
  });
}

void python_kernel(const PyFns& fns, const opsnn::OpCall& call, const Tensor* in, Tensor* out) {
  nb::gil_scoped_acquire gil;
  guarded(call.op(), "kernel", [&] {
    nb::list args;
    for (size_t i = 0; i < call.inputs.size(); ++i)
      // Views of the library's tensors, valid during the call only.
      args.append(call.has_input(i) ? from_tensor(in[i], Kind::numpy) : nb::none());
    nb::object res = fns.kernel(*nb::tuple(args), **attrs_dict(call));
    std::vector<nb::handle> rs = results(res);
    if (rs.size() != call.outputs.size())
      throw opsnn::Error(call.op(), "kernel", std::to_string(call.outputs.size()) + " result(s)",
                         std::to_string(rs.size()));
    for (size_t i = 0; i < rs.size(); ++i) {
      Tensor r = to_tensor(rs[i], call.op(), "kernel result " + std::to_string(i));
      if (r.shape() != out[i].shape())
        throw opsnn::Error(call.op(), "kernel result " + std::to_string(i),
                           "shape " + opsnn::shape_str(out[i].shape()),
                           opsnn::shape_str(r.shape()));
      opsnn::copy_into(r, out[i]);
    }
    return 0;
  });
}

opsnn::AttrType attr_type(const std::string& s) {
  for (opsnn::AttrType t : {opsnn::AttrType::i64, opsnn::AttrType::f64, opsnn::AttrType::str,
                            opsnn::AttrType::i64s, opsnn::AttrType::f64s})
    if (s == opsnn::attr_type_name(t)) return t;
  throw opsnn::Error("register_op", "attribute type", "int|float|string|int list|float list",
                     "'" + s + "'");
}

using ArgTuple = std::tuple<std::string, std::string, bool, bool>;  // name, doc, optional, variadic

void register_op(const std::string& name, const std::string& doc, const std::string& family,
                 const std::vector<ArgTuple>& inputs, const std::vector<ArgTuple>& outputs,
                 nb::list attrs, const std::vector<std::string>& dtypes, nb::object infer_fn,
                 nb::object reference_fn, nb::object kernel_fn, nb::list cases, double tol_scale) {
  auto* fns = new PyFns{infer_fn, reference_fn, kernel_fn};
  opsnn::OpSchema s;
  s.name = name;
  s.doc = doc;
  s.family = family;
  for (const auto& [n, d, opt, var] : inputs) s.inputs.push_back({n, d, opt, var});
  for (const auto& [n, d, opt, var] : outputs) s.outputs.push_back({n, d, opt, var});
  for (nb::handle a : attrs) {  // (name, type, default or None, has_default, doc)
    opsnn::AttrSpec spec;
    spec.name = nb::cast<std::string>(a[0]);
    spec.type = attr_type(nb::cast<std::string>(a[1]));
    spec.doc = nb::cast<std::string>(a[4]);
    if (nb::cast<bool>(a[3])) spec.default_value = attr_from_py(a[2], spec, name);
    s.attrs.push_back(std::move(spec));
  }
  for (const std::string& d : dtypes) s.dtypes.push_back(opsnn::dtype_from_name(d));
  s.infer = [fns](const opsnn::OpCall& call) { return infer(*fns, call); };
  if (!reference_fn.is_none())
    s.reference = [fns](const opsnn::OpCall& call, const std::vector<opsnn::RefTensor>& in,
                        std::vector<opsnn::RefTensor>& out) { reference(*fns, call, in, out); };
  // Cases: (name, [shapes], {attrs}) with the float inputs in the checked dtype.
  std::vector<std::tuple<std::string, std::vector<opsnn::Shape>, opsnn::Attrs>> table;
  for (nb::handle c : cases) {
    opsnn::Attrs a;
    for (auto [k, v] : nb::cast<nb::dict>(c[2])) {
      const std::string key = nb::cast<std::string>(k);
      const opsnn::AttrSpec* spec = nullptr;
      for (const opsnn::AttrSpec& as : s.attrs)
        if (as.name == key) spec = &as;
      if (!spec)
        throw opsnn::Error(name, "case attribute '" + key + "'", "a schema attribute", key);
      a.set(key, attr_from_py(v, *spec, name));
    }
    table.emplace_back(nb::cast<std::string>(c[0]), nb::cast<std::vector<opsnn::Shape>>(c[1]), a);
  }
  if (!table.empty())
    s.cases = [table, tol_scale](opsnn::DType t) {
      std::vector<opsnn::CheckCase> cs;
      for (const auto& [n, shapes, a] : table) {
        opsnn::CheckCase c;
        c.name = n;
        for (const opsnn::Shape& sh : shapes) c.inputs.emplace_back(t, sh);
        c.attrs = a;
        c.tol_scale = tol_scale;
        cs.push_back(std::move(c));
      }
      return cs;
    };
  const std::vector<opsnn::DType> kdtypes = s.dtypes;
  opsnn::Registry::global().add_op(std::move(s));
  if (!kernel_fn.is_none()) {
    opsnn::KernelDesc k;
    k.name = name + "_python";
    k.isa = opsnn::Isa::scalar;
    k.dtypes = kdtypes;
    k.priority = 1;  // above the reference kernel; C++ kernels registered later outrank it
    k.create = opsnn::simple_kernel([fns](const opsnn::OpCall& call, const Tensor* in, Tensor* out,
                                          void*) { python_kernel(*fns, call, in, out); },
                                    nullptr);
    opsnn::Registry::global().add_kernel(name, std::move(k));
  }
}

}  // namespace

void bind_custom(nb::module_& m) {
  m.def("_register_op", &register_op, nb::arg("name"), nb::arg("doc"), nb::arg("family"),
        nb::arg("inputs"), nb::arg("outputs"), nb::arg("attrs"), nb::arg("dtypes"),
        nb::arg("infer"), nb::arg("reference").none(), nb::arg("kernel").none(), nb::arg("cases"),
        nb::arg("tol_scale"));
}

}  // namespace ops_nn
