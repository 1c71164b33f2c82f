# cython: language_level=3
"""Compiled TCP analysis: conversation grouping, the tshark 4.0 rule machine and the per-stream table.

This is a C port of :func:`netghost.forensics.tcp._kernel` (the readable reference, which stays the
source of truth; tests compare the two segment by segment). Two differences of *method*, none of
result:

* Segments are walked in **capture order** with one state block per conversation (instead of
  sorting segments by conversation and resetting one state block at each boundary). Conversations
  are independent, so the per-conversation sequence of states is the same; reading the columns
  sequentially is what makes this fast (no gather through a permutation, no cache miss per field).
* Conversations are found with an exact open-addressing hash table over the canonical
  (lower endpoint, upper endpoint) key, numbered by first appearance in one pass; a counting sort
  then gives the "each group contiguous, capture order inside" permutation without a full sort.

The per-stream aggregates of :func:`netghost.forensics.flows.build_streams` are accumulated in the
same walk (stream ids are assigned by first appearance, as tshark numbers ``tcp.stream``).
"""

from libc.stdint cimport int16_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.math cimport NAN
from libc.string cimport memset

import numpy as np

cdef int64_t M32 = 0xFFFFFFFF
cdef int64_t HALF = 0x80000000
cdef int UNACKED_MAX = 1000
cdef int FIN = 0x01
cdef int SYN = 0x02
cdef int RST = 0x04
cdef int ACK = 0x10
cdef int RETR = 1 << 0
cdef int FAST = 1 << 1
cdef int SPUR = 1 << 2
cdef int OOO = 1 << 3
cdef int LOST = 1 << 4
cdef int ACKLOST = 1 << 5
cdef int DUPACK = 1 << 6
cdef int ZW = 1 << 7
cdef int ZWP = 1 << 8
cdef int ZWPACK = 1 << 9
cdef int WFULL = 1 << 10
cdef int WUPD = 1 << 11
cdef int KA = 1 << 12
cdef int KAACK = 1 << 13
cdef int REUSED = 1 << 14
cdef uint64_t HC = 0x9E3779B97F4A7C15ULL


# ---------------------------------------------------------------------------------------------
# conversation grouping

cdef struct Key:
    uint64_t ahi, alo, bhi, blo
    int64_t ap, bp


cdef inline uint64_t _mix(uint64_t h, uint64_t v) noexcept nogil:
    h = (h ^ v) * HC
    return h ^ (h >> 29)


cdef int64_t _group(const int64_t[::1] rows, const uint64_t[::1] src_hi, const uint64_t[::1] src_lo,
                    const int32_t[::1] sport, const uint64_t[::1] dst_hi, const uint64_t[::1] dst_lo,
                    const int32_t[::1] dport, int64_t[::1] conv, int64_t[::1] dirn) except -1:
    """Exact conversation ids (first appearance) and directions; returns the number of conversations."""
    cdef Py_ssize_t n = rows.shape[0], i
    cdef int64_t r, c, nconv = 0, kcap = 1024, bits = 12
    cdef uint64_t mask, h, sh, sl, dh, dl, slot
    cdef int64_t sp, dp
    cdef bint a_lt
    cdef Key k
    cdef Key* keys = <Key*>malloc(kcap * sizeof(Key))
    cdef char* first_lt = <char*>malloc(kcap)
    cdef uint64_t* hashes = <uint64_t*>malloc(kcap * sizeof(uint64_t))
    cdef int64_t* table = <int64_t*>malloc((1 << bits) * sizeof(int64_t))
    cdef void* tmp
    if keys == NULL or first_lt == NULL or hashes == NULL or table == NULL:
        free(keys); free(first_lt); free(hashes); free(table)
        raise MemoryError()
    mask = (1 << bits) - 1
    memset(table, 0xFF, (1 << bits) * sizeof(int64_t))
    try:
        with nogil:
            for i in range(n):
                r = rows[i]
                sh = src_hi[r]
                sl = src_lo[r]
                sp = sport[r]
                dh = dst_hi[r]
                dl = dst_lo[r]
                dp = dport[r]
                a_lt = sh < dh or (sh == dh and (sl < dl or (sl == dl and sp <= dp)))
                if a_lt:
                    k.ahi = sh; k.alo = sl; k.ap = sp; k.bhi = dh; k.blo = dl; k.bp = dp
                else:
                    k.ahi = dh; k.alo = dl; k.ap = dp; k.bhi = sh; k.blo = sl; k.bp = sp
                h = _mix(_mix(_mix(_mix(_mix(_mix(7, k.ahi), k.alo), <uint64_t>k.ap), k.bhi), k.blo),
                         <uint64_t>k.bp)
                slot = h & mask
                while True:
                    c = table[slot]
                    if c < 0:
                        break
                    if (hashes[c] == h and keys[c].alo == k.alo and keys[c].blo == k.blo and keys[c].ap == k.ap
                            and keys[c].bp == k.bp and keys[c].ahi == k.ahi and keys[c].bhi == k.bhi):
                        break
                    slot = (slot + 1) & mask
                if c < 0:
                    c = nconv
                    nconv += 1
                    if nconv > kcap:
                        kcap *= 2
                        tmp = realloc(keys, kcap * sizeof(Key))
                        if tmp == NULL:
                            with gil:
                                raise MemoryError()
                        keys = <Key*>tmp
                        tmp = realloc(first_lt, kcap)
                        if tmp == NULL:
                            with gil:
                                raise MemoryError()
                        first_lt = <char*>tmp
                        tmp = realloc(hashes, kcap * sizeof(uint64_t))
                        if tmp == NULL:
                            with gil:
                                raise MemoryError()
                        hashes = <uint64_t*>tmp
                    keys[c] = k
                    hashes[c] = h
                    first_lt[c] = a_lt
                    table[slot] = c
                    if nconv * 2 > (1 << bits):  # keep the load factor <= 1/2: rehash into twice the slots
                        bits += 1
                        free(table)
                        table = <int64_t*>malloc((1 << bits) * sizeof(int64_t))
                        if table == NULL:
                            with gil:
                                raise MemoryError()
                        mask = (1 << bits) - 1
                        memset(table, 0xFF, (1 << bits) * sizeof(int64_t))
                        for c in range(nconv):
                            slot = hashes[c] & mask
                            while table[slot] >= 0:
                                slot = (slot + 1) & mask
                            table[slot] = c
                        c = nconv - 1
                conv[i] = c
                dirn[i] = a_lt != first_lt[c]
    finally:
        free(keys)
        free(first_lt)
        free(hashes)
        free(table)
    return nconv


cdef void _bucket_order(const int64_t[::1] key, int64_t nkeys, int64_t[::1] order) noexcept nogil:
    """Counting sort: ``order`` lists indices grouped by ``key`` (ascending), index order inside."""
    cdef Py_ssize_t n = key.shape[0], i
    cdef int64_t* pos = <int64_t*>malloc((nkeys + 1) * sizeof(int64_t))
    cdef int64_t acc = 0, c
    memset(pos, 0, (nkeys + 1) * sizeof(int64_t))
    for i in range(n):
        pos[key[i]] += 1
    for i in range(nkeys):
        c = pos[i]
        pos[i] = acc
        acc += c
    for i in range(n):
        c = key[i]
        order[pos[c]] = i
        pos[c] += 1
    free(pos)


def group_conversations(const int64_t[::1] rows, const uint64_t[::1] src_hi, const uint64_t[::1] src_lo,
                        const int32_t[::1] sport, const uint64_t[::1] dst_hi, const uint64_t[::1] dst_lo,
                        const int32_t[::1] dport):
    """(conv, dirn, order): see :func:`netghost.forensics.flows.group_conversations`."""
    n = rows.shape[0]
    conv = np.empty(n, np.int64)
    dirn = np.empty(n, np.int64)
    order = np.empty(n, np.int64)
    cdef int64_t nconv = _group(rows, src_hi, src_lo, sport, dst_hi, dst_lo, dport, conv, dirn)
    cdef int64_t[::1] cv = conv
    cdef int64_t[::1] ov = order
    with nogil:
        _bucket_order(cv, nconv, ov)
    return conv, dirn, order


# ---------------------------------------------------------------------------------------------
# the rule machine

cdef struct Seg:
    int64_t seq, nxt
    double ts


cdef struct Dir:
    int64_t nextseq, lastack, window, maxtba, base
    double nextseqtime, lastacktime
    int64_t wsc, dupacks, lastflags
    bint first_ack, base_set
    int64_t seg_n, seg_cap
    Seg* segs


cdef struct Conv:
    double mru_syn, irtt
    int64_t sub, sid
    bint seen


cdef struct Stream:
    int64_t first_i, last_i, first_dir, syn_dir, sa_dir
    int64_t pkts[2]
    int64_t byts[2]
    int64_t fin[2]
    int64_t rst[2]
    int64_t syn[2]
    int64_t synack[2]
    int64_t mss[2]
    int64_t ws[2]
    bint has_syn[2]
    int64_t data_pkts, retrans, retrans_data, flagged, zero_window, lost
    double irtt
    bint has_irtt


cdef inline void _reset_dir(Dir* s) noexcept nogil:
    s.nextseq = 0
    s.nextseqtime = 0.0
    s.lastack = 0
    s.lastacktime = 0.0
    s.window = -1
    s.wsc = -1
    s.first_ack = True
    s.dupacks = 0
    s.maxtba = 0
    s.lastflags = 0
    s.base_set = False
    s.seg_n = 0


cdef inline bint _gt(int64_t x) noexcept nogil:
    """0 < x mod 2**32 < 2**31 (tshark's GT_SEQ on a difference)."""
    x = x & M32
    return 0 < x < HALF


cdef int64_t _run(const int64_t[::1] rows, const int64_t[::1] conv, const int64_t[::1] dirn, int64_t nconv,
                  const int64_t[::1] seq, const int64_t[::1] ack, const int16_t[::1] flags, const int32_t[::1] win,
                  const int32_t[::1] seglen, const double[::1] ts, const int16_t[::1] wscale,
                  const int32_t[::1] mss, bint streams,
                  int64_t[::1] out_flags, int64_t[::1] out_sub, double[::1] out_irtt, double[::1] out_rtt,
                  int64_t[::1] out_sid, Stream** stream_out) except -1:
    """Walk segments in index (capture) order; returns the number of streams (0 unless ``streams``)."""
    cdef Py_ssize_t n = rows.shape[0], i
    cdef Dir* ds = <Dir*>malloc(2 * (nconv if nconv > 0 else 1) * sizeof(Dir))
    cdef Conv* cs = <Conv*>malloc((nconv if nconv > 0 else 1) * sizeof(Conv))
    cdef int64_t scap = (nconv if nconv > 16 else 16), ns = 0
    cdef Stream* st = <Stream*>malloc(scap * sizeof(Stream)) if streams else NULL
    cdef Stream* sp
    cdef Dir* fw
    cdef Dir* rv
    cdef Conv* cv
    cdef Seg* sg
    cdef Seg* tmp
    cdef void* vtmp
    cdef int64_t c, r, d, fl, s, a, w, ln, wsv, af, ctl, nx, sh, nxt, end, kept, k, nq, wl, x
    cdef double t, thr
    cdef bint new, skip, same, nad, rtt_set
    if ds == NULL or cs == NULL or (streams and st == NULL):
        free(ds); free(cs); free(st)
        raise MemoryError()
    for c in range(nconv):
        cs[c].seen = False
        ds[2 * c].segs = NULL
        ds[2 * c].seg_cap = 0
        ds[2 * c + 1].segs = NULL
        ds[2 * c + 1].seg_cap = 0
    try:
        with nogil:
            for i in range(n):
                c = conv[i]
                r = rows[i]
                d = dirn[i]
                cv = &cs[c]
                fw = &ds[2 * c + d]
                rv = &ds[2 * c + 1 - d]
                fl = flags[r]
                s = seq[r]
                a = ack[r]
                w = win[r]
                ln = seglen[r]
                t = ts[r]
                wsv = wscale[r]
                af = 0
                new = not cv.seen
                if not new and (fl & SYN) and fw.base_set and s != fw.base:
                    # a SYN with a new ISN on a known 4-tuple is a new conversation; a SYN-ACK with a
                    # new ISN stays in its conversation (flagged, base_seq follows it)
                    af = REUSED
                    if fl & ACK:
                        fw.base = s
                    else:
                        new = True
                        cv.sub += 1
                if new:
                    if not cv.seen:
                        cv.seen = True
                        cv.sub = 0
                    _reset_dir(fw)
                    _reset_dir(rv)
                    cv.mru_syn = -1.0
                    cv.irtt = -1.0
                    if streams:
                        if ns == scap:
                            scap *= 2
                            vtmp = realloc(st, scap * sizeof(Stream))
                            if vtmp == NULL:
                                with gil:
                                    raise MemoryError()
                            st = <Stream*>vtmp
                        sp = &st[ns]
                        memset(sp, 0, sizeof(Stream))
                        sp.first_i = i
                        sp.first_dir = d
                        sp.syn_dir = -1
                        sp.sa_dir = -1
                        sp.mss[0] = -1
                        sp.mss[1] = -1
                        sp.ws[0] = -1
                        sp.ws[1] = -1
                        cv.sid = ns
                        ns += 1
                out_sub[i] = cv.sub
                if not fw.base_set:
                    fw.base_set = True
                    fw.base = s if fl & SYN else (s - 1) & M32
                if not rv.base_set and (fl & ACK):
                    rv.base_set = True
                    rv.base = (a - 1) & M32
                ctl = fl & (SYN | FIN | RST)
                if fl & SYN:
                    if fl & ACK:
                        if wsv < 0:
                            fw.wsc = -2
                            rv.wsc = -2
                        else:
                            fw.wsc = wsv
                    else:
                        fw.wsc = wsv if wsv >= 0 else -2
                nx = fw.nextseq
                skip = False
                # 1 zero window probe
                if ln == 1 and s == nx and rv.window == 0:
                    af |= ZWP
                    skip = True
                if not skip:
                    if w == 0 and ctl == 0:
                        af |= ZW
                    if nx != 0 and _gt(s - nx) and not (fl & RST):
                        af |= LOST
                    if ln <= 1 and s == ((nx - 1) & M32) and ctl == 0:
                        af |= KA
                    same = ln == 0 and s == nx and a == fw.lastack and ctl == 0
                    if same and w != 0 and w != fw.window:
                        af |= WUPD
                    if ln > 0 and rv.wsc != -1 and ctl == 0 and rv.window >= 0:
                        sh = 0 if (rv.first_ack or rv.wsc == -2) else rv.wsc
                        wl = (rv.window << sh) & M32 if sh < 32 else 0
                        if ((s + ln) & M32) == ((rv.lastack + wl) & M32):
                            af |= WFULL
                    if same and w != 0 and w == fw.window and (rv.lastflags & KA):
                        af |= KAACK
                    elif same and w == 0 and w == fw.window and (rv.lastflags & ZWP):
                        af |= ZWPACK
                    elif same and w != 0 and w == fw.window:
                        fw.dupacks = 1 if fw.dupacks == -1 else fw.dupacks + 1
                        af |= DUPACK
                if a != fw.lastack:
                    fw.dupacks = 0
                if rv.maxtba != 0 and _gt(a - rv.maxtba) and (fl & ACK):
                    # ACKed unseen segment, one flag per hole (see tcp._kernel)
                    if rv.maxtba != rv.nextseq:
                        rv.maxtba = rv.nextseq
                        af |= ACKLOST
                    else:
                        if rv.dupacks == 0:
                            af |= ACKLOST
                        rv.dupacks = -1
                if (ln > 0 or (fl & (SYN | FIN))) and not (af & KA):
                    nad = nx != 0 and _gt(nx - s)
                    if ln > 1 and s == ((nx - 1) & M32):
                        nad = False
                    end = (s + ln + (1 if fl & (SYN | FIN) else 0)) & M32
                    thr = cv.irtt if cv.irtt > 0 else 0.003
                    if ln > 0 and rv.lastack != 0 and ((rv.lastack - ((s + ln) & M32)) & M32) < HALF:
                        af |= SPUR | RETR
                    elif nad and rv.dupacks >= 2 and rv.lastack == s and 0 <= (t - rv.lastacktime) < 0.02:
                        af |= FAST | RETR
                    elif nad and 0 <= (t - fw.nextseqtime) < thr and nx != end:
                        af |= OOO
                    elif nad:
                        af |= RETR
                nxt = (s + ln) & M32
                if (ln > 0 or (fl & (SYN | FIN))) and fw.seg_n < UNACKED_MAX:
                    if fl & (SYN | FIN):
                        nxt = (nxt + 1) & M32  # SYN/FIN count one byte (only when the segment is listed)
                    if fw.seg_n == fw.seg_cap:
                        k = 8 if fw.seg_cap == 0 else 2 * fw.seg_cap
                        if k > UNACKED_MAX:
                            k = UNACKED_MAX
                        vtmp = realloc(fw.segs, k * sizeof(Seg))
                        if vtmp == NULL:
                            with gil:
                                raise MemoryError()
                        fw.segs = <Seg*>vtmp
                        fw.seg_cap = k
                    sg = &fw.segs[fw.seg_n]
                    sg.seq = s
                    sg.nxt = nxt
                    sg.ts = t
                    fw.seg_n += 1
                if (nx == 0 or _gt(nxt - nx)) and not (af & ZWP):
                    fw.nextseq = nxt
                    fw.nextseqtime = t
                if (s == fw.maxtba or fw.maxtba == 0) and not (af & ZWP):
                    fw.maxtba = fw.nextseq
                fw.window = w
                fw.lastack = a
                fw.lastacktime = t
                fw.lastflags = af
                fw.first_ack = (fl & SYN) != 0
                out_flags[i] = af
                # ACK processing over the peer's un-ACKed list, oldest first (see tcp._kernel)
                kept = 0
                rtt_set = False
                sg = rv.segs
                for k in range(rv.seg_n):
                    nq = sg[k].nxt
                    if a == nq or not _gt(nq - a):
                        if a == nq and not rtt_set and t != sg[k].ts:
                            out_rtt[i] = t - sg[k].ts
                            rtt_set = True
                        continue
                    if _gt(a - sg[k].seq):
                        sg[kept].seq = a  # partial ACK trims the segment
                    elif kept != k:
                        sg[kept].seq = sg[k].seq
                    if kept != k:
                        sg[kept].nxt = nq
                        sg[kept].ts = sg[k].ts
                    kept += 1
                rv.seg_n = kept
                # iRTT: most recent pure SYN -> first pure ACK (set after the analysis)
                x = fl & (SYN | ACK)
                if x == SYN:
                    cv.mru_syn = t
                elif x == ACK and cv.irtt < 0 and cv.mru_syn >= 0:
                    cv.irtt = t - cv.mru_syn
                    out_irtt[i] = cv.irtt
                    if streams:  # may be set again while negative (timestamps out of order): last wins
                        st[cv.sid].irtt = cv.irtt
                        st[cv.sid].has_irtt = True
                if streams:
                    sp = &st[cv.sid]
                    out_sid[i] = cv.sid
                    sp.last_i = i
                    sp.pkts[d] += 1
                    sp.byts[d] += ln
                    if fl & FIN:
                        sp.fin[d] += 1
                    if fl & RST:
                        sp.rst[d] += 1
                    if fl & SYN:
                        if fl & ACK:
                            sp.synack[d] += 1
                            if sp.sa_dir < 0:
                                sp.sa_dir = d
                        else:
                            sp.syn[d] += 1
                            if sp.syn_dir < 0:
                                sp.syn_dir = d
                        if not sp.has_syn[d]:
                            sp.has_syn[d] = True
                            sp.mss[d] = mss[r]
                            sp.ws[d] = wsv
                    if ln > 0:
                        sp.data_pkts += 1
                    if af & RETR:
                        sp.retrans += 1
                        if ln > 0:
                            sp.retrans_data += 1
                    if af != 0:
                        sp.flagged += 1
                    if af & ZW:
                        sp.zero_window += 1
                    if af & (LOST | ACKLOST):
                        sp.lost += 1
    finally:
        for c in range(2 * nconv):
            free(ds[c].segs)
        free(ds)
        free(cs)
    stream_out[0] = st
    return ns


def analyze(const int64_t[::1] rows, const int64_t[::1] conv, const int64_t[::1] dirn, int64_t nconv,
            const int64_t[::1] seq, const int64_t[::1] ack, const int16_t[::1] flags, const int32_t[::1] win,
            const int32_t[::1] seglen, const double[::1] ts, const int16_t[::1] wscale):
    """(flags, sub-stream, iRTT, ack_rtt) per segment: see :func:`netghost.forensics.tcp.analyze_tcp_sequences`.

    Segment ``i`` is conversation ``conv[i]`` (``0 <= conv[i] < nconv``), direction ``dirn[i]``, fields
    at ``rows[i]``; segments are analysed in index order, which must be capture order.
    """
    n = rows.shape[0]
    of = np.zeros(n, np.int64)
    osub = np.zeros(n, np.int64)
    oirtt = np.full(n, np.nan)
    ortt = np.full(n, np.nan)
    cdef Stream* st = NULL
    cdef int32_t[::1] no_mss = np.zeros(1, np.int32)
    cdef int64_t[::1] no_sid = np.zeros(1, np.int64)
    _run(rows, conv, dirn, nconv, seq, ack, flags, win, seglen, ts, wscale, no_mss, False,
         of, osub, oirtt, ortt, no_sid, &st)
    return of, osub, oirtt, ortt


def analyze_streams(const int64_t[::1] rows, const uint64_t[::1] src_hi, const uint64_t[::1] src_lo,
                    const int32_t[::1] sport, const uint64_t[::1] dst_hi, const uint64_t[::1] dst_lo,
                    const int32_t[::1] dport, const int64_t[::1] seq, const int64_t[::1] ack,
                    const int16_t[::1] flags, const int32_t[::1] win, const int32_t[::1] seglen,
                    const double[::1] ts, const int16_t[::1] wscale, const int32_t[::1] mss,
                    const int64_t[::1] frame):
    """Grouping + rules + stream table in one call (see :func:`netghost.forensics.flows.analyze_tcp`).

    Returns:
        (aflags, sub, irtt, ack_rtt, sid, order, conv, dirn, table) where ``table`` is a dict of the
        :class:`~netghost.forensics.flows.TcpStreams` columns except ``conn_state``, plus
        ``syn_c``/``synack_s`` (the pure SYNs from the client and SYN-ACKs from the server).
    """
    cdef Py_ssize_t n = rows.shape[0]
    conv = np.empty(n, np.int64)
    dirn = np.empty(n, np.int64)
    cdef int64_t nconv = _group(rows, src_hi, src_lo, sport, dst_hi, dst_lo, dport, conv, dirn)
    of = np.zeros(n, np.int64)
    osub = np.zeros(n, np.int64)
    oirtt = np.full(n, np.nan)
    ortt = np.full(n, np.nan)
    sid = np.empty(n, np.int64)
    order = np.empty(n, np.int64)
    cdef Stream* st = NULL
    cdef int64_t ns = _run(rows, conv, dirn, nconv, seq, ack, flags, win, seglen, ts, wscale, mss, True,
                           of, osub, oirtt, ortt, sid, &st)
    cdef int64_t[::1] sidv = sid
    cdef int64_t[::1] ov = order
    try:
        with nogil:
            _bucket_order(sidv, ns, ov)
        table = _table(st, ns, rows, src_hi, src_lo, sport, dst_hi, dst_lo, dport, ts, frame)
    finally:
        free(st)
    return of, osub, oirtt, ortt, sid, order, conv, dirn, table


cdef dict _table(Stream* st, int64_t ns, const int64_t[::1] rows, const uint64_t[::1] src_hi,
                 const uint64_t[::1] src_lo, const int32_t[::1] sport, const uint64_t[::1] dst_hi,
                 const uint64_t[::1] dst_lo, const int32_t[::1] dport, const double[::1] ts,
                 const int64_t[::1] frame):
    """The stream columns with client/server resolved (client = first pure SYN's sender, else the
    receiver of the first SYN-ACK, else the first packet's sender)."""
    names_i64 = ("first_frame", "last_frame", "pkts_c2s", "pkts_s2c", "bytes_c2s", "bytes_s2c", "syn", "synack",
                 "fin_c", "fin_s", "rst_c", "rst_s", "data_pkts", "retrans", "retrans_data", "flagged",
                 "zero_window", "lost", "mss_c", "mss_s", "ws_c", "ws_s", "syn_c", "synack_s")
    out = {name: np.empty(ns, np.int64) for name in names_i64}
    for name in ("first_ts", "last_ts", "irtt"):
        out[name] = np.empty(ns, np.float64)
    for name in ("c_hi", "c_lo", "s_hi", "s_lo"):
        out[name] = np.empty(ns, np.uint64)
    for name in ("c_port", "s_port"):
        out[name] = np.empty(ns, np.int32)
    cdef int64_t[::1] first_frame = out["first_frame"], last_frame = out["last_frame"]
    cdef int64_t[::1] pkts_c2s = out["pkts_c2s"], pkts_s2c = out["pkts_s2c"]
    cdef int64_t[::1] bytes_c2s = out["bytes_c2s"], bytes_s2c = out["bytes_s2c"]
    cdef int64_t[::1] syn = out["syn"], synack = out["synack"], fin_c = out["fin_c"], fin_s = out["fin_s"]
    cdef int64_t[::1] rst_c = out["rst_c"], rst_s = out["rst_s"], data_pkts = out["data_pkts"]
    cdef int64_t[::1] retrans = out["retrans"], retrans_data = out["retrans_data"], flagged = out["flagged"]
    cdef int64_t[::1] zero_window = out["zero_window"], lost = out["lost"]
    cdef int64_t[::1] mss_c = out["mss_c"], mss_s = out["mss_s"], ws_c = out["ws_c"], ws_s = out["ws_s"]
    cdef int64_t[::1] syn_c = out["syn_c"], synack_s = out["synack_s"]
    cdef double[::1] first_ts = out["first_ts"], last_ts = out["last_ts"], irtt = out["irtt"]
    cdef uint64_t[::1] c_hi = out["c_hi"], c_lo = out["c_lo"], s_hi = out["s_hi"], s_lo = out["s_lo"]
    cdef int32_t[::1] c_port = out["c_port"], s_port = out["s_port"]
    cdef int64_t j, o, q, fr, lr
    cdef Stream* sp
    with nogil:
        for j in range(ns):
            sp = &st[j]
            if sp.syn_dir >= 0:
                o = sp.syn_dir
            elif sp.sa_dir >= 0:
                o = 1 - sp.sa_dir
            else:
                o = sp.first_dir
            q = 1 - o
            fr = rows[sp.first_i]
            lr = rows[sp.last_i]
            first_frame[j] = frame[fr]
            last_frame[j] = frame[lr]
            first_ts[j] = ts[fr]
            last_ts[j] = ts[lr]
            if sp.first_dir == o:
                c_hi[j] = src_hi[fr]; c_lo[j] = src_lo[fr]; c_port[j] = sport[fr]
                s_hi[j] = dst_hi[fr]; s_lo[j] = dst_lo[fr]; s_port[j] = dport[fr]
            else:
                c_hi[j] = dst_hi[fr]; c_lo[j] = dst_lo[fr]; c_port[j] = dport[fr]
                s_hi[j] = src_hi[fr]; s_lo[j] = src_lo[fr]; s_port[j] = sport[fr]
            pkts_c2s[j] = sp.pkts[o]
            pkts_s2c[j] = sp.pkts[q]
            bytes_c2s[j] = sp.byts[o]
            bytes_s2c[j] = sp.byts[q]
            syn[j] = sp.syn[0] + sp.syn[1]
            synack[j] = sp.synack[0] + sp.synack[1]
            syn_c[j] = sp.syn[o]
            synack_s[j] = sp.synack[q]
            fin_c[j] = sp.fin[o]
            fin_s[j] = sp.fin[q]
            rst_c[j] = sp.rst[o]
            rst_s[j] = sp.rst[q]
            data_pkts[j] = sp.data_pkts
            retrans[j] = sp.retrans
            retrans_data[j] = sp.retrans_data
            flagged[j] = sp.flagged
            zero_window[j] = sp.zero_window
            lost[j] = sp.lost
            irtt[j] = sp.irtt if sp.has_irtt else NAN
            mss_c[j] = sp.mss[o]
            mss_s[j] = sp.mss[q]
            ws_c[j] = sp.ws[o]
            ws_s[j] = sp.ws[q]
    return out
