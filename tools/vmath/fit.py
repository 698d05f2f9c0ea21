#!/usr/bin/env python3
"""Fits the polynomial coefficients of src/kernels/simd/vmath_body.inc.

Weighted minimax by Lawson's iteratively reweighted least squares on a dense
grid, in double, then the coefficients are rounded to f32 and the error of the
rounded polynomial is reported. Needs numpy (pip install numpy); only a
developer re-fitting coefficients runs this, the build does not.

  python3 tools/vmath/fit.py erf       # erf(x) = x P(x^2) and 1 - exp(Q(x))
"""
import math
import sys

import numpy as np


def lawson(basis, target, weight, iters=120):
    """Coefficients c minimising max |weight * (basis @ c - target)|."""
    A = basis * weight[:, None]
    b = target * weight
    w = np.full(len(b), 1.0 / len(b))
    best = None
    for _ in range(iters):
        sw = np.sqrt(w)
        c, *_ = np.linalg.lstsq(A * sw[:, None], b * sw, rcond=None)
        r = np.abs(A @ c - b)
        m = r.max()
        if best is None or m < best[0]:
            best = (m, c)
        w = w * r
        s = w.sum()
        if s == 0:
            break
        w /= s
    return best[1]


def horner32(c, x):
    """f32 Horner with FMAs (each step exact product + sum, rounded once)."""
    c = [np.float32(v) for v in c]
    x = x.astype(np.float32)
    r = np.full_like(x, c[-1])
    for k in range(len(c) - 2, -1, -1):
        r = (r.astype(np.float64) * x.astype(np.float64) + np.float64(c[k])).astype(np.float32)
    return r


def fmt(c):
    return ", ".join("%.9e" % np.float32(v) for v in c)


def ulp32(v):
    """Spacing of f32 numbers in the binade of |v| (normal range)."""
    return 2.0 ** (np.floor(np.log2(np.abs(v))) - 23)


def fit_erf(a=0.921875, b=3.92, n_small=7, n_tail=9, shift=0.0):
    erf = np.vectorize(math.erf)
    erfc = np.vectorize(math.erfc)
    # Small |x|: erf(x)/x = P(x^2) (relative error), evaluated as
    # fma(x, S(x^2), x) with S = P - 1, so only the last step rounds at full size.
    x = np.linspace(1e-6, a, 20000).astype(np.float32).astype(np.float64)
    z = x * x
    V = np.vander(z, n_small, increasing=True)
    t = erf(x) / x
    c = lawson(V, t, 1 / np.abs(t))
    print("erf small [0, %g]: %d coefs, approximation error alone %.3g rel" % (a, n_small, np.abs(V @ c / t - 1).max()))
    cS = c.copy()
    cS[0] -= 1
    c32 = np.float32(cS)
    x32 = x.astype(np.float32)
    S = horner32(c32, x32 * x32).astype(np.float64)
    y = (x * S + x).astype(np.float32)
    print("  fma(x, S(x^2), x) in f32: max err %.3f ulp" % (np.abs(y - erf(x)) / ulp32(erf(x))).max())
    print("  static constexpr float cs[] = {%s};" % fmt(c32))
    # Tail: erfc(x) = exp(Q(x - shift)); the error of erf is erfc * dQ, so the
    # weight is erfc / ulp(erf).
    x = np.linspace(a, b, 20000).astype(np.float32).astype(np.float64)
    V = np.vander(x - shift, n_tail, increasing=True)
    t = np.log(erfc(x))
    e = erf(x)
    wgt = erfc(x) / ulp32(e)
    c = lawson(V, t, wgt)
    print("erf tail [%g, %g]: %d coefs, approximation error alone %.3f ulp" % (a, b, n_tail, (np.abs(np.exp(V @ c) - erfc(x)) / ulp32(e)).max()))
    c32 = np.float32(c)
    xs = (x.astype(np.float32) - np.float32(shift)).astype(np.float32)
    q = horner32(c32, xs).astype(np.float64)
    y = (1 - np.exp(q).astype(np.float32).astype(np.float64)).astype(np.float32)
    print("  1 - exp(Q) in f32 (exp correctly rounded): max err %.3f ulp" % (np.abs(y - e) / ulp32(e)).max())
    print("  static constexpr float ct[] = {%s};" % fmt(c32))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "erf"
    if what == "erf":
        fit_erf(*[float(v) if i in (0, 1, 4) else int(v) for i, v in enumerate(sys.argv[2:])])

