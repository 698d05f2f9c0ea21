#include <cstdio>
#include <string>

#include "opsnn/error.h"
#include "opsnn/op.h"

namespace opsnn {

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::i64:
      return "int";
    case AttrType::f64:
      return "float";
    case AttrType::str:
      return "string";
    case AttrType::i64s:
      return "int list";
    case AttrType::f64s:
      return "float list";
  }
  return "?";
}

Attrs& Attrs::set(const std::string& name, AttrValue v) {
  values_[name] = std::move(v);
  return *this;
}

const AttrValue& Attrs::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error("attrs", name, "an attribute named '" + name + "'", "none");
  return it->second;
}

int64_t Attrs::i(const std::string& name) const {
  const AttrValue& v = get(name);
  if (auto* p = std::get_if<int64_t>(&v)) return *p;
  throw Error("attrs", name, "an int", "another type");
}

double Attrs::f(const std::string& name) const {
  const AttrValue& v = get(name);
  if (auto* p = std::get_if<double>(&v)) return *p;
  if (auto* p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  throw Error("attrs", name, "a float", "another type");
}

const std::string& Attrs::s(const std::string& name) const {
  const AttrValue& v = get(name);
  if (auto* p = std::get_if<std::string>(&v)) return *p;
  throw Error("attrs", name, "a string", "another type");
}

const std::vector<int64_t>& Attrs::ints(const std::string& name) const {
  const AttrValue& v = get(name);
  if (auto* p = std::get_if<std::vector<int64_t>>(&v)) return *p;
  throw Error("attrs", name, "an int list", "another type");
}

std::vector<double> Attrs::floats(const std::string& name) const {
  const AttrValue& v = get(name);
  if (auto* p = std::get_if<std::vector<double>>(&v)) return *p;
  if (auto* p = std::get_if<std::vector<int64_t>>(&v)) return {p->begin(), p->end()};
  throw Error("attrs", name, "a float list", "another type");
}

namespace {
std::string value_str(const AttrValue& v) {
  struct V {
    std::string operator()(int64_t x) const { return std::to_string(x); }
    std::string operator()(double x) const {
      char b[32];
      std::snprintf(b, sizeof b, "%g", x);
      return b;
    }
    std::string operator()(const std::string& x) const { return x; }
    std::string operator()(const std::vector<int64_t>& x) const {
      std::string r;
      for (size_t i = 0; i < x.size(); ++i) r += (i ? ":" : "") + std::to_string(x[i]);
      return r;
    }
    std::string operator()(const std::vector<double>& x) const {
      std::string r;
      for (size_t i = 0; i < x.size(); ++i) r += (i ? ":" : "") + (*this)(x[i]);
      return r;
    }
  };
  return std::visit(V{}, v);
}
}  // namespace

std::string Attrs::str() const {
  std::string r;
  for (const auto& [k, v] : values_) r += (r.empty() ? "" : ",") + k + "=" + value_str(v);
  return r;
}

}  // namespace opsnn
