#include "graph/passes/fuse_group_norm.h"

#include <string>

namespace opsnn::graph::passes {
namespace {

struct Fusion {
  ValueId x = kNoValue, result = kNoValue;
  int64_t groups = 1;
  double eps = 1e-5;
  bool silu = false;
  std::vector<double> scale, bias;  // folded; empty: keep the node's own inputs
  ValueId scale_v = kNoValue, bias_v = kNoValue;
  std::vector<int32_t> nodes;  // replaced; the last one is where the fused node goes
};

class Matcher {
 public:
  Matcher(const Graph& g, const std::vector<TensorDesc>& descs, const std::vector<Tensor>& consts)
      : g_(g), d_(descs), c_(consts), users_(g.values().size()) {
    const auto& nodes = g.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (ValueId v : nodes[i].inputs)
        if (v != kNoValue) users_[v].push_back(static_cast<int32_t>(i));
      for (const AttrInput& a : nodes[i].attr_inputs)
        if (a.value != kNoValue) users_[a.value].push_back(static_cast<int32_t>(i));
    }
    for (ValueId v : g.outputs()) users_[v].push_back(-1);  // a graph output: kept
  }

  bool match(int32_t inorm, Fusion& f) const {
    const Node& in = g_.nodes()[inorm];
    if (in.op == "group_norm") return match_group_norm_silu(inorm, f);
    if (in.op != "instance_norm" || in.inputs.size() < 3) return false;
    const Node* r1 = producer(in.inputs[0], "reshape");
    const Tensor& s = constant(in.inputs[1]);
    const Tensor& z = constant(in.inputs[2]);
    if (!r1 || !s.defined() || !z.defined() || !only_user(in.inputs[0], inorm)) return false;
    f.x = r1->inputs[0];
    const Shape& xs = d_[f.x].shape;
    const Shape& gs = d_[in.inputs[0]].shape;
    if (xs.size() < 2 || gs.size() != 3 || gs[0] != xs[0] || !is_float(d_[f.x].dtype)) return false;
    const int64_t ch = xs[1];
    f.groups = gs[1];
    if (f.groups < 1 || ch % f.groups != 0 || s.numel() != f.groups || z.numel() != f.groups)
      return false;
    const int32_t r2 = sole_user(in.outputs[0]);
    if (r2 < 0 || g_.nodes()[r2].op != "reshape" || d_[g_.nodes()[r2].outputs[0]].shape != xs)
      return false;
    f.nodes = {g_.values()[in.inputs[0]].producer, inorm, r2};
    f.eps = in.attrs.has("eps") ? in.attrs.f("eps") : 1e-5;
    for (int64_t c = 0; c < ch; ++c) {
      f.scale.push_back(s.flat_get(c / (ch / f.groups)));
      f.bias.push_back(z.flat_get(c / (ch / f.groups)));
    }
    f.result = g_.nodes()[r2].outputs[0];
    std::vector<double> w;
    if (int32_t m = affine_user(f.result, "mul", xs, w); m >= 0) {
      for (int64_t c = 0; c < ch; ++c) {
        f.scale[c] *= w[c];
        f.bias[c] *= w[c];
      }
      take(f, m);
      if (int32_t a = affine_user(f.result, "add", xs, w); a >= 0) {
        for (int64_t c = 0; c < ch; ++c) f.bias[c] += w[c];
        take(f, a);
      }
    }
    match_silu(f);
    return true;
  }

 private:
  const Node* producer(ValueId v, const char* op) const {
    const int32_t p = g_.values()[v].producer;
    return p >= 0 && g_.nodes()[p].op == op ? &g_.nodes()[p] : nullptr;
  }
  const Tensor& constant(ValueId v) const {
    static const Tensor none;
    return v == kNoValue ? none : c_[v];
  }
  bool only_user(ValueId v, int32_t node) const {
    return users_[v].size() == 1 && users_[v][0] == node;
  }
  int32_t sole_user(ValueId v) const { return users_[v].size() == 1 ? users_[v][0] : -1; }
  void take(Fusion& f, int32_t node) const {
    f.nodes.push_back(node);
    f.result = g_.nodes()[node].outputs[0];
  }

  // The sole user of v when it is `op`(v, t) or `op`(t, v) with t constant
  // [C, 1, ...] against x [N, C, ...] (or with x's rank): t's values in `w`.
  int32_t affine_user(ValueId v, const char* op, const Shape& xs, std::vector<double>& w) const {
    const int32_t u = sole_user(v);
    if (u < 0 || g_.nodes()[u].op != op) return -1;
    const Node& n = g_.nodes()[u];
    const ValueId other = n.inputs[0] == v ? n.inputs[1] : n.inputs[0];
    const Tensor& t = constant(other);
    if (!t.defined() || t.numel() != xs[1] || t.rank() > static_cast<int64_t>(xs.size()) ||
        d_[n.outputs[0]].shape != xs)
      return -1;
    const size_t off = xs.size() - static_cast<size_t>(t.rank());
    if (off > 1) return -1;
    for (size_t k = 0; k < t.shape().size(); ++k)
      if (t.shape()[k] != (k + off == 1 ? xs[1] : 1)) return -1;
    w.resize(static_cast<size_t>(xs[1]));
    for (int64_t c = 0; c < xs[1]; ++c) w[static_cast<size_t>(c)] = t.flat_get(c);
    return u;
  }

  // An existing group_norm followed by SiLU.
  bool match_group_norm_silu(int32_t gn, Fusion& f) const {
    const Node& n = g_.nodes()[gn];
    f.x = n.inputs[0];
    f.scale_v = n.inputs.size() > 1 ? n.inputs[1] : kNoValue;
    f.bias_v = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
    f.groups = n.attrs.has("num_groups") ? n.attrs.i("num_groups") : 1;
    f.eps = n.attrs.has("eps") ? n.attrs.f("eps") : 1e-5;
    f.result = n.outputs[0];
    f.nodes = {gn};
    match_silu(f);
    return f.silu;
  }

  // result * sigmoid(result), result used by exactly those two nodes.
  void match_silu(Fusion& f) const {
    const auto& us = users_[f.result];
    if (us.size() != 2 || us[0] < 0 || us[1] < 0) return;
    for (int k = 0; k < 2; ++k) {
      const Node& sg = g_.nodes()[us[k]];
      const Node& m = g_.nodes()[us[1 - k]];
      if (sg.op != "sigmoid" || m.op != "mul") continue;
      const ValueId s = sg.outputs[0];
      const bool pair = (m.inputs[0] == f.result && m.inputs[1] == s) ||
                        (m.inputs[1] == f.result && m.inputs[0] == s);
      if (!pair || !only_user(s, us[1 - k])) continue;
      f.nodes.push_back(us[k]);
      take(f, us[1 - k]);
      f.silu = true;
      return;
    }
  }

  const Graph& g_;
  const std::vector<TensorDesc>& d_;
  const std::vector<Tensor>& c_;
  std::vector<std::vector<int32_t>> users_;
};

Tensor f32_tensor(const std::vector<double>& v) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, DType::f32);
  for (size_t i = 0; i < v.size(); ++i) t.data_as<float>()[i] = static_cast<float>(v[i]);
  return t;
}

}  // namespace

int fuse_group_norm(const Graph& g, const std::vector<TensorDesc>& descs,
                    const std::vector<Tensor>& constants, Graph& out) {
  const Matcher m(g, descs, constants);
  const auto& nodes = g.nodes();
  std::vector<int> role(nodes.size(), -1);  // fusion index of a replaced node
  std::vector<Fusion> fusions;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Fusion f;
    if (role[i] >= 0 || !m.match(static_cast<int32_t>(i), f)) continue;
    bool free = true;
    for (int32_t n : f.nodes) free = free && role[n] < 0;
    if (!free) continue;
    for (int32_t n : f.nodes) role[n] = static_cast<int>(fusions.size());
    fusions.push_back(std::move(f));
  }
  if (fusions.empty()) return 0;

  const auto& values = g.values();
  std::vector<ValueId> map(values.size(), kNoValue);
  for (ValueId v : g.inputs()) map[v] = out.input(values[v].name, values[v].dtype, values[v].shape);
  auto mapped = [&](ValueId v) {  // constants are copied when first used
    if (v != kNoValue && map[v] == kNoValue && values[v].is_constant)
      map[v] = out.constant(values[v].name, values[v].data);
    return v == kNoValue ? kNoValue : map[v];
  };
  for (int32_t ni : g.topo_order()) {
    const Node& n = nodes[ni];
    if (role[ni] >= 0) {
      const Fusion& f = fusions[role[ni]];
      if (f.nodes.back() != ni) continue;  // the fused node goes where the pattern ends
      const std::string base = n.name + "/fused" + std::to_string(role[ni]);
      const bool folded = !f.scale.empty();
      const ValueId sc =
          folded ? out.constant(base + "/scale", f32_tensor(f.scale)) : mapped(f.scale_v);
      const ValueId bc =
          folded ? out.constant(base + "/bias", f32_tensor(f.bias)) : mapped(f.bias_v);
      map[f.result] = out.node(f.silu ? "group_norm_silu" : "group_norm", {mapped(f.x), sc, bc},
                               {{"num_groups", f.groups}, {"eps", f.eps}}, n.name, 1,
                               {values[f.result].name})[0];
      continue;
    }
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs) ins.push_back(mapped(v));
    std::vector<AttrInput> ai = n.attr_inputs;
    for (AttrInput& a : ai) a.value = mapped(a.value);
    std::vector<std::string> names;
    for (ValueId v : n.outputs) names.push_back(values[v].name);
    const auto outs =
        out.node(n.op, ins, n.attrs, n.name, static_cast<int>(n.outputs.size()), names, ai);
    for (size_t k = 0; k < outs.size(); ++k) map[n.outputs[k]] = outs[k];
  }
  for (ValueId v : g.outputs()) out.output(mapped(v));
  return static_cast<int>(fusions.size());
}

}  // namespace opsnn::graph::passes
