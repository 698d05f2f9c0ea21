"""Every op through its Python call (ops_nn.functional) on its own case table,
against the op's float64 reference, for f32 (and bf16/f16 where it computes in them)."""
import inspect

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


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("op", [o["name"] for o in OPS])
def test_every_op_16bit(op, dtype):
    if dtype not in ops_nn._core.schema(op)["dtypes"]:
        pytest.skip(f"{op} does not compute in {dtype}")
    fn = getattr(ops_nn.functional, op)
    for name, inputs, attrs, refs, tols in case_ids(op, dtype):
        outs = fn(*inputs, **attrs)
        outs = outs if isinstance(outs, tuple) else (outs,)
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
