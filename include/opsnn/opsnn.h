// ops-nn: operator library for AIGC inference on x86-64 CPUs.
#pragma once

#include "opsnn/cpu.h"
#include "opsnn/dtype.h"
#include "opsnn/error.h"
#include "opsnn/gemm.h"
#include "opsnn/kv_cache.h"
#include "opsnn/log.h"
#include "opsnn/memory.h"
#include "opsnn/op.h"
#include "opsnn/quant.h"
#include "opsnn/tensor.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
const char* version();
}
