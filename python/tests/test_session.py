"""ops_nn.Session on small ONNX models built with the onnx package."""
import threading
import time

import numpy as np
import pytest

import ops_nn
from conftest import needs_torch, torch

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

W = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
B = np.linspace(-1, 1, 16, dtype=np.float32)


def save(tmp_path, nodes, inputs, outputs, inits=(), opset=17, name="m.onnx"):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / name
    onnx.save(m, str(path))
    return path


@pytest.fixture
def mlp(tmp_path):
    """h = relu(x @ W + B) * s, p = softmax(h), xsum = sum of x over its last axis."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["xw"]),
        helper.make_node("Add", ["xw", "B"], ["pre"]),
        helper.make_node("Relu", ["pre"], ["act"]),
        helper.make_node("Mul", ["act", "s"], ["h"]),
        helper.make_node("Softmax", ["h"], ["p"], axis=-1),
        helper.make_node("ReduceSum", ["x", "axes"], ["xsum"], keepdims=0),
    ]
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B"),
             numpy_helper.from_array(np.array([-1], np.int64), "axes")]
    inputs = [helper.make_tensor_value_info("x", f, ["batch", 8]),
              helper.make_tensor_value_info("s", f, ["batch", 16])]
    outputs = [helper.make_tensor_value_info("h", f, ["batch", 16]),
               helper.make_tensor_value_info("p", f, [None, 16]),
               helper.make_tensor_value_info("xsum", f, None)]
    return save(tmp_path, nodes, inputs, outputs, inits)


def mlp_ref(x, s):
    h = np.maximum(x.astype(np.float64) @ W + B, 0) * s
    e = np.exp(h - h.max(-1, keepdims=True))
    return {"h": h, "p": e / e.sum(-1, keepdims=True), "xsum": x.astype(np.float64).sum(-1)}


MISSING_S = r"feeds: expected a tensor for every input the outputs need, got none for s"


def feeds(rng, batch):
    return {"x": rng.standard_normal((batch, 8)).astype(np.float32),
            "s": rng.uniform(0.5, 2, (batch, 16)).astype(np.float32)}


def check(got, ref):
    assert set(got) == set(ref)
    for k in ref:
        assert isinstance(got[k], np.ndarray) and got[k].dtype == np.float32, k
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-5, atol=1e-5, err_msg=k)


def test_signature(mlp):
    s = ops_nn.Session(mlp)
    assert s.input_names == ["x", "s"]
    assert s.output_names == ["h", "p", "xsum"]
    assert s.inputs[0] == ops_nn.ValueInfo("x", "f32", ("batch", 8))
    assert s.outputs[0] == ("h", "f32", ("batch", 16))
    assert s.outputs[1] == ("p", "f32", (None, 16))  # a dim the model leaves unnamed
    assert s.outputs[2] == ("xsum", None, None)  # no declared shape
    assert "Session" in repr(s)


def test_matches_numpy_for_two_batch_sizes(mlp, rng):
    s = ops_nn.Session(mlp)
    for batch in (3, 5, 3):
        f = feeds(rng, batch)
        check(s.run(f), mlp_ref(f["x"], f["s"]))
    assert s.plans_cached == 2  # one plan per input shapes, reused


def test_matches_onnxruntime(mlp, rng):
    ort = pytest.importorskip("onnxruntime")
    ref = ort.InferenceSession(str(mlp), providers=["CPUExecutionProvider"])
    f = feeds(rng, 4)
    want = dict(zip(["h", "p", "xsum"], ref.run(None, f)))
    got = ops_nn.Session(mlp).run(f)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5, err_msg=k)


def test_output_subset_needs_only_its_inputs(mlp, rng):
    s = ops_nn.Session(mlp)
    f = feeds(rng, 2)
    got = s.run({"x": f["x"]}, outputs=["xsum"])
    assert list(got) == ["xsum"]
    want = f["x"].astype(np.float64).sum(-1)
    np.testing.assert_allclose(got["xsum"], want, rtol=1e-5, atol=1e-5)
    got = s.run(f, outputs=["p", "h"])
    assert list(got) == ["p", "h"]
    check(got, {k: v for k, v in mlp_ref(f["x"], f["s"]).items() if k in ("p", "h")})
    with pytest.raises(ops_nn.Error, match=MISSING_S):
        s.run({"x": f["x"]}, outputs=["p"])


def test_strided_inputs_are_copied_once(mlp, rng):
    s = ops_nn.Session(mlp)
    wide = rng.standard_normal((4, 16)).astype(np.float32)
    x = wide[:, ::2]  # strided view
    sc = np.ones((16, 4), np.float32).T  # transposed
    check(s.run({"x": x, "s": sc}), mlp_ref(np.ascontiguousarray(x), sc))


@pytest.mark.parametrize("bad,pattern", [
    ({"y": 1}, r"session: feed 'y': expected a model input \(x, s\), got an unknown name"),
    ({"x": np.zeros((2, 8), np.float16)}, r"feed 'x': expected dtype f32, got f16"),
    ({"x": np.zeros((2, 9), np.float32)}, r"feed 'x': expected shape \[batch, 8\], got \[2, 9\]"),
    ({"x": np.zeros((2, 8, 1), np.float32)},
     r"feed 'x': expected shape \[batch, 8\], got \[2, 8, 1\]"),
    ({"x": np.zeros((2, 8), np.float32)}, MISSING_S),
    ({"x": np.zeros((2, 8), np.float32), "s": np.zeros((3, 16), np.float32)},
     r"feed 's' dim 'batch': expected 2 \(as in feed 'x'\), got 3"),
    ({"x": "not a tensor"}, r"feed 'x': expected a NumPy array"),
])
def test_feed_errors(mlp, bad, pattern):
    s = ops_nn.Session(mlp)
    with pytest.raises(ops_nn.Error, match=pattern):
        s.run(bad)


def test_other_errors(mlp, tmp_path, rng):
    s = ops_nn.Session(mlp)
    with pytest.raises(ops_nn.Error, match=r"output 'q': expected a model output \(h, p, xsum\)"):
        s.run(feeds(rng, 1), outputs=["q"])
    with pytest.raises(TypeError):
        s.run([np.zeros((1, 8), np.float32)])
    with pytest.raises(ops_nn.Error):
        ops_nn.Session(tmp_path / "missing.onnx")
    (tmp_path / "junk.onnx").write_bytes(b"\x08\x07junk")
    with pytest.raises(ops_nn.Error):
        ops_nn.Session(tmp_path / "junk.onnx")


def test_pinned_shape_input_gets_a_plan_per_value(tmp_path, rng):
    # Reshape's target shape as a graph input: each value needs its own plan.
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
              helper.make_tensor_value_info("shape", TensorProto.INT64, [2])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    path = save(tmp_path, nodes, inputs, outputs)
    s = ops_nn.Session(path)
    x = rng.standard_normal((2, 6)).astype(np.float32)
    for shape in ([3, 4], [4, 3], [3, 4]):
        y = s.run({"x": x, "shape": np.array(shape, np.int64)})["y"]
        np.testing.assert_array_equal(y, x.reshape(shape))
    assert s.plans_cached == 2


@needs_torch
def test_torch_in_torch_out(mlp, rng):
    s = ops_nn.Session(mlp)
    f = feeds(rng, 3)
    got = s.run({k: torch.from_numpy(v) for k, v in f.items()})
    assert all(isinstance(v, torch.Tensor) for v in got.values())
    check({k: v.numpy() for k, v in got.items()}, mlp_ref(f["x"], f["s"]))


def test_two_threads_share_a_session(mlp, rng):
    s = ops_nn.Session(mlp)
    cases = [feeds(rng, b) for b in (2, 3)]
    refs = [mlp_ref(f["x"], f["s"]) for f in cases]
    errors = []

    def work(i):
        try:
            for _ in range(50):
                check(s.run(cases[i]), refs[i])
                check(s.run(cases[0]), refs[0])  # both threads on one plan too
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[0]


def test_gil_released_while_a_session_runs(tmp_path):
    f = TensorProto.FLOAT
    path = save(tmp_path, [helper.make_node("Sigmoid", ["x"], ["y"])],
                [helper.make_tensor_value_info("x", f, [1 << 24])],
                [helper.make_tensor_value_info("y", f, [1 << 24])])
    s = ops_nn.Session(path)
    x = np.ones(1 << 24, np.float32)
    s.run({"x": x})  # warm: the plan exists
    count = 0
    stop = False

    def spin():
        nonlocal count
        while not stop:
            count += 1

    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.01)
    before = count
    for _ in range(3):
        s.run({"x": x})
    during = count - before
    stop = True
    t.join()
    assert during > 1000, during


def test_output_that_is_an_input(tmp_path, rng):
    f = TensorProto.FLOAT
    path = save(tmp_path, [helper.make_node("Identity", ["x"], ["same"]),
                           helper.make_node("Neg", ["x"], ["neg"])],
                [helper.make_tensor_value_info("x", f, [3])],
                [helper.make_tensor_value_info("same", f, [3]),
                 helper.make_tensor_value_info("neg", f, [3])])
    s = ops_nn.Session(path)
    x = rng.standard_normal(3).astype(np.float32)
    for outs in (None, ["same"]):
        got = s.run({"x": x}, outputs=outs)
        np.testing.assert_array_equal(got["same"], x)
        assert not np.shares_memory(got["same"], x)  # a new array, not the feed
    np.testing.assert_array_equal(s.run({"x": x})["neg"], -x)
