// The graph layer: builder, printer, plan (folding, views, in-place), the
// memory planner, errors, determinism and allocation-free runs.
#include "opsnn/graph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "graph/memory_plan.h"
#include "opsnn/opsnn.h"
#include "support/alloc_counter.h"

namespace opsnn::graph {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Tensor random(const Shape& s, uint32_t seed, double scale = 1.0) {
  Tensor t = Tensor::empty(s, DType::f32);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data_as<float>()[i] = static_cast<float>(u(rng) * scale);
  return t;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// A decoder-block-like graph: layer_norm, QKV matmul + bias, split heads,
// sdpa-free attention (matmul, scale, causal where, softmax, matmul), an MLP
// with gelu, pow and tanh, residuals.
struct Block {
  Graph g;
  int64_t T = 16, C = 64, H = 4;
};
Block make_block() {
  Block b;
  Graph& g = b.g;
  const int64_t T = b.T, C = b.C, H = b.H, D = C / H;
  ValueId x = g.input("x", DType::f32, {Dim("seq"), C});
  ValueId ln_w = g.constant("ln_w", random({C}, 1, 0.1));
  ValueId ln_b = g.constant("ln_b", random({C}, 2, 0.1));
  ValueId wqkv = g.constant("wqkv", random({C, 3 * C}, 3, 0.2));
  ValueId bqkv = g.constant("bqkv", random({3 * C}, 4, 0.1));
  ValueId w1 = g.constant("w1", random({C, 4 * C}, 5, 0.2));
  ValueId w2 = g.constant("w2", random({4 * C, C}, 6, 0.1));
  ValueId h = g.node("layer_norm", {x, ln_w, ln_b}, {}, "ln1")[0];
  ValueId qkv = g.node("add", {g.node("matmul", {h, wqkv}, {}, "qkv")[0], bqkv}, {}, "qkv_bias")[0];
  auto parts =
      g.node("split", {qkv}, {{"axis", int64_t{-1}}, {"num_outputs", int64_t{3}}}, "split", 3);
  auto heads = [&](ValueId v, const std::string& n) {
    ValueId r = g.node("reshape", {v}, {{"shape", std::vector<int64_t>{T, H, D}}}, n + "_r")[0];
    return g.node("transpose", {r}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, n + "_t")[0];
  };
  ValueId q = heads(parts[0], "q"), k = heads(parts[1], "k"), v = heads(parts[2], "v");
  ValueId kt = g.node("transpose", {k}, {{"perm", std::vector<int64_t>{0, 2, 1}}}, "kT")[0];
  ValueId s = g.node("matmul", {q, kt}, {}, "scores")[0];
  ValueId scale = g.constant("scale", Tensor::from<float>({0.25f}, {}));
  // Causal mask as exporters write it: where(mask, scores, lowest).
  Tensor mask = Tensor::zeros({T, T}, DType::boolean);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j <= i; ++j) mask.data_as<bool>()[i * T + j] = true;
  ValueId masked = g.node("where",
                          {g.constant("mask", mask), g.node("mul", {s, scale}, {}, "scale")[0],
                           g.constant("lowest", Tensor::from<float>({-3.0e38f}, {}))},
                          {}, "mask")[0];
  ValueId p = g.node("softmax", {masked}, {{"axis", int64_t{-1}}}, "softmax")[0];
  ValueId o = g.node("matmul", {p, v}, {}, "pv")[0];
  ValueId ot = g.node("transpose", {o}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, "merge_t")[0];
  ValueId om = g.node("reshape", {ot}, {{"shape", std::vector<int64_t>{T, C}}}, "merge")[0];
  ValueId r1 = g.node("add", {x, om}, {}, "residual1")[0];
  // GELU, then a cube term through pow and tanh (the exported tanh-GELU's ops).
  ValueId m0 = g.node("gelu", {g.node("matmul", {r1, w1}, {}, "fc1")[0]}, {}, "gelu")[0];
  ValueId cube = g.node("pow", {m0, g.constant("three", Tensor::from<float>({3.0f}, {}))})[0];
  ValueId m = g.node("tanh", {g.node("add", {m0, cube})[0]})[0];
  ValueId y = g.node("add", {r1, g.node("matmul", {m, w2}, {}, "fc2")[0]}, {}, "residual2")[0];
  g.output(y);
  return b;
}

TEST(Graph, BuilderAndPrinter) {
  Graph g;
  ValueId x = g.input("x", DType::f32, {Dim("n"), 8});
  ValueId y = g.node("relu", {x}, {}, "act")[0];
  ValueId z = g.node("softmax", {y}, {{"axis", int64_t{-1}}}, "sm")[0];
  g.output(z);
  EXPECT_EQ(g.str(),
            "input  %x: f32[n, 8]\n"
            "node   act: %act:0 = relu(%x)\n"
            "node   sm: %sm:0 = softmax(%act:0) {axis=-1}\n"
            "output %sm:0\n");
}

TEST(Graph, OutputNames) {
  Graph g;
  ValueId x = g.input("x", DType::f32, {4});
  g.output(g.node("relu", {x}, {}, "act")[0]);
  g.output(x, "same");  // an output that names an alias of x
  EXPECT_EQ(g.output_name(0), "act:0");
  EXPECT_EQ(g.output_name(1), "same");
  EXPECT_NE(error_of([&] { (void)g.output_name(2); }).find("output_name"), std::string::npos);
}

TEST(Graph, ErrorsNameTheNode) {
  Graph g;
  ValueId x = g.input("x", DType::f32, {4});
  EXPECT_NE(error_of([&] { g.node("no_such_op", {x}); }).find("no_such_op"), std::string::npos);
  EXPECT_NE(error_of([&] { g.node("relu", {ValueId{42}}, {}, "bad"); }).find("bad"),
            std::string::npos);
  // A cycle, made through the passes' mutable access.
  ValueId a = g.node("relu", {x}, {}, "a")[0];
  ValueId b = g.node("relu", {a}, {}, "b")[0];
  g.mutable_nodes()[0].inputs[0] = b;
  g.output(b);
  EXPECT_NE(error_of([&] { g.validate(); }).find("cycle"), std::string::npos);
}

TEST(Plan, MatchesOpByOpAndFoldsConstants) {
  Graph g;
  ValueId x = g.input("x", DType::f32, {Dim("n"), 16});
  ValueId w = g.constant("w", random({16, 16}, 7));
  // Constant-only chain: folded when the plan is made.
  ValueId wt = g.node("transpose", {w}, {}, "wt")[0];
  ValueId wt2 =
      g.node("mul", {wt, g.constant("two", Tensor::from<float>({2.0f}, {}))}, {}, "w2")[0];
  ValueId y = g.node("gelu", {g.node("matmul", {x, wt2}, {}, "mm")[0]}, {}, "gelu")[0];
  g.output(y);
  Plan plan = Plan::create(g, {TensorDesc(DType::f32, {5, 16})});
  ASSERT_EQ(plan.steps().size(), 4u);
  EXPECT_EQ(plan.steps()[0].kernel, "folded");
  EXPECT_EQ(plan.steps()[1].kernel, "folded");
  Tensor in = random({5, 16}, 8);
  Tensor got = plan({in})[0];
  Tensor w2 =
      call("mul", {call("transpose", {g.value(w).data})[0], Tensor::from<float>({2.0f}, {})})[0];
  Tensor want = call("gelu", {call("matmul", {in, w2})[0]})[0];
  EXPECT_TRUE(same_bits(got, want));
  EXPECT_NE(plan.str().find("arena peak"), std::string::npos);
}

TEST(Plan, InputShapeErrors) {
  Graph g;
  ValueId x = g.input("x", DType::f32, {Dim("n"), 8});
  ValueId y = g.input("y", DType::f32, {Dim("n"), 8});
  g.output(g.node("add", {x, y})[0]);
  EXPECT_EQ(error_of([&] {
              Plan::create(g, {TensorDesc(DType::f32, {2, 8}), TensorDesc(DType::f32, {3, 8})});
            }),
            "plan: input 'y' dim 'n': expected 2 (as bound by an earlier input), got 3");
  EXPECT_EQ(error_of([&] {
              Plan::create(g, {TensorDesc(DType::f32, {2, 7}), TensorDesc(DType::f32, {2, 8})});
            }),
            "plan: input 'x' dim 1: expected 8, got 7");
  Plan p = Plan::create(g, {TensorDesc(DType::f32, {2, 8}), TensorDesc(DType::f32, {2, 8})});
  Tensor a = Tensor::zeros({2, 8}, DType::f32), b = Tensor::zeros({3, 8}, DType::f32);
  EXPECT_NE(error_of([&] { p({a, b}); }).find("input 1"), std::string::npos);
}

TEST(Plan, InPlaceChainUsesOneBuffer) {
  Graph g;
  ValueId v = g.input("x", DType::f32, {1024});
  v = g.node("exp", {v})[0];  // the graph input itself is never overwritten
  for (int i = 0; i < 9; ++i) v = g.node(i % 2 ? "relu" : "tanh", {v})[0];
  g.output(v);
  Plan p = Plan::create(g, {TensorDesc(DType::f32, {1024})});
  EXPECT_EQ(p.memory().arena_bytes, 4096u);
  EXPECT_EQ(p.memory().inplace_reuses, 9);
  PlanOptions no;
  no.inplace = false;
  Plan q = Plan::create(g, {TensorDesc(DType::f32, {1024})}, no);
  EXPECT_EQ(q.memory().inplace_reuses, 0);
  EXPECT_EQ(q.memory().arena_bytes, 8192u);  // two buffers alternate
  Tensor in = random({1024}, 3);
  EXPECT_TRUE(same_bits(p({in})[0], q({in})[0]));
}

TEST(Plan, ReshapeIsAViewAndInputsAreNeverOverwritten) {
  Graph g;
  ValueId x = g.input("x", DType::f32, {4, 6});
  ValueId a = g.node("neg", {x})[0];
  ValueId r = g.node("reshape", {a}, {{"shape", std::vector<int64_t>{6, 4}}})[0];
  ValueId s = g.node("relu", {r})[0];
  g.output(s);
  g.output(a);  // a stays live: relu may not overwrite it
  Plan p = Plan::create(g, {TensorDesc(DType::f32, {4, 6})});
  EXPECT_EQ(p.memory().views, 1);
  EXPECT_EQ(p.memory().inplace_reuses, 0);
  Tensor in = random({4, 6}, 5);
  Tensor keep = in.clone();
  auto out = p({in});
  EXPECT_TRUE(same_bits(in, keep));
  EXPECT_TRUE(same_bits(out[1], call("neg", {in})[0]));
  EXPECT_TRUE(same_bits(out[0], call("relu", {call("neg", {in})[0].reshape({6, 4})})[0]));
}

TEST(MemoryPlanner, NoOverlapAndBounds) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<PlannedBuffer> bufs;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng() % 30);
      bufs.push_back({1 + rng() % 5000, first, first + static_cast<int>(rng() % 8), 0});
    }
    const OffsetPlan r = plan_offsets(bufs);
    EXPECT_GE(r.arena_bytes, r.lower_bound);
    for (size_t i = 0; i < bufs.size(); ++i) {
      EXPECT_EQ(bufs[i].offset % 64, 0u);
      EXPECT_LE(bufs[i].offset + bufs[i].bytes, r.arena_bytes);
      for (size_t j = i + 1; j < bufs.size(); ++j) {
        const bool live_together = !(bufs[i].last < bufs[j].first || bufs[j].last < bufs[i].first);
        const bool disjoint = bufs[i].offset + bufs[i].bytes <= bufs[j].offset ||
                              bufs[j].offset + bufs[j].bytes <= bufs[i].offset;
        EXPECT_TRUE(!live_together || disjoint) << "trial " << trial;
      }
    }
  }
}

TEST(Plan, BlockOneVsTwoThreadsBitIdentical) {
  Block b = make_block();
  Plan p = Plan::create(b.g, {TensorDesc(DType::f32, {b.T, b.C})});
  Tensor in = random({b.T, b.C}, 9);
  const int saved = num_threads();
  set_num_threads(1);
  Tensor one = p({in})[0];
  set_num_threads(2);
  Tensor two = p({in})[0];
  set_num_threads(saved);
  EXPECT_TRUE(same_bits(one, two));
  EXPECT_LE(static_cast<double>(p.memory().arena_bytes),
            1.2 * static_cast<double>(p.memory().lower_bound_bytes));
}

TEST(Plan, SteadyStateRunAllocatesNothing) {
  Block b = make_block();
  Plan p = Plan::create(b.g, {TensorDesc(DType::f32, {b.T, b.C})});
  Tensor in = random({b.T, b.C}, 9);
  std::vector<Tensor> ins{in};
  std::vector<Tensor> outs{Tensor::empty(p.output_descs()[0].shape, DType::f32)};
  p.run(ins, outs);  // warm-up: the thread pool, caches
  p.run(ins, outs);
  test::start_counting_allocs();
  for (int i = 0; i < 10; ++i) p.run(ins, outs);
  EXPECT_EQ(test::stop_counting_allocs(), 0);
}

TEST(Plan, PinnedInputsDecideAttributes) {
  Graph g;
  ValueId x = g.input("x", DType::f32, {2, 6});
  ValueId s = g.input("shape", DType::i64, {2});
  ValueId y = g.node("reshape", {x}, {}, "r", -1, {}, {{"shape", s, AttrInput::Kind::ints}})[0];
  g.output(g.node("relu", {y})[0]);
  EXPECT_NE(error_of([&] {
              Plan::create(g, {TensorDesc(DType::f32, {2, 6}), TensorDesc(DType::i64, {2})});
            }).find("a value known when the plan is made"),
            std::string::npos);
  PlanOptions o;
  Tensor shape = Tensor::from<int64_t>({3, 4}, {2});
  o.input_values = {Tensor(), shape};
  Plan p = Plan::create(g, {TensorDesc(DType::f32, {2, 6}), TensorDesc(DType::i64, {2})}, o);
  EXPECT_EQ(p.pinned_inputs(), std::vector<int>{1});
  EXPECT_EQ(p.output_descs()[0].shape, (Shape{3, 4}));
  Tensor in = random({2, 6}, 1);
  EXPECT_EQ(p({in, shape})[0].shape(), (Shape{3, 4}));
  EXPECT_NE(error_of([&] {
              p({in, Tensor::from<int64_t>({4, 3}, {2})});
            }).find("make a new plan"),
            std::string::npos);
}

}  // namespace
}  // namespace opsnn::graph

namespace opsnn::graph {
namespace {

// GroupNorm as PyTorch's opset-17 export writes it, then SiLU as x * sigmoid(x).
Graph exported_group_norm(bool silu, bool affine, Shape w_shape) {
  Graph g;
  ValueId x = g.input("x", DType::f32, {2, 8, 8, 3});
  ValueId r = g.node("reshape", {x}, {{"shape", std::vector<int64_t>{0, 4, -1}}})[0];
  Tensor s = random({4}, 11), z = random({4}, 12);
  ValueId n =
      g.node("instance_norm", {r, g.constant("s", s), g.constant("z", z)}, {{"eps", 1e-5}})[0];
  ValueId y = g.node("reshape", {n}, {}, "back", -1, {},
                     {{"shape", g.node("shape", {x})[0], AttrInput::Kind::ints}})[0];
  if (affine) {
    y = g.node("mul", {g.constant("w", random(w_shape, 13)), y})[0];
    y = g.node("add", {y, g.constant("b", random(w_shape, 14))})[0];
  }
  if (silu) y = g.node("mul", {y, g.node("sigmoid", {y})[0]})[0];
  g.output(y);
  return g;
}

std::string norm_kernels(const Plan& p) {
  std::string ops;
  for (const PlanStep& s : p.steps())
    if (s.op.find("norm") != std::string::npos) ops += s.op + " ";
  return ops;
}

TEST(Fusion, ExportedGroupNormBecomesOneNode) {
  const std::vector<TensorDesc> in{TensorDesc(DType::f32, {2, 8, 8, 3})};
  const Tensor x = random({2, 8, 8, 3}, 15);
  PlanOptions off;
  off.fuse = false;
  struct Case {
    bool silu, affine;
    Shape w;
    const char* fused;
  };
  for (const Case& c :
       {Case{true, true, {8, 1, 1}, "group_norm_silu "},
        Case{false, true, {1, 8, 1, 1}, "group_norm "}, Case{true, false, {}, "group_norm_silu "},
        Case{false, true, {8, 1}, "group_norm "}}) {  // w along H: mul, add kept
    const Graph g = exported_group_norm(c.silu, c.affine, c.w);
    Plan fused = Plan::create(g, in), plain = Plan::create(g, in, off);
    EXPECT_EQ(norm_kernels(fused), c.fused);
    EXPECT_EQ(norm_kernels(plain), "instance_norm ");
    const Tensor a = fused({x})[0], b = plain({x})[0];
    ASSERT_EQ(a.shape(), b.shape());
    for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(a.flat_get(i), b.flat_get(i), 1e-5) << i;
  }
}

}  // namespace
}  // namespace opsnn::graph
