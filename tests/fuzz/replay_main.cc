// Runs the fuzz target on files and deterministic mutations of them (no
// libFuzzer needed): every truncation point on a grid, and byte flips from
// a fixed-seed generator. Prints the count; a failure aborts.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  int64_t runs = 0;
  std::mt19937 rng(12345);
  for (int a = 1; a < argc; ++a) {
    if (std::getenv("OPSNN_FUZZ_VERBOSE")) std::fprintf(stderr, "%s\n", argv[a]);
    std::ifstream f(argv[a], std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                               std::istreambuf_iterator<char>());
    auto run = [&](const std::vector<uint8_t>& b) {
      LLVMFuzzerTestOneInput(b.data(), b.size());
      ++runs;
    };
    run(bytes);
    const size_t step = std::max<size_t>(1, bytes.size() / 16);
    for (size_t cut = 0; cut < bytes.size(); cut += step)
      run({bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut)});
    for (int m = 0; m < 24 && !bytes.empty(); ++m) {
      std::vector<uint8_t> b = bytes;
      for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
        b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
      run(b);
    }
  }
  std::printf("%lld inputs, no failure\n", static_cast<long long>(runs));
  return 0;
}
