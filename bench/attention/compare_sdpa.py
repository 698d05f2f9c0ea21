#!/usr/bin/env python3
"""PyTorch scaled_dot_product_attention on the issue's five cases (CPU).

  compare_sdpa.py THREADS DTYPES [SECONDS]

Without ops_nn importable: times PyTorch alone and prints one line per case,
`name dtype min_ms median_ms` (read by opsnn_bench_sdpa --torch).

With ops_nn importable (run_compare.sh puts build/release/python on
PYTHONPATH): times PyTorch and ops_nn.functional.sdpa side by side in one
process, on the same tensors, in rotated rounds (each round three
back-to-back calls of each, the order swapped every round), so that the
host's speed swings fall on both alike. Prints per case
`name dtype torch_min torch_med ours_min ours_med ratio_min ratio_rounds`:
ratio_min is torch min / ours min, ratio_rounds the median over the rounds
of torch's round median / ours' (> 1: ours faster).

GQA: PyTorch is timed both ways its users call it, enable_gqa=True on the
8 K/V heads and K/V expanded to 32 heads with repeat_interleave, and the
faster one is compared.
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

try:
    import ops_nn
except ImportError:
    ops_nn = None

CASES = [  # name, B, Hq, Hkv, Lq, Lk, D, causal
    ("gpt2_prefill", 1, 12, 12, 1024, 1024, 64, True),
    ("sd_self_512", 1, 8, 8, 4096, 4096, 40, False),
    ("sd_cross_512", 1, 8, 8, 4096, 77, 40, False),
    ("gqa_decode", 1, 32, 8, 1, 4096, 128, False),
    ("llama7b_prefill", 1, 32, 32, 2048, 2048, 128, True),
]
BURST = 3


def torch_fns(q, k, v, hq, hkv, causal):
    """The ways a PyTorch user calls SDPA on these tensors."""
    if hkv == hq:
        return {"": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)}
    ke = k.repeat_interleave(hq // hkv, dim=1)
    ve = v.repeat_interleave(hq // hkv, dim=1)
    return {
        "enable_gqa": lambda: F.scaled_dot_product_attention(
            q, k, v, is_causal=causal, enable_gqa=True
        ),
        "expanded": lambda: F.scaled_dot_product_attention(q, ke, ve, is_causal=causal),
    }


def timed(fn, n):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return ts


def torch_alone(fn, seconds):
    fn()
    ts = []
    t_end = time.perf_counter() + seconds
    while len(ts) < 5 or time.perf_counter() < t_end:
        ts += timed(fn, 1)
    return ts


def side_by_side(fns, seconds):
    """Rounds of BURST calls per function, the order rotated each round."""
    names = list(fns)
    for f in fns.values():
        f()
    per = {n: [] for n in names}
    rounds = []
    t_end = time.perf_counter() + seconds
    r = 0
    while r < 5 or time.perf_counter() < t_end:
        order = names[r % len(names) :] + names[: r % len(names)]
        this = {}
        for n in order:
            this[n] = timed(fns[n], BURST)
            per[n] += this[n]
        rounds.append(this)
        r += 1
    return per, rounds


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    dtypes = sys.argv[2].split(",") if len(sys.argv) > 2 else ["f32"]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 4.0
    torch.set_num_threads(threads)
    if ops_nn is not None:
        ops_nn.set_num_threads(threads)
        print(
            f"# side by side: torch {torch.__version__} ({threads} threads) and ops_nn "
            f"(isa {ops_nn.isa()}, {ops_nn.num_threads()} threads), {BURST} calls each per "
            f"round, order rotated; ratio > 1: ours faster",
            flush=True,
        )
        print("# case dtype torch_min torch_med ours_min ours_med ratio_min ratio_rounds")
    for dn in dtypes:
        dt = {"f32": torch.float32, "bf16": torch.bfloat16}[dn]
        for name, b, hq, hkv, lq, lk, d, causal in CASES:
            g = torch.Generator().manual_seed(7)
            q = torch.rand(b, hq, lq, d, generator=g).to(dt) * 4 - 2
            k = torch.rand(b, hkv, lk, d, generator=g).to(dt) * 4 - 2
            v = torch.rand(b, hkv, lk, d, generator=g).to(dt) * 6 - 3
            # causal aligned to the end of the keys = top-left when Lq == Lk
            is_causal = causal and lq == lk
            with torch.no_grad():
                tfns = torch_fns(q, k, v, hq, hkv, is_causal)
                if ops_nn is None:
                    best = min(
                        (torch_alone(f, seconds / 4) for f in tfns.values()), key=min
                    )
                    print(f"{name} {dn} {min(best):.4f} {statistics.median(best):.4f}", flush=True)
                    continue
                fns = {f"torch{'/' + k_ if k_ else ''}": f for k_, f in tfns.items()}
                fns["ours"] = lambda: ops_nn.functional.sdpa(q, k, v, causal=int(is_causal))
                ref = next(iter(tfns.values()))()
                err = (fns["ours"]().float() - ref.float()).abs().max().item()
                per, rounds = side_by_side(fns, seconds)
            tname = min((n for n in per if n != "ours"), key=lambda n: min(per[n]))
            t, o = per[tname], per["ours"]
            ratios = [statistics.median(r[tname]) / statistics.median(r["ours"]) for r in rounds]
            print(
                f"{name} {dn} {min(t):.4f} {statistics.median(t):.4f} {min(o):.4f} "
                f"{statistics.median(o):.4f} {min(t) / min(o):.2f} {statistics.median(ratios):.2f}"
                f"  # {len(rounds)} rounds, {tname}, max |ours - torch| {err:.2e}",
                flush=True,
            )


if __name__ == "__main__":
    main()
