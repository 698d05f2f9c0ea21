"""Per-call cost of ops_nn from Python next to the C++ call, in one process.

    PYTHONPATH=build/release/python python3 bench/bench_python_overhead.py [--rounds 7]

Rounds are interleaved (each round runs every contender once) so all see the
same load; min and median over rounds. Contenders:
  add, 16 elements:  C++ op.run (outputs allocated once), C++ Op::operator()
                     (allocates the output), Python functional.add (numpy,
                     allocates), functional.add(out=), ops_nn.Op, torch.
  gelu, 16M elements: C++ op.run vs functional.gelu(out=), and C++
                     Op::operator() vs functional.gelu (both allocate 64 MiB).
"""
import argparse
import statistics
import time

import numpy as np

import ops_nn

try:
    import torch
except ImportError:
    torch = None

F = ops_nn.functional
cpp = ops_nn._core._time_cpp


def py_time(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def run(contenders, rounds):
    times = {name: [] for name, _ in contenders}
    for _ in range(rounds):
        for name, f in contenders:
            times[name].append(f())
    return {k: (min(v), statistics.median(v)) for k, v in times.items()}


def report(title, res, unit, scale):
    print(title)
    for name, (mn, med) in res.items():
        print(f"  {name:44s} min {mn * scale:9.3f} {unit}  median {med * scale:9.3f} {unit}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    ops_nn.set_num_threads(args.threads)
    print(f"ops_nn {ops_nn.__version__}, isa {ops_nn.isa()}, {ops_nn.num_threads()} thread(s)")

    a = np.random.rand(16).astype(np.float32)
    b = np.random.rand(16).astype(np.float32)
    out = np.empty(16, np.float32)
    op = ops_nn.Op("add", inputs=[a, b])
    n = 20000
    small = [
        ("C++ op.run (output preallocated)", lambda: cpp("add", [a, b], {}, n, False)),
        ("C++ Op::operator() (allocates)", lambda: cpp("add", [a, b], {}, n, True)),
        ("Python functional.add(a, b) numpy", lambda: py_time(lambda: F.add(a, b), n)),
        ("Python functional.add(a, b, out=)", lambda: py_time(lambda: F.add(a, b, out=out), n)),
        ("Python ops_nn.Op('add')(a, b)", lambda: py_time(lambda: op(a, b), n)),
    ]
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        small.append(("Python functional.add(a, b) torch", lambda: py_time(lambda: F.add(ta, tb), n)))
        small.append(("torch.add(a, b) (for reference)", lambda: py_time(lambda: torch.add(ta, tb), n)))
    res = run(small, args.rounds)
    report("add, 16 x f32 (per call)", res, "us", 1e6)
    base_run, base_alloc = res["C++ op.run (output preallocated)"][0], res["C++ Op::operator() (allocates)"][0]
    py = res["Python functional.add(a, b) numpy"][0]
    print(f"  overhead functional.add vs C++ Op::operator(): {(py - base_alloc) * 1e6:.3f} us; "
          f"vs C++ op.run: {(py - base_run) * 1e6:.3f} us (min over rounds)")

    x = np.random.randn(1 << 24).astype(np.float32)
    y = np.empty_like(x)
    m = 5
    big = [
        ("C++ op.run (output preallocated)", lambda: cpp("gelu", [x], {}, m, False)),
        ("Python functional.gelu(x, out=y)", lambda: py_time(lambda: F.gelu(x, out=y), m)),
        ("C++ Op::operator() (allocates)", lambda: cpp("gelu", [x], {}, m, True)),
        ("Python functional.gelu(x)", lambda: py_time(lambda: F.gelu(x), m)),
    ]
    res = run(big, args.rounds)
    report("gelu, 16M x f32 (per call)", res, "ms", 1e3)
    r1 = res["Python functional.gelu(x, out=y)"][0] / res["C++ op.run (output preallocated)"][0]
    r2 = res["Python functional.gelu(x)"][0] / res["C++ Op::operator() (allocates)"][0]
    print(f"  Python/C++ out=: {r1:.3f}   allocating: {r2:.3f} (min over rounds)")


if __name__ == "__main__":
    main()
