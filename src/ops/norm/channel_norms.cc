// group_norm, group_norm_silu, instance_norm, batch_norm (inference):
// schemas, float64 references, case tables and kernel registration.
// x is [N, C, ...]; statistics (or the given mean/var) are per channel group.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "kernels/act/act.h"
#include "ops/common/bench_keys.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/norm/norm_util.h"
#include "opsnn/error.h"

namespace opsnn::norm {
namespace {

enum class Form { group, group_silu, instance, batch };

struct Geom {
  int64_t n = 0, c = 0, hw = 1, groups = 1;
};

Geom geom(const OpCall& call, Form f) {
  const Shape& s = call.in(0).shape;
  Geom g;
  g.n = s[0];
  g.c = s[1];
  for (size_t d = 2; d < s.size(); ++d) g.hw *= s[d];
  if (f == Form::group || f == Form::group_silu) g.groups = call.attrs.i("num_groups");
  if (f == Form::instance) g.groups = std::max<int64_t>(g.c, 1);
  return g;
}

std::vector<TensorDesc> infer(const OpCall& call, Form f) {
  ops::require_float(call, 0);
  ops::require_rank_at_least(call, 0, 2);
  (void)eps_of(call);
  const Geom g = geom(call, f);
  if (f == Form::group || f == Form::group_silu) {
    if (g.groups < 1)
      call.fail("attribute 'num_groups'", "num_groups >= 1", std::to_string(g.groups));
    if (g.c % g.groups != 0)
      call.fail("attribute 'num_groups'", "a divisor of C = " + std::to_string(g.c),
                std::to_string(g.groups));
  }
  for (size_t i = 1; i < call.inputs.size(); ++i)
    if (call.has_input(i)) require_param(call, i, {g.c}, "[C] of x [N, C, ...]");
  return {TensorDesc(call.in(0).dtype, call.in(0).shape)};
}

void reference(const OpCall& call, Form f, const std::vector<RefTensor>& in,
               std::vector<RefTensor>& out) {
  const Geom g = geom(call, f);
  const double eps = call.attrs.f("eps");
  auto param = [&](size_t i, int64_t c, double dflt) {
    return call.has_input(i) ? in[i].data[static_cast<size_t>(c)] : dflt;
  };
  const std::vector<double>& x = in[0].data;
  std::vector<double>& y = out[0].data;
  if (f == Form::batch) {
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t c = 0; c < g.c; ++c)
        for (int64_t i = 0; i < g.hw; ++i) {
          const size_t k = static_cast<size_t>((n * g.c + c) * g.hw + i);
          y[k] = (x[k] - param(3, c, 0)) / std::sqrt(param(4, c, 1) + eps) * param(1, c, 1) +
                 param(2, c, 0);
        }
    return;
  }
  const int64_t cpg = g.c / g.groups, span = cpg * g.hw;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t gi = 0; gi < g.groups && span > 0; ++gi) {
      const size_t base = static_cast<size_t>((n * g.c + gi * cpg) * g.hw);
      double mean = 0, var = 0;
      for (int64_t i = 0; i < span; ++i) mean += x[base + static_cast<size_t>(i)];
      mean /= static_cast<double>(span);
      for (int64_t i = 0; i < span; ++i)
        var +=
            (x[base + static_cast<size_t>(i)] - mean) * (x[base + static_cast<size_t>(i)] - mean);
      const double rstd = 1 / std::sqrt(var / static_cast<double>(span) + eps);
      for (int64_t i = 0; i < span; ++i) {
        const int64_t c = gi * cpg + i / g.hw;
        double v =
            (x[base + static_cast<size_t>(i)] - mean) * rstd * param(1, c, 1) + param(2, c, 0);
        if (f == Form::group_silu) v = act::silu_ref(v);
        y[base + static_cast<size_t>(i)] = v;
      }
    }
}

std::vector<CheckCase> cases(Form f, DType t) {
  const bool grouped = f == Form::group || f == Form::group_silu;
  std::vector<CheckCase> cs;
  std::vector<ValueRange> ranges = {{-3, 3}, {-2, 2}, {-2, 2}, {-1, 1}, {0.1, 2}};
  auto add = [&](const std::string& name, const TensorDesc& x, int64_t groups, bool affine,
                 Attrs attrs = {}, double tol = 1, std::vector<ValueRange> rg = {}) {
    const int64_t c = x.shape[1];
    std::vector<TensorDesc> in{x};
    if (f == Form::batch) {
      for (int i = 0; i < 4; ++i) in.push_back(TensorDesc(t, {c}));
    } else if (affine) {
      in.push_back(TensorDesc(t, {c}));
      in.push_back(TensorDesc(t, {c}));
    }
    if (grouped) attrs.set("num_groups", groups);
    cs.push_back({name + (grouped ? " G=" + std::to_string(groups) : ""), in, std::move(attrs),
                  rg.empty() ? ranges : rg, tol});
  };
  add("[1,4,7]", TensorDesc(t, {1, 4, 7}), 2, true);
  add("[2,6,5,5]", TensorDesc(t, {2, 6, 5, 5}), 3, true);
  add("[2,8,1] (hw 1)", TensorDesc(t, {2, 8, 1}), 4, true);
  add("[3,4] (rank 2)", TensorDesc(t, {3, 4}), 2, true);
  add("[1,32,17,17]", TensorDesc(t, {1, 32, 17, 17}), 32, true);
  add("[2,64,33]", TensorDesc(t, {2, 64, 33}), 8, true);
  add("[1,15,16]", TensorDesc(t, {1, 15, 16}), 5, true);
  add("[1,320,16,16] (SD resnet)", TensorDesc(t, {1, 320, 16, 16}), 32, true);
  add("[2,64,1024] (threads split groups)", TensorDesc(t, {2, 64, 1024}), 32, true);
  add("[1,4,3000] (several stats blocks)", TensorDesc(t, {1, 4, 3000}), 2, true);
  add("[1,6,4099]", TensorDesc(t, {1, 6, 4099}), 3, true);
  add("[0,4,3] (N 0)", TensorDesc(t, {0, 4, 3}), 2, true);
  add("[2,4,0] (hw 0)", TensorDesc(t, {2, 4, 0}), 2, true);
  add("[1,1,1]", TensorDesc(t, {1, 1, 1}), 1, true);
  add("eps 0.1 [2,4,9]", TensorDesc(t, {2, 4, 9}), 2, true, {{"eps", 0.1}});
  std::vector<ValueRange> offset = ranges;
  offset[0] = {100, 103};
  add("mean 100 [2,8,500]", TensorDesc(t, {2, 8, 500}), 4, true, {}, 5, offset);
  add("strided[33,17]^T", ops::transposed_desc(t, 33, 17), 17, true);
  if (f != Form::batch) add("no scale/bias [2,6,7]", TensorDesc(t, {2, 6, 7}), 3, false);
  if (grouped) add("[2,6,7] one group", TensorDesc(t, {2, 6, 7}), 1, true);
  return cs;
}

CheckCase bench_case(Form f, const std::string& op, const std::map<std::string, std::string>& kv,
                     DType t) {
  ops::CaseKeys keys(op, kv);
  const int64_t n = keys.i("n", 2), c = keys.i("c", 512), hw = keys.i("hw", 64 * 64);
  const bool grouped = f == Form::group || f == Form::group_silu;
  const int64_t groups = grouped ? keys.i("groups", 32) : 32;
  keys.done();
  CheckCase cc{
      "bench", {TensorDesc(t, {n, c, hw})}, {}, {{-3, 3}, {-2, 2}, {-2, 2}, {-1, 1}, {0.1, 2}}};
  for (int i = 0; i < (f == Form::batch ? 4 : 2); ++i) cc.inputs.push_back(TensorDesc(t, {c}));
  if (f == Form::group || f == Form::group_silu) cc.attrs.set("num_groups", groups);
  return cc;
}

struct ChannelDef {
  const char* name;
  Form form;
  const char* doc;
};

void add_channel_op(Registry& reg, const ChannelDef& d) {
  const Form f = d.form;
  OpSchema s;
  s.name = d.name;
  s.family = "norm";
  s.doc = d.doc;
  if (f == Form::batch)
    s.inputs = {{"x", "[N, C, ...]"},
                {"scale", "[C]"},
                {"bias", "[C]"},
                {"mean", "[C] running mean"},
                {"var", "[C] running variance"}};
  else
    s.inputs = {{"x", "[N, C, ...]"},
                {"scale", "[C] (default 1)", true},
                {"bias", "[C] (default 0)", true}};
  s.outputs = {{"y", "same shape and dtype as x"}};
  if (f == Form::group || f == Form::group_silu)
    s.attrs.push_back(
        {"num_groups", AttrType::i64, std::nullopt, "groups of C / num_groups channels"});
  s.attrs.push_back({"eps", AttrType::f64, 1e-5, "added to the variance"});
  set_norm_schema(s, f, infer, reference, cases, bench_case);
  reg.add_op(std::move(s));

  ops::add_isa_kernels(reg, d.name, isa_fns(), [f](const Fns& fns, Isa) {
    return simple_kernel(
        [f, fn = fns.channels](const OpCall& call, const Tensor* in, Tensor* out, void* ws) {
          const Geom g = geom(call, f);
          float* gamma = static_cast<float*>(ws);
          float* beta = gamma + floats_bytes(g.c) / sizeof(float);
          if (call.has_input(1))
            to_f32(in[1], gamma);
          else
            std::fill(gamma, gamma + g.c, 1.0f);
          if (call.has_input(2))
            to_f32(in[2], beta);
          else
            std::fill(beta, beta + g.c, 0.0f);
          const float eps = static_cast<float>(call.attrs.f("eps"));
          ChannelArgs a;
          a.t = in[0].dtype();
          a.x = in[0].data();
          a.y = out[0].data();
          a.n = g.n;
          a.c = g.c;
          a.hw = g.hw;
          a.groups = g.groups;
          a.gamma = gamma;
          a.beta = beta;
          a.eps = eps;
          a.stats = f != Form::batch;
          a.silu = f == Form::group_silu;
          if (f == Form::batch) {
            float* mean = beta + floats_bytes(g.c) / sizeof(float);
            float* var = mean + floats_bytes(g.c) / sizeof(float);
            to_f32(in[3], mean);
            to_f32(in[4], var);
            // Fold scale and var: y = (x - mean) * a + bias. Folding the mean
            // into the bias as well would turn an infinite scale into inf - inf.
            for (int64_t c = 0; c < g.c; ++c)
              gamma[c] = static_cast<float>(static_cast<double>(gamma[c]) /
                                            std::sqrt(static_cast<double>(var[c]) + eps));
            a.mean = mean;
          }
          fn(a);
        },
        nullptr,
        [f](const OpCall& call) {
          return (f == Form::batch ? 4 : 2) * floats_bytes(geom(call, f).c);
        });
  });
}

}  // namespace

void register_channel_norms(Registry& r) {
  const ChannelDef defs[] = {
      {"group_norm", Form::group,
       "(x - mean) / sqrt(var + eps) * scale[c] + bias[c], stats per (n, group)"},
      {"group_norm_silu", Form::group_silu, "silu(group_norm(x)) (SD UNet resnet blocks)"},
      {"instance_norm", Form::instance, "group_norm with one group per channel"},
      {"batch_norm", Form::batch,
       "inference: (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]"},
  };
  for (const ChannelDef& d : defs) add_channel_op(r, d);
}

}  // namespace opsnn::norm
