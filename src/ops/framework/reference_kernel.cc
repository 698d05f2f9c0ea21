#include "ops/framework/reference_kernel.h"

#include <climits>

namespace opsnn::detail {
namespace {

class ReferenceKernel : public KernelInstance {
 public:
  explicit ReferenceKernel(const OpCall& call) : call_(call) {}
  void run(const Tensor* in, Tensor* out, void*) override {
    std::vector<RefTensor> ins(call_.inputs.size());
    for (size_t i = 0; i < ins.size(); ++i)
      if (call_.has_input(i)) ins[i] = to_ref(in[i]);
    std::vector<RefTensor> outs(call_.outputs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      outs[i].shape = call_.outputs[i].shape;
      outs[i].data.assign(static_cast<size_t>(call_.outputs[i].numel()), 0.0);
    }
    call_.schema->reference(call_, ins, outs);
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

}  // namespace opsnn::detail
