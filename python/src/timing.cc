#include "timing.h"

#include <nanobind/stl/string.h>

#include <chrono>

#include "attrs.h"
#include "opsnn/memory.h"
#include "opsnn/op.h"
#include "tensors.h"

namespace ops_nn {
namespace nb = nanobind;

namespace {

// Seconds per call of `calls` back-to-back C++ calls of op on `inputs`:
// allocate = true: Op::operator() (allocates the outputs, as a Python call
// without out= does); false: Op::run into outputs allocated once.
double time_cpp(const std::string& name, nb::list inputs, nb::dict attrs, int64_t calls,
                bool allocate) {
  const opsnn::OpSchema& s = opsnn::Registry::global().schema(name);
  std::vector<opsnn::Tensor> ins;
  for (nb::handle x : inputs) ins.push_back(to_tensor(x, name, "input"));
  opsnn::Attrs a;
  for (auto [k, v] : attrs) {
    const std::string key = nb::cast<std::string>(k);
    for (const opsnn::AttrSpec& spec : s.attrs)
      if (spec.name == key) a.set(key, attr_from_py(v, spec, name));
  }
  const opsnn::Op op = opsnn::Op::create(name, ins, a);
  std::vector<opsnn::Tensor> outs;
  for (const opsnn::TensorDesc& d : op.outputs())
    outs.push_back(opsnn::Tensor::empty(d.shape, d.dtype));
  opsnn::Arena ws(op.workspace_bytes() + opsnn::kAlignment);
  auto w = ws.span(op.workspace_bytes());
  nb::gil_scoped_release release;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < calls; ++i) {
    if (allocate)
      (void)op(ins);
    else
      op.run(ins, outs, w);
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count() / static_cast<double>(calls);
}

}  // namespace

void bind_timing(nb::module_& m) {
  m.def("_time_cpp", &time_cpp, nb::arg("op"), nb::arg("inputs"), nb::arg("attrs"),
        nb::arg("calls"), nb::arg("allocate"));
}

}  // namespace ops_nn
