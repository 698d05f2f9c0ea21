"""Ops registered from Python, and C++ plugins loaded at run time."""
import inspect
import os

import numpy as np
import pytest

import ops_nn


def test_python_op_with_reference_and_kernel():
    def ref(x, *, alpha):
        return np.where(x > 0, x, alpha * (np.exp(x) - 1))

    def kernel(x, *, alpha):
        return np.where(x > 0, x, alpha * np.expm1(x.astype(np.float32))).astype(x.dtype)

    f = ops_nn.register_op("py_elu", inputs=["x"], attrs={"alpha": 1.0}, doc="ELU in Python",
                           reference=ref, kernel=kernel,
                           cases=[("n17", [[17]], {"alpha": 0.5}), ("2d", [[8, 33]], {})])
    assert f is ops_nn.functional.py_elu
    assert "ELU in Python" in f.__doc__
    assert str(inspect.signature(f)) == "(x, *, alpha=1.0, out=None)"
    x = np.linspace(-3, 3, 50, dtype=np.float32)
    np.testing.assert_allclose(f(x, alpha=0.7), ref(x.astype(np.float64), alpha=0.7), rtol=1e-5,
                               atol=1e-6)
    res = ops_nn.check("py_elu", "f32")
    # The two cases, each also rerun with special values (NaN, inf, ...).
    assert [r["kernel"] for r in res if "+special" not in r["case"]] == ["py_elu_python"] * 2
    assert all(r["passed"] for r in res), res
    assert any(o["name"] == "py_elu" for o in ops_nn.ops())


def test_checker_catches_a_wrong_python_kernel():
    ops_nn.register_op("py_wrong", inputs=["x"], reference=lambda x: x * 2,
                       kernel=lambda x: (x * 2 + 0.1).astype(x.dtype), cases=[("n8", [[8]])])
    res = ops_nn.check("py_wrong", "f32")
    assert res and not any(r["passed"] for r in res)


def test_reference_only_op_runs_through_the_reference_kernel():
    f = ops_nn.register_op("py_square", inputs=["x"], reference=lambda x: x * x,
                           cases=[("n5", [[5]])])
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(f(x), x * x)


def test_python_errors_become_ops_nn_errors():
    def bad(x):
        raise RuntimeError("boom")

    f = ops_nn.register_op("py_bad", inputs=["x"], reference=bad, kernel=bad)
    with pytest.raises(ops_nn.Error, match="py_bad: kernel.*boom"):
        f(np.ones(3, np.float32))
    with pytest.raises(ops_nn.Error, match="already registered"):
        ops_nn.register_op("py_bad", inputs=["x"], reference=bad)


def test_plugin_appears_in_functional():
    path = os.environ.get("OPSNN_TEST_PLUGIN")
    if not path or not os.path.exists(path):
        pytest.skip("OPSNN_TEST_PLUGIN (the scaled_swish example plugin) not built")
    if "scaled_swish" not in ops_nn._core.op_names():
        ops_nn.load_plugin(path)
    f = ops_nn.functional.scaled_swish
    x = np.linspace(-4, 4, 9, dtype=np.float32)
    np.testing.assert_allclose(f(x, beta=2.0), x / (1 + np.exp(-2.0 * x)), rtol=1e-5, atol=1e-6)
    assert "beta" in inspect.signature(f).parameters
