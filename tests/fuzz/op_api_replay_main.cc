// Runs the op-API fuzz target without libFuzzer: the seeds, byte-flip
// mutations of each and seeded random inputs, deterministically (CTest).
//   opsnn_op_fuzz_replay [--cases N] [--mutations N] [--random N] [--write-seeds DIR]
//   opsnn_op_fuzz_replay FILE...   (runs just these inputs, e.g. a libFuzzer crash file)
// --write-seeds writes the seeds as files (a corpus for the libFuzzer build)
// and runs nothing.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "op_api_fuzz.h"

int main(int argc, char** argv) {
  size_t cases = 4, mutations = 2, random = 2000;
  const char* seed_dir = nullptr;
  std::vector<std::string> files;
  for (int a = 1; a < argc; a += 2) {
    const std::string k = argv[a];
    if (k.rfind("--", 0) != 0) {
      files.push_back(k);
      --a;
    } else if (a + 1 == argc) {
      std::fprintf(stderr, "%s needs a value\n", argv[a]);
      return 2;
    } else if (k == "--cases") {
      cases = std::strtoull(argv[a + 1], nullptr, 10);
    } else if (k == "--mutations") {
      mutations = std::strtoull(argv[a + 1], nullptr, 10);
    } else if (k == "--random") {
      random = std::strtoull(argv[a + 1], nullptr, 10);
    } else if (k == "--write-seeds") {
      seed_dir = argv[a + 1];
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[a]);
      return 2;
    }
  }
  for (const std::string& path : files) {
    std::ifstream f(path, std::ios::binary);
    const std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)),
                                 std::istreambuf_iterator<char>());
    std::fprintf(stderr, "%s: %zu bytes\n", path.c_str(), b.size());
    LLVMFuzzerTestOneInput(b.data(), b.size());
  }
  if (!files.empty()) return 0;
  const std::vector<std::vector<uint8_t>> seeds = op_api_fuzz_seeds(cases);
  if (seed_dir) {
    for (size_t i = 0; i < seeds.size(); ++i) {
      std::ofstream f(std::string(seed_dir) + "/seed_" + std::to_string(i), std::ios::binary);
      f.write(reinterpret_cast<const char*>(seeds[i].data()),
              static_cast<std::streamsize>(seeds[i].size()));
    }
    std::printf("%zu seeds written to %s\n", seeds.size(), seed_dir);
    return 0;
  }
  const bool verbose = std::getenv("OPSNN_FUZZ_VERBOSE") != nullptr;
  std::mt19937 rng(4321);
  int64_t runs = 0;
  auto run = [&](const std::vector<uint8_t>& b) {
    if (verbose) {
      std::fprintf(stderr, "input %lld:", static_cast<long long>(runs));
      for (uint8_t x : b) std::fprintf(stderr, " %02x", x);
      std::fprintf(stderr, "\n");
    }
    LLVMFuzzerTestOneInput(b.data(), b.size());
    ++runs;
  };
  for (const std::vector<uint8_t>& s : seeds) {
    run(s);
    // Flips in the request part (op, case, dtypes, mutations, modes).
    for (size_t m = 0; m < mutations; ++m) {
      std::vector<uint8_t> b = s;
      for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k)
        b[rng() % std::min<size_t>(b.size(), 16)] ^= static_cast<uint8_t>(1u << (rng() % 8));
      run(b);
    }
  }
  for (size_t i = 0; i < random; ++i) {
    std::vector<uint8_t> b(8 + rng() % 120);
    for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
    run(b);
  }
  const OpFuzzStats& st = op_api_fuzz_stats();
  std::printf(
      "%lld inputs, no failure: %lld refused by the schema, %lld at create, %lld created, "
      "%lld refused at run, %lld ran, %lld compared with the reference\n",
      static_cast<long long>(runs), static_cast<long long>(st.rejected_by_schema),
      static_cast<long long>(st.rejected_at_create), static_cast<long long>(st.created),
      static_cast<long long>(st.rejected_at_run), static_cast<long long>(st.ran),
      static_cast<long long>(st.compared));
  return 0;
}
