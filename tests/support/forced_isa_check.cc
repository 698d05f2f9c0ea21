// Linked into the test programs that CTest runs once per forced ISA
// (OPSNN_ISA=scalar|avx2|avx512). When OPSNN_ISA asks for more than this CPU
// has, dispatch would cap it and the run would only repeat a lower ISA's:
// the program says so and exits with 77, which CTest reports as skipped
// (SKIP_RETURN_CODE).
#include <cstdio>
#include <cstdlib>

#include "opsnn/cpu.h"
#include "opsnn/error.h"

namespace {

const bool forced_isa_checked = [] {
  const char* want = std::getenv("OPSNN_ISA");
  if (!want || !*want) return true;
  try {
    const opsnn::Isa isa = opsnn::isa_from_name(want);
    const opsnn::Isa best = opsnn::cpu_info().best_isa();
    if (isa > best) {
      std::printf("skipped: OPSNN_ISA=%s, but this CPU has only %s\n", want, opsnn::isa_name(best));
      std::fflush(stdout);
      std::_Exit(77);
    }
  } catch (const opsnn::Error&) {
  }
  return true;
}();

}  // namespace
