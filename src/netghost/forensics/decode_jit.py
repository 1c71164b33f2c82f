"""The decode of ``decode.py`` as one compiled per-packet loop (used only when numba is installed).

It mirrors :func:`netghost.forensics.decode.decode_batch` field for field, including the bounds-clipped
reads of garbage and the issue codes; ``tests/forensics/test_reader_robustness.py`` checks the two
decoders give identical columns on the corpus and on mutated captures. The numpy version stays the
reference (and the fallback); this one exists because a compiled loop touches each header once,
where the vectorised version makes ~100 passes over the batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netghost.forensics.accel import numba_module

__all__ = ["compiled_kernel", "decode_kernel"]

V4 = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
GOLD = np.uint64(0x9E3779B97F4A7C15)


def _c(pos: int, hi: int) -> int:
    return 0 if pos < 0 else (hi if pos > hi else pos)


def _u8(buf: Any, pos: int, hi: int) -> int:
    return int(buf[_c(pos, hi)])


def _u16(buf: Any, pos: int, hi: int) -> int:
    p = _c(pos, hi)
    return (int(buf[p]) << 8) | int(buf[p + 1])


def _u32(buf: Any, pos: int, hi: int) -> int:
    p = _c(pos, hi)
    return (int(buf[p]) << 24) | (int(buf[p + 1]) << 16) | (int(buf[p + 2]) << 8) | int(buf[p + 3])


def _u64(buf: Any, pos: int, hi: int) -> Any:
    return (np.uint64(_u32(buf, pos, hi)) << np.uint64(32)) | np.uint64(_u32(buf, pos + 4, hi))


def decode_kernel(buf: Any, off: Any, caplen: Any, wirelen: Any, lt: Any, out_i: Any, out_u: Any, out_b: Any) -> None:  # noqa: PLR0917  numba kernels take positional arrays
    """Decode every record into ``out_i`` int64[27, n], ``out_u`` uint64[9, n], ``out_b`` bool[3, n].

    Row order is the one :func:`netghost.forensics.decode.decode_batch` unpacks (INT_ROWS etc.).
    """
    n = off.shape[0]
    hi = buf.shape[0] - 9
    for i in range(n):
        o = off[i]
        end = o + caplen[i]
        lim = o + wirelen[i]
        iss = 0
        et = -1
        p = -1
        vlan = False
        lk = lt[i]
        if caplen[i] == 0:
            iss = 1
        known = True
        if lk == 1:
            et = _u16(buf, o + 12, hi)
            p = o + 14
            for _ in range(3):
                if et == 0x8100 or et == 0x88A8 or et == 0x9100:  # noqa: PLR1714  numba-friendly
                    vlan = True
                    et = _u16(buf, p + 2, hi)
                    p += 4
                else:
                    break
            if et == 0x8864:
                ppp = _u16(buf, p + 6, hi)
                lim = min(lim, p + 6 + _u16(buf, p + 4, hi))
                et = 0x0800 if ppp == 0x21 else (0x86DD if ppp == 0x57 else 0x10000 + ppp)
                p += 8
        elif lk == 113:
            et = _u16(buf, o + 14, hi)
            p = o + 16
        elif lk == 276:
            et = _u16(buf, o, hi)
            p = o + 20
        elif lk == 12 or lk == 14 or lk == 101 or lk == 228 or lk == 229:  # noqa: PLR1714
            ver = _u8(buf, o, hi) >> 4
            et = 0x0800 if ver == 4 else (0x86DD if ver == 6 else -1)
            p = o
        elif lk == 0 or lk == 108:  # noqa: PLR1714
            le = _u8(buf, o, hi) | (_u8(buf, o + 1, hi) << 8) | (_u8(buf, o + 2, hi) << 16) | (_u8(buf, o + 3, hi) << 24)
            fam = le if (lk == 0 and le < 256) else _u32(buf, o, hi)
            if fam == 2:
                et = 0x0800
            elif fam == 10 or fam == 23 or fam == 24 or fam == 28 or fam == 30:  # noqa: PLR1714
                et = 0x86DD
            else:
                et = -1
            p = o + 4
        else:
            known = False
            if iss == 0:
                iss = 3
        if known and iss == 0 and p > end:
            iss = 2
        if iss != 0:
            et = -1
        l3 = 0
        sh = np.uint64(0)
        sl = np.uint64(0)
        dh = np.uint64(0)
        dl = np.uint64(0)
        ttl = -1
        ipid = -1
        dscp = -1
        proto = -1
        l4 = -1
        l4len = -1
        frag = False
        if et == 0x0800:
            q = p
            vihl = _u8(buf, q, hi)
            ihl = (vihl & 15) * 4
            if q + 20 > end:
                iss = 4
            elif (vihl >> 4) != 4:
                iss = 5
            elif ihl < 20 or q + ihl > end:
                iss = 6
            else:
                l3 = 4
                tot = _u16(buf, q + 2, hi)
                ff = _u16(buf, q + 6, hi)
                dscp = _u8(buf, q + 1, hi) >> 2
                ipid = _u16(buf, q + 4, hi)
                ttl = _u8(buf, q + 8, hi)
                proto = _u8(buf, q + 9, hi)
                sh = V4
                dh = V4
                sl = np.uint64(_u32(buf, q + 12, hi))
                dl = np.uint64(_u32(buf, q + 16, hi))
                frag = (ff & 0x3FFF) != 0
                l4 = q + ihl
                l4len = (end - q if tot == 0 else min(tot, lim - q)) - ihl
        elif et == 0x86DD:
            q = p
            if q + 40 > end:
                iss = 4
            elif (_u8(buf, q, hi) >> 4) != 6:
                iss = 5
            else:
                l3 = 6
                dscp = (_u16(buf, q, hi) >> 6) & 0x3F
                ttl = _u8(buf, q + 7, hi)
                sh = _u64(buf, q + 8, hi)
                sl = _u64(buf, q + 16, hi)
                dh = _u64(buf, q + 24, hi)
                dl = _u64(buf, q + 32, hi)
                nh = _u8(buf, q + 6, hi)
                plen = _u16(buf, q + 4, hi)
                q += 40
                for _ in range(6):
                    if not (nh == 0 or nh == 43 or nh == 44 or nh == 51 or nh == 60):  # noqa: PLR1714
                        break
                    if nh == 44:
                        hl = 8
                        if (_u16(buf, q + 2, hi) & 0xFFF9) != 0:
                            frag = True
                    elif nh == 51:
                        hl = (_u8(buf, q + 1, hi) + 2) * 4
                    else:
                        hl = (_u8(buf, q + 1, hi) + 1) * 8
                    nh = _u8(buf, q, hi)
                    plen -= hl
                    q += hl
                proto = nh
                l4 = q
                l4len = min(plen, lim - q)
        sport = -1
        dport = -1
        seq = -1
        ack = -1
        tfl = -1
        win = -1
        thl = -1
        paylen = -1
        payoff = -1
        ity = -1
        ico = -1
        mtu = -1
        inp = -1
        isp = -1
        idp = -1
        ish = np.uint64(0)
        isl = np.uint64(0)
        idh = np.uint64(0)
        idl = np.uint64(0)
        mss = -1
        wsc = -1
        sack = False
        if l3 > 0 and not frag:
            q = l4
            if proto == 6:
                hl = (_u8(buf, q + 12, hi) >> 4) * 4
                if q + 20 > end:
                    iss = 7
                elif hl < 20:
                    iss = 8
                else:
                    sport = _u16(buf, q, hi)
                    dport = _u16(buf, q + 2, hi)
                    seq = _u32(buf, q + 4, hi)
                    ack = _u32(buf, q + 8, hi)
                    tfl = _u16(buf, q + 12, hi) & 0x0FFF
                    win = _u16(buf, q + 14, hi)
                    thl = hl
                    paylen = max(l4len - hl, 0)
                    payoff = q + hl
            elif proto == 17:
                if q + 8 > end:
                    iss = 9
                else:
                    sport = _u16(buf, q, hi)
                    dport = _u16(buf, q + 2, hi)
                    paylen = max(min(_u16(buf, q + 4, hi), l4len) - 8, 0)
                    payoff = q + 8
            elif proto == 1 or proto == 58:  # noqa: PLR1714
                if q + 4 > end:
                    iss = 10
                else:
                    ity = _u8(buf, q, hi)
                    ico = _u8(buf, q + 1, hi)
                    if proto == 1:
                        if ity == 3 and ico == 4:
                            mtu = _u16(buf, q + 6, hi)
                        err = ity == 3 or ity == 4 or ity == 5 or ity == 11 or ity == 12  # noqa: PLR1714
                    else:
                        if ity == 2:
                            mtu = _u32(buf, q + 4, hi)
                        err = ity == 1 or ity == 2 or ity == 3 or ity == 4  # noqa: PLR1714
                    if err:
                        iq = q + 8
                        pq = -1
                        if proto == 1:
                            if iq + 20 <= end and (_u8(buf, iq, hi) >> 4) == 4:
                                inp = _u8(buf, iq + 9, hi)
                                ish = V4
                                idh = V4
                                isl = np.uint64(_u32(buf, iq + 12, hi))
                                idl = np.uint64(_u32(buf, iq + 16, hi))
                                pq = iq + (_u8(buf, iq, hi) & 15) * 4
                        elif iq + 40 <= end and (_u8(buf, iq, hi) >> 4) == 6:
                            inp = _u8(buf, iq + 6, hi)
                            ish = _u64(buf, iq + 8, hi)
                            isl = _u64(buf, iq + 16, hi)
                            idh = _u64(buf, iq + 24, hi)
                            idl = _u64(buf, iq + 32, hi)
                            pq = iq + 40
                        if pq >= 0 and (inp == 6 or inp == 17) and pq + 4 <= end:  # noqa: PLR1714  numba-friendly
                            isp = _u16(buf, pq, hi)
                            idp = _u16(buf, pq + 2, hi)
        avail = min(paylen, end - payoff)
        avail = 0 if avail < 0 else (8 if avail > 8 else avail)
        ph = np.uint64(0)
        for k in range(8):
            byte = _u8(buf, payoff + k, hi) if avail > k else 0
            ph = (ph << np.uint64(8)) | np.uint64(byte)
        ph ^= np.uint64(paylen) * GOLD
        tsv = -1
        tse = -1
        if tfl >= 0 and thl > 20:
            is_syn = (tfl & 2) != 0
            pp = payoff - thl + 20
            z = min(payoff, end)
            for _ in range(40):
                if pp >= z:
                    break
                kind = _u8(buf, pp, hi)
                ln = _u8(buf, pp + 1, hi)
                if kind == 0:
                    break
                if kind == 1:
                    pp += 1
                    continue
                if ln < 2 or pp + ln > z:
                    break
                if is_syn and kind == 2 and ln == 4:
                    mss = _u16(buf, pp + 2, hi)
                elif is_syn and kind == 3 and ln == 3:
                    wsc = _u8(buf, pp + 2, hi)
                elif is_syn and kind == 4:
                    sack = True
                elif kind == 8 and ln == 10:
                    tsv = _u32(buf, pp + 2, hi)
                    tse = _u32(buf, pp + 6, hi)
                pp += ln
        out_i[0, i] = et
        out_i[1, i] = l3
        out_i[2, i] = ttl
        out_i[3, i] = ipid
        out_i[4, i] = dscp
        out_i[5, i] = proto
        out_i[6, i] = sport
        out_i[7, i] = dport
        out_i[8, i] = seq
        out_i[9, i] = ack
        out_i[10, i] = tfl
        out_i[11, i] = win
        out_i[12, i] = thl
        out_i[13, i] = paylen
        out_i[14, i] = ity
        out_i[15, i] = ico
        out_i[16, i] = mtu
        out_i[17, i] = inp
        out_i[18, i] = isp
        out_i[19, i] = idp
        out_i[20, i] = mss
        out_i[21, i] = wsc
        out_i[22, i] = iss
        out_i[23, i] = tsv
        out_i[24, i] = tse
        out_i[25, i] = payoff
        out_i[26, i] = end
        out_u[0, i] = sh
        out_u[1, i] = sl
        out_u[2, i] = dh
        out_u[3, i] = dl
        out_u[4, i] = ish
        out_u[5, i] = isl
        out_u[6, i] = idh
        out_u[7, i] = idl
        out_u[8, i] = ph
        out_b[0, i] = vlan
        out_b[1, i] = frag
        out_b[2, i] = sack


_KERNEL: Any = None


def compiled_kernel() -> Any:
    """The numba-compiled :func:`decode_kernel`, or ``None`` when numba is unavailable/disabled.

    The small read helpers are compiled first and swapped into this module's globals, so the
    kernel (compiled last) calls compiled code; the Python versions are never used on their own.
    """
    global _KERNEL  # noqa: PLW0603  compiled once per process
    if _KERNEL is None:
        numba = numba_module()
        if numba is None:
            return None
        g = globals()
        for name in ("_c", "_u8", "_u16", "_u32", "_u64"):
            g[name] = numba.njit(cache=True)(g[name])
        _KERNEL = numba.njit(cache=True, nogil=True)(decode_kernel)
    return _KERNEL
