"""Copies made by the capture itself (a SPAN port or bridge seeing a packet twice, merged files).

Split from _context.py (the shared detector toolkit, whose ``Ctx`` answers "is this segment a
copy?" from :func:`capture_copies`): finding the copies is one self-contained job with its own
bounded-memory path.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netghost.forensics import spill
from netghost.forensics.arrays import (
    BLOCK,
    CHUNK,
    distinct,
    member,
    nonzero_blocks,
    paced,
    roomy,
    spans,
    take,
)
from netghost.forensics.engine import Analysis
from netghost.forensics.tcp import mix_hash

__all__ = ["capture_copies", "capture_duplicates"]


def capture_duplicates(a: Analysis, x: Any = None) -> np.ndarray:
    """Per analysed TCP segment: True when it is a copy made by the capture (:func:`capture_copies`).

    Args:
        a: the capture analysis.
        x: unused (kept for call sites that share a ``findings_base.Ctx``).
    """
    n = a.tcp_rows.shape[0]
    dup = np.zeros(n, bool) if roomy(n * 2) else spill.alloc(n, bool, zero=True)
    copies = capture_copies(a)
    for lo, hi in spans(copies.shape[0]):
        dup[copies[lo:hi]] = True
    return dup


def capture_copies(a: Analysis) -> np.ndarray:
    """Ascending indices of the analysed TCP segments that are copies made by the capture, not by the sender.

    A copy has the same addresses, ports, IP ID, seq, ack and payload as an earlier segment and
    appears < 1 ms after it (a SPAN/bridge seeing the packet twice) or *before* it in time (files
    merged). IP ID 0 (DF packets of some stacks) is ignored, and so are copies seen later than
    1 ms: some stacks resend a segment with its old IP ID after an RTO, which is a real retransmission.

    Why indices, not a per-segment mask: copies are rare, and every consumer asks either how many
    there are, which ones come first, or whether a few flagged segments are among them (a binary
    search), so a capture-long mask would only cost its pages and the passes that count it.
    """
    c = a.cols
    n = a.tcp_rows.shape[0]
    # a copy is always flagged by tshark (retransmission / dup-ACK ...), so only streams with flags matter
    fs = a.streams.flagged > 0 if len(a.streams) else np.zeros(0, bool)
    if not n or not fs.any():
        return np.zeros(0, np.int64)
    k_mul = np.uint32(0x9E3779B1)

    def candidates(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """(segment, digest of (seq, IP ID)) of segments lo..hi that could be copies."""
        sel = np.flatnonzero(fs.take(a.tcp_stream[lo:hi]))
        sel += lo
        r = a.tcp_rows.take(sel)
        ip_id = c.ip_id.take(r)
        keep = c.l3.take(r) == 4
        keep &= ip_id != 0
        # a copy repeats (seq, IP ID): only rows whose 32-bit digest of the pair repeats can be copies
        # (a digest collision only adds rows to the exact grouping below)
        k1 = c.seq.take(r).astype(np.uint32)
        k1 ^= ip_id.astype(np.uint32) * k_mul
        return sel.compress(keep), k1.compress(keep)

    if roomy(n * 64) or n <= BLOCK:
        # in cache-sized chunks: the per-candidate temporaries (~10 arrays of 8 bytes per segment of a
        # flagged stream) then reuse the same few pages instead of faulting in fresh ones
        parts = [candidates(lo, hi) for lo, hi in spans(n, CHUNK)]
        sel = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
        return _copies(c, sel, np.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1], a.tcp_rows)
    # past the memory budget: copies share their digest, so the candidates are split by digest range
    # into parts of about BLOCK rows (exact per part). Linear: a histogram pass, a pass scattering each
    # candidate into its part's slice of a spill-allocated store (stable: capture order kept), then
    # one slice per part, whose copies are marked in a spill-allocated mask (parts are not in capture order).
    hist = np.zeros(1 << 16, np.int64)
    for lo, hi in spans(n):
        hist += np.bincount(candidates(lo, hi)[1] >> np.uint32(16), minlength=1 << 16)
    cum = np.cumsum(hist)
    cuts = distinct(np.r_[0, np.searchsorted(cum, np.arange(BLOCK, int(cum[-1]), BLOCK), "right"), 1 << 16])
    part_of = np.searchsorted(cuts, np.arange(1 << 16), "right") - 1  # digest bucket -> part
    size = np.bincount(part_of, weights=hist, minlength=cuts.shape[0] - 1).astype(np.int64)
    bounds = np.r_[0, np.cumsum(size)]
    cursor = bounds[:-1].copy()
    store_sel, store_k = spill.alloc(int(cum[-1]), np.int64), spill.alloc(int(cum[-1]), np.uint32)
    for lo, hi in spans(n):
        sel, k1 = candidates(lo, hi)
        p = part_of[k1 >> np.uint32(16)]
        o = np.argsort(p, kind="stable")
        ps, cnt = p[o], np.bincount(p, minlength=size.shape[0])
        dest = cursor[ps] + np.arange(ps.shape[0]) - (np.cumsum(cnt) - cnt)[ps]
        store_sel[dest], store_k[dest] = sel[o], k1[o]
        cursor += cnt
    dup = spill.alloc(n, bool, zero=True)
    # (paced: each part's candidates lie at scattered rows of the spilled columns)
    for b0, b1 in paced(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)):
        if b1 - b0 >= 2:
            dup[_copies(c, np.asarray(store_sel[b0:b1]), np.asarray(store_k[b0:b1]), a.tcp_rows)] = True
    return nonzero_blocks(n, lambda lo, hi: dup[lo:hi])


def _copies(c: Any, sel: np.ndarray, k1: np.ndarray, tcp_rows: np.ndarray) -> np.ndarray:
    """The capture copies (ascending) among candidate segments ``sel`` (ascending; digests ``k1``)."""
    if sel.size < 2:
        return np.zeros(0, np.int64)
    ks = np.sort(k1)
    again = ks[1:][ks[1:] == ks[:-1]]
    if not again.size:
        return np.zeros(0, np.int64)
    sel = sel[member(k1, again)]
    r = take(tcp_rows, sel)
    h = np.full(r.shape[0], np.uint64(7), np.uint64)
    # (take: candidates lie at scattered rows; from spilled columns they are gathered in pieces)
    for col in (c.src_lo, c.dst_lo, c.sport, c.dport, c.ip_id, c.seq, c.ack, c.pay_hash):
        h = mix_hash(h, take(col, r).astype(np.uint64))
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    d = np.ones(r.shape[0], bool)
    d[first] = False
    ts = take(c.ts, r)
    d &= (ts - ts[first[inv.ravel()]]) < 0.001
    out: np.ndarray = sel[d]
    return out
