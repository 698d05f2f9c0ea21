#include "cases.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "attrs.h"
#include "opsnn/check.h"
#include "opsnn/op.h"
#include "tensors.h"

namespace ops_nn {
namespace nb = nanobind;

namespace {

// [(case name, [inputs], {attrs}, [float64 reference outputs], [(atol, rtol)])]
nb::list cases(const std::string& op, nb::handle dtype, uint64_t seed) {
  const opsnn::OpSchema& s = opsnn::Registry::global().schema(op);
  const opsnn::DType t = dtype_from_py(dtype);
  nb::list all;
  if (!s.cases || !s.reference) return all;
  for (const opsnn::CheckCase& c : s.cases(t)) {
    std::vector<opsnn::Tensor> ins = opsnn::make_case_inputs(c, t, ++seed);
    opsnn::OpCall call = opsnn::make_call(s, opsnn::case_descs(c, t), c.attrs);
    std::vector<opsnn::RefTensor> rout = opsnn::run_reference(call, ins.data());
    nb::list pins, refs, tols;
    for (opsnn::Tensor& x : ins)
      pins.append(x.defined() && (x.data() || x.numel() == 0) ? from_tensor(x, Kind::numpy)
                                                              : nb::none());
    for (size_t i = 0; i < rout.size(); ++i) {
      refs.append(numpy_f64(std::move(rout[i].data), rout[i].shape));
      opsnn::Tolerance tol = s.tolerance ? s.tolerance(call.outputs[i].dtype)
                                         : opsnn::default_tolerance(call.outputs[i].dtype);
      tols.append(nb::make_tuple(tol.atol * c.tol_scale, tol.rtol * c.tol_scale));
    }
    nb::dict attrs;
    for (const auto& [k, v] : c.attrs.values()) attrs[k.c_str()] = attr_to_py(v);
    all.append(nb::make_tuple(c.name, pins, attrs, refs, tols));
  }
  return all;
}

}  // namespace

void bind_cases(nb::module_& m) {
  m.def("_cases", &cases, nb::arg("op"), nb::arg("dtype") = "f32", nb::arg("seed") = 1234);
}

}  // namespace ops_nn
