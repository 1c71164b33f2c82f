"""Small numpy helpers for the summaries and findings that never import ``numpy.ma``.

Why: numpy imports its masked-array package (~15-40 ms CPU, once per process) the first time
``np.median``, ``np.percentile``, a plain ``np.unique`` (no index/inverse/count outputs),
``np.union1d`` or a sort-based ``np.isin`` runs. Nothing else in the CLI pipeline needs it, so the
report stages use these equivalents instead (same values; tests compare with numpy).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["distinct", "median", "median_p95", "member"]


def distinct(x: np.ndarray) -> np.ndarray:
    """``np.unique(x)`` for a 1-D integer array (sorted distinct values)."""
    s = np.sort(x)
    if s.shape[0] < 2:
        return s
    out: np.ndarray = s[np.r_[True, s[1:] != s[:-1]]]
    return out


def member(x: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.isin(x, values)`` for integer arrays, by binary search in the distinct values."""
    u = distinct(np.asarray(values))
    if u.shape[0] <= 8:  # a few values: plain comparisons beat a binary search per element
        hit = np.zeros(np.shape(x), bool)
        for v in u:
            hit |= x == v
        return hit
    pos = np.minimum(np.searchsorted(u, x), u.shape[0] - 1)
    out: np.ndarray = u[pos] == x
    return out


def median_p95(v: np.ndarray, scale: float = 1.0) -> tuple[float, float]:
    """``np.median(v * scale)`` and ``np.percentile(v * scale, 95)`` from one in-place partition of ``v``.

    Exactness: scaling by a positive constant is monotonic, so the order statistics of ``v * scale``
    are the scaled order statistics of ``v``; the mean of the middle pair and the linear
    interpolation use numpy's own formulas (``_median``: mean of the pair; ``_lerp``: ``a + d*g``,
    or ``b - d*(1-g)`` when ``g >= 0.5``) on the same float64 values.

    Args:
        v: finite samples, at least one (partitioned in place).
        scale: positive factor applied to the samples (1000 turns seconds into milliseconds).
    """
    n = v.shape[0]
    mid = [n // 2 - 1, n // 2] if n % 2 == 0 else [(n - 1) // 2]
    vi = (n - 1) * (95 / 100)
    prev = math.floor(vi)
    nxt = prev + 1
    if vi >= n - 1:
        prev = nxt = n - 1
    v.partition(sorted({*mid, prev, nxt}))
    if len(mid) == 2:
        med = (float(v[mid[0]]) * scale + float(v[mid[1]]) * scale) / 2
    else:
        med = float(v[mid[0]]) * scale
    g = vi - prev
    lo, hi = float(v[prev]) * scale, float(v[nxt]) * scale
    d = hi - lo
    return med, (hi - d * (1 - g) if g >= 0.5 else lo + d * g)


def median(v: np.ndarray) -> float:
    """``float(np.median(v))`` of finite samples (at least one), ``v`` partitioned in place."""
    n = v.shape[0]
    if n % 2:
        v.partition((n - 1) // 2)
        return float(v[(n - 1) // 2])
    v.partition([n // 2 - 1, n // 2])
    return (float(v[n // 2 - 1]) + float(v[n // 2])) / 2
