"""Tensors in/out, dtypes, out=, strides, errors, zero copy, the GIL, Op, packing."""
import threading
import time

import ml_dtypes
import numpy as np
import pytest

import ops_nn
from conftest import needs_torch, torch

F = ops_nn.functional


def gelu_ref(x):
    from math import erf, sqrt
    v = np.vectorize(lambda t: 0.5 * t * (1 + erf(t / sqrt(2))))
    return v(x.astype(np.float64))


def test_numpy_in_numpy_out(rng):
    x = rng.standard_normal((33, 17)).astype(np.float32)
    y = F.gelu(x)
    assert type(y) is np.ndarray and y.dtype == np.float32 and y.shape == x.shape
    np.testing.assert_allclose(y, gelu_ref(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dt,tol", [(np.float16, 2e-3), (ml_dtypes.bfloat16, 1e-2)])
def test_numpy_16bit_dtypes_kept(rng, dt, tol):
    x = rng.standard_normal((8, 31)).astype(dt)
    y = F.gelu(x)
    assert y.dtype == np.dtype(dt)
    np.testing.assert_allclose(y.astype(np.float64), gelu_ref(x.astype(np.float32)), rtol=tol,
                               atol=tol)


def test_integer_and_bool_dtypes(rng):
    idx = np.array([[2, 0], [1, 1]], dtype=np.int64)
    table = rng.standard_normal((3, 4)).astype(np.float32)
    e = F.embedding(table, idx) if "embedding" in ops_nn._core.op_names() else None
    if e is not None:
        np.testing.assert_array_equal(e, table[idx])
    cond = np.array([True, False, True])
    a = np.ones(3, np.float32)
    b = np.zeros(3, np.float32)
    np.testing.assert_array_equal(F.where(cond, a, b), np.where(cond, a, b))
    for dt in (np.int8, np.uint8, np.int32, np.int64):
        c = F.cast(np.arange(5, dtype=np.float32), to=np.dtype(dt).name)
        assert c.dtype == dt
        np.testing.assert_array_equal(c, np.arange(5))


def test_out_writes_into_caller_buffer(rng):
    x = rng.standard_normal(100).astype(np.float32)
    out = np.empty_like(x)
    r = F.relu(x, out=out)
    assert r is out
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    with pytest.raises(ops_nn.Error, match="relu: output 0"):
        F.relu(x, out=np.empty(99, np.float32))


def test_strided_inputs_read_in_place(rng):
    base = rng.standard_normal((64, 48)).astype(np.float32)
    xt = base.T  # strides (1, 48)
    y = F.exp(xt)
    np.testing.assert_allclose(y, np.exp(xt), rtol=1e-6)
    sl = base[::2, 3:40:3]
    np.testing.assert_allclose(F.add(sl, sl), sl + sl, rtol=0)
    assert ops_nn._core._data_ptr(sl) == sl.ctypes.data
    bc = np.broadcast_to(base[0], (5, 48))  # zero stride
    np.testing.assert_allclose(F.tanh(bc), np.tanh(bc), rtol=1e-6, atol=1e-7)


def test_zero_copy_by_pointer(rng):
    x = rng.standard_normal((256, 256)).astype(np.float32)
    y = F.gelu(x)
    ins, outs = ops_nn._core._last_pointers()
    assert ins == [x.ctypes.data]  # the library read x where it lies
    assert outs == [y.ctypes.data]  # y is the memory the library wrote
    assert y.ctypes.data % 64 == 0  # the library's 64-byte aligned allocation


def test_errors_are_clear(rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)
    assert issubclass(ops_nn.Error, ValueError)
    with pytest.raises(ops_nn.Error, match=r"layer_norm: .*scale.*expected.*\[8\].*got.*\[7\]"):
        F.layer_norm(x, np.ones(7, np.float32), np.zeros(7, np.float32))
    with pytest.raises(ops_nn.Error, match="gelu: input 'x': expected a NumPy array.*got list"):
        F.gelu([1.0, 2.0])
    with pytest.raises(ops_nn.Error, match="gelu: input 'x': expected an array of dtype.*float64"):
        F.gelu(np.zeros(3))
    with pytest.raises(ops_nn.Error, match="negative strides"):
        F.gelu(x[:, ::-1])
    with pytest.raises(ops_nn.Error, match="softmax: attribute 'axis': expected an int, got str"):
        F.softmax(x, axis="last")
    with pytest.raises(TypeError):
        F.softmax(x, bogus=1)


def test_gil_released_while_kernels_run():
    x = np.ones(1 << 24, np.float32)
    F.gelu(x)  # warm: the Op is cached
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
    t0 = time.perf_counter()
    for _ in range(3):
        F.gelu(x)
    elapsed = time.perf_counter() - t0
    during = count - before
    stop = True
    t.join()
    # With the GIL held, the spinning thread could only run between calls (a
    # few increments); released, it runs the whole time.
    assert during > 1000, (during, elapsed)


def test_threads_run_ops_concurrently_and_correctly(rng):
    xs = [rng.standard_normal((512, 96)).astype(np.float32) for _ in range(4)]
    w = np.ones(96, np.float32)
    b = np.zeros(96, np.float32)
    ref = [F.layer_norm(x, w, b) for x in xs]
    errors = []

    def work(i):
        for _ in range(20):
            if not np.array_equal(F.layer_norm(xs[i], w, b), ref[i]):
                errors.append(i)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_two_phase_op(rng):
    x = rng.standard_normal((16, 64)).astype(np.float32)
    w = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    op = ops_nn.Op("layer_norm", inputs=[x, w, b], axis=-1, eps=1e-6)
    assert op.kernel and op.outputs[0].shape == (16, 64)
    y1 = op(x, w, b)
    np.testing.assert_array_equal(y1, F.layer_norm(x, w, b, eps=1e-6))
    d = ops_nn.TensorDesc("f32", [16, 64])
    op2 = ops_nn.Op("layer_norm", inputs=[d, ops_nn.desc(w), None])
    out = np.empty((16, 64), np.float32)
    assert op2(x, w, None, out=out) is out
    with pytest.raises(ops_nn.Error, match="layer_norm: input 0"):
        op(x[:8], w, b)


def test_pack_matrix(rng):
    a = rng.standard_normal((5, 64)).astype(np.float32)
    wt = rng.standard_normal((32, 64)).astype(np.float32)  # linear weight [N, K]
    bias = rng.standard_normal(32).astype(np.float32)
    p = ops_nn.pack_matrix(wt, transposed=True)
    assert (p.k, p.n) == (64, 32)
    y = ops_nn.matmul_packed(a, p, bias=bias, activation="relu")
    ref = np.maximum(a.astype(np.float64) @ wt.T.astype(np.float64) + bias, 0)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


def test_tools():
    assert ops_nn.isa() in ("scalar", "avx2", "avx512")
    info = ops_nn.cpu_info()
    assert info["logical_cores"] >= 1 and "avx2" in info
    ops_nn.set_num_threads(1)
    assert ops_nn.num_threads() == 1
    ops_nn.set_num_threads(2)
    listing = ops_nn.ops()
    gelu = next(o for o in listing if o["name"] == "gelu")
    assert set(gelu) >= {"name", "family", "doc", "dtypes", "inputs", "attributes", "kernels",
                         "dispatch"}
    res = ops_nn.check("gelu", "bf16")
    assert res and all(r["passed"] for r in res)
    b = ops_nn.bench("relu", "shape=4096", "f32", threads=1)
    assert b["threads"] == 1 and b["min_ms"] > 0 and b["limit_kind"] == "copy_gbps"
    bs = ops_nn.bench_cases("relu", ["shape=4096", "shape=8192"], "f32", threads=1)
    assert [x["case"] for x in bs] == ["shape=4096", "shape=8192"]
    assert bs[0]["repeats"] == bs[1]["repeats"] >= 10 and all(x["min_ms"] > 0 for x in bs)
    with pytest.raises(ops_nn.Error, match="registry"):
        ops_nn.check("no_such_op")


@needs_torch
def test_torch_in_torch_out():
    x = torch.randn(128, 128)
    y = F.gelu(x)
    assert isinstance(y, torch.Tensor) and y.shape == x.shape and y.dtype == torch.float32
    torch.testing.assert_close(y, torch.nn.functional.gelu(x), rtol=1e-5, atol=1e-6)
    ins, outs = ops_nn._core._last_pointers()
    assert ins == [x.data_ptr()] and outs == [y.data_ptr()]


@needs_torch
@pytest.mark.parametrize("name,tfn,kw", [
    ("silu", lambda x: torch.nn.functional.silu(x), {}),
    ("relu", lambda x: torch.relu(x), {}),
    ("tanh", lambda x: torch.tanh(x), {}),
    ("sigmoid", lambda x: torch.sigmoid(x), {}),
    ("softmax", lambda x: torch.softmax(x, -1), {"axis": -1}),
    ("gelu", lambda x: torch.nn.functional.gelu(x, approximate="tanh"), {"approximate": "tanh"}),
])
def test_against_torch_unary(name, tfn, kw):
    if name not in ops_nn._core.op_names():
        pytest.skip(name)
    x = torch.randn(37, 130)
    torch.testing.assert_close(getattr(F, name)(x, **kw), tfn(x), rtol=2e-5, atol=2e-6)


@needs_torch
def test_against_torch_layer_norm_matmul_bf16():
    x = torch.randn(6, 96)
    w, b = torch.randn(96), torch.randn(96)
    torch.testing.assert_close(F.layer_norm(x, w, b), torch.nn.functional.layer_norm(x, (96,), w, b),
                               rtol=1e-4, atol=1e-5)
    a, m = torch.randn(19, 40), torch.randn(40, 23)
    torch.testing.assert_close(F.matmul(a, m), a @ m, rtol=1e-4, atol=1e-4)
    xb = torch.randn(64, 64).to(torch.bfloat16)
    yb = F.gelu(xb)
    assert yb.dtype == torch.bfloat16
    torch.testing.assert_close(yb.float(), torch.nn.functional.gelu(xb.float()), rtol=1e-2,
                               atol=1e-2)
    xs = torch.randn(64, 64)[:, 1::2]  # strided torch view
    torch.testing.assert_close(F.exp(xs), torch.exp(xs))


@needs_torch
def test_torch_errors():
    with pytest.raises(ops_nn.Error, match="requires_grad"):
        F.gelu(torch.randn(4, requires_grad=True))
    with pytest.raises(ops_nn.Error, match="gelu: input 'x': expected a CPU tensor"):
        F.gelu(torch.empty(4, device="meta"))
    with pytest.raises(ops_nn.Error, match="dtype"):
        F.gelu(torch.zeros(4, dtype=torch.complex64))


@needs_torch
def test_torch_out_and_mixed():
    x = torch.randn(10)
    out = torch.empty(10)
    assert F.relu(x, out=out) is out
    torch.testing.assert_close(out, torch.relu(x))
    y = F.add(np.ones(3, np.float32), torch.ones(3))  # the first input's kind
    assert isinstance(y, np.ndarray)


def test_ops_is_the_cli_listing():
    import json
    import os
    import subprocess
    cli = os.environ.get("OPSNN_CLI")
    if not cli or not os.path.exists(cli):
        pytest.skip("OPSNN_CLI (the opsnn tool) not built")
    listing = json.loads(subprocess.run([cli, "ops", "--json"], check=True, capture_output=True,
                                        text=True).stdout)
    mine = {o["name"]: o for o in ops_nn.ops()}
    assert listing["isa"] == ops_nn.isa()
    for o in listing["ops"]:  # the CLI lists only its registry (no Python-registered ops)
        assert mine[o["name"]] == o


def test_constant_operands(rng):
    x = rng.standard_normal((7, 64)).astype(np.float32)
    w = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    plain = ops_nn.Op("linear", inputs=[x, w, b])
    lin = ops_nn.Op("linear", inputs=[x, ops_nn.constant(w), ops_nn.constant(b)])
    assert lin.inputs[1].is_constant and not lin.inputs[0].is_constant
    ref = plain(x, w, b)
    w[:] = 0  # the Op keeps its own copy of the constant
    got = lin(x)
    # At M <= 16 the plain weight is read in place (dot products over K), the
    # constant one packed: other summation order, not other bits of the result.
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(lin(x, None, None), got)
    with pytest.raises(ops_nn.Error, match="only constant operands may be left out"):
        ops_nn.Op("linear", inputs=[x, w, b])(x)


def test_any_dlpack_object_is_read_in_place(rng):
    class Dl:  # only the DLPack protocol, no buffer protocol
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    x = rng.standard_normal((9, 10)).astype(np.float32)
    y = F.exp(Dl(x))
    assert isinstance(y, np.ndarray)  # not NumPy or torch: results are NumPy arrays
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    assert ops_nn._core._last_pointers()[0] == [x.ctypes.data]
