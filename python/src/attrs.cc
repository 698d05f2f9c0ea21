#include "attrs.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "opsnn/error.h"

namespace ops_nn {
namespace {

std::string py_type_name(nb::handle obj) {
  return nb::borrow<nb::str>(nb::type_name(obj.type())).c_str();
}

// Python ints, bools and objects with __index__ (numpy integers).
bool is_int(nb::handle v) {
  return PyLong_Check(v.ptr()) || PyObject_HasAttrString(v.ptr(), "__index__");
}

}  // namespace

opsnn::AttrValue attr_from_py(nb::handle value, const opsnn::AttrSpec& spec,
                              const std::string& op) {
  using opsnn::AttrType;
  const std::string arg = "attribute '" + spec.name + "'";
  auto bad = [&](const char* expected) -> opsnn::Error {
    return opsnn::Error(op, arg, expected, py_type_name(value));
  };
  switch (spec.type) {
    case AttrType::i64:
      if (PyFloat_Check(value.ptr()) || !is_int(value)) throw bad("an int");
      return nb::cast<int64_t>(nb::int_(value));
    case AttrType::f64:
      if (PyFloat_Check(value.ptr())) return PyFloat_AS_DOUBLE(value.ptr());
      if (PyLong_Check(value.ptr()) || nb::hasattr(value, "__float__"))
        return nb::cast<double>(nb::float_(value));
      throw bad("a float");
    case AttrType::str:
      if (!nb::isinstance<nb::str>(value)) throw bad("a str");
      return nb::cast<std::string>(value);
    case AttrType::i64s: {
      if (nb::isinstance<nb::str>(value) || !PySequence_Check(value.ptr()))
        throw bad("a sequence of ints");
      std::vector<int64_t> r;
      for (nb::handle h : nb::borrow<nb::sequence>(value)) {
        if (PyFloat_Check(h.ptr()) || !is_int(h)) throw bad("a sequence of ints");
        r.push_back(nb::cast<int64_t>(nb::int_(h)));
      }
      return r;
    }
    case AttrType::f64s: {
      if (nb::isinstance<nb::str>(value) || !PySequence_Check(value.ptr()))
        throw bad("a sequence of floats");
      std::vector<double> r;
      for (nb::handle h : nb::borrow<nb::sequence>(value)) {
        if (!PyFloat_Check(h.ptr()) && !PyLong_Check(h.ptr()) && !nb::hasattr(h, "__float__"))
          throw bad("a sequence of floats");
        r.push_back(nb::cast<double>(nb::float_(h)));
      }
      return r;
    }
  }
  throw bad("a value");
}

nb::object attr_to_py(const opsnn::AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return nb::int_(*i);
  if (auto* f = std::get_if<double>(&v)) return nb::float_(*f);
  if (auto* s = std::get_if<std::string>(&v)) return nb::str(s->c_str());
  if (auto* is = std::get_if<std::vector<int64_t>>(&v)) {
    nb::list l;
    for (int64_t x : *is) l.append(x);
    return nb::tuple(l);
  }
  nb::list l;
  for (double x : std::get<std::vector<double>>(v)) l.append(x);
  return nb::tuple(l);
}

void append_key(std::string& key, const opsnn::AttrValue& v) {
  key.push_back(static_cast<char>('a' + v.index()));
  auto raw = [&](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
  if (auto* i = std::get_if<int64_t>(&v)) {
    raw(i, 8);
  } else if (auto* f = std::get_if<double>(&v)) {
    raw(f, 8);
  } else if (auto* s = std::get_if<std::string>(&v)) {
    const uint64_t n = s->size();
    raw(&n, 8);
    key += *s;
  } else if (auto* is = std::get_if<std::vector<int64_t>>(&v)) {
    const uint64_t n = is->size();
    raw(&n, 8);
    raw(is->data(), n * 8);
  } else {
    const auto& fs = std::get<std::vector<double>>(v);
    const uint64_t n = fs.size();
    raw(&n, 8);
    raw(fs.data(), n * 8);
  }
}

}  // namespace ops_nn
