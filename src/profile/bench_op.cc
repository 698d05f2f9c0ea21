// bench_op: the body of `opsnn bench` and ops_nn.bench().
#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "ops/common/bench_keys.h"
#include "opsnn/bench.h"
#include "opsnn/check.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

std::map<std::string, std::string> parse_kv(const std::string& s) {
  std::map<std::string, std::string> kv;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos) throw Error("bench", "case", "key=value pairs", "'" + item + "'");
    kv[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return kv;
}

}  // namespace

BenchResult bench_op(const std::string& op_name, const std::string& kase, DType t, int threads) {
  if (threads > 0) set_num_threads(threads);
  const OpSchema& s = Registry::global().schema(op_name);
  auto kv = parse_kv(kase);
  // packed=1: the weight packed beforehand, as a model's weights are at load.
  // Ops with a bench_packed hook (matmul, matmul_int8) run their packed form,
  // cycling through enough packed copies that each call streams its weights
  // from memory as a model's layer does; other ops with inputs marked
  // `weight` get them as constant operands, which their kernels pack once at
  // create. Without it the op form is timed, which may pack the weight on
  // every call.
  const bool packed = kv.count("packed") && kv.at("packed") != "0";
  kv.erase("packed");
  auto has_weight = [](const OpSchema& x) {
    return std::any_of(x.inputs.begin(), x.inputs.end(), [](const ArgSpec& a) { return a.weight; });
  };
  if (packed && !s.bench_packed && !has_weight(s)) {
    std::string with;
    for (const std::string& name : Registry::global().op_names()) {
      const OpSchema& o = Registry::global().schema(name);
      if (o.bench_packed || has_weight(o)) with += (with.empty() ? "" : ", ") + name;
    }
    throw Error("bench", "case packed=1", "an op with a weight input (" + with + ")",
                "op " + op_name);
  }
  CheckCase c = s.bench_case ? s.bench_case(kv, t) : ops::attr_bench_case(s, kv, t);
  std::vector<Tensor> ins = make_case_inputs(c, t, 42);
  std::vector<TensorDesc> descs;
  std::vector<std::string> constants;
  for (size_t i = 0; i < ins.size(); ++i) {
    const bool weight =
        packed && !s.bench_packed && i < s.inputs.size() && s.inputs[i].weight && ins[i].defined();
    if (weight) constants.push_back(s.inputs[i].name);
    descs.push_back(weight             ? TensorDesc::constant(ins[i])
                    : ins[i].defined() ? ins[i].desc()
                                       : TensorDesc::none());
  }
  Op op = Op::create(op_name, descs, c.attrs);
  std::vector<Tensor> outs;
  for (const TensorDesc& d : op.outputs()) outs.push_back(Tensor::zeros(d.shape, d.dtype));
  BenchResult r;
  r.op = op_name;
  r.kase = kase;
  r.dtype = t;
  r.kernel = op.kernel_name();
  r.constants = constants;
  if (packed && s.bench_packed) {
    PackedBench pb = s.bench_packed(ins, outs, c.attrs);
    r.kernel = pb.kernel;
    r.timing = time_it(pb.run, 10, 0.5);
  } else {
    Arena ws(op.workspace_bytes() + kAlignment);
    auto w = ws.span(op.workspace_bytes());
    r.timing = time_it([&] { op.run(ins, outs, w); }, 10, 0.5);
  }
  r.isa = isa_name(active_isa());
  r.threads = num_threads();

  if (s.cost) {
    s.cost(op.call(), &r.bytes, &r.flops);
  } else {
    for (const Tensor& x : ins) r.bytes += static_cast<double>(x.nbytes());
    for (const Tensor& y : outs) r.bytes += static_cast<double>(y.nbytes());
  }
  const double sec = r.timing.min_ms * 1e-3;
  r.gbps = r.bytes / sec / 1e9;
  r.gflops = r.flops / sec / 1e9;
  double out_bytes = 0;
  for (const Tensor& y : outs) out_bytes += static_cast<double>(y.nbytes());
  if (r.flops > 0 && r.flops / std::max(r.bytes, 1.0) > 4) {
    r.limit = measure_fma_peak_gflops();
    r.limit_fraction = r.gflops / r.limit;
    r.limit_kind = "fma_peak_gflops";
  } else if (out_bytes * 10 < r.bytes) {
    // Reads dominate (a GEMV streaming its weights): the read bandwidth.
    r.limit = measure_read_gbps();
    r.limit_fraction = r.gbps / r.limit;
    r.limit_kind = "read_gbps";
  } else {
    r.limit = measure_copy_gbps();
    r.limit_fraction = r.gbps / r.limit;
    r.limit_kind = "copy_gbps";
  }
  return r;
}

}  // namespace opsnn
