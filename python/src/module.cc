// ops_nn._core: the bindings of the ops-nn library (no logic of its own;
// the Python side generates ops_nn.functional from the registry).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "attrs.h"
#include "calls.h"
#include "cases.h"
#include "custom.h"
#include "opsnn/bench.h"
#include "opsnn/check.h"
#include "opsnn/listing.h"
#include "opsnn/opsnn.h"
#include "opsnn/plugin.h"
#include "packed.h"
#include "session.h"
#include "tensors.h"
#include "timing.h"

namespace nb = nanobind;
using namespace ops_nn;

namespace {

nb::dict schema_dict(const opsnn::OpSchema& s) {
  nb::dict d;
  d["name"] = s.name;
  d["family"] = s.family;
  d["doc"] = s.doc;
  nb::list ins, outs, attrs, dtypes;
  for (const opsnn::ArgSpec& a : s.inputs)
    ins.append(nb::make_tuple(a.name, a.doc, a.optional, a.variadic));
  for (const opsnn::ArgSpec& a : s.outputs)
    outs.append(nb::make_tuple(a.name, a.doc, a.optional, a.variadic));
  for (const opsnn::AttrSpec& a : s.attrs)
    attrs.append(nb::make_tuple(a.name, opsnn::attr_type_name(a.type),
                                a.default_value ? attr_to_py(*a.default_value) : nb::none(),
                                a.default_value.has_value(), a.doc));
  for (opsnn::DType t : s.dtypes) dtypes.append(opsnn::dtype_name(t));
  d["inputs"] = ins;
  d["outputs"] = outs;
  d["attrs"] = attrs;
  d["dtypes"] = dtypes;
  return d;
}

nb::list ops_list() {
  nb::list r;
  for (const opsnn::OpListing& l : opsnn::list_ops()) {
    nb::dict o, picks;
    o["name"] = l.name;
    o["family"] = l.family;
    o["doc"] = l.doc;
    o["dtypes"] = l.dtypes;
    o["inputs"] = l.inputs;
    o["outputs"] = l.outputs;
    nb::list attrs;
    for (const auto& a : l.attributes) {
      nb::dict ad;
      ad["name"] = a.name;
      ad["type"] = a.type;
      ad["doc"] = a.doc;
      attrs.append(ad);
    }
    o["attributes"] = attrs;
    o["kernels"] = l.kernels;
    for (const auto& [dt, k] : l.dispatch) picks[dt.c_str()] = k;
    o["dispatch"] = picks;
    r.append(o);
  }
  return r;
}

nb::list check(const std::string& op, nb::handle dtype, const std::string& kernel, bool determinism,
               uint64_t seed) {
  opsnn::CheckOptions opt;
  opt.dtype = dtype_from_py(dtype);
  opt.kernel = kernel;
  opt.determinism = determinism;
  opt.seed = seed;
  std::vector<opsnn::CaseResult> rs;
  {
    nb::gil_scoped_release release;  // Python references re-acquire it
    rs = opsnn::check_op(op, opt);
  }
  nb::list l;
  for (const opsnn::CaseResult& r : rs) {
    nb::dict d;
    d["op"] = r.op;
    d["case"] = r.case_name;
    d["kernel"] = r.kernel;
    d["dtype"] = opsnn::dtype_name(r.dtype);
    d["max_abs_err"] = r.max_abs_err;
    d["max_rel_err"] = r.max_rel_err;
    d["worst_ratio"] = r.worst_ratio;
    d["passed"] = r.passed;
    d["declined"] = r.declined;
    d["message"] = r.message;
    l.append(d);
  }
  return l;
}

nb::dict bench_dict(const opsnn::BenchResult& r) {
  nb::dict d;
  d["op"] = r.op;
  d["case"] = r.kase;
  d["dtype"] = opsnn::dtype_name(r.dtype);
  d["kernel"] = r.kernel;
  d["isa"] = r.isa;
  d["threads"] = r.threads;
  d["min_ms"] = r.timing.min_ms;
  d["median_ms"] = r.timing.median_ms;
  d["repeats"] = r.timing.repeats;
  d["bytes"] = r.bytes;
  d["flops"] = r.flops;
  d["gbps"] = r.gbps;
  d["gflops"] = r.gflops;
  d["limit"] = r.limit;
  d["limit_kind"] = r.limit_kind;
  d["limit_fraction"] = r.limit_fraction;
  nb::list consts;
  for (const std::string& c : r.constants) consts.append(c);
  d["constants"] = consts;
  return d;
}

nb::dict bench(const std::string& op, const std::string& kase, nb::handle dtype, int threads) {
  const opsnn::DType t = dtype_from_py(dtype);
  opsnn::BenchResult r;
  {
    nb::gil_scoped_release release;
    r = opsnn::bench_op(op, kase, t, threads);
  }
  return bench_dict(r);
}

nb::list bench_cases(const std::string& op, const std::vector<std::string>& kases, nb::handle dtype,
                     int threads) {
  const opsnn::DType t = dtype_from_py(dtype);
  std::vector<opsnn::BenchResult> rs;
  {
    nb::gil_scoped_release release;
    rs = opsnn::bench_op_cases(op, kases, t, threads);
  }
  nb::list l;
  for (const opsnn::BenchResult& r : rs) l.append(bench_dict(r));
  return l;
}

nb::dict cpu_info_dict() {
  const opsnn::CpuInfo& c = opsnn::cpu_info();
  nb::dict d;
  d["vendor"] = c.vendor;
  d["brand"] = c.brand;
  d["best_isa"] = opsnn::isa_name(c.best_isa());
  d["active_isa"] = opsnn::isa_name(opsnn::active_isa());
  d["avx2"] = c.avx2;
  d["fma"] = c.fma;
  d["f16c"] = c.f16c;
  d["avx512f"] = c.avx512f;
  d["avx512bw"] = c.avx512bw;
  d["avx512vl"] = c.avx512vl;
  d["avx512dq"] = c.avx512dq;
  d["avx512_bf16"] = c.avx512_bf16;
  d["avx512_vnni"] = c.avx512_vnni;
  d["avx_vnni"] = c.avx_vnni;
  d["amx_bf16"] = c.amx_bf16;
  d["l1d_bytes"] = c.l1d_bytes;
  d["prefetch_t1_fills_l1"] = c.prefetch_t1_fills_l1;
  d["l2_bytes"] = c.l2_bytes;
  d["l3_bytes"] = c.l3_bytes;
  d["logical_cores"] = c.logical_cores;
  return d;
}

}  // namespace

NB_MODULE(_core, m) {
  init_tensor_types();
  // Python-registered ops keep their functions alive for the life of the
  // process on purpose (the registry outlives the interpreter), and with them
  // whatever those functions' globals hold: not a leak to warn about at exit.
  nb::set_leak_warnings(false);
  // opsnn::Error -> ops_nn.Error (a ValueError) with the library's message.
  static nb::exception<opsnn::Error> error(m, "Error", PyExc_ValueError);

  m.def("version", [] { return std::string(opsnn::version()); });
  m.def("set_num_threads", &opsnn::set_num_threads, nb::arg("n"),
        "Threads the library's kernels use (n >= 1); results do not depend on it.");
  m.def("num_threads", &opsnn::num_threads);
  m.def(
      "isa", [] { return std::string(opsnn::isa_name(opsnn::active_isa())); },
      "The ISA level dispatch uses now: scalar, avx2 or avx512.");
  m.def(
      "set_isa", [](const std::string& n) { opsnn::set_isa_cap(opsnn::isa_from_name(n)); },
      nb::arg("isa"), "Caps the ISA level (scalar|avx2|avx512), as OPSNN_ISA does.");
  m.def("cpu_info", &cpu_info_dict, "CPU features and cache sizes the library detected.");
  m.def("ops", &ops_list, "Every registered op (the same list as `opsnn ops --json`).");
  m.def("op_names", [] { return opsnn::Registry::global().op_names(); });
  m.def(
      "schema",
      [](const std::string& op) { return schema_dict(opsnn::Registry::global().schema(op)); },
      nb::arg("op"));
  m.def("check", &check, nb::arg("op"), nb::arg("dtype") = "f32", nb::arg("kernel") = "",
        nb::arg("determinism") = false, nb::arg("seed") = 1234);
  m.def("bench", &bench, nb::arg("op"), nb::arg("case") = "", nb::arg("dtype") = "f32",
        nb::arg("threads") = 0);
  m.def("bench_cases", &bench_cases, nb::arg("op"), nb::arg("cases"), nb::arg("dtype") = "f32",
        nb::arg("threads") = 0);
  m.def(
      "load_plugin", [](const std::string& path) { opsnn::load_plugin(path); }, nb::arg("path"));
  m.def("load_plugins_from_env", &opsnn::load_plugins_from_env);
  m.def(
      "_data_ptr",
      [](nb::handle x) {
        return reinterpret_cast<uintptr_t>(to_tensor(x, "_data_ptr", "x").data());
      },
      nb::arg("x"), "The address the library reads x at (for the zero-copy tests).");
  m.def("_last_pointers", &last_pointers,
        "Data addresses of the last call's inputs and outputs as the library saw them "
        "(for the zero-copy tests).");
  bind_calls(m);
  bind_packed(m);
  bind_custom(m);
  bind_cases(m);
  bind_timing(m);
  bind_session(m);
}
