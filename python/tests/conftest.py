import os

import numpy as np
import pytest

import ops_nn

try:
    import torch
except ImportError:  # torch is optional: its tests skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def pytest_report_header():
    # Which package is under test: the build tree's or an installed one.
    return f"ops_nn {ops_nn.__version__} from {os.path.dirname(ops_nn.__file__)}"


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def close(got, ref, atol, rtol):
    """The checker's rule: |got - ref| <= atol + rtol |ref|, NaN where ref is NaN,
    infinities exactly; integer and bool outputs exactly."""
    got = np.asarray(got)
    if got.dtype.kind == "b":
        np.testing.assert_array_equal(got, ref != 0)
        return
    if got.dtype.kind in "iu":
        # The library stores a float64 in an integer saturating, truncating, NaN -> 0.
        info = np.iinfo(got.dtype)
        want = np.trunc(np.nan_to_num(ref, nan=0.0, posinf=info.max, neginf=info.min))
        want = np.clip(want, info.min, info.max).astype(got.dtype)
        np.testing.assert_array_equal(got, want)
        return
    g = got.astype(np.float64)
    assert g.shape == ref.shape, (g.shape, ref.shape)
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(g), nan)
    inf = np.isinf(ref) | np.isinf(g)
    np.testing.assert_array_equal(g[inf], ref[inf])
    fin = ~nan & ~inf
    err = np.abs(g[fin] - ref[fin])
    allowed = atol + rtol * np.abs(ref[fin])
    bad = err > allowed
    assert not bad.any(), f"max err {err.max()} at {np.argmax(err - allowed)}, allowed {allowed[bad][:3]}"
