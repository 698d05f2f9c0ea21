#include "ops/framework/reference_kernel.h"

#include <climits>

#include "opsnn/error.h"

namespace opsnn {

std::vector<RefTensor> run_reference(const OpCall& call, const Tensor* inputs) {
  if (!call.schema || !call.schema->reference)
    throw Error(call.schema ? call.schema->name : "op", "reference", "a float64 reference", "none");
  std::vector<RefTensor> outs(call.outputs.size());
  bool any = outs.empty();
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i].shape = call.outputs[i].shape;
    outs[i].data.assign(static_cast<size_t>(call.outputs[i].numel()), 0.0);
    any |= !outs[i].data.empty();
  }
  if (!any) return outs;
  std::vector<RefTensor> ins(call.inputs.size());
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!call.has_input(i)) continue;
    const Tensor* c = call.constant(i);
    ins[i] = to_ref(inputs[i].defined() || !c ? inputs[i] : *c);
  }
  call.schema->reference(call, ins, outs);
  return outs;
}

namespace detail {
namespace {

class ReferenceKernel : public KernelInstance {
 public:
  explicit ReferenceKernel(const OpCall& call) : call_(call) {}
  void run(const Tensor* in, Tensor* out, void*) override {
    const std::vector<RefTensor> outs = run_reference(call_, in);
    for (size_t i = 0; i < outs.size(); ++i) from_ref(outs[i], out[i]);
  }

 private:
  const OpCall& call_;
};

}  // namespace

KernelDesc reference_kernel_desc(const std::string& op) {
  KernelDesc k;
  k.name = op + "_ref_f64";
  k.isa = Isa::scalar;
  k.dtypes = {DType::f32, DType::f16, DType::bf16};
  k.contiguous_inputs = false;
  k.priority = INT_MIN;
  k.create = [](const OpCall& call, std::string*) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<ReferenceKernel>(call);
  };
  return k;
}

}  // namespace detail
}  // namespace opsnn
