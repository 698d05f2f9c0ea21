#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "opsnn/bench.h"
#include "opsnn/check.h"
#include "opsnn/opsnn.h"

namespace opsnn::cli {
namespace {

struct BenchArgs {
  std::string op, kase, dtype = "f32", isa;
  int threads = 0;
  bool json = false;
};

std::map<std::string, std::string> parse_kv(const std::string& s) {
  std::map<std::string, std::string> kv;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos)
      throw Error("bench", "--case", "key=value pairs", "'" + item + "'");
    kv[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return kv;
}

Shape parse_shape(const std::string& s) {
  Shape sh;
  std::stringstream ss(s);
  std::string d;
  while (std::getline(ss, d, 'x')) sh.push_back(std::stoll(d));
  return sh;
}

AttrValue parse_value(const std::string& v) {
  char* end = nullptr;
  long long i = std::strtoll(v.c_str(), &end, 10);
  if (*end == '\0' && !v.empty()) return static_cast<int64_t>(i);
  double f = std::strtod(v.c_str(), &end);
  if (*end == '\0' && !v.empty()) return f;
  return v;
}

// Generic case: shape=AxBxC for every input; other keys are attributes.
CheckCase generic_case(const OpSchema& s, const std::map<std::string, std::string>& kv, DType t) {
  CheckCase c;
  c.name = "bench";
  Shape shape = {1 << 24};
  for (const auto& [k, v] : kv) {
    if (k == "shape")
      shape = parse_shape(v);
    else if (k == "n")
      shape = {std::stoll(v)};
    else
      c.attrs.set(k, parse_value(v));
  }
  for (const ArgSpec& a : s.inputs)
    if (!a.optional && !a.variadic) c.inputs.push_back(TensorDesc(t, shape));
  if (s.cases) {  // keep the value ranges the op's own cases use
    auto cs = s.cases(t);
    if (!cs.empty()) c.ranges = cs.front().ranges;
  }
  return c;
}

int run_bench(const BenchArgs& a) {
  if (!a.isa.empty()) set_isa_cap(isa_from_name(a.isa));
  if (a.threads > 0) set_num_threads(a.threads);
  const OpSchema& s = Registry::global().schema(a.op);
  const DType t = dtype_from_name(a.dtype);
  auto kv = parse_kv(a.kase);
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
    throw Error("bench", "--case packed=1", "an op with a pre-packed form (" + with + ")",
                "op " + a.op);
  }
  CheckCase c = s.bench_case ? s.bench_case(kv, t) : generic_case(s, kv, t);
  std::vector<Tensor> ins = make_case_inputs(c, t, 42);
  Op op = Op::create(a.op, ins, c.attrs);
  std::vector<Tensor> outs;
  for (const TensorDesc& d : op.outputs()) outs.push_back(Tensor::zeros(d.shape, d.dtype));
  std::string kernel = op.kernel_name();
  Timing tm;
  if (packed) {
    PackedBench pb = s.bench_packed(ins, outs, c.attrs);
    kernel = pb.kernel;
    tm = time_it(pb.run, 10, 0.5);
  } else {
    Arena ws(op.workspace_bytes() + kAlignment);
    auto w = ws.span(op.workspace_bytes());
    tm = time_it([&] { op.run(ins, outs, w); }, 10, 0.5);
  }

  double bytes = 0, flops = 0;
  if (s.cost) {
    s.cost(op.call(), &bytes, &flops);
  } else {
    for (const Tensor& x : ins) bytes += static_cast<double>(x.nbytes());
    for (const Tensor& y : outs) bytes += static_cast<double>(y.nbytes());
  }
  const double sec = tm.min_ms * 1e-3;
  const double gbps = bytes / sec / 1e9, gflops = flops / sec / 1e9;
  double out_bytes = 0;
  for (const Tensor& y : outs) out_bytes += static_cast<double>(y.nbytes());
  double limit, fraction;
  std::string limit_kind;
  if (flops > 0 && flops / std::max(bytes, 1.0) > 4) {
    limit = measure_fma_peak_gflops();
    fraction = gflops / limit;
    limit_kind = "fma_peak_gflops";
  } else if (out_bytes * 10 < bytes) {
    // Reads dominate (a GEMV streaming its weights): the read bandwidth.
    limit = measure_read_gbps();
    fraction = gbps / limit;
    limit_kind = "read_gbps";
  } else {
    limit = measure_copy_gbps();
    fraction = gbps / limit;
    limit_kind = "copy_gbps";
  }
  if (a.json) {
    nlohmann::json j = {{"op", a.op},
                        {"case", a.kase},
                        {"dtype", a.dtype},
                        {"kernel", kernel},
                        {"isa", isa_name(active_isa())},
                        {"threads", num_threads()},
                        {"min_ms", tm.min_ms},
                        {"median_ms", tm.median_ms},
                        {"repeats", tm.repeats},
                        {"bytes", bytes},
                        {"flops", flops},
                        {"gbps", gbps},
                        {"gflops", gflops},
                        {"limit", limit},
                        {"limit_kind", limit_kind},
                        {"limit_fraction", fraction}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s %s [%s] kernel %s, %d thread(s)\n", a.op.c_str(), a.dtype.c_str(),
                a.kase.c_str(), kernel.c_str(), num_threads());
    std::printf("  min %.4f ms  median %.4f ms  (%d runs)\n", tm.min_ms, tm.median_ms, tm.repeats);
    std::printf("  %.2f GB/s  %.2f GFLOP/s  = %.1f%% of %s %.1f (measured now)\n", gbps, gflops,
                100 * fraction, limit_kind.c_str(), limit);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench",
      "Time one case of an op; prints min/median and the fraction of this machine's limit");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("--op", a->op, "Op name")->required();
  cmd->add_option("--case", a->kase, "k=v,... (op-specific; generic ops take shape=AxBxC)");
  cmd->add_option("--dtype", a->dtype, "f32|bf16|f16|...")->capture_default_str();
  cmd->add_option("--threads", a->threads, "Threads (default OPSNN_NUM_THREADS or all cores)");
  cmd->add_option("--isa", a->isa, "Cap the ISA: scalar|avx2|avx512");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace opsnn::cli
