// A custom operator defined outside the library: scaled_swish(x; beta) = x * sigmoid(beta * x).
#pragma once

#include "opsnn/opsnn.h"

void register_scaled_swish(opsnn::Registry& r);
