# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled DNS scan of one decoded batch: the kernel behind ``dns.parse_dns``.

One pass selects the DNS rows (UDP/TCP port 53, 5353 or 5355 with enough payload) and a second
reads each message's header, copies its first question section (at most 300 bytes) and computes its
query/response matching key. The pure path (``dns._parse_dns_numpy`` + ``dns._match_keys``) gives
the same arrays; the tests compare both on every corpus capture.
"""

import numpy as np

cdef unsigned long long _C = 0x9E3779B97F4A7C15ULL

cdef extern from *:
    void __builtin_prefetch(const void* addr) nogil


cdef inline long long _u16(const unsigned char* b, long long pos, long long hi) noexcept nogil:
    # Gather.u16: the position is clipped into the padded buffer, never read past it
    if pos < 0:
        pos = 0
    elif pos > hi:
        pos = hi
    return (<long long>b[pos] << 8) | b[pos + 1]


cdef inline unsigned long long _mix(unsigned long long h, unsigned long long v) noexcept nogil:
    # flows.mix_hash: one round of the multiplicative hash
    h = (h ^ v) * _C
    return h ^ (h >> 29)


def parse(const unsigned char[::1] buf, const short[:] proto, const int[::1] sport, const int[::1] dport,
          const int[:] paylen, const short[:] tcp_flags, const long long[:] payoff, const long long[:] capend,
          const unsigned long long[:] src_hi, const unsigned long long[:] src_lo,
          const unsigned long long[:] dst_hi, const unsigned long long[:] dst_lo, rows=None):
    """(rows, is_response (uint8), msg_id, rcode, q_off, q_blob (bytearray), key) of a batch's DNS messages.

    ``rows`` (int64, ascending): examine only these rows (a decoder's DNS-port candidates).
    Returns None when a question section would lie outside ``buf`` (the caller then uses the pure
    path, whose behaviour on such input is the reference).
    """
    cdef Py_ssize_t n = proto.shape[0], nbuf = buf.shape[0], i, k, m = 0
    cdef long long hi = nbuf - 9 if nbuf > 9 else 0
    cdef long long a, ln, mlen, qlen, total = 0, flags, j
    cdef bint over_tcp
    for col_len in (sport.shape[0], dport.shape[0], paylen.shape[0], tcp_flags.shape[0], payoff.shape[0],
                    capend.shape[0], src_hi.shape[0], src_lo.shape[0], dst_hi.shape[0], dst_lo.shape[0]):
        if col_len < n:  # the loops below index without bounds checks
            raise ValueError("parse: every column needs at least len(proto) entries")
    if nbuf < 2:
        return None
    # a raw pointer, not the memoryview: passing a view to a helper costs an atomic refcount per call
    cdef const unsigned char* b = &buf[0]
    cdef int sp, dp
    cdef Py_ssize_t nhit = 0, h
    cdef const long long[:] only
    cdef bint use_rows = rows is not None
    if use_rows:
        only = rows
    else:
        only = np.zeros(0, np.int64)
    cdef Py_ssize_t nrows = only.shape[0]
    for h in range(nrows):  # the loops below index without bounds checks
        if only[h] < 0 or only[h] >= n:
            raise IndexError(f"row {only[h]} out of range for {n} rows")
    sel_np = np.empty((nrows if use_rows else n) + 1, np.int64)
    beg_np = np.empty(sel_np.shape[0], np.int64)
    qln_np = np.empty(sel_np.shape[0], np.int64)
    cdef long long[::1] sel = sel_np, beg = beg_np, qln = qln_np
    with nogil:
        # branch-free compaction of the DNS-port rows first: ~6% of packets are DNS, and a branch per
        # packet mispredicts often enough to dominate the whole scan
        if use_rows:
            for h in range(nrows):
                i = only[h]
                sp = sport[i]
                dp = dport[i]
                sel[nhit] = i
                nhit += (sp == 53) | (sp == 5353) | (sp == 5355) | (dp == 53) | (dp == 5353) | (dp == 5355)
        else:
            for i in range(n):
                sp = sport[i]
                dp = dport[i]
                sel[nhit] = i
                nhit += (sp == 53) | (sp == 5353) | (sp == 5355) | (dp == 53) | (dp == 5353) | (dp == 5355)
        # the payloads are scattered over the batch buffer (a cache miss each): prefetch a few ahead
        for h in range(nhit if nhit < 16 else 16):
            if 0 <= payoff[sel[h]] < nbuf:
                __builtin_prefetch(b + payoff[sel[h]])
        for h in range(nhit):
            if h + 16 < nhit and 0 <= payoff[sel[h + 16]] < nbuf:
                __builtin_prefetch(b + payoff[sel[h + 16]])
            i = sel[h]
            if proto[i] == 17:
                if paylen[i] < 4:
                    continue
                over_tcp = False
            elif proto[i] == 6:
                if paylen[i] < 6 or tcp_flags[i] < 0:
                    continue
                over_tcp = True
            else:
                continue
            a = payoff[i]
            ln = capend[i] - a
            if paylen[i] < ln:
                ln = paylen[i]
            if over_tcp:
                mlen = _u16(b, a, hi)
                a += 2
                ln -= 2
                if mlen < 4:
                    continue
            if ln < 4:
                continue
            qlen = 0
            if _u16(b, a + 4, hi) > 0 and ln > 12:
                qlen = (ln if ln < 312 else 312) - 12
            sel[m] = i
            beg[m] = a
            qln[m] = qlen
            total += qlen
            m += 1
    rows_np = sel_np[:m].copy()
    resp_np = np.empty(m, np.uint8)
    mid_np = np.empty(m, np.int64)
    rcode_np = np.empty(m, np.int64)
    qoff_np = np.empty(m + 1, np.int64)
    key_np = np.empty(m, np.uint64)
    blob = bytearray(total)
    cdef unsigned char[::1] rsp = resp_np
    cdef long long[::1] mid = mid_np, rcode = rcode_np, qoff = qoff_np
    cdef unsigned long long[::1] key = key_np
    cdef unsigned char[::1] out = blob
    cdef long long pos = 0
    cdef unsigned long long hv
    cdef bint is_resp
    for k in range(m):  # bounds check first (outside nogil: may return None)
        if qln[k] > 0 and (beg[k] + 12 < 0 or beg[k] + 12 + qln[k] > nbuf):
            return None
    with nogil:
        for k in range(m):
            i = sel[k]
            a = beg[k]
            flags = _u16(b, a + 2, hi)
            is_resp = (flags & 0x8000) != 0
            rsp[k] = is_resp
            mid[k] = _u16(b, a, hi)
            rcode[k] = flags & 0x0F
            qoff[k] = pos
            for j in range(qln[k]):
                out[pos + j] = b[a + 12 + j]
            pos += qln[k]
            # dns._match_keys: client endpoint then server endpoint, then the message id
            hv = 53
            if is_resp:
                hv = _mix(hv, dst_hi[i]); hv = _mix(hv, dst_lo[i]); hv = _mix(hv, <unsigned long long><long long>dport[i])
                hv = _mix(hv, src_hi[i]); hv = _mix(hv, src_lo[i]); hv = _mix(hv, <unsigned long long><long long>sport[i])
            else:
                hv = _mix(hv, src_hi[i]); hv = _mix(hv, src_lo[i]); hv = _mix(hv, <unsigned long long><long long>sport[i])
                hv = _mix(hv, dst_hi[i]); hv = _mix(hv, dst_lo[i]); hv = _mix(hv, <unsigned long long><long long>dport[i])
            key[k] = _mix(hv, <unsigned long long>mid[k])
        qoff[m] = pos
    return rows_np, resp_np, mid_np, rcode_np, qoff_np, blob, key_np
