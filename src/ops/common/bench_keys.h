// The keys of `opsnn bench --case k=v,...`, parsed one way for every op: each
// op's bench_case asks for the keys it knows (with their defaults) and then
// calls done(), which rejects any other key naming the op and the keys it
// takes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "opsnn/check.h"
#include "opsnn/op.h"

namespace opsnn::ops {

// The integers of `v` separated by `sep` ("64x4096" with 'x', "1:2" with
// ':'); "" and "-" are the empty list. Anything else throws an Error naming
// `op` and `key`.
std::vector<int64_t> parse_int_list(const std::string& op, const std::string& key,
                                    const std::string& v, char sep);

class CaseKeys {
 public:
  CaseKeys(std::string op, const std::map<std::string, std::string>& kv);

  bool has(const std::string& key);
  // Whether a call above has asked for `key` already.
  bool asked(const std::string& key) const;
  int64_t i(const std::string& key, int64_t def);
  double f(const std::string& key, double def);
  std::string s(const std::string& key, const std::string& def);
  // "AxBxC" -> {A, B, C} ("" or "-": a scalar).
  Shape dims(const std::string& key, const Shape& def);
  // Integers separated by `sep`.
  std::vector<int64_t> ints(const std::string& key, char sep, const std::vector<int64_t>& def);
  // Numbers separated by `sep` ("2:2", "0.5:1.5"; "" or "-": the empty list).
  std::vector<double> floats(const std::string& key, char sep, const std::vector<double>& def);
  // Throws if the case has a key that none of the calls above asked for.
  void done() const;

 private:
  const std::string* find(const std::string& key);  // nullptr when absent; notes the key as known

  std::string op_;
  const std::map<std::string, std::string>& kv_;
  std::vector<std::string> known_;
};

// The case of an op from its schema: "x=AxBxC" (or "shape=" / "n=", each when
// the op has no attribute and the caller asked for no key of that name) is the
// shape of every required input; a key naming an attribute sets it, read as
// the attribute's type (lists a:b:c, "-" for an empty list). The value ranges
// are those of the op's first case. The caller may read keys of its own
// before, and calls keys.done() after.
CheckCase attr_bench_case(const OpSchema& schema, CaseKeys& keys, DType t);
// As above for a whole case: any key that is neither is an Error naming it.
CheckCase attr_bench_case(const OpSchema& schema, const std::map<std::string, std::string>& kv,
                          DType t);

}  // namespace opsnn::ops
