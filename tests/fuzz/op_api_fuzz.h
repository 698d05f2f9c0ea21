// The op-API fuzz target (op_api_fuzz.cc) and its seeds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// One input per (op, dtype, case) of the case tables, at most `max_cases`
// cases per op and dtype: each asks for the case as written, run on the best
// kernel and compared with the reference.
std::vector<std::vector<uint8_t>> op_api_fuzz_seeds(size_t max_cases);

// How far the inputs so far got.
struct OpFuzzStats {
  int64_t rejected_by_schema = 0, rejected_at_create = 0, created = 0, rejected_at_run = 0, ran = 0,
          compared = 0;
};
const OpFuzzStats& op_api_fuzz_stats();
