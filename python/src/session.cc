#include "session.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph_prune.h"
#include "opsnn/error.h"
#include "opsnn/graph.h"
#include "opsnn/onnx.h"
#include "tensors.h"

namespace ops_nn {
namespace {

using opsnn::Error;
using opsnn::Tensor;
using opsnn::TensorDesc;
namespace graph = opsnn::graph;

constexpr const char* kWho = "session";

// Plan::run rebinds its inputs and works in one arena: one run at a time.
struct PlanSlot {
  graph::Plan plan;
  std::mutex running;
};

// The plans for one set of requested outputs (the model pruned to them).
struct Variant {
  PrunedGraph pruned;
  std::vector<size_t> result_index;  // requested name i -> output of pruned.graph
  bool pinned_known = false;
  std::vector<int> pinned;  // inputs whose values decide the plan (same for every plan)
  std::unordered_map<std::string, std::shared_ptr<PlanSlot>> plans;
};

nb::tuple shape_tuple(const graph::Value& v) {
  nb::list l;
  for (const graph::Dim& d : v.shape) {
    if (!d.is_symbolic())
      l.append(d.size);
    else if (d.symbol.empty() || d.symbol[0] == '?')  // a dim the model leaves unnamed
      l.append(nb::none());
    else
      l.append(d.symbol);
  }
  return nb::tuple(l);
}

// (name, dtype name or None, shape tuple or None).
nb::tuple value_info(const std::string& name, const graph::Value& v) {
  if (!v.has_shape) return nb::make_tuple(name, nb::none(), nb::none());
  return nb::make_tuple(name, opsnn::dtype_name(v.dtype), shape_tuple(v));
}

std::string input_names(const graph::Graph& g) {
  std::string s;
  for (graph::ValueId id : g.inputs()) s += (s.empty() ? "" : ", ") + g.value(id).name;
  return s;
}

std::string output_names(const graph::Graph& g) {
  std::string s;
  for (size_t i = 0; i < g.outputs().size(); ++i) s += (i ? ", " : "") + g.output_name(i);
  return s;
}

class Session {
 public:
  Session(const std::string& path, int max_plans) : path_(path), max_plans_(max_plans) {
    if (max_plans < 1) throw Error(kWho, "max_plans", ">= 1", std::to_string(max_plans));
    nb::gil_scoped_release release;
    graph_ = opsnn::onnx::import_model(path);
  }

  nb::list inputs() const {
    nb::list r;
    for (graph::ValueId id : graph_.inputs())
      r.append(value_info(graph_.value(id).name, graph_.value(id)));
    return r;
  }
  nb::list outputs() const {
    nb::list r;
    for (size_t i = 0; i < graph_.outputs().size(); ++i)
      r.append(value_info(graph_.output_name(i), graph_.value(graph_.outputs()[i])));
    return r;
  }
  const std::string& path() const { return path_; }

  // feeds: {input name: tensor}; requested: output names, or None for all.
  nb::dict run(nb::dict feeds, nb::handle requested) {
    // Feeds -> tensors in source-input order (undefined where not fed).
    const size_t n_in = graph_.inputs().size();
    std::vector<Tensor> fed(n_in);
    std::vector<nb::object> keep;
    Kind kind = Kind::numpy;
    int kind_from = -1;
    for (auto [k, x] : feeds) {
      const std::string name = nb::cast<std::string>(nb::str(k));
      const int i = input_index(name);
      if (i < 0)
        throw Error(kWho, "feed '" + name + "'", "a model input (" + input_names(graph_) + ")",
                    "an unknown name");
      nb::object kp;
      fed[i] = checked_feed(i, to_tensor(x, kWho, "feed '" + name + "'", &kp));
      if (kp.is_valid()) keep.push_back(std::move(kp));
      keep.push_back(nb::borrow(x));  // alive while the GIL is released, whatever feeds becomes
      if (kind_from < 0 || i < kind_from) {
        kind_from = i;
        kind = kind_of(x);
      }
    }
    std::vector<std::string> names = requested_names(requested);
    const std::string vkey = join(names);

    std::shared_ptr<PlanSlot> slot;
    Variant* var = nullptr;
    std::vector<Tensor> ins;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      var = &variant(vkey, names);
      std::string missing;
      for (int src : var->pruned.source_inputs) {
        if (!fed[src].defined()) missing += (missing.empty() ? "" : ", ") + input_name(src);
        ins.push_back(fed[src]);
      }
      if (!missing.empty())
        throw Error(kWho, "feeds", "a tensor for every input the outputs need",
                    "none for " + missing);
      check_symbols(ins, *var);
      slot = plan_for(*var, ins);
    }
    std::vector<Tensor> outs;
    for (const TensorDesc& d : slot->plan.output_descs())
      outs.push_back(Tensor::empty(d.shape, d.dtype));
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(slot->running);
      slot->plan.run(ins, outs);
    }
    nb::dict r;
    for (size_t i = 0; i < names.size(); ++i)
      r[names[i].c_str()] = from_tensor(outs[var->result_index[i]], kind);
    return r;
  }

  size_t plans_cached() {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [k, v] : variants_) n += v->plans.size();
    return n;
  }

 private:
  int input_index(const std::string& name) const {
    for (size_t i = 0; i < graph_.inputs().size(); ++i)
      if (graph_.value(graph_.inputs()[i]).name == name) return static_cast<int>(i);
    return -1;
  }
  int output_index(const std::string& name) const {
    for (size_t i = 0; i < graph_.outputs().size(); ++i)
      if (graph_.output_name(i) == name) return static_cast<int>(i);
    return -1;
  }
  const std::string& input_name(int i) const { return graph_.value(graph_.inputs()[i]).name; }

  // dtype, rank and numeric dims as the model declares; strided -> a contiguous copy.
  Tensor checked_feed(int i, Tensor t) const {
    const graph::Value& v = graph_.value(graph_.inputs()[i]);
    const std::string arg = "feed '" + v.name + "'";
    if (t.dtype() != v.dtype)
      throw Error(kWho, arg, std::string("dtype ") + opsnn::dtype_name(v.dtype),
                  opsnn::dtype_name(t.dtype()));
    bool ok = t.rank() == static_cast<int64_t>(v.shape.size());
    for (size_t d = 0; ok && d < v.shape.size(); ++d)
      ok = v.shape[d].is_symbolic() || v.shape[d].size == t.shape()[d];
    if (!ok) throw Error(kWho, arg, "shape " + declared(v), opsnn::shape_str(t.shape()));
    return t.is_contiguous() ? t : t.clone();
  }

  static std::string declared(const graph::Value& v) {
    std::string s = "[";
    for (size_t d = 0; d < v.shape.size(); ++d) s += (d ? ", " : "") + v.shape[d].str();
    return s + "]";
  }

  // A symbol must have one size across the inputs (checked again by the plan).
  void check_symbols(const std::vector<Tensor>& ins, const Variant& var) const {
    std::map<std::string, std::pair<int64_t, std::string>> bound;
    for (size_t i = 0; i < ins.size(); ++i) {
      const graph::Value& v = var.pruned.graph.value(var.pruned.graph.inputs()[i]);
      for (size_t d = 0; d < v.shape.size(); ++d) {
        if (!v.shape[d].is_symbolic() || v.shape[d].symbol.empty()) continue;
        auto [it, fresh] =
            bound.emplace(v.shape[d].symbol, std::make_pair(ins[i].shape()[d], v.name));
        if (!fresh && it->second.first != ins[i].shape()[d])
          throw Error(
              kWho, "feed '" + v.name + "' dim '" + v.shape[d].symbol + "'",
              std::to_string(it->second.first) + " (as in feed '" + it->second.second + "')",
              std::to_string(ins[i].shape()[d]));
      }
    }
  }

  std::vector<std::string> requested_names(nb::handle requested) const {
    std::vector<std::string> names;
    if (requested.is_none()) {
      for (size_t i = 0; i < graph_.outputs().size(); ++i) names.push_back(graph_.output_name(i));
      return names;
    }
    for (nb::handle h : requested) {
      const std::string name = nb::cast<std::string>(nb::str(h));
      if (output_index(name) < 0)
        throw Error(kWho, "output '" + name + "'", "a model output (" + output_names(graph_) + ")",
                    "an unknown name");
      names.push_back(name);
    }
    if (names.empty()) throw Error(kWho, "outputs", "at least one name (or None for all)", "none");
    return names;
  }

  static std::string join(const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += n + '\n';
    return s;
  }

  Variant& variant(const std::string& key, const std::vector<std::string>& names) {
    auto it = variants_.find(key);
    if (it != variants_.end()) return *it->second;
    auto v = std::make_unique<Variant>();
    std::vector<size_t> wanted;  // distinct output indices, in request order
    for (const std::string& n : names) {
      const size_t id = static_cast<size_t>(output_index(n));
      size_t k = 0;
      while (k < wanted.size() && wanted[k] != id) ++k;
      if (k == wanted.size()) wanted.push_back(id);
      v->result_index.push_back(k);
    }
    v->pruned = prune_to_outputs(graph_, wanted);
    return *variants_.emplace(key, std::move(v)).first->second;
  }

  // The plan for these input shapes (and the values of inputs that decide it).
  std::shared_ptr<PlanSlot> plan_for(Variant& var, const std::vector<Tensor>& ins) {
    std::string key;
    for (const Tensor& t : ins)
      key.append(reinterpret_cast<const char*>(t.shape().data()), t.shape().size() * 8)
          .push_back('|');
    for (int p : var.pinned)
      key.append(static_cast<const char*>(ins[p].data()), ins[p].nbytes()).push_back('|');
    auto it = var.plans.find(key);
    if (it != var.plans.end()) return it->second;
    std::vector<TensorDesc> descs;
    for (const Tensor& t : ins) descs.push_back(TensorDesc(t.dtype(), t.shape()));
    graph::PlanOptions opt;
    opt.input_values = ins;
    auto slot = std::make_shared<PlanSlot>();
    slot->plan = graph::Plan::create(var.pruned.graph, descs, opt);
    if (!var.pinned_known) {  // the first plan tells which inputs decide it: key again
      var.pinned = slot->plan.pinned_inputs();
      var.pinned_known = true;
      if (!var.pinned.empty()) {
        for (int p : var.pinned)
          key.append(static_cast<const char*>(ins[p].data()), ins[p].nbytes()).push_back('|');
      }
    }
    // Bounded: each plan holds its own packed weights and arena.
    if (var.plans.size() >= static_cast<size_t>(max_plans_)) var.plans.clear();
    var.plans.emplace(key, slot);
    return slot;
  }

  std::string path_;
  int max_plans_;
  graph::Graph graph_;
  std::mutex mu_;  // variants_ and their plan maps
  std::map<std::string, std::unique_ptr<Variant>> variants_;
};

}  // namespace

void bind_session(nb::module_& m) {
  nb::class_<Session>(m, "Session")
      .def(nb::init<const std::string&, int>(), nb::arg("path"), nb::arg("max_plans"))
      .def("run", &Session::run, nb::arg("feeds"), nb::arg("outputs").none())
      .def_prop_ro("inputs", &Session::inputs)
      .def_prop_ro("outputs", &Session::outputs)
      .def_prop_ro("path", &Session::path)
      .def_prop_ro("plans_cached", &Session::plans_cached);
}

}  // namespace ops_nn
