#!/usr/bin/env python3
"""PyTorch scaled_dot_product_attention on the issue's five cases (CPU).

Prints one line per case: name dtype min_ms median_ms. Run through
run_compare.sh, which installs torch from PyPI into a private virtualenv.
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

CASES = [  # name, B, Hq, Hkv, Lq, Lk, D, causal
    ("gpt2_prefill", 1, 12, 12, 1024, 1024, 64, True),
    ("sd_self_512", 1, 8, 8, 4096, 4096, 40, False),
    ("sd_cross_512", 1, 8, 8, 4096, 77, 40, False),
    ("gqa_decode", 1, 32, 8, 1, 4096, 128, False),
    ("llama7b_prefill", 1, 32, 32, 2048, 2048, 128, True),
]


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    dtypes = sys.argv[2].split(",") if len(sys.argv) > 2 else ["f32"]
    torch.set_num_threads(threads)
    for dn in dtypes:
        dt = {"f32": torch.float32, "bf16": torch.bfloat16}[dn]
        for name, b, hq, hkv, lq, lk, d, causal in CASES:
            q = torch.rand(b, hq, lq, d, dtype=dt) * 4 - 2
            k = torch.rand(b, hkv, lk, d, dtype=dt) * 4 - 2
            v = torch.rand(b, hkv, lk, d, dtype=dt) * 6 - 3
            if hkv != hq:  # GQA: torch's CPU SDPA takes equal heads; expand (a view) as users do
                k = k.repeat_interleave(hq // hkv, dim=1)
                v = v.repeat_interleave(hq // hkv, dim=1)
            # causal aligned to the end of the keys = top-left when Lq == Lk
            fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal and lq == lk)
            with torch.no_grad():
                fn()
                ts = []
                t_end = time.perf_counter() + 1.0
                while len(ts) < 5 or time.perf_counter() < t_end:
                    t0 = time.perf_counter()
                    fn()
                    ts.append((time.perf_counter() - t0) * 1e3)
            print(f"{name} {dn} {min(ts):.4f} {statistics.median(ts):.4f}", flush=True)


if __name__ == "__main__":
    main()
