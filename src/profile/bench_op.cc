// bench_op: the body of `opsnn bench` and ops_nn.bench().
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
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

// One case made ready to run: its op, inputs, outputs and workspace.
struct Prepared {
  BenchResult r;
  const OpSchema* schema = nullptr;
  std::optional<Op> op;
  std::vector<Tensor> ins, outs;
  std::function<void()> packed_run;  // the op's bench_packed form
  std::unique_ptr<Arena> arena;
  std::span<std::byte> ws;

  void operator()() {
    if (packed_run)
      packed_run();
    else
      op->run(ins, outs, ws);
  }
};

std::unique_ptr<Prepared> prepare(const std::string& op_name, const std::string& kase, DType t) {
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
  // kernel=NAME: that kernel (`opsnn ops` lists them) instead of dispatch's
  // pick; with packed=1 the weight is then a constant operand of the op (its
  // kernel packs it at create) rather than the op's bench_packed form.
  const std::string kernel = kv.count("kernel") ? kv.at("kernel") : "";
  kv.erase("kernel");
  const bool hook = packed && s.bench_packed && kernel.empty();
  auto has_weight = [](const OpSchema& x) {
    return std::any_of(x.inputs.begin(), x.inputs.end(), [](const ArgSpec& a) { return a.weight; });
  };
  if (packed && !hook && !has_weight(s)) {
    std::string with;
    for (const std::string& name : Registry::global().op_names()) {
      const OpSchema& o = Registry::global().schema(name);
      if (o.bench_packed || has_weight(o)) with += (with.empty() ? "" : ", ") + name;
    }
    throw Error("bench", "case packed=1", "an op with a weight input (" + with + ")",
                "op " + op_name);
  }
  auto pr = std::make_unique<Prepared>();
  pr->schema = &s;
  CheckCase c = s.bench_case ? s.bench_case(kv, t) : ops::attr_bench_case(s, kv, t);
  pr->ins = make_case_inputs(c, t, 42);
  std::vector<TensorDesc> descs;
  std::vector<std::string> constants;
  for (size_t i = 0; i < pr->ins.size(); ++i) {
    const Tensor& x = pr->ins[i];
    const bool weight = packed && !hook && i < s.inputs.size() && s.inputs[i].weight && x.defined();
    if (weight) constants.push_back(s.inputs[i].name);
    descs.push_back(weight ? TensorDesc::constant(x) : x.defined() ? x.desc() : TensorDesc::none());
  }
  pr->op.emplace(Op::create(op_name, descs, c.attrs, kernel));
  for (const TensorDesc& d : pr->op->outputs()) pr->outs.push_back(Tensor::zeros(d.shape, d.dtype));
  BenchResult& r = pr->r;
  r.op = op_name;
  r.kase = kase;
  r.dtype = t;
  r.kernel = pr->op->kernel_name();
  r.constants = constants;
  if (hook) {
    PackedBench pb = s.bench_packed(pr->ins, pr->outs, c.attrs);
    r.kernel = pb.kernel;
    pr->packed_run = std::move(pb.run);
  } else {
    pr->arena = std::make_unique<Arena>(pr->op->workspace_bytes() + kAlignment);
    pr->ws = pr->arena->span(pr->op->workspace_bytes());
  }
  return pr;
}

// The machine's limits, each measured once per call of bench_op_cases.
struct Limits {
  std::map<std::string, double> measured;
  double get(const std::string& kind) {
    auto it = measured.find(kind);
    if (it != measured.end()) return it->second;
    const double v = kind == "fma_peak_gflops" ? measure_fma_peak_gflops()
                     : kind == "read_gbps"     ? measure_read_gbps()
                                               : measure_copy_gbps();
    return measured[kind] = v;
  }
};

// Bytes, flops and the fraction of the limit that bounds the case.
void finish(Prepared& pr, const Timing& tm, Limits& limits) {
  BenchResult& r = pr.r;
  r.timing = tm;
  r.isa = isa_name(active_isa());
  r.threads = num_threads();
  if (pr.schema->cost) {
    pr.schema->cost(pr.op->call(), &r.bytes, &r.flops);
  } else {
    for (const Tensor& x : pr.ins) r.bytes += static_cast<double>(x.nbytes());
    for (const Tensor& y : pr.outs) r.bytes += static_cast<double>(y.nbytes());
  }
  const double sec = r.timing.min_ms * 1e-3;
  r.gbps = r.bytes / sec / 1e9;
  r.gflops = r.flops / sec / 1e9;
  double out_bytes = 0;
  for (const Tensor& y : pr.outs) out_bytes += static_cast<double>(y.nbytes());
  if (r.flops > 0 && r.flops / std::max(r.bytes, 1.0) > 4) {
    r.limit_kind = "fma_peak_gflops";
    r.limit = limits.get(r.limit_kind);
    r.limit_fraction = r.gflops / r.limit;
  } else {
    // Reads dominate (a GEMV streaming its weights): the read bandwidth.
    r.limit_kind = out_bytes * 10 < r.bytes ? "read_gbps" : "copy_gbps";
    r.limit = limits.get(r.limit_kind);
    r.limit_fraction = r.gbps / r.limit;
  }
}

}  // namespace

std::vector<BenchResult> bench_op_cases(const std::string& op_name,
                                        const std::vector<std::string>& kases, DType t,
                                        int threads) {
  if (kases.empty()) throw Error("bench", "case", "at least one case", "none");
  if (threads > 0) set_num_threads(threads);
  std::vector<std::unique_ptr<Prepared>> prs;
  for (const std::string& k : kases) prs.push_back(prepare(op_name, k, t));
  std::vector<FunctionRef<void()>> fns;
  for (auto& pr : prs) fns.emplace_back(*pr);
  const std::vector<Timing> tms = time_interleaved(fns, 10, 0.5 * static_cast<double>(prs.size()));
  Limits limits;
  std::vector<BenchResult> out;
  for (size_t i = 0; i < prs.size(); ++i) {
    finish(*prs[i], tms[i], limits);
    out.push_back(prs[i]->r);
  }
  return out;
}

BenchResult bench_op(const std::string& op_name, const std::string& kase, DType t, int threads) {
  return bench_op_cases(op_name, {kase}, t, threads)[0];
}

}  // namespace opsnn
