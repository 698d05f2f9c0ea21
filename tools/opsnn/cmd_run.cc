// opsnn run / opsnn info: ONNX models through the graph runtime.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "opsnn/graph.h"
#include "opsnn/onnx.h"
#include "opsnn/opsnn.h"

namespace opsnn::cli {
namespace {

struct RunArgs {
  std::string model, output_dir, format = "pb";
  std::vector<std::string> inputs, dims;
  int bench = 0, threads = 0;
  bool print_graph = false;
};

// Concrete input descriptions: from the input files, else from the declared
// shapes with symbols bound by --dim name=N.
std::vector<TensorDesc> input_descs(const graph::Graph& g, const std::vector<Tensor>& files,
                                    const std::vector<std::string>& dims) {
  std::vector<TensorDesc> r;
  if (!files.empty()) {
    if (files.size() != g.inputs().size())
      throw Error("run", "--inputs",
                  std::to_string(g.inputs().size()) + " files (one per graph input)",
                  std::to_string(files.size()));
    for (const Tensor& t : files) r.push_back(t.desc());
    return r;
  }
  std::map<std::string, int64_t> sym;
  for (const std::string& d : dims) {
    const auto eq = d.find('=');
    if (eq == std::string::npos) throw Error("run", "--dim", "name=N", d);
    sym[d.substr(0, eq)] = std::stoll(d.substr(eq + 1));
  }
  for (graph::ValueId v : g.inputs()) {
    const graph::Value& val = g.value(v);
    Shape s;
    for (const graph::Dim& d : val.shape) {
      if (!d.is_symbolic()) {
        s.push_back(d.size);
        continue;
      }
      auto it = sym.find(d.symbol);
      if (it == sym.end())
        throw Error("run", "input '" + val.name + "' dim '" + d.symbol + "'",
                    "a size (--dim " + d.symbol + "=N)", "none");
      s.push_back(it->second);
    }
    r.emplace_back(val.dtype, s);
  }
  return r;
}

Tensor random_tensor(const TensorDesc& d, std::mt19937& rng) {
  Tensor t = Tensor::zeros(d.shape, d.dtype);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.flat_set(i,
               is_float(d.dtype) ? u(rng) : (d.dtype == DType::boolean ? (rng() & 1) : rng() % 4));
  return t;
}

void write_npy(const std::string& path, const Tensor& t) {
  const char* descr = "";
  switch (t.dtype()) {
    case DType::f32:
      descr = "<f4";
      break;
    case DType::f16:
      descr = "<f2";
      break;
    case DType::bf16:
      descr = "<u2";
      break;  // NumPy has no bfloat16: the raw bits
    case DType::i8:
      descr = "|i1";
      break;
    case DType::u8:
      descr = "|u1";
      break;
    case DType::i32:
      descr = "<i4";
      break;
    case DType::i64:
      descr = "<i8";
      break;
    case DType::boolean:
      descr = "|b1";
      break;
  }
  std::string shape = "(";
  for (int64_t d : t.shape()) shape += std::to_string(d) + ",";
  if (t.rank() > 1) shape.pop_back();
  shape += ")";
  std::string header =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error("run", "output file", "a writable file", path);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.put(static_cast<char>(len & 0xff));
  f.put(static_cast<char>(len >> 8));
  f << header;
  const Tensor c = t.contiguous();
  f.write(static_cast<const char*>(c.data()), static_cast<std::streamsize>(c.nbytes()));
}

int run_model(const RunArgs& a) {
  if (a.threads > 0) set_num_threads(a.threads);
  graph::Graph g = onnx::import_model(a.model);
  std::vector<Tensor> inputs;
  for (const std::string& p : a.inputs) inputs.push_back(onnx::read_tensor(p));
  const std::vector<TensorDesc> descs = input_descs(g, inputs, a.dims);
  graph::PlanOptions opt;
  opt.input_values = inputs;  // pins inputs that decide shapes (ONNX passes some as data)
  graph::Plan plan = graph::Plan::create(g, descs, opt);
  if (inputs.empty() && !g.inputs().empty()) {
    if (!a.bench)
      throw Error("run", "--inputs", "one TensorProto file per graph input",
                  "none (only --bench runs on random data)");
    std::mt19937 rng(1);
    for (const TensorDesc& d : descs) inputs.push_back(random_tensor(d, rng));
  }
  std::vector<Tensor> outputs;
  for (const TensorDesc& d : plan.output_descs())
    outputs.push_back(Tensor::empty(d.shape, d.dtype));
  plan.run(inputs, outputs);
  if (a.bench > 0) {
    std::vector<double> us;
    for (int i = 0; i < a.bench; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      plan.run(inputs, outputs);
      us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    std::printf("%s: %zu steps, %d runs, %d threads: min %.2f us, median %.2f us\n",
                a.model.c_str(), plan.steps().size(), a.bench, num_threads(), us.front(),
                us[us.size() / 2]);
  }
  if (!a.output_dir.empty()) {
    std::filesystem::create_directories(a.output_dir);
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string base = a.output_dir + "/output_" + std::to_string(i);
      if (a.format == "npy")
        write_npy(base + ".npy", outputs[i]);
      else
        onnx::write_tensor(base + ".pb", outputs[i], g.value(g.outputs()[i]).name);
    }
  }
  return 0;
}

int info_model(const RunArgs& a) {
  graph::Graph g = onnx::import_model(a.model);
  std::printf("%zu inputs, %zu nodes, %zu outputs\n", g.inputs().size(), g.nodes().size(),
              g.outputs().size());
  if (a.print_graph) std::printf("%s", g.str().c_str());
  std::vector<Tensor> files;
  for (const std::string& p : a.inputs) files.push_back(onnx::read_tensor(p));
  graph::PlanOptions opt;
  opt.input_values = files;
  graph::Plan plan = graph::Plan::create(g, input_descs(g, files, a.dims), opt);
  std::printf("plan for");
  for (const TensorDesc& d : plan.input_descs()) std::printf(" %s", d.str().c_str());
  std::printf(":\n%s", plan.str().c_str());
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Run an ONNX model on TensorProto inputs");
  run->add_option("model", args->model, "model.onnx")->required();
  run->add_option("--inputs", args->inputs, "one TensorProto file per graph input, in order");
  run->add_option("--output-dir", args->output_dir, "writes output_0.pb, output_1.pb, ...");
  run->add_option("--format", args->format, "pb (TensorProto) or npy")
      ->check(CLI::IsMember({"pb", "npy"}));
  run->add_option("--bench", args->bench, "run N more times; print min and median");
  run->add_option("--dim", args->dims, "bind a symbolic input dim: name=N (when no --inputs)");
  run->add_option("--threads", args->threads, "worker threads (default: OPSNN_NUM_THREADS or all)");
  run->callback([args] { run_model(*args); });

  auto iargs = std::make_shared<RunArgs>();
  CLI::App* info = app.add_subcommand("info", "Print a model's nodes, kernels and planned memory");
  info->add_option("model", iargs->model, "model.onnx")->required();
  info->add_option("--inputs", iargs->inputs, "input files fixing the shapes");
  info->add_option("--dim", iargs->dims, "bind a symbolic input dim: name=N");
  info->add_flag("--graph", iargs->print_graph, "also print the imported graph");
  info->callback([iargs] { info_model(*iargs); });

  CLI::App* list =
      app.add_subcommand("onnx-ops", "List the ONNX op types the importer maps, with opsets");
  list->callback([] {
    for (const std::string& s : onnx::supported_ops()) std::printf("%s\n", s.c_str());
  });
}

}  // namespace opsnn::cli
