#!/usr/bin/env python3
"""A GPT-2-style decoder block written as PyTorch's exporter writes it (opset
17: LayerNormalization, MatMul + Add, Split, Shape/Gather/Unsqueeze/Concat
feeding Reshape, Transpose, causal mask by Slice + Where, Softmax, the tanh
GELU as Pow/Mul/Add/Tanh, residual Adds), weights in an external-data file.
Runs it through `opsnn run` and onnxruntime and compares (f32 tolerance);
checks `opsnn info`'s planned arena against 1.2x the planner's lower bound.

usage: gpt2_block_test.py OPSNN [--batch 2 --seq 32 --width 128 --heads 4]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def build(C, H, max_pos, rng):
    D = C // H
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, outs=None, **attrs):
        name = "%s_%d" % (op, len(nodes))
        outs = outs or [name + "_out"]
        nodes.append(helper.make_node(op, ins, outs, name=name, **attrs))
        return outs[0] if len(outs) == 1 else outs

    w = lambda *s: (rng.standard_normal(s) * 0.05).astype(np.float32)
    x = "x"
    # ln_1
    h = node("LayerNormalization", [x, const("ln1.w", 1 + w(C)), const("ln1.b", w(C))], axis=-1, epsilon=1e-5)
    # c_attn: Conv1D as MatMul + Add
    qkv = node("Add", [node("MatMul", [h, const("attn.c_attn.w", w(C, 3 * C))]), const("attn.c_attn.b", w(3 * C))])
    q, k, v = node("Split", [qkv, const("split_sizes", np.array([C, C, C], np.int64))], ["q", "k", "v"], axis=2)

    i0, i1 = const("idx0", np.array(0, np.int64)), const("idx1", np.array(1, np.int64))
    heads_dims = const("heads_dims", np.array([H, D], np.int64))
    ax0 = const("axes0", np.array([0], np.int64))

    def batch_seq(t):  # Shape -> Gather -> Unsqueeze, as the exporter writes view(B, T, ...)
        s = node("Shape", [t])
        b = node("Unsqueeze", [node("Gather", [s, i0], axis=0), ax0])
        n = node("Unsqueeze", [node("Gather", [s, i1], axis=0), ax0])
        return b, n

    def split_heads(t, perm):
        b, n = batch_seq(t)
        shape = node("Concat", [b, n, heads_dims], axis=0)
        return node("Transpose", [node("Reshape", [t, shape])], perm=perm)

    qh = split_heads(q, [0, 2, 1, 3])
    kh = split_heads(k, [0, 2, 3, 1])
    vh = split_heads(v, [0, 2, 1, 3])
    scores = node("Div", [node("MatMul", [qh, kh]), const("sqrt_d", np.array(np.sqrt(D), np.float32))])
    # causal mask: bias[:, :, :T, :T] with T from Shape, then Where(mask, scores, min)
    _, n = batch_seq(q)
    zeros2 = const("zeros2", np.array([0, 0], np.int64))
    ends = node("Concat", [n, n], axis=0)
    mask_axes = const("mask_axes", np.array([2, 3], np.int64))
    bias = const("attn.bias", np.tril(np.ones((max_pos, max_pos), bool)).reshape(1, 1, max_pos, max_pos))
    mask = node("Slice", [bias, zeros2, ends, mask_axes])
    masked = node("Where", [mask, scores, const("mask_value", np.array(np.finfo(np.float32).min, np.float32))])
    probs = node("Softmax", [masked], axis=-1)
    ctx = node("Transpose", [node("MatMul", [probs, vh])], perm=[0, 2, 1, 3])
    b, n = batch_seq(q)
    merged = node("Reshape", [ctx, node("Concat", [b, n, const("width", np.array([C], np.int64))], axis=0)])
    attn = node("Add", [node("MatMul", [merged, const("attn.c_proj.w", w(C, C))]), const("attn.c_proj.b", w(C))])
    r1 = node("Add", [x, attn])
    # ln_2 + MLP with GPT-2's tanh GELU as exported
    h2 = node("LayerNormalization", [r1, const("ln2.w", 1 + w(C)), const("ln2.b", w(C))], axis=-1, epsilon=1e-5)
    f = node("Add", [node("MatMul", [h2, const("mlp.c_fc.w", w(C, 4 * C))]), const("mlp.c_fc.b", w(4 * C))])
    cube = node("Mul", [node("Pow", [f, const("three", np.array(3.0, np.float32))]), const("c044", np.array(0.044715, np.float32))])
    inner = node("Mul", [node("Add", [f, cube]), const("sqrt2pi", np.array(np.sqrt(2 / np.pi), np.float32))])
    g = node("Mul", [node("Mul", [f, const("half", np.array(0.5, np.float32))]),
                     node("Add", [node("Tanh", [inner]), const("one", np.array(1.0, np.float32))])])
    m = node("Add", [node("MatMul", [g, const("mlp.c_proj.w", w(4 * C, C))]), const("mlp.c_proj.b", w(C))])
    node("Add", [r1, m], ["y"])

    graph = helper.make_graph(
        nodes, "gpt2_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", C])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", C])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("opsnn")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    model = build(a.width, a.heads, max(64, a.seq), rng)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpt2_block.onnx")
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="gpt2_block.weights", size_threshold=256)
        x = rng.standard_normal((a.batch, a.seq, a.width)).astype(np.float32)
        onnx.save_tensor(numpy_helper.from_array(x, "x"), os.path.join(tmp, "x.pb"))
        ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        out_dir = os.path.join(tmp, "out")
        subprocess.run([a.opsnn, "run", path, "--inputs", os.path.join(tmp, "x.pb"), "--output-dir", out_dir], check=True)
        got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out_dir, "output_0.pb")))
        err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        tol = 1e-4 * np.abs(ref).max() + 1e-5
        print("output %s %s vs onnxruntime: max abs err %.3g (tolerance %.3g), max |ref| %.3g" %
              (got.dtype, got.shape, err.max(), tol, np.abs(ref).max()))
        if got.shape != ref.shape or got.dtype != ref.dtype or not (err <= tol).all():
            print("FAIL gpt2_block: output differs from onnxruntime")
            failures += 1
        # The same run written as .npy: identical to the TensorProto output.
        npy_dir = os.path.join(tmp, "npy")
        subprocess.run([a.opsnn, "run", path, "--inputs", os.path.join(tmp, "x.pb"), "--output-dir", npy_dir,
                        "--format", "npy"], check=True)
        npy = np.load(os.path.join(npy_dir, "output_0.npy"))
        if npy.dtype != got.dtype or npy.shape != got.shape or not np.array_equal(npy, got):
            print("FAIL gpt2_block: --format npy differs from the .pb output")
            failures += 1
        info = subprocess.run([a.opsnn, "info", path, "--inputs", os.path.join(tmp, "x.pb")],
                              check=True, capture_output=True, text=True).stdout
        mem = re.search(r"arena peak (\d+) B, lower bound (\d+) B", info)
        peak, bound = int(mem.group(1)), int(mem.group(2))
        print("arena peak %d B, lower bound %d B (%.3fx)" % (peak, bound, peak / bound))
        if peak > 1.2 * bound:
            print("FAIL gpt2_block: arena above 1.2x the lower bound")
            failures += 1
    print("%d passed, %d failed" % (3 - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
