"""Every op through its Python call (ops_nn.functional) on its own case table,
against the op's float64 reference, for f32 (and bf16/f16 where it computes in them)."""
import inspect

import ml_dtypes
import numpy as np
import pytest

import ops_nn
from conftest import close

OPS = [o for o in ops_nn.ops()]


def case_ids(op, dtype):
    return ops_nn._core._cases(op, dtype)


@pytest.mark.parametrize("op", [o["name"] for o in OPS])
def test_every_op_f32(op):
    fn = getattr(ops_nn.functional, op)
    if "f32" not in next(o["dtypes"] for o in OPS if o["name"] == op):
        pytest.skip(f"{op} does not compute in f32 (its other dtypes are swept below)")
    cases = case_ids(op, "f32")
    if not cases:
        pytest.skip(f"{op} has no case table")
    for name, inputs, attrs, refs, tols in cases:
        outs = fn(*inputs, **attrs)
        if not isinstance(outs, tuple):
            outs = (outs,)
        assert len(outs) == len(refs), name
        for got, ref, (atol, rtol) in zip(outs, refs, tols):
            assert isinstance(got, np.ndarray)
            close(got, ref, atol, rtol)


@pytest.mark.parametrize("op,dtype", [(o["name"], d) for o in OPS for d in o["dtypes"] if d != "f32"])
def test_every_op_other_dtypes(op, dtype):
    np_dtype = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "i8": np.int8, "u8": np.uint8,
                "i32": np.int32, "i64": np.int64, "bool": np.bool_}[dtype]
    fn = getattr(ops_nn.functional, op)
    for name, inputs, attrs, refs, tols in case_ids(op, dtype):
        outs = fn(*inputs, **attrs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        # The dtype path is taken: some input or output has the dtype (cases
        # whose inputs keep their own integer dtypes are the same for every run).
        if any(x is not None and np.issubdtype(x.dtype, np.floating) or
               (x is not None and x.dtype == ml_dtypes.bfloat16) for x in inputs):
            assert any(x is not None and x.dtype == np_dtype
                       for x in list(inputs) + list(outs)), name
        for got, ref, (atol, rtol) in zip(outs, refs, tols):
            close(got, ref, atol, rtol)


def test_functional_covers_the_registry():
    names = {o["name"] for o in ops_nn.ops()}
    assert len(names) > 50
    for n in names:
        f = getattr(ops_nn.functional, n)
        assert f.__doc__ and ops_nn._core.schema(n)["doc"] in f.__doc__
        inspect.signature(f)


def test_signature_from_schema():
    sig = inspect.signature(ops_nn.functional.layer_norm)
    p = sig.parameters
    assert list(p)[:3] == ["x", "scale", "bias"]
    assert p["axis"].kind is inspect.Parameter.KEYWORD_ONLY and p["axis"].default == -1
    assert p["eps"].default == pytest.approx(1e-5)
    assert inspect.signature(ops_nn.functional.concat).parameters["inputs"].kind is (
        inspect.Parameter.VAR_POSITIONAL)


# ops_nn vs torch's own op, on each op's case-table inputs (f32).
TORCH_OPS = {
    "abs": "torch.abs(x)", "exp": "torch.exp(x)", "tanh": "torch.tanh(x)",
    "sigmoid": "torch.sigmoid(x)", "relu": "torch.relu(x)", "neg": "torch.neg(x)",
    "silu": "torch.nn.functional.silu(x)", "erf": "torch.erf(x)", "sqrt": "torch.sqrt(x)",
    "rsqrt": "torch.rsqrt(x)", "log": "torch.log(x)", "reciprocal": "torch.reciprocal(x)",
    "mish": "torch.nn.functional.mish(x)", "softplus": "torch.nn.functional.softplus(x)",
    "hardswish": "torch.nn.functional.hardswish(x)",
    "gelu": "torch.nn.functional.gelu(x, approximate=attrs.get('approximate', 'none'))",
    "leaky_relu": "torch.nn.functional.leaky_relu(x, attrs.get('alpha', 0.01))",
    "softmax": "torch.softmax(x, attrs.get('axis', -1))",
    "log_softmax": "torch.log_softmax(x, attrs.get('axis', -1))",
    "add": "torch.add(x, y)", "sub": "torch.sub(x, y)", "mul": "torch.mul(x, y)",
    "div": "torch.div(x, y)", "maximum": "torch.maximum(x, y)", "minimum": "torch.minimum(x, y)",
    "matmul": "torch.matmul(x, y)",
}


@pytest.mark.parametrize("op", sorted(TORCH_OPS))
def test_against_torch(op):
    torch = pytest.importorskip("torch")
    fn = getattr(ops_nn.functional, op)
    for name, inputs, attrs, refs, tols in case_ids(op, "f32"):
        if not all(a.dtype == np.float32 for a in inputs):
            continue  # integer cases: torch's type promotion differs by design
        ts = [torch.from_numpy(np.ascontiguousarray(a)) for a in inputs]
        got = fn(*ts, **attrs)
        assert isinstance(got, torch.Tensor)
        want = eval(TORCH_OPS[op], {"torch": torch, "attrs": attrs, "x": ts[0],
                                    "y": ts[1] if len(ts) > 1 else None})
        atol, rtol = tols[0]
        # Both are compared with the float64 reference's tolerance, doubled:
        # torch's own f32 error adds to ours.
        torch.testing.assert_close(got, want, atol=2 * atol + 1e-6, rtol=2 * rtol + 1e-6,
                                   equal_nan=True, msg=lambda m: f"{op} {name}: {m}")
