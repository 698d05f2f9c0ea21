// ONNX MatMul and Gemm -> matmul, gemm (transposes, alpha, beta as attributes);
// Einsum -> sum, transpose, unsqueeze, matmul, squeeze.
#include <algorithm>
#include <cctype>
#include <string>

#include "graph/onnx/onnx_map.h"

namespace opsnn::onnx {
namespace {

void matmul(MapContext& c) { c.emit("matmul", {c.required(0), c.required(1)}); }

void gemm(MapContext& c) {
  c.emit("gemm", {c.required(0), c.required(1), c.in(2)},
         {{"alpha", c.f("alpha", 1.0)},
          {"beta", c.f("beta", 1.0)},
          {"transA", c.i("transA", 0)},
          {"transB", c.i("transB", 0)}});
}

// Einsum with one or two operands and explicit letters (no "..." and no
// letter twice in one operand). Letters only one operand has and the output
// lacks are summed first; two operands then become one matmul over
// [batch..., free of A, contracted] x [batch..., contracted, free of B] (a
// missing free or contracted letter is a unit dim; further free letters are
// broadcast batch dims); at most one contracted letter (more would need a
// reshape merging dims whose sizes are known only at plan time); a transpose
// gives the output's order.
struct Einsum {
  std::vector<std::string> in;
  std::string out;
};

Einsum parse_einsum(MapContext& c) {
  std::string eq;
  for (char ch : c.s("equation", "")) {
    if (ch != ' ') eq += ch;
  }
  if (eq.find("...") != std::string::npos)
    c.fail("attribute 'equation'", "explicit letters", "an ellipsis '...'");
  Einsum e;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  for (size_t b = 0;;) {
    const size_t comma = lhs.find(',', b);
    e.in.push_back(lhs.substr(b, comma == std::string::npos ? std::string::npos : comma - b));
    if (comma == std::string::npos) break;
    b = comma + 1;
  }
  if (arrow != std::string::npos) {
    e.out = eq.substr(arrow + 2);
  } else {  // implicit: the letters used once, in alphabetical order
    for (char ch = 'A'; ch <= 'z'; ++ch)
      if (std::count(lhs.begin(), lhs.end(), ch) == 1) e.out += ch;
  }
  if (e.in.size() != c.num_inputs() || e.in.size() > 2)
    c.fail("attribute 'equation'", "one or two operands matching the inputs", eq);
  for (const std::string& t : e.in)
    for (char ch : t)
      if (!std::isalpha(static_cast<unsigned char>(ch)) || std::count(t.begin(), t.end(), ch) != 1)
        c.fail("attribute 'equation'", "letters, each once per operand (no diagonals)", eq);
  for (char ch : e.out)
    if (lhs.find(ch) == std::string::npos || std::count(e.out.begin(), e.out.end(), ch) != 1)
      c.fail("attribute 'equation'", "output letters taken from the operands, once each", eq);
  return e;
}

// Sums `v` over the letters of `have` in neither `other` nor `out`.
ValueId sum_private(MapContext& c, ValueId v, std::string& have, const std::string& other,
                    const std::string& out) {
  std::vector<int64_t> axes;
  std::string keep;
  for (size_t k = 0; k < have.size(); ++k) {
    if (other.find(have[k]) == std::string::npos && out.find(have[k]) == std::string::npos)
      axes.push_back(static_cast<int64_t>(k));
    else
      keep += have[k];
  }
  if (axes.empty()) return v;
  have = keep;
  return c.add("sum", {v}, {{"axes", axes}, {"keepdims", int64_t{0}}})[0];
}

// Transposes `v` (letters `have`) to the order `want` (the same letters).
ValueId permute(MapContext& c, ValueId v, const std::string& have, const std::string& want) {
  std::vector<int64_t> perm;
  for (char ch : want) perm.push_back(static_cast<int64_t>(have.find(ch)));
  bool identity = true;
  for (size_t k = 0; k < perm.size(); ++k)
    identity = identity && perm[k] == static_cast<int64_t>(k);
  return identity ? v : c.add("transpose", {v}, {{"perm", perm}})[0];
}

// Transposes `v` (letters `have`) to `layout`'s letters, then inserts a
// unit dim at each '.'.
ValueId to_layout(MapContext& c, ValueId v, const std::string& have, const std::string& layout) {
  std::string letters = layout;
  letters.erase(std::remove(letters.begin(), letters.end(), '.'), letters.end());
  v = permute(c, v, have, letters);
  std::vector<int64_t> unit;
  for (size_t i = 0; i < layout.size(); ++i)
    if (layout[i] == '.') unit.push_back(static_cast<int64_t>(i));
  return unit.empty() ? v : c.add("unsqueeze", {v}, {{"axes", unit}})[0];
}

void einsum(MapContext& c) {
  Einsum e = parse_einsum(c);
  ValueId a = c.required(0);
  if (e.in.size() == 1) {
    a = sum_private(c, a, e.in[0], "", e.out);
    c.alias(0, permute(c, a, e.in[0], e.out));
    return;
  }
  ValueId b = c.required(1);
  std::string &la = e.in[0], &lb = e.in[1];
  a = sum_private(c, a, la, lb, e.out);
  b = sum_private(c, b, lb, la, e.out);
  std::string batch, fa, fb, con;
  for (char ch : e.out)
    if (la.find(ch) != std::string::npos && lb.find(ch) != std::string::npos) batch += ch;
  for (char ch : la) {
    if (lb.find(ch) == std::string::npos)
      fa += ch;
    else if (e.out.find(ch) == std::string::npos)
      con += ch;
  }
  for (char ch : lb)
    if (la.find(ch) == std::string::npos) fb += ch;
  if (con.size() > 1)
    c.fail("attribute 'equation'", "at most one contracted letter (a matmul)",
           la + "," + lb + "->" + e.out);
  // Layouts with '.' for unit dims: A [batch, A's extra free, units, a, k],
  // B [batch, units, B's extra free, k, b]; matmul broadcasts the extras.
  const std::string xa = fa.empty() ? "" : fa.substr(0, fa.size() - 1);
  const std::string xb = fb.empty() ? "" : fb.substr(0, fb.size() - 1);
  const std::string a1 = fa.empty() ? "." : fa.substr(fa.size() - 1);
  const std::string b1 = fb.empty() ? "." : fb.substr(fb.size() - 1);
  const std::string k = con.empty() ? "." : con;
  const std::string units_a(xb.size(), '.'), units_b(xa.size(), '.');
  a = to_layout(c, a, la, batch + xa + units_a + a1 + k);
  b = to_layout(c, b, lb, batch + units_b + xb + k + b1);
  ValueId y = c.add("matmul", {a, b})[0];
  std::string ly = batch + xa + xb + a1 + b1;
  std::vector<int64_t> unit;
  for (size_t i = 0; i < ly.size(); ++i)
    if (ly[i] == '.') unit.push_back(static_cast<int64_t>(i));
  if (!unit.empty()) y = c.add("squeeze", {y}, {{"axes", unit}})[0];
  ly.erase(std::remove(ly.begin(), ly.end(), '.'), ly.end());
  c.alias(0, permute(c, y, ly, e.out));
}

}  // namespace

void add_matmul_mappings(MappingTable& t) {
  const Mapping m[] = {{"MatMul", 7, matmul}, {"Gemm", 7, gemm}, {"Einsum", 12, einsum}};
  t.insert(t.end(), std::begin(m), std::end(m));
}

}  // namespace opsnn::onnx
