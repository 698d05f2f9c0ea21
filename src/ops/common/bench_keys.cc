#include "ops/common/bench_keys.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "opsnn/error.h"

namespace opsnn::ops {

std::vector<int64_t> parse_int_list(const std::string& op, const std::string& key,
                                    const std::string& v, char sep) {
  std::vector<int64_t> r;
  if (v.empty() || v == "-") return r;
  size_t at = 0;
  for (;;) {
    const size_t e = std::min(v.find(sep, at), v.size());
    const std::string d = v.substr(at, e - at);
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || *end != '\0' || errno == ERANGE)
      throw Error(op, "--case key '" + key + "'",
                  "integers separated by '" + std::string(1, sep) + "'", "'" + v + "'");
    r.push_back(x);
    if (e == v.size()) return r;
    at = e + 1;
  }
}

CaseKeys::CaseKeys(std::string op, const std::map<std::string, std::string>& kv)
    : op_(std::move(op)), kv_(kv) {}

const std::string* CaseKeys::find(const std::string& key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  const auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

bool CaseKeys::has(const std::string& key) { return find(key) != nullptr; }

bool CaseKeys::asked(const std::string& key) const {
  return std::find(known_.begin(), known_.end(), key) != known_.end();
}

int64_t CaseKeys::i(const std::string& key, int64_t def) {
  const std::string* v = find(key);
  if (!v) return def;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno == ERANGE)
    throw Error(op_, "--case key '" + key + "'", "an integer in the int64 range", "'" + *v + "'");
  return x;
}

double CaseKeys::f(const std::string& key, double def) {
  const std::string* v = find(key);
  if (!v) return def;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0')
    throw Error(op_, "--case key '" + key + "'", "a number", "'" + *v + "'");
  return x;
}

std::string CaseKeys::s(const std::string& key, const std::string& def) {
  const std::string* v = find(key);
  return v ? *v : def;
}

Shape CaseKeys::dims(const std::string& key, const Shape& def) {
  const std::string* v = find(key);
  return v ? parse_int_list(op_, key, *v, 'x') : def;
}

std::vector<int64_t> CaseKeys::ints(const std::string& key, char sep,
                                    const std::vector<int64_t>& def) {
  const std::string* v = find(key);
  return v ? parse_int_list(op_, key, *v, sep) : def;
}

std::vector<double> CaseKeys::floats(const std::string& key, char sep,
                                     const std::vector<double>& def) {
  const std::string* v = find(key);
  if (!v) return def;
  std::vector<double> r;
  if (v->empty() || *v == "-") return r;
  size_t at = 0;
  for (;;) {
    const size_t e = std::min(v->find(sep, at), v->size());
    const std::string d = v->substr(at, e - at);
    char* end = nullptr;
    const double x = std::strtod(d.c_str(), &end);
    if (d.empty() || *end != '\0')
      throw Error(op_, "--case key '" + key + "'",
                  "numbers separated by '" + std::string(1, sep) + "'", "'" + *v + "'");
    r.push_back(x);
    if (e == v->size()) return r;
    at = e + 1;
  }
}

void CaseKeys::done() const {
  for (const auto& kv : kv_) {
    if (std::find(known_.begin(), known_.end(), kv.first) != known_.end()) continue;
    std::string keys;
    for (const std::string& k : known_) keys += (keys.empty() ? "" : ", ") + k;
    throw Error(op_, "--case key '" + kv.first + "'", keys.empty() ? "no keys" : "one of: " + keys,
                "'" + kv.first + "'");
  }
}

CheckCase attr_bench_case(const OpSchema& schema, CaseKeys& keys, DType t) {
  auto is_attr = [&](const std::string& k) {
    for (const AttrSpec& a : schema.attrs)
      if (a.name == k) return true;
    return false;
  };
  Shape shape = {1 << 24};
  for (const char* k : {"n", "shape", "x"})  // the last one given wins
    if (!is_attr(k) && !keys.asked(k)) shape = keys.dims(k, shape);
  CheckCase c;
  c.name = "bench";
  for (const AttrSpec& a : schema.attrs) {
    if (keys.asked(a.name) || !keys.has(a.name)) continue;
    switch (a.type) {
      case AttrType::i64:
        c.attrs.set(a.name, keys.i(a.name, 0));
        break;
      case AttrType::f64:
        c.attrs.set(a.name, keys.f(a.name, 0));
        break;
      case AttrType::str:
        c.attrs.set(a.name, keys.s(a.name, ""));
        break;
      case AttrType::i64s:
        c.attrs.set(a.name, keys.ints(a.name, ':', {}));
        break;
      case AttrType::f64s:
        c.attrs.set(a.name, keys.floats(a.name, ':', {}));
        break;
    }
  }
  for (const ArgSpec& a : schema.inputs)
    if (!a.optional) c.inputs.push_back(TensorDesc(t, shape));
  if (schema.cases) {  // keep the value ranges the op's own cases use
    auto cs = schema.cases(t);
    if (!cs.empty()) c.ranges = cs.front().ranges;
  }
  return c;
}

CheckCase attr_bench_case(const OpSchema& schema, const std::map<std::string, std::string>& kv,
                          DType t) {
  CaseKeys keys(schema.name, kv);
  CheckCase c = attr_bench_case(schema, keys, t);
  keys.done();
  return c;
}

}  // namespace opsnn::ops
