#!/usr/bin/env python3
"""ONNX Einsum through `opsnn run` vs onnxruntime, f32, for the one- and
two-operand equations the importer maps (matmul-shaped contractions,
transposes, sums), and the error for one it refuses.

usage: einsum_test.py OPSNN
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

CASES = [  # equation, operand shapes
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 7, 8)]),  # attention scores
    ("bhqk,bhkd->bqhd", [(2, 3, 5, 7), (2, 3, 7, 8)]),  # attention output, heads moved
    ("ij,jk", [(3, 4), (4, 5)]),  # implicit output ik
    ("i,i->", [(7,), (7,)]),  # inner product
    ("i,j->ij", [(3,), (4,)]),  # outer product
    ("ij,j->i", [(3, 4), (4,)]),  # matrix-vector
    ("bn,bnk->bk", [(2, 5), (2, 5, 3)]),
    ("ijk,k->ji", [(2, 3, 4), (4,)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),  # x @ w.T
    ("abc,cd->abd", [(2, 3, 4), (4, 6)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ijk->", [(2, 3, 4)]),
    ("ijk,jl->il", [(2, 3, 4), (3, 5)]),  # k summed away first
    ("ab,cbd->acd", [(3, 4), (2, 4, 5)]),  # an extra free letter of B
    ("xabk,kyz->zaybx", [(2, 3, 1, 4), (4, 2, 3)]),  # extras on both sides
]


def model(eq, shapes):
    names = ["x%d" % i for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=eq)
    g = helper.make_graph([node], "einsum", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                             for n, s in zip(names, shapes)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def run(opsnn, tmp, eq, shapes, rng):
    path = os.path.join(tmp, "m.onnx")
    onnx.save_model(model(eq, shapes), path)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    files = []
    for i, x in enumerate(xs):
        files.append(os.path.join(tmp, "in%d.pb" % i))
        onnx.save_tensor(numpy_helper.from_array(x), files[-1])
    out = os.path.join(tmp, "out")
    r = subprocess.run([opsnn, "run", path, "--inputs"] + files + ["--output-dir", out],
                       capture_output=True, text=True)
    return r, xs, path, out


def main():
    opsnn = sys.argv[1]
    rng = np.random.default_rng(0)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for eq, shapes in CASES:
            r, xs, path, out = run(opsnn, tmp, eq, shapes, rng)
            if r.returncode != 0:
                print("FAIL %s: %s" % (eq, r.stderr.strip()))
                failures += 1
                continue
            ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
                None, {"x%d" % i: x for i, x in enumerate(xs)})[0]
            got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
            ok = got.shape == ref.shape and np.allclose(got, ref, rtol=1e-4, atol=1e-5)
            print("%s %s: shape %s%s" % ("PASS" if ok else "FAIL", eq, got.shape,
                                         "" if ok else " vs %s" % (ref.shape,)))
            failures += not ok
        # Two contracted letters would need a reshape: refused with an error naming the equation.
        r, _, _, _ = run(opsnn, tmp, "ijk,jkl->il", [(2, 3, 4), (3, 4, 5)], rng)
        refused = r.returncode != 0 and "ijk,jkl->il" in r.stderr
        print("%s ijk,jkl->il refused" % ("PASS" if refused else "FAIL"))
        failures += not refused
    print("%d passed, %d failed" % (len(CASES) + 1 - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
