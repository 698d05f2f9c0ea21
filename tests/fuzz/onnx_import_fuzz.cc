// Fuzz target of the ONNX loader: any bytes either import or raise an
// opsnn::Error; anything else (another exception, a crash, a sanitizer
// report) is a bug. Built two ways:
//  * with libFuzzer (clang, -DOPSNN_FUZZ=ON): opsnn_onnx_fuzz CORPUS_DIR ...
//  * without it (any compiler): opsnn_onnx_fuzz_replay FILE... runs each file
//    and a fixed set of mutations of it (truncations, byte flips), for CTest.
#include <cstddef>
#include <cstdint>
#include <string>

#include "opsnn/error.h"
#include "opsnn/onnx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    opsnn::graph::Graph g = opsnn::onnx::import_model_bytes(data, size, "");
    (void)g.str();
  } catch (const opsnn::Error&) {
  }
  return 0;
}
