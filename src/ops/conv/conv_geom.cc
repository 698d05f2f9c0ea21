#include "ops/conv/conv_geom.h"

#include <string>

namespace opsnn::conv {
namespace {

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// An int-list attribute with one value per spatial dim (empty: `def`).
std::vector<int64_t> per_dim(const OpCall& call, const std::string& name, int r, int64_t def,
                             int64_t min_value) {
  std::vector<int64_t> v = call.attrs.ints(name);
  if (v.empty()) v.assign(static_cast<size_t>(r), def);
  if (static_cast<int>(v.size()) != r)
    call.fail("attribute '" + name + "'", std::to_string(r) + " values", list_str(v));
  for (int64_t x : v)
    if (x < min_value)
      call.fail("attribute '" + name + "'", "values >= " + std::to_string(min_value), list_str(v));
  return v;
}

}  // namespace

std::vector<AttrSpec> window_attrs(bool with_dilations) {
  std::vector<AttrSpec> a = {
      {"strides", AttrType::i64s, std::vector<int64_t>{}, "per spatial dim (default 1)"},
      {"pads", AttrType::i64s, std::vector<int64_t>{},
       "begins then ends, per spatial dim (default 0)"},
      {"auto_pad", AttrType::str, std::string("NOTSET"), "NOTSET|SAME_UPPER|SAME_LOWER|VALID"}};
  if (with_dilations)
    a.push_back(
        {"dilations", AttrType::i64s, std::vector<int64_t>{}, "per spatial dim (default 1)"});
  return a;
}

AttrSpec layout_attr() {
  return {"layout", AttrType::str, std::string("NCHW"),
          "NCHW: channels first (ONNX); NHWC: channels last (any spatial rank)"};
}

bool channels_last(const OpCall& call) {
  const std::string& l = call.attrs.s("layout");
  if (l == "NCHW") return false;
  if (l == "NHWC") return true;
  call.fail("attribute 'layout'", "NCHW|NHWC", "'" + l + "'");
}

std::vector<int64_t> spatial_dims(const Shape& s, bool cl) {
  if (cl) return {s.begin() + 1, s.end() - 1};
  return {s.begin() + 2, s.end()};
}

Shape nc_shape(int64_t n, int64_t c, const Window& w, bool cl) {
  Shape s{n};
  if (!cl) s.push_back(c);
  for (int i = 3 - w.r; i < 3; ++i) s.push_back(w.out[i]);
  if (cl) s.push_back(c);
  return s;
}

Window make_window(const OpCall& call, const std::vector<int64_t>& in,
                   const std::vector<int64_t>& k, bool ceil_mode) {
  const int r = static_cast<int>(in.size());
  Window w;
  w.r = r;
  const std::vector<int64_t> s = per_dim(call, "strides", r, 1, 1);
  const std::vector<int64_t> d = call.attrs.has("dilations")
                                     ? per_dim(call, "dilations", r, 1, 1)
                                     : std::vector<int64_t>(static_cast<size_t>(r), 1);
  std::vector<int64_t> pads = call.attrs.ints("pads");
  const std::string& ap = call.attrs.s("auto_pad");
  if (ap != "NOTSET" && ap != "SAME_UPPER" && ap != "SAME_LOWER" && ap != "VALID")
    call.fail("attribute 'auto_pad'", "NOTSET|SAME_UPPER|SAME_LOWER|VALID", "'" + ap + "'");
  if (pads.empty()) pads.assign(static_cast<size_t>(2 * r), 0);
  if (static_cast<int>(pads.size()) != 2 * r)
    call.fail("attribute 'pads'", std::to_string(2 * r) + " values (begins, ends)", list_str(pads));
  for (int64_t p : pads)
    if (p < 0) call.fail("attribute 'pads'", "values >= 0", list_str(pads));
  if (ap != "NOTSET")
    for (int64_t p : pads)
      if (p != 0)
        call.fail("attribute 'pads'", "no explicit pads with auto_pad " + ap, list_str(pads));
  for (int i = 0; i < r; ++i) {
    const int j = 3 - r + i;
    w.in[j] = in[static_cast<size_t>(i)];
    w.k[j] = k[static_cast<size_t>(i)];
    w.s[j] = s[static_cast<size_t>(i)];
    w.d[j] = d[static_cast<size_t>(i)];
    w.pb[j] = pads[static_cast<size_t>(i)];
    w.pe[j] = pads[static_cast<size_t>(i + r)];
    // The dilated kernel extent; attribute values are checked for overflow.
    const int64_t span = call.checked_add(
        "attribute 'dilations'", call.checked_mul("attribute 'dilations'", w.k[j] - 1, w.d[j]), 1);
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      w.out[j] = call.checked_add("attribute 'strides'", w.in[j], w.s[j] - 1) / w.s[j];
      const int64_t covered =
          call.checked_add("attribute 'strides'",
                           call.checked_mul("attribute 'strides'", w.out[j] - 1, w.s[j]), span);
      const int64_t total = std::max<int64_t>(0, covered - w.in[j]);
      const int64_t small = total / 2;
      w.pb[j] = ap == "SAME_UPPER" ? small : total - small;
      w.pe[j] = total - w.pb[j];
      continue;
    }
    const int64_t padded = call.checked_add(
        "attribute 'pads'", call.checked_add("attribute 'pads'", w.in[j], w.pb[j]), w.pe[j]);
    if (span > padded)
      call.fail("kernel", "a dilated kernel extent <= padded input " + std::to_string(padded),
                std::to_string(span) + " in spatial dim " + std::to_string(i));
    int64_t o = (padded - span) / w.s[j] + 1;
    if (ceil_mode) {
      o = call.checked_add("attribute 'strides'", padded - span, w.s[j] - 1) / w.s[j] + 1;
      // The last window must start inside the input or the begin padding.
      if ((o - 1) * w.s[j] >= w.in[j] + w.pb[j]) --o;
    }
    w.out[j] = o;
  }
  return w;
}

}  // namespace opsnn::conv
