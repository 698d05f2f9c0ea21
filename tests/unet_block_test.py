#!/usr/bin/env python3
"""A Stable-Diffusion-style UNet/VAE block written as PyTorch's exporter
writes it: Conv 3x3 (bias, pads), GroupNorm as the opset-17 export spells it
(Reshape -> InstanceNormalization -> Reshape -> Mul -> Add), SiLU as
Sigmoid * x, a residual Add, 1x1 Convs, self-attention over the flattened
spatial dims (Reshape/Transpose/MatMul/Softmax, shapes from Shape/Gather/
Concat), Resize as F.interpolate(scale_factor=2) exports it (nearest,
asymmetric, floor, scales from a constant) and a strided downsampling Conv.
`--groupnorm 18|21` writes GroupNormalization nodes of that opset instead.

Runs it through `opsnn run` and onnxruntime and compares (f32 tolerance);
checks `opsnn info`'s planned arena against 1.2x the planner's lower bound,
that the plan fused each GroupNorm + SiLU into group_norm_silu,
and, given `--alloc-check BIN` (tests/onnx_steady_alloc.cc), that a
steady-state run of the plan makes no heap allocation.

usage: unet_block_test.py OPSNN [--alloc-check BIN] [--batch 2 --channels 64
       --size 16 --groups 8 --heads 2 --groupnorm export|18|21]
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


def build(C, G, heads, gn, rng):
    inits, nodes = [], []
    opset = {"export": 17, "18": 18, "21": 21}[gn]

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, outs=None, **attrs):
        name = "%s_%d" % (op, len(nodes))
        outs = outs or [name + "_out"]
        nodes.append(helper.make_node(op, ins, outs, name=name, **attrs))
        return outs[0] if len(outs) == 1 else outs

    w = lambda *s: (rng.standard_normal(s) * 0.1).astype(np.float32)
    i64 = lambda *v: np.array(v, np.int64)
    ax0 = const("axes0", i64(0))

    def dim(t, i):  # Shape -> Gather -> Unsqueeze, as the exporter writes t.shape[i]
        return node("Unsqueeze", [node("Gather", [node("Shape", [t]), const("idx%d" % i, np.array(i, np.int64))],
                                       axis=0), ax0])

    def conv(t, prefix, cin, cout, k, stride=1):
        p = k // 2
        return node("Conv", [t, const(prefix + ".weight", w(cout, cin, k, k)), const(prefix + ".bias", w(cout))],
                    dilations=[1, 1], group=1, kernel_shape=[k, k], pads=[p, p, p, p], strides=[stride, stride])

    def group_norm(t, prefix):
        gamma, beta = 1 + w(C), w(C)
        if gn == "export":  # torch.onnx opset 9-17 symbolic of F.group_norm
            r = node("Reshape", [t, const(prefix + ".gshape", i64(0, G, -1))])
            inorm = node("InstanceNormalization", [r, const(prefix + ".ones", np.ones(G, np.float32)),
                                                   const(prefix + ".zeros", np.zeros(G, np.float32))], epsilon=1e-5)
            back = node("Reshape", [inorm, node("Shape", [t])])
            return node("Add", [node("Mul", [back, const(prefix + ".weight", gamma.reshape(C, 1, 1))]),
                                const(prefix + ".bias", beta.reshape(C, 1, 1))])
        if gn == "18":  # per-group scale and bias
            gamma, beta = 1 + w(G), w(G)
        return node("GroupNormalization", [t, const(prefix + ".weight", gamma), const(prefix + ".bias", beta)],
                    epsilon=1e-5, num_groups=G)

    def silu(t):
        return node("Mul", [t, node("Sigmoid", [t])])

    # ResNet block: norm, SiLU, conv, norm, SiLU, conv, residual add.
    x = "x"
    h = conv(silu(group_norm(x, "res.norm1")), "res.conv1", C, C, 3)
    h = conv(silu(group_norm(h, "res.norm2")), "res.conv2", C, C, 3)
    r = node("Add", [x, h])

    # Self-attention over the H*W positions (proj_in / proj_out as 1x1 convs).
    a = conv(group_norm(r, "attn.norm"), "attn.proj_in", C, C, 1)
    b, c, hh, ww = (dim(a, i) for i in range(4))
    hw = node("Mul", [hh, ww])
    seq = node("Transpose", [node("Reshape", [a, node("Concat", [b, c, hw], axis=0)])], perm=[0, 2, 1])
    D = C // heads
    hd = const("attn.heads_dims", i64(heads, D))

    def proj(t, prefix):
        return node("Add", [node("MatMul", [t, const(prefix + ".weight", w(C, C))]), const(prefix + ".bias", w(C))])

    def split_heads(t, perm):
        return node("Transpose", [node("Reshape", [t, node("Concat", [b, hw, hd], axis=0)])], perm=perm)

    q = split_heads(proj(seq, "attn.to_q"), [0, 2, 1, 3])
    k = split_heads(proj(seq, "attn.to_k"), [0, 2, 3, 1])
    v = split_heads(proj(seq, "attn.to_v"), [0, 2, 1, 3])
    scores = node("Mul", [node("MatMul", [q, k]), const("attn.scale", np.array(D ** -0.5, np.float32))])
    ctx = node("Transpose", [node("MatMul", [node("Softmax", [scores], axis=-1), v])], perm=[0, 2, 1, 3])
    merged = node("Reshape", [ctx, node("Concat", [b, hw, const("attn.width", i64(C))], axis=0)])
    o = node("Transpose", [proj(merged, "attn.to_out")], perm=[0, 2, 1])
    o = node("Reshape", [o, node("Concat", [b, c, hh, ww], axis=0)])
    r2 = node("Add", [r, conv(o, "attn.proj_out", C, C, 1)])

    # Upsample (F.interpolate(scale_factor=2)) + conv, then a strided conv down.
    roi = const("up.roi", np.zeros(0, np.float32))
    up = node("Resize", [r2, roi, const("up.scales", np.array([1, 1, 2, 2], np.float32))],
              coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.75, mode="nearest",
              nearest_mode="floor")
    up = conv(up, "up.conv", C, C, 3)
    down = conv(up, "down.conv", C, C, 3, stride=2)
    node("Identity", [down], ["y"])

    graph = helper.make_graph(
        nodes, "unet_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", C, "height", "width"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", C, "height", "width"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset < 21 else 10
    if gn != "18":  # the checker refuses GroupNormalization-18 (deprecated by 21)
        onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("opsnn")
    ap.add_argument("--alloc-check", default="")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--groups", type=int, default=8)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--groupnorm", choices=["export", "18", "21"], default="export")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    model = build(a.channels, a.groups, a.heads, a.groupnorm, rng)
    checks, failures = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "unet_block.onnx")
        onnx.save_model(model, path)
        x = rng.standard_normal((a.batch, a.channels, a.size, a.size)).astype(np.float32)
        xpb = os.path.join(tmp, "x.pb")
        onnx.save_tensor(numpy_helper.from_array(x, "x"), xpb)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        ref = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        out_dir = os.path.join(tmp, "out")
        subprocess.run([a.opsnn, "run", path, "--inputs", xpb, "--output-dir", out_dir], check=True)
        got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out_dir, "output_0.pb")))
        err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        tol = 1e-4 * np.abs(ref).max() + 1e-5
        print("output %s %s vs onnxruntime: max abs err %.3g (tolerance %.3g), max |ref| %.3g" %
              (got.dtype, got.shape, err.max(), tol, np.abs(ref).max()))
        checks += 1
        if got.shape != ref.shape or got.dtype != ref.dtype or not (err <= tol).all():
            print("FAIL unet_block: output differs from onnxruntime")
            failures += 1
        info = subprocess.run([a.opsnn, "info", path, "--inputs", xpb],
                              check=True, capture_output=True, text=True).stdout
        mem = re.search(r"arena peak (\d+) B, lower bound (\d+) B", info)
        peak, bound = int(mem.group(1)), int(mem.group(2))
        print("arena peak %d B, lower bound %d B (%.3fx)" % (peak, bound, peak / bound))
        kernels = sorted(set(re.findall(r"\b(group_norm(?:_silu)?|instance_norm)\b", info)))
        print("norm kernels in the plan: %s" % ", ".join(kernels))
        checks += 2
        if "group_norm_silu" not in kernels or "instance_norm" in kernels:
            print("FAIL unet_block: GroupNorm + SiLU not fused into group_norm_silu")
            failures += 1
        if peak > 1.2 * bound:
            print("FAIL unet_block: arena above 1.2x the lower bound")
            failures += 1
        if a.alloc_check:
            r = subprocess.run([a.alloc_check, path, xpb], capture_output=True, text=True)
            print(r.stdout.strip() or r.stderr.strip())
            checks += 1
            if r.returncode != 0:
                print("FAIL unet_block: heap allocations in steady-state runs")
                failures += 1
    print("%d passed, %d failed" % (checks - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
