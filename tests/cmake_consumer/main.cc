#include <opsnn/opsnn.h>

#include <cmath>
#include <cstdio>

int main() {
  using namespace opsnn;
  Tensor x = Tensor::zeros({3}, DType::f32);
  x.flat_set(0, -1.0);
  x.flat_set(2, 2.0);
  auto y = call("relu", {x});
  const bool ok = y[0].flat_get(0) == 0.0 && y[0].flat_get(2) == 2.0;
  std::printf("opsnn %s: relu via find_package(opsnn): %s\n", version(), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
