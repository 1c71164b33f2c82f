"""Segmented scans and "first position at or after i whose value reaches t" queries, all in numpy.

These are the building blocks of :mod:`netghost.forensics.tcp_vec`: tshark's per-direction TCP
state is a handful of "value of the last event so far" (forward fill), "largest so far" (running
max) and "when does the peer first ACK past x" questions over segments of a walk order; each one is
answered here for every packet at once, with no Python loop per packet.

Segments are contiguous runs of the walk order; ``seg`` is the non-decreasing segment id per
position and ``segstart`` the first position of each position's segment.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NONE", "FirstAtLeast", "ffill_index", "seg_running_max"]

NONE = np.int64(-(1 << 62))  # "no value" for value arrays (below every real value)
_B = 32  # fan-out of the block-maximum tree


def ffill_index(mask: np.ndarray, segstart: np.ndarray, *, inclusive: bool = True,
                pos: np.ndarray | None = None) -> np.ndarray:
    """Per position, the last position ``<= k`` (``< k`` when not inclusive) in its segment where
    ``mask`` is set, else -1."""
    n = mask.shape[0]
    idx = np.empty(n, np.int64)
    if inclusive:
        np.copyto(idx, np.arange(n, dtype=np.int64) if pos is None else pos)
        idx[~mask] = -1
    elif n:
        idx[0] = -1
        np.copyto(idx[1:], (np.arange(n, dtype=np.int64) if pos is None else pos)[:-1])
        idx[1:][~mask[:-1]] = -1
    np.maximum.accumulate(idx, out=idx)
    idx[idx < segstart] = -1
    return idx


def seg_running_max(val: np.ndarray, segkey: np.ndarray) -> np.ndarray:
    """Inclusive running maximum of ``val`` inside each segment (``val`` in ``[0, 2**34)``, or
    :data:`NONE` for "no value"); positions with nothing so far in their segment get :data:`NONE`.
    ``segkey`` is ``segment id << 35``.

    Why the offset: ``seg * 2**35 + value`` is increasing across segments, so one global
    ``maximum.accumulate`` never lets a value leak into the next segment.
    """
    key = val + 1
    key[val == NONE] = 0
    key += segkey
    np.maximum.accumulate(key, out=key)
    key -= segkey
    key -= 1
    key[key < 0] = NONE
    return key


class FirstAtLeast:
    """Answers "first position ``k >= start`` in the same segment with ``val[k] >= thr``" in bulk.

    Many queries: binary search on the segment's running maximum (valid when nothing before
    ``start`` in the segment already reached ``thr``), the rest on a 32-ary tree of block maxima (a
    bounded number of vectorised steps per level, whatever the distance). Few queries (or a sparse
    array) go to the tree directly, so a rarely-used array costs one pass, not a scan. Values must
    lie in ``[0, 2**34)`` or be :data:`NONE`.
    """

    def __init__(self, val: np.ndarray, segkey: np.ndarray, segstart: np.ndarray, segend: np.ndarray) -> None:
        self.val = val
        self.segkey = segkey
        self.segstart = segstart
        self.segend = segend  # one past the last position of each position's segment
        self._key: np.ndarray | None = None
        self._levels: list[np.ndarray] | None = None

    def query(self, start: np.ndarray, thr: np.ndarray) -> np.ndarray:
        """Positions (``n`` = none in the segment) for each (start, thr) pair; ``start`` must be a
        valid position or ``n`` (then the answer is ``n``)."""
        n = self.val.shape[0]
        out = np.full(start.shape[0], n, np.int64)
        q = np.flatnonzero(start < n)
        if not q.size:
            return out
        st, th = start[q], thr[q]
        if q.size * 64 < n:
            res = self._tree(st, th)
        else:
            if self._key is None:
                # segkey + running max + 1 (0 = nothing yet): increasing over the whole array
                key = self.val + 1
                key[self.val == NONE] = 0
                key += self.segkey
                np.maximum.accumulate(key, out=key)
                self._key = key
            prev = np.maximum(st - 1, 0)
            before = self._key[prev] - self.segkey[prev] - 1  # running max before start (-1: none)
            before[st - 1 < self.segstart[st]] = NONE
            res = np.searchsorted(self._key, self.segkey[st] + th + 1, "left")
            hard = np.flatnonzero(before >= th)
            if hard.size:
                res[hard] = self._tree(st[hard], th[hard])
        res[res >= self.segend[st]] = n
        out[q] = res
        return out

    def _build(self) -> list[np.ndarray]:
        levels = []
        cur = self.val
        while True:
            pad = (-cur.shape[0]) % _B
            lev = np.concatenate((cur, np.full(pad, NONE, np.int64))) if pad else cur
            levels.append(lev)
            if lev.shape[0] <= _B:
                break
            cur = lev.reshape(-1, _B).max(axis=1)
        return levels

    def _tree(self, start: np.ndarray, thr: np.ndarray) -> np.ndarray:
        if self._levels is None:
            self._levels = self._build()
        levels = self._levels
        n = self.val.shape[0]
        res = np.full(start.shape[0], n, np.int64)
        if levels[-1].max() == NONE:  # nothing at all to find
            return res
        active = np.arange(start.shape[0])
        idx = start.copy()
        offs = np.arange(_B)
        found_node: list[tuple[int, np.ndarray, np.ndarray]] = []  # (level, query ids, node index)
        for lv, lev in enumerate(levels):
            if not active.size:
                break
            inside = idx < lev.shape[0]
            active, idx = active[inside], idx[inside]
            blk = idx // _B
            cand = lev.reshape(-1, _B)[blk]
            mask = (offs[None, :] >= (idx % _B)[:, None]) & (cand >= thr[active][:, None])
            has = mask.any(axis=1)
            first = mask.argmax(axis=1)
            if has.any():
                found_node.append((lv, active[has], blk[has] * _B + first[has]))
            active, idx = active[~has], blk[~has] + 1
        for lv, q, top in found_node:
            t = thr[q]
            node = top
            for down in range(lv - 1, -1, -1):
                cand = levels[down].reshape(-1, _B)[node]
                node = node * _B + (cand >= t[:, None]).argmax(axis=1)
            res[q] = node
        return res
