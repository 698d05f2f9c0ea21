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
    if what == "erf" and len(sys.argv) >= 2:
        fit_erf(*[float(v) if i in (0, 1, 4) else int(v) for i, v in enumerate(sys.argv[2:])])



def fit_erf_rational(b=4.0, n_p=7, n_q=7, iters=40):
    """erf(u) = u P(u^2) / Q(u^2) on [0, b], q0 = 1: Sanathanan-Koerner
    iterations (linearised |P - f Q| / Q_prev) with Lawson weights for minimax
    of the relative error."""
    erf = np.vectorize(math.erf)
    u = np.concatenate([np.linspace(1e-4, b, 6000), b - np.geomspace(1e-6, 1, 2000)])
    u = np.unique(u.astype(np.float32).astype(np.float64))
    z = u * u
    f = erf(u) / u
    Vp = np.vander(z, n_p, increasing=True)
    Vq = np.vander(z, n_q, increasing=True)[:, 1:]
    qprev = np.ones_like(z)
    lw = np.full(len(z), 1.0 / len(z))
    best = None
    for it in range(iters):
        # P(z) - f z Q1(z) = f, scaled by 1/(f Qprev) (relative error), Lawson weights
        s = np.sqrt(lw) / (f * qprev)
        A = np.hstack([Vp, -(f[:, None] * Vq)]) * s[:, None]
        c, *_ = np.linalg.lstsq(A, f * s, rcond=None)
        p, q = c[:n_p], np.concatenate([[1.0], c[n_p:]])
        Q = np.vander(z, n_q, increasing=True) @ q
        err = np.abs((Vp @ p) / Q / f - 1)
        if best is None or err.max() < best[0]:
            best = (err.max(), p.copy(), q.copy())
        qprev = Q
        lw = lw * err
        lw /= lw.sum()
    m, p, q = best
    print("erf rational [0, %g]: P %d, Q %d coefs, approximation error alone %.3g rel" % (b, n_p, n_q, m))
    p32, q32 = np.float32(p), np.float32(q)
    u32 = u.astype(np.float32)
    z32 = (u32 * u32).astype(np.float32)
    P = horner32(p32, z32).astype(np.float64)
    Q = horner32(q32, z32).astype(np.float64)
    y = ((u32.astype(np.float64) * P).astype(np.float32).astype(np.float64) / Q).astype(np.float32)
    e = erf(u)
    print("  u P / Q in f32: max err %.3f ulp" % (np.abs(y - e) / ulp32(e)).max())
    print("  static constexpr float p[] = {%s};" % fmt(p32))
    print("  static constexpr float q[] = {%s};" % fmt(q32))


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "erf_rational":
    fit_erf_rational(*[float(v) if i == 0 else int(v) for i, v in enumerate(sys.argv[2:])])


def fit_gelu_table(w=0.85, deg=6, n=7, iters=60):
    """Q(a) = Phi(-a) = erfc(a / sqrt 2) / 2 on a = |x| in n pieces centred
    on k*w (k = 0..n-1; t = a/w - k in [-1/2, 1/2], piece 0 only a >= 0),
    degree deg in t each, for gelu(x) = relu(x) - |x| Q(|x|) (act_gelu_erf).
    Minimises the gelu error |x| * dQ (weight max(a, 1/4)). Table entry j of
    each printed row is coefficient j of piece k; piece n.. (a from
    (n - 1/2) w on) is Q = 0."""
    Q = np.vectorize(lambda a: 0.5 * math.erfc(a / math.sqrt(2.0)))
    rows = [[0.0] * 8 for _ in range(deg + 1)]
    worst = 0.0
    for k in range(n):
        t = np.linspace(0.0 if k == 0 else -0.5, 0.5, 4001)
        a = (t + k) * w
        basis = np.stack([t ** j for j in range(deg + 1)], axis=1)
        c = lawson(basis, Q(a), np.maximum(a, 0.25), iters)
        c32 = [np.float32(v) for v in c]
        for j in range(deg + 1):
            rows[j][k] = float(c32[j])
        got = horner32(c32, t).astype(np.float64)
        worst = max(worst, (np.abs(got - Q(a)) * np.maximum(a, 0.25)).max())
    tail = (n - 0.5) * w
    print("  max |x| dQ over the pieces %.3e; Q = 0 from a = %.4f: |x| Q there %.3e"
          % (worst, tail, tail * Q(tail)))
    for j, r in enumerate(rows):
        print("      {%s},  // t^%d" % (", ".join("%.9e" % v for v in r), j))


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "gelu_table":
    fit_gelu_table(*[float(v) if i == 0 else int(v) for i, v in enumerate(sys.argv[2:])])


def fit_exp_table(deg=3, iters=80):
    """e^r = 1 + c1 r + ... + c_deg r^deg on |r| <= ln2/16 (r = t - k ln2/8,
    k = round(8 t / ln2)), minimax in the relative error, for the 8-entry
    table exp of act_vec.inc (e^t = 2^(k>>3) * 2^((k&7)/8) * e^r). Also prints
    the table 2^(j/8) in f32."""
    h = math.log(2.0) / 16 * 1.0005  # a little beyond: k ln2/8 is rounded
    r = np.linspace(-h, h, 20001)
    basis = np.stack([r ** j for j in range(1, deg + 1)], axis=1)
    c = lawson(basis, np.expm1(r), np.exp(-r), iters)
    c32 = [1.0] + [np.float32(v) for v in c]
    got = horner32(c32, r).astype(np.float64)
    print("  max relative error of the f32 polynomial %.3e (c0 = 1)" % (np.abs(got / np.exp(r) - 1)).max())
    print("  c1..c%d: %s" % (deg, fmt(c32[1:])))
    print("  2^(j/8): %s" % fmt([2.0 ** (j / 8) for j in range(8)]))


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "exp_table":
    fit_exp_table(*[int(v) for v in sys.argv[2:]])
