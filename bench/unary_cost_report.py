#!/usr/bin/env python3
"""Compute cost and memory-limit fraction of the element-wise and row ops, 1 thread.

For each op and ISA (OPSNN_ISA=avx2 and avx512): ns per element on a
cache-resident case (4096 f32 = 16 KiB in, 16 KiB out: the compute cost,
independent of memory) and the fraction of the copy bandwidth on 64 MiB f32
(`opsnn bench` measures the copy limit in the same process, right after the
op). With two binaries (A and B), their runs alternate round by round so both
see the same machine load. Prints min and median over the rounds.

  bench/unary_cost_report.py [--rounds N] [--ops a,b] BIN_A [BIN_B]
"""
import argparse
import json
import os
import statistics
import subprocess

SMALL = 4096
OPS = [
    ("add", "shape={n}"),
    ("gelu", "shape={n}"),
    ("gelu_tanh", "shape={n},approximate=tanh"),
    ("silu", "shape={n}"),
    ("quick_gelu", "shape={n}"),
    ("sigmoid", "shape={n}"),
    ("tanh", "shape={n}"),
    ("exp", "shape={n}"),
    ("erf", "shape={n}"),
    ("softplus", "shape={n}"),
    ("mish", "shape={n}"),
    ("hardswish", "shape={n}"),
    ("softmax", "rows={r},cols=1024"),
    ("layer_norm", "rows={r},cols=1024"),
    ("rms_norm", "rows={r},cols=1024"),
]


def bench(binary, isa, op, case):
    env = dict(os.environ, OPSNN_ISA=isa)
    name = "gelu" if op == "gelu_tanh" else op
    out = subprocess.run([binary, "bench", "--op", name, "--case", case, "--threads", "1", "--json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ops", default="")
    ap.add_argument("--isas", default="avx2,avx512")
    ap.add_argument("--no-big", action="store_true", help="only the cache-resident case")
    ap.add_argument("bins", nargs="+")
    a = ap.parse_args()
    ops = [o for o in OPS if not a.ops or o[0] in a.ops.split(",")]
    print("%-11s %-6s %-4s %12s %12s %10s %10s" %
          ("op", "isa", "bin", "ns/el(min)", "ns/el(med)", "frac(best)", "frac(med)"))
    for op, case in ops:
        small = case.format(n=SMALL, r=SMALL // 1024)
        big = case.format(n=16 << 20, r=16384)
        for isa in a.isas.split(","):
            ns = {b: [] for b in a.bins}
            frac = {b: [] for b in a.bins}
            for _ in range(a.rounds):
                for b in a.bins:  # A, B, A, B, ...
                    ns[b].append(bench(b, isa, op, small)["min_ms"] * 1e6 / SMALL)
                    if not a.no_big:
                        frac[b].append(bench(b, isa, op, big)["limit_fraction"])
            for i, b in enumerate(a.bins):
                print("%-11s %-6s %-4s %12.3f %12.3f %10.2f %10.2f" %
                      (op, isa, "AB"[i], min(ns[b]), statistics.median(ns[b]), max(frac[b], default=0),
                       statistics.median(frac[b]) if frac[b] else 0), flush=True)


if __name__ == "__main__":
    main()
