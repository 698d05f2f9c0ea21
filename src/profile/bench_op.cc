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
  // packed=1 (ops whose schema has bench_packed, e.g. matmul, matmul_int8):
  // the weight packed beforehand (as a model's weights are at load) and each
  // timed call runs the packed form, cycling through enough packed copies
  // that each call streams its weights from memory as a model's layer does;
  // without it the op form is timed, which packs the weight on every call.
  const bool packed = kv.count("packed") && kv.at("packed") != "0";
  kv.erase("packed");
  if (packed && !s.bench_packed) {
    std::string with;
    for (const std::string& name : Registry::global().op_names())
      if (Registry::global().schema(name).bench_packed) with += (with.empty() ? "" : ", ") + name;
    throw Error("bench", "case packed=1", "an op with a pre-packed form (" + with + ")",
                "op " + op_name);
  }
  CheckCase c = s.bench_case ? s.bench_case(kv, t) : ops::attr_bench_case(s, kv, t);
  std::vector<Tensor> ins = make_case_inputs(c, t, 42);
  Op op = Op::create(op_name, ins, c.attrs);
  std::vector<Tensor> outs;
  for (const TensorDesc& d : op.outputs()) outs.push_back(Tensor::zeros(d.shape, d.dtype));
  BenchResult r;
  r.op = op_name;
  r.kase = kase;
  r.dtype = t;
  r.kernel = op.kernel_name();
  if (packed) {
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
