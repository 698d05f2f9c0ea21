#!/usr/bin/env python3
"""Runs ONNX's backend node tests through `opsnn run` and compares outputs.

Selection: every test under DATA (default Debian's libonnx-testdata) whose
model uses only op types the importer maps (`opsnn onnx-ops`) and only
element types the library has (f32, f16, bf16, i8, u8, i32, i64, bool).
Tests of mapped ops with other element types (double, string, ...) or
opsets outside 7-21 are listed as skipped; tests of features the runtime
does not have (KNOWN below: integer arithmetic, training mode, ...) run but
are listed apart with the reason. Prints pass/fail per test and per op
type and ends with `N passed, M failed`; exits 1 if any selected test fails.

usage: onnx_node_tests.py OPSNN [--data DIR] [--filter SUBSTR] [-v]
"""
import argparse
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

LIB_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
             onnx.TensorProto.INT8, onnx.TensorProto.UINT8, onnx.TensorProto.INT32,
             onnx.TensorProto.INT64, onnx.TensorProto.BOOL}


# Tests of mapped op types that exercise a feature the runtime does not have,
# each with the reason. They still run: they are listed as KNOWN (or XPASS if
# one starts passing) and are not counted in the closing line.
KNOWN = [
    (r"test_clip_default_int8", "integer operands: the library's clip computes f32/bf16/f16 only"),
    (r"test_pow_types_(float|int|float32_int32|float32_int64|int32_float32|int64_float32)$",
     "operands of two dtypes (the library's pow takes one dtype for both)"),
    (r"select_last_index", "ArgMax/ArgMin select_last_index=1 (the library's argmax/argmin return the first index)"),
    (r"training|dropout_default_mask", "training mode or the Dropout mask / BatchNorm running statistics (an inference runtime)"),
    (r"BFLOAT16", "ONNX 1.12's test data stores bfloat16 as UINT16 and truncates instead of rounding to nearest even"),
    (r"test_reduce_sum_empty_axes_input_noop|test_reduce_sum_negative_axes_keepdims_random",
     "noop_with_empty_axes=1 with the axes passed as a run-time input"),
    (r"test_reshape_allowzero_reordered", "Reshape allowzero=1 with a zero in the shape"),
    (r"test_(averagepool|maxpool)_3d|test_convtranspose_3d",
     "3-D pooling / transposed convolution (the library's are 2-D; the 1-D forms run as 2-D)"),
    (r"test_maxpool_2d_uint8", "integer pooling (the library's pooling computes f32/bf16/f16)"),
    (r"test_maxpool_with_argmax_2d_precomputed_strides", "MaxPool storage_order=1 (column-major indices)"),
    (r"test_resize_downsample_scales_(linear|cubic)_align_corners",
     "align_corners with in*scale not an integer: ONNX's reference maps with the unrounded in*scale, "
     "the library with the integer output size"),
    (r"tf_half_pixel_for_nn", "Resize's TF1 mode tf_half_pixel_for_nn (the library's resize has the other five)"),
]


def known_reason(name):
    for pattern, reason in KNOWN:
        if re.search(pattern, name):
            return reason
    return None


def tolerance(dtype):
    # ONNX's backend test defaults (rtol 1e-3, atol 1e-7); 16-bit floats looser.
    if dtype == np.float16:
        return 1e-2, 1e-3
    return 1e-3, 1e-5


def model_types(model):
    types = set()
    for vi in list(model.graph.input) + list(model.graph.output):
        if vi.type.HasField("tensor_type"):
            types.add(vi.type.tensor_type.elem_type)
        else:
            types.add(-1)
    for init in model.graph.initializer:
        types.add(init.data_type)
    return types


def compare(expected, got):
    if expected.dtype == np.uint16 and got.dtype.name == "bfloat16":
        got = got.view(np.uint16)  # ONNX 1.12's test data stores bfloat16 as its bits
    if expected.dtype != got.dtype:
        return "dtype %s, expected %s" % (got.dtype, expected.dtype)
    if expected.shape != got.shape:
        return "shape %s, expected %s" % (got.shape, expected.shape)
    if expected.dtype.kind in "biu":
        bad = np.flatnonzero(expected != got)
        return None if bad.size == 0 else "%d values differ (first at %d: %s vs %s)" % (
            bad.size, bad[0], got.flat[bad[0]], expected.flat[bad[0]])
    rtol, atol = tolerance(expected.dtype)
    e = expected.astype(np.float64)
    g = got.astype(np.float64)
    ok = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    if ok.all():
        return None
    i = np.flatnonzero(~ok)[0]
    return "%d of %d values off (first at %d: %r vs %r)" % ((~ok).sum(), ok.size, i, g.flat[i], e.flat[i])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("opsnn")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--filter", default="")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()

    mapped = set(l.split()[0] for l in subprocess.run(
        [args.opsnn, "onnx-ops"], check=True, capture_output=True, text=True).stdout.splitlines())
    tests = sorted(d for d in glob.glob(os.path.join(args.data, "*"))
                   if os.path.exists(os.path.join(d, "model.onnx")) and args.filter in os.path.basename(d))
    if not tests:
        print("no node tests found under %s" % args.data)
        print("0 passed, 1 failed")
        return 1
    per_op = collections.defaultdict(lambda: [0, 0])
    passed, failed, skipped, known, unmapped = [], [], [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for d in tests:
            name = os.path.basename(d)
            model = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
            ops = sorted(set(n.op_type for n in model.graph.node))
            if not ops or any(o not in mapped for o in ops):
                unmapped += 1
                continue
            opset = max([o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] or [0])
            if not 7 <= opset <= 21:
                skipped.append((name, "opset %d outside 7-21" % opset))
                continue
            bad_types = model_types(model) - LIB_TYPES
            if bad_types:
                names = sorted(onnx.TensorProto.DataType.Name(t) if t >= 0 else "non-tensor" for t in bad_types)
                skipped.append((name, "element type " + ",".join(names)))
                continue
            data = os.path.join(d, "test_data_set_0")
            inputs = sorted(glob.glob(os.path.join(data, "input_*.pb")), key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
            outputs = sorted(glob.glob(os.path.join(data, "output_*.pb")), key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
            out_dir = os.path.join(tmp, name)
            cmd = [args.opsnn, "run", os.path.join(d, "model.onnx"), "--output-dir", out_dir]
            if inputs:
                cmd += ["--inputs"] + inputs
            r = subprocess.run(cmd, capture_output=True, text=True)
            why = None
            if r.returncode != 0:
                why = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
            else:
                for i, ref in enumerate(outputs):
                    mine = os.path.join(out_dir, "output_%d.pb" % i)
                    if not os.path.exists(mine):
                        why = "output_%d.pb missing" % i
                        break
                    e = numpy_helper.to_array(onnx.load_tensor(ref))
                    g = numpy_helper.to_array(onnx.load_tensor(mine))
                    why = compare(e, g)
                    if why:
                        why = "output %d: %s" % (i, why)
                        break
            reason = known_reason(name)
            if reason:
                known.append((name, reason, why))
                continue
            for o in ops:
                per_op[o][0 if why is None else 1] += 1
            if why is None:
                passed.append(name)
                if args.v:
                    print("PASS %s" % name)
            else:
                failed.append(name)
                print("FAIL %s: %s" % (name, why))
    for name, why in skipped:
        print("SKIP %s: %s" % (name, why))
    for name, reason, why in known:
        print("%s %s: %s%s" % ("KNOWN" if why else "XPASS", name, reason, " (%s)" % why if why else ""))
    print("\nper op type (passed/failed):")
    for o in sorted(per_op):
        p, f = per_op[o]
        print("  %-24s %3d / %d%s" % (o, p, f, "" if f == 0 else "  <-"))
    print("\n%d tests of unmapped op types not selected; %d skipped (element type or opset)" % (unmapped, len(skipped)))
    print("%d known-unsupported features (KNOWN above, not counted)" % len(known))
    print("%d passed, %d failed" % (len(passed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
