// Plan creation (shape binding, folding, op creation, memory planning) and
// the executor's run loop.
#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

#include "graph/memory_plan.h"
#include "graph/passes/fuse_group_norm.h"
#include "graph/rules.h"
#include "opsnn/error.h"
#include "opsnn/graph.h"
#include "opsnn/memory.h"

namespace opsnn::graph {

struct Plan::Impl {
  struct Step {
    Op op;
    std::vector<Tensor> ins, outs;  // persistent: bound into the arena once
    size_t ws_offset = 0, ws_bytes = 0;
  };
  struct Binding {  // a graph input's uses: (step, input slot)
    std::vector<std::pair<size_t, size_t>> slots;
  };
  struct OutputSource {
    Tensor tensor;   // arena view or constant
    int input = -1;  // or a graph input index
  };
  std::vector<TensorDesc> in_descs, out_descs;
  std::vector<Step> steps;
  std::vector<Binding> bindings;
  std::vector<OutputSource> out_src;
  std::vector<PlanStep> info;
  std::vector<int> pinned;            // graph inputs fixed to planned values
  std::vector<Tensor> pinned_values;  // per graph input (defined when pinned)
  MemoryStats mem;
  std::unique_ptr<std::byte, void (*)(void*)> arena{nullptr, aligned_free};
};

Plan::Plan() = default;
Plan::~Plan() = default;
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;

namespace {

// Per value, what planning knows about it.
struct ValueState {
  TensorDesc desc;
  bool known = false;
  Tensor constant;  // defined when constant (initializer or folded)
  int input = -1;   // graph input index
  int root = -1;    // arena buffer (after aliasing)
};

std::vector<int64_t> tensor_ints(const Tensor& t) {
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.dtype() == DType::i64)
      r[i] = t.data_as<int64_t>()[i];
    else if (t.dtype() == DType::i32)
      r[i] = t.data_as<int32_t>()[i];
    else
      r[i] = static_cast<int64_t>(t.flat_get(i));
  }
  return r;
}

// Binds the graph inputs' declared shapes (symbols included) to `descs`.
void bind_inputs(const Graph& g, const std::vector<TensorDesc>& descs) {
  if (descs.size() != g.inputs().size())
    throw Error("plan", "inputs", std::to_string(g.inputs().size()) + " input descriptions",
                std::to_string(descs.size()));
  std::map<std::string, int64_t> symbols;
  for (size_t i = 0; i < descs.size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    const std::string arg = "input '" + v.name + "'";
    if (descs[i].dtype != v.dtype)
      throw Error("plan", arg, std::string("dtype ") + dtype_name(v.dtype),
                  dtype_name(descs[i].dtype));
    if (!descs[i].is_contiguous()) throw Error("plan", arg, "a contiguous tensor", descs[i].str());
    if (!v.has_shape) continue;
    if (v.shape.size() != descs[i].shape.size())
      throw Error("plan", arg, "rank " + std::to_string(v.shape.size()), descs[i].str());
    for (size_t d = 0; d < v.shape.size(); ++d) {
      const int64_t got = descs[i].shape[d];
      if (got < 0) throw Error("plan", arg, "non-negative dims", descs[i].str());
      if (!v.shape[d].is_symbolic()) {
        if (v.shape[d].size != got)
          throw Error("plan", arg + " dim " + std::to_string(d), std::to_string(v.shape[d].size),
                      std::to_string(got));
      } else if (!v.shape[d].symbol.empty()) {
        auto [it, fresh] = symbols.emplace(v.shape[d].symbol, got);
        if (!fresh && it->second != got)
          throw Error("plan", arg + " dim '" + v.shape[d].symbol + "'",
                      std::to_string(it->second) + " (as bound by an earlier input)",
                      std::to_string(got));
      }
    }
  }
}

Attrs resolve_attrs(const Node& n, const std::vector<ValueState>& st, const Graph& g) {
  Attrs a = n.attrs;
  for (const AttrInput& ai : n.attr_inputs) {
    const ValueState& s = st[ai.value];
    if (ai.kind == AttrInput::Kind::dtype) {
      if (!s.known)
        throw Error(n.name, "input '" + g.value(ai.value).name + "'", "a value with a known dtype",
                    "none");
      a.set(ai.attr, std::string(dtype_name(s.desc.dtype)));
      continue;
    }
    if (!s.constant.defined() || !s.known)
      throw Error(n.name, "attribute '" + ai.attr + "' from input '" + g.value(ai.value).name + "'",
                  "a value known when the plan is made",
                  "a value computed from the graph inputs' data");
    const Tensor& t = s.constant;
    switch (ai.kind) {
      case AttrInput::Kind::ints:
        a.set(ai.attr, tensor_ints(t));
        break;
      case AttrInput::Kind::i64:
        if (t.numel() != 1)
          throw Error(n.name, "input '" + g.value(ai.value).name + "'", "one element",
                      t.desc().str());
        a.set(ai.attr, tensor_ints(t)[0]);
        break;
      case AttrInput::Kind::dtype:
        break;
      case AttrInput::Kind::f64:
        if (t.numel() != 1)
          throw Error(n.name, "input '" + g.value(ai.value).name + "'", "one element",
                      t.desc().str());
        a.set(ai.attr, t.flat_get(0));
        break;
      case AttrInput::Kind::f64s: {
        std::vector<double> v(static_cast<size_t>(t.numel()));
        for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.flat_get(i);
        a.set(ai.attr, std::move(v));
        break;
      }
    }
  }
  return a;
}

// Graph inputs whose data feeds a plan-time attribute (through any chain of
// nodes, but not through ops folded from shapes alone).
std::vector<int> inputs_needed_at_plan_time(const Graph& g) {
  std::vector<bool> seen(g.values().size(), false);
  std::vector<ValueId> stack;
  for (const Node& n : g.nodes())
    for (const AttrInput& a : n.attr_inputs)
      if (a.kind != AttrInput::Kind::dtype) stack.push_back(a.value);
  std::vector<int> result;
  while (!stack.empty()) {
    const ValueId v = stack.back();
    stack.pop_back();
    if (v == kNoValue || seen[v]) continue;
    seen[v] = true;
    const Value& val = g.values()[v];
    if (val.is_constant) continue;
    if (val.producer < 0) {
      const auto& ins = g.inputs();
      result.push_back(static_cast<int>(std::find(ins.begin(), ins.end(), v) - ins.begin()));
      continue;
    }
    const Node& n = g.nodes()[val.producer];
    if (rules::folds_from_shapes(n.op)) continue;
    for (ValueId u : n.inputs) stack.push_back(u);
    for (const AttrInput& a : n.attr_inputs)
      if (a.kind != AttrInput::Kind::dtype) stack.push_back(a.value);
  }
  std::sort(result.begin(), result.end());
  return result;
}

// Shape inference of one node (its op's own rules): sets its outputs'
// descriptions, and their data when the node folds (all inputs constant, or
// an op folded from shapes alone). Returns whether it folded.
bool infer_node(const Graph& g, const Node& n, std::vector<ValueState>& st,
                std::vector<TensorDesc>& descs, Attrs& attrs) {
  bool all_const = true;
  for (ValueId v : n.inputs) {
    if (v == kNoValue) {
      descs.push_back(TensorDesc::none());
      continue;
    }
    if (!st[v].known)
      throw Error(n.name, "input '" + g.values()[v].name + "'", "a value with a known shape",
                  "none");
    descs.push_back(st[v].desc);
    all_const = all_const && st[v].constant.defined();
  }
  attrs = resolve_attrs(n, st, g);
  const OpSchema& schema = Registry::global().schema(n.op);
  OpCall call = make_call(schema, descs, attrs);  // validates: errors name the op
  if (call.outputs.size() != n.outputs.size())
    throw Error(n.name, "outputs", std::to_string(call.outputs.size()) + " outputs",
                std::to_string(n.outputs.size()));
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    st[n.outputs[k]].desc = TensorDesc(call.outputs[k].dtype, call.outputs[k].shape);
    st[n.outputs[k]].known = true;
  }
  // A node without inputs (range) is a constant too.
  if (!rules::folds_from_shapes(n.op) && !all_const) return false;
  std::vector<Tensor> outs;
  if (rules::folds_from_shapes(n.op)) {
    outs = rules::fold_from_shapes(n.op, descs, attrs);
  } else {
    std::vector<Tensor> ins;
    for (ValueId v : n.inputs) ins.push_back(v == kNoValue ? Tensor() : st[v].constant);
    outs = Op::create(n.op, descs, attrs)(ins);
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) st[n.outputs[k]].constant = outs[k];
  return true;
}

}  // namespace

Plan Plan::create(const Graph& g, const std::vector<TensorDesc>& input_descs,
                  const PlanOptions& options) {
  g.validate();
  bind_inputs(g, input_descs);
  Plan plan;
  plan.impl_ = std::make_unique<Impl>();
  Impl& P = *plan.impl_;
  P.in_descs = input_descs;

  const auto& values = g.values();
  std::vector<ValueState> st(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].is_constant) {
      st[i].constant = values[i].data;
      st[i].desc = values[i].data.desc();
      st[i].known = true;
    }
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    ValueState& s = st[g.inputs()[i]];
    s.desc = TensorDesc(input_descs[i].dtype, input_descs[i].shape);
    s.known = true;
    s.input = static_cast<int>(i);
  }
  P.pinned_values.resize(g.inputs().size());
  if (!options.input_values.empty()) {
    if (options.input_values.size() != g.inputs().size())
      throw Error("plan", "input_values", std::to_string(g.inputs().size()) + " tensors (or none)",
                  std::to_string(options.input_values.size()));
    for (int i : inputs_needed_at_plan_time(g)) {
      const Tensor& t = options.input_values[i];
      if (!t.defined() || t.dtype() != input_descs[i].dtype || t.shape() != input_descs[i].shape)
        throw Error("plan", "input_values " + std::to_string(i), input_descs[i].str(),
                    t.desc().str());
      ValueState& s = st[g.inputs()[i]];
      s.constant = t.clone();
      s.input = -1;
      P.pinned.push_back(i);
      P.pinned_values[i] = s.constant;
    }
  }

  // Fusion passes need every value's shape: a first inference walk, then
  // the plan of the rewritten graph.
  if (options.fuse) {
    std::vector<ValueState> dry = st;
    for (int32_t ni : g.topo_order()) {
      std::vector<TensorDesc> descs;
      Attrs attrs;
      infer_node(g, g.nodes()[ni], dry, descs, attrs);
    }
    std::vector<TensorDesc> descs(dry.size());
    std::vector<Tensor> consts(dry.size());
    for (size_t v = 0; v < dry.size(); ++v) {
      descs[v] = dry[v].desc;
      consts[v] = dry[v].constant;
    }
    Graph fused;
    if (passes::fuse_group_norm(g, descs, consts, fused) > 0) {
      PlanOptions o = options;
      o.fuse = false;
      return create(fused, input_descs, o);
    }
  }

  // Pass 1: fold, view or create each node in topological order.
  enum class Kind { run, view };
  struct Pending {
    const Node* node;
    Kind kind;
    Op op;
    size_t info;
  };
  std::vector<Pending> pend;
  for (int32_t ni : g.topo_order()) {
    const Node& n = g.nodes()[ni];
    std::vector<TensorDesc> descs;
    Attrs attrs;
    PlanStep info{n.name, n.op, "", 0};
    if (infer_node(g, n, st, descs, attrs)) {
      info.kernel = "folded";
      P.info.push_back(info);
      continue;
    }
    const bool view = options.views && rules::is_view(n.op) && n.inputs[0] != kNoValue &&
                      st[n.inputs[0]].input < 0 && !st[n.inputs[0]].constant.defined();
    if (view) {
      info.kernel = "view";
      pend.push_back({&n, Kind::view, Op(), P.info.size()});
    } else {
      // Weights and folded values are constant operands: kernels may pack them now.
      std::vector<TensorDesc> cdescs = descs;
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k] != kNoValue && st[n.inputs[k]].constant.defined())
          cdescs[k] = TensorDesc::constant(st[n.inputs[k]].constant);
      Op op = Op::create(n.op, cdescs, attrs);
      info.kernel = op.kernel_name();
      info.workspace_bytes = op.workspace_bytes();
      pend.push_back({&n, Kind::run, std::move(op), P.info.size()});
    }
    P.info.push_back(info);
  }

  // Pass 2: liveness. Step s = position in `pend`; graph outputs live to the end.
  const int nsteps = static_cast<int>(pend.size());
  std::vector<int> last_use(values.size(), -1);
  for (int s = 0; s < nsteps; ++s)
    for (ValueId v : pend[s].node->inputs)
      if (v != kNoValue) last_use[v] = std::max(last_use[v], s);
  for (ValueId v : g.outputs()) last_use[v] = nsteps;

  // Pass 3: buffers, with views and in-place reuse joining their input's buffer.
  std::vector<PlannedBuffer> bufs;
  std::vector<std::vector<ValueId>> members;
  std::vector<int> ws_buf(static_cast<size_t>(nsteps), -1);
  auto new_buffer = [&](ValueId v, int s) {
    st[v].root = static_cast<int>(bufs.size());
    bufs.push_back({static_cast<size_t>(st[v].desc.numel()) * dtype_size(st[v].desc.dtype), s,
                    std::max(s, last_use[v]), 0});
    members.push_back({v});
  };
  auto join = [&](ValueId v, int root) {
    st[v].root = root;
    members[root].push_back(v);
    bufs[root].last = std::max(bufs[root].last, last_use[v]);
  };
  for (int s = 0; s < nsteps; ++s) {
    const Node& n = *pend[s].node;
    if (pend[s].kind == Kind::view) {
      join(n.outputs[0], st[n.inputs[0]].root);
      ++P.mem.views;
      continue;
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const ValueId out = n.outputs[k];
      int reuse = -1;
      if (options.inplace && k == 0 && rules::may_write_over_input(n.op))
        for (ValueId in : n.inputs) {
          if (in == kNoValue || st[in].root < 0) continue;
          if (st[in].desc.dtype != st[out].desc.dtype || st[in].desc.shape != st[out].desc.shape)
            continue;
          const int root = st[in].root;
          bool dies = true;  // no member of the buffer is needed after this step
          for (ValueId m : members[root]) dies = dies && last_use[m] <= s;
          if (dies) {
            reuse = root;
            break;
          }
        }
      if (reuse >= 0) {
        join(out, reuse);
        ++P.mem.inplace_reuses;
      } else {
        new_buffer(out, s);
      }
    }
    if (pend[s].op.workspace_bytes()) {
      ws_buf[s] = static_cast<int>(bufs.size());
      bufs.push_back({pend[s].op.workspace_bytes(), s, s, 0});
      members.emplace_back();
    }
  }
  const OffsetPlan offsets = plan_offsets(bufs);
  P.mem.arena_bytes = offsets.arena_bytes;
  P.mem.lower_bound_bytes = offsets.lower_bound;
  P.mem.buffers = static_cast<int64_t>(bufs.size());
  for (const ValueState& s : st)
    if (s.constant.defined()) P.mem.constant_bytes += s.constant.nbytes();
  if (P.mem.arena_bytes) {
    P.arena.reset(static_cast<std::byte*>(aligned_alloc_bytes(P.mem.arena_bytes)));
    std::memset(P.arena.get(), 0, P.mem.arena_bytes);  // touch every page now, not in run
  }

  // Pass 4: bind every step's tensors into the arena once.
  auto tensor_of = [&](ValueId v) -> Tensor {
    const ValueState& s = st[v];
    if (s.constant.defined()) return s.constant;
    if (s.root >= 0)
      return Tensor::wrap(P.arena.get() + bufs[s.root].offset, s.desc.shape, s.desc.dtype);
    // A graph input: a placeholder of the right shape, rebound at every run.
    static int64_t placeholder[8];
    return Tensor::wrap(placeholder, s.desc.shape, s.desc.dtype);
  };
  P.bindings.resize(g.inputs().size());
  for (int s = 0; s < nsteps; ++s) {
    if (pend[s].kind != Kind::run) continue;
    const Node& n = *pend[s].node;
    Impl::Step step;
    step.op = std::move(pend[s].op);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const ValueId v = n.inputs[k];
      if (v == kNoValue) {
        step.ins.emplace_back();
        continue;
      }
      step.ins.push_back(tensor_of(v));
      if (st[v].input >= 0 && !st[v].constant.defined())
        P.bindings[st[v].input].slots.emplace_back(P.steps.size(), k);
    }
    // Absent trailing optional inputs (conv's residual) as empty tensors: Op::run
    // then hands the array to the kernel as it is instead of copying it.
    while (step.ins.size() < step.op.call().inputs.size()) step.ins.emplace_back();
    for (ValueId v : n.outputs) step.outs.push_back(tensor_of(v));
    step.ws_offset = ws_buf[s] >= 0 ? bufs[ws_buf[s]].offset : 0;
    step.ws_bytes = step.op.workspace_bytes();
    P.steps.push_back(std::move(step));
  }
  for (ValueId v : g.outputs()) {
    Impl::OutputSource src;
    if (st[v].input >= 0 && !st[v].constant.defined())
      src.input = st[v].input;
    else
      src.tensor = tensor_of(v);
    P.out_src.push_back(std::move(src));
    P.out_descs.push_back(st[v].desc);
  }
  // Warm the tensors' cached strides so run() computes none.
  for (Impl::Step& step : P.steps) {
    for (Tensor& t : step.ins) (void)t.strides();
    for (Tensor& t : step.outs) (void)t.strides();
  }
  return plan;
}

const std::vector<int>& Plan::pinned_inputs() const { return impl_->pinned; }
const std::vector<TensorDesc>& Plan::input_descs() const { return impl_->in_descs; }
const std::vector<TensorDesc>& Plan::output_descs() const { return impl_->out_descs; }
const MemoryStats& Plan::memory() const { return impl_->mem; }
const std::vector<PlanStep>& Plan::steps() const { return impl_->info; }

void Plan::run(std::span<const Tensor> inputs, std::span<Tensor> outputs) {
  Impl& P = *impl_;
  if (inputs.size() != P.in_descs.size())
    throw Error("plan", "inputs", std::to_string(P.in_descs.size()) + " tensors",
                std::to_string(inputs.size()));
  if (outputs.size() != P.out_descs.size())
    throw Error("plan", "outputs", std::to_string(P.out_descs.size()) + " tensors",
                std::to_string(outputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (t.dtype() != P.in_descs[i].dtype || t.shape() != P.in_descs[i].shape ||
        !t.is_contiguous() || (t.numel() > 0 && t.data() == nullptr))
      throw Error("plan", "input " + std::to_string(i), "contiguous " + P.in_descs[i].str(),
                  t.desc().str());
    // The caller's tensor computes its strides once (they are cached in it),
    // so the copies below carry them and no kernel computes them in run.
    (void)t.strides();
    for (auto [s, k] : P.bindings[i].slots) P.steps[s].ins[k] = t;
    const Tensor& pin = P.pinned_values[i];
    if (pin.defined() && pin.nbytes() && std::memcmp(pin.data(), t.data(), pin.nbytes()) != 0)
      throw Error("plan", "input " + std::to_string(i),
                  "the values the plan was made for (it decides a shape or attribute)",
                  "other values: make a new plan for them");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    if (t.dtype() != P.out_descs[i].dtype || t.shape() != P.out_descs[i].shape ||
        (t.numel() > 0 && t.data() == nullptr))
      throw Error("plan", "output " + std::to_string(i), P.out_descs[i].str(), t.desc().str());
  }
  std::byte* arena = P.arena.get();
  for (Impl::Step& s : P.steps)
    s.op.run(s.ins, s.outs, {s.ws_bytes ? arena + s.ws_offset : nullptr, s.ws_bytes});
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Impl::OutputSource& src = P.out_src[i];
    copy_into(src.input >= 0 ? inputs[src.input] : src.tensor, outputs[i]);
  }
}

std::vector<Tensor> Plan::operator()(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outs;
  for (const TensorDesc& d : impl_->out_descs) outs.push_back(Tensor::empty(d.shape, d.dtype));
  run(inputs, outs);
  return outs;
}

std::string Plan::str() const {
  const Impl& P = *impl_;
  std::ostringstream os;
  for (const PlanStep& s : P.info) {
    os << "  " << s.node << "  " << s.op << "  " << s.kernel;
    if (s.workspace_bytes) os << "  workspace " << s.workspace_bytes << " B";
    os << "\n";
  }
  os << "arena peak " << P.mem.arena_bytes << " B, lower bound " << P.mem.lower_bound_bytes << " B";
  if (P.mem.lower_bound_bytes)
    os << " ("
       << static_cast<double>(P.mem.arena_bytes) / static_cast<double>(P.mem.lower_bound_bytes)
       << "x)";
  os << "; " << P.mem.buffers << " buffers, " << P.mem.inplace_reuses << " in place, "
     << P.mem.views << " views; constants " << P.mem.constant_bytes << " B\n";
  return os.str();
}

}  // namespace opsnn::graph
