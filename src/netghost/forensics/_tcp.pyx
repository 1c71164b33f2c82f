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

from libc.math cimport NAN
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset


cdef extern from *:
    void __builtin_prefetch(const void* addr) nogil

import numpy as np

cdef int64_t M32 = 0xFFFFFFFF
cdef int64_t HALF = 0x80000000
cdef int UNACKED_MAX = 1000
cdef int SMALL = 8  # segments in a list's first block
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
cdef Py_ssize_t PF1 = 16  # prefetch distances (segments ahead), see _run
cdef Py_ssize_t PF2 = 8
cdef Py_ssize_t PF3 = 3


# ---------------------------------------------------------------------------------------------
# conversation grouping: exact keys in an open-addressing table (one cache line per slot)

cdef struct Key:
    uint64_t ahi, alo, bhi, blo
    int64_t ap, bp


cdef struct Slot:
    uint64_t h
    int32_t c  # conversation id, -1 = empty
    int32_t first_lt  # the canonical orientation of the conversation's first packet
    Key k


cdef struct Table:
    Slot* slots
    uint64_t mask
    int64_t n


cdef inline uint64_t _mix(uint64_t h, uint64_t v) noexcept nogil:
    h = (h ^ v) * HC
    return h ^ (h >> 29)


cdef int _table_init(Table* t) noexcept nogil:
    t.mask = (1 << 12) - 1
    t.n = 0
    t.slots = <Slot*>malloc((t.mask + 1) * sizeof(Slot))
    if t.slots == NULL:
        return -1
    memset(t.slots, 0xFF, (t.mask + 1) * sizeof(Slot))
    return 0


cdef int _table_grow(Table* t) noexcept nogil:
    """Twice the slots (keeps the load factor <= 1/2)."""
    cdef uint64_t old_size = t.mask + 1, j, slot
    cdef Slot* old = t.slots
    t.mask = 2 * old_size - 1
    t.slots = <Slot*>malloc((t.mask + 1) * sizeof(Slot))
    if t.slots == NULL:
        t.slots = old
        t.mask = old_size - 1
        return -1
    memset(t.slots, 0xFF, (t.mask + 1) * sizeof(Slot))
    for j in range(old_size):
        if old[j].c >= 0:
            slot = old[j].h & t.mask
            while t.slots[slot].c >= 0:
                slot = (slot + 1) & t.mask
            t.slots[slot] = old[j]
    free(old)
    return 0


cdef struct Pend:
    # a packet's canonical key, hashed ahead of its lookup
    Key k
    uint64_t h
    int64_t a_lt


cdef inline void _key(Pend* p, uint64_t sh, uint64_t sl, int64_t sp, uint64_t dh, uint64_t dl,
                      int64_t dp) noexcept nogil:
    p.a_lt = sh < dh or (sh == dh and (sl < dl or (sl == dl and sp <= dp)))
    if p.a_lt:
        p.k.ahi = sh; p.k.alo = sl; p.k.ap = sp; p.k.bhi = dh; p.k.blo = dl; p.k.bp = dp
    else:
        p.k.ahi = dh; p.k.alo = dl; p.k.ap = dp; p.k.bhi = sh; p.k.blo = sl; p.k.bp = sp
    p.h = _mix(_mix(_mix(_mix(_mix(_mix(7, p.k.ahi), p.k.alo), <uint64_t>p.k.ap), p.k.bhi), p.k.blo),
               <uint64_t>p.k.bp)


cdef inline int64_t _find(Table* t, const Pend* p, int64_t* dirn) noexcept nogil:
    """Conversation id of a keyed packet (new ids by first appearance) and its direction; -1 = out of memory."""
    cdef uint64_t slot = p.h & t.mask
    cdef Slot* e
    while True:
        e = &t.slots[slot]
        if e.c < 0:
            break
        if (e.h == p.h and e.k.alo == p.k.alo and e.k.blo == p.k.blo and e.k.ap == p.k.ap and e.k.bp == p.k.bp
                and e.k.ahi == p.k.ahi and e.k.bhi == p.k.bhi):
            dirn[0] = p.a_lt != e.first_lt
            return e.c
        slot = (slot + 1) & t.mask
    e.h = p.h
    e.c = <int32_t>t.n
    e.first_lt = <int32_t>p.a_lt
    e.k = p.k
    t.n += 1
    dirn[0] = 0
    if 2 * t.n > <int64_t>(t.mask + 1) and _table_grow(t) < 0:
        return -1
    return t.n - 1


cdef void _bucket_order(const int64_t* key, Py_ssize_t n, int64_t* pos, int64_t nkeys, int64_t* order) noexcept nogil:
    """Counting sort: ``order`` lists indices grouped by ``key`` (ascending), index order inside.

    ``pos`` holds each key's count on entry (scratch, overwritten).
    """
    cdef Py_ssize_t i
    cdef int64_t acc = 0, c
    for i in range(nkeys):
        c = pos[i]
        pos[i] = acc
        acc += c
    for i in range(n):
        c = key[i]
        order[pos[c]] = i
        pos[c] += 1


def group_conversations(const int64_t[::1] rows, const uint64_t[::1] src_hi, const uint64_t[::1] src_lo,
                        const int32_t[::1] sport, const uint64_t[::1] dst_hi, const uint64_t[::1] dst_lo,
                        const int32_t[::1] dport):
    """(conv, dirn, order): see :func:`netghost.forensics.flows.group_conversations`."""
    cdef Py_ssize_t n = rows.shape[0], i
    conv = np.empty(n, np.int64)
    dirn = np.empty(n, np.int64)
    order = np.empty(n, np.int64)
    if n == 0:
        return conv, dirn, order
    cdef int64_t[::1] cv = conv, dv = dirn, ov = order
    cdef Table t
    cdef Pend p
    cdef int64_t c, r, d, ok = 0
    cdef int64_t* counts = NULL
    cdef int64_t nrows = min(src_hi.shape[0], src_lo.shape[0], sport.shape[0], dst_hi.shape[0], dst_lo.shape[0],
                             dport.shape[0])
    if _table_init(&t) < 0:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                r = rows[i]
                if r < 0 or r >= nrows:
                    ok = -1
                    break
                _key(&p, src_hi[r], src_lo[r], sport[r], dst_hi[r], dst_lo[r], dport[r])
                c = _find(&t, &p, &d)
                if c < 0:
                    break
                cv[i] = c
                dv[i] = d
            else:
                ok = 1
                counts = <int64_t*>malloc((t.n + 1) * sizeof(int64_t))
                if counts != NULL:
                    memset(counts, 0, (t.n + 1) * sizeof(int64_t))
                    for i in range(n):
                        counts[cv[i]] += 1
                    _bucket_order(&cv[0], n, counts, t.n, &ov[0])
    finally:
        free(t.slots)
        free(counts)
    if ok < 0:
        raise IndexError("segment row out of range of the columns")
    if not ok or counts == NULL:
        raise MemoryError()
    return conv, dirn, order


# ---------------------------------------------------------------------------------------------
# the rule machine

cdef struct Seg:
    int64_t seq, nxt
    double ts


cdef struct Dir:
    int64_t nextseq, lastack, maxtba, base
    double nextseqtime, lastacktime
    Seg* segs
    int32_t window, wsc, dupacks, seg_n, seg_cap
    int16_t lastflags
    int8_t first_ack, base_set


cdef struct Agg:
    # one stream's aggregates; the fields every segment updates share the first cache line
    int64_t last_frame  # the last row while walking; _table turns it into a frame number
    double last_ts
    int64_t byts[2]
    int32_t pkts[2]
    int32_t data_pkts, flagged, retrans, retrans_data, zero_window, lost
    # rarely updated
    int64_t first_frame
    double first_ts, irtt
    uint64_t src_hi, src_lo, dst_hi, dst_lo  # the first packet's endpoints
    int32_t sport, dport, first_dir, syn_dir, sa_dir, has_irtt
    int32_t fin[2]
    int32_t rst[2]
    int32_t syn[2]
    int32_t synack[2]
    int32_t has_syn[2]
    int32_t mss[2]
    int32_t ws[2]


cdef struct Conv:
    double mru_syn, irtt
    int32_t sub, sid, seen
    Dir d[2]


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


cdef struct Cols:
    # where the kernel reads and writes (raw pointers; optional outputs are NULL)
    const int64_t* rows
    int64_t nrows  # length of the shortest field array: every row must be below it
    const int64_t* conv  # NULL: find conversations with the hash table
    const int64_t* dirn
    const uint64_t* src_hi
    const uint64_t* src_lo
    const int32_t* sport
    const uint64_t* dst_hi
    const uint64_t* dst_lo
    const int32_t* dport
    const int64_t* seq
    const int64_t* ack
    const int16_t* flags
    const int32_t* win
    const int32_t* seglen
    const double* ts
    const int16_t* wscale
    const int32_t* mss
    const int64_t* frame
    int64_t* out_flags
    int64_t* out_sub
    double* out_irtt
    double* out_rtt
    int64_t* out_sid


cdef struct Result:
    Agg* streams  # one per stream when streams are collected (caller frees)
    int64_t ns
    int64_t nconv


cdef int _run(Cols* k, Py_ssize_t n, int64_t nconv, bint streams, Result* res, char* scratch,
              size_t scratch_bytes) noexcept nogil:
    """Walk segments in index (capture) order. Returns 0, -1 when out of memory, -2 for a row, conversation
    id or direction out of range.

    ``scratch`` (may be NULL) is memory the caller fills only afterwards (the ``order`` output): the
    per-conversation states live there while they fit, so those pages are touched once, not twice.
    """
    cdef Py_ssize_t i, ii, i1, i2, i3
    cdef Pend pend[32]
    cdef int64_t cring[16]
    cdef int64_t dring[16]
    cdef Seg* pool = NULL  # free small blocks, linked through their first word
    cdef int64_t ccap = nconv if nconv > 64 else 64
    cdef bint owned = True  # cs was malloc'ed (not the caller's scratch)
    cdef Conv* cs
    if scratch != NULL and <int64_t>(scratch_bytes // sizeof(Conv)) >= ccap:
        cs = <Conv*>scratch
        ccap = scratch_bytes // sizeof(Conv)
        owned = False
    else:
        cs = <Conv*>malloc(ccap * sizeof(Conv))
    cdef int64_t scap = 1024, ns = 0, seen = 0
    cdef Agg* st = <Agg*>malloc(scap * sizeof(Agg)) if streams else NULL
    cdef Table tab
    cdef Agg* sp
    cdef Dir* fw
    cdef Dir* rv
    cdef Conv* cv
    cdef Seg* sg
    cdef void* vtmp
    cdef int64_t c, r, d, fl, s, a, w, ln, wsv, af, ctl, nx, sh, nxt, end, kept, j, nq, wl, x
    cdef double t, thr
    cdef bint new, skip, same, nad, rtt_set
    cdef int rc = -1
    res.streams = NULL  # the callers free it whatever happens
    res.ns = 0
    res.nconv = 0
    tab.slots = NULL
    if cs == NULL or (streams and st == NULL) or (k.conv == NULL and _table_init(&tab) < 0):
        if owned:
            free(cs)
        free(st); free(tab.slots)
        return -1
    # Software pipeline (the walk is bound by cache misses): packet i + PF1 is hashed and its table
    # slot prefetched, packet i + PF2 is looked up, packet i + PF3's peer segment list is prefetched,
    # packet i is analysed. (Prefetching the state blocks too measured slower: the active
    # conversations' blocks are mostly cached already and the extra prefetches queue behind misses.)
    for ii in range(-PF1, n):
        if k.conv == NULL and ii + PF1 < n:
            i1 = ii + PF1
            r = k.rows[i1]
            if r < 0 or r >= k.nrows:
                rc = -2
                break
            _key(&pend[i1 & 31], k.src_hi[r], k.src_lo[r], k.sport[r], k.dst_hi[r], k.dst_lo[r], k.dport[r])
            __builtin_prefetch(&tab.slots[pend[i1 & 31].h & tab.mask])
        i2 = ii + PF2
        if 0 <= i2 < n:
            if k.conv != NULL:
                c = k.conv[i2]
                d = k.dirn[i2]
                if c < 0 or c >= nconv or d < 0 or d > 1:
                    rc = -2
                    break
            else:
                c = _find(&tab, &pend[i2 & 31], &d)
                if c < 0:
                    break
            if c >= seen:  # conversation ids appear in increasing order; set up the new state blocks
                if c >= ccap:
                    ccap = 2 * c + 2
                    if owned:
                        vtmp = realloc(cs, ccap * sizeof(Conv))
                    else:  # outgrew the scratch: move to the heap
                        vtmp = malloc(ccap * sizeof(Conv))
                        if vtmp != NULL:
                            memcpy(vtmp, cs, seen * sizeof(Conv))
                    if vtmp == NULL:
                        break
                    cs = <Conv*>vtmp
                    owned = True
                for j in range(seen, c + 1):
                    cs[j].seen = False
                    cs[j].d[0].segs = NULL
                    cs[j].d[0].seg_cap = 0
                    cs[j].d[1].segs = NULL
                    cs[j].d[1].seg_cap = 0
                seen = c + 1
            cring[i2 & 15] = c
            dring[i2 & 15] = d
        i3 = ii + PF3
        if 0 <= i3 < n:
            cv = &cs[cring[i3 & 15]]
            sg = cv.d[1 - dring[i3 & 15]].segs
            if sg != NULL:
                __builtin_prefetch(sg)
        if ii < 0:
            continue
        i = ii
        r = k.rows[i]
        if r < 0 or r >= k.nrows:
            rc = -2
            break
        c = cring[i & 15]
        d = dring[i & 15]
        cv = &cs[c]
        fw = &cv.d[d]
        rv = &cv.d[1 - d]
        fl = k.flags[r]
        s = k.seq[r]
        a = k.ack[r]
        w = k.win[r]
        ln = k.seglen[r]
        t = k.ts[r]
        wsv = k.wscale[r]
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
                    vtmp = realloc(st, scap * sizeof(Agg))
                    if vtmp == NULL:
                        break
                    st = <Agg*>vtmp
                sp = &st[ns]
                memset(sp, 0, sizeof(Agg))
                sp.first_frame = k.frame[r]
                sp.first_ts = t
                sp.src_hi = k.src_hi[r]
                sp.src_lo = k.src_lo[r]
                sp.sport = k.sport[r]
                sp.dst_hi = k.dst_hi[r]
                sp.dst_lo = k.dst_lo[r]
                sp.dport = k.dport[r]
                sp.first_dir = d
                sp.syn_dir = -1
                sp.sa_dir = -1
                sp.mss[0] = -1
                sp.mss[1] = -1
                sp.ws[0] = -1
                sp.ws[1] = -1
                cv.sid = <int32_t>ns
                ns += 1
        if k.out_sub != NULL:
            k.out_sub[i] = cv.sub
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
                wl = ((<int64_t>rv.window) << sh) & M32 if sh < 32 else 0
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
                if fw.seg_cap == 0:  # a small block, recycled from the pool when one is free
                    if pool != NULL:
                        fw.segs = pool
                        pool = (<Seg**>pool)[0]
                    else:
                        fw.segs = <Seg*>malloc(SMALL * sizeof(Seg))
                        if fw.segs == NULL:
                            break
                    fw.seg_cap = SMALL
                else:
                    j = 2 * fw.seg_cap
                    if j > UNACKED_MAX:
                        j = UNACKED_MAX
                    if fw.seg_cap == SMALL:
                        vtmp = malloc(j * sizeof(Seg))
                        if vtmp == NULL:
                            break
                        memcpy(vtmp, fw.segs, SMALL * sizeof(Seg))
                        (<Seg**>fw.segs)[0] = pool
                        pool = fw.segs
                    else:
                        vtmp = realloc(fw.segs, j * sizeof(Seg))
                        if vtmp == NULL:
                            break
                    fw.segs = <Seg*>vtmp
                    fw.seg_cap = <int32_t>j
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
        fw.window = <int32_t>w
        fw.lastack = a
        fw.lastacktime = t
        fw.lastflags = <int16_t>af
        fw.first_ack = (fl & SYN) != 0
        k.out_flags[i] = af
        # ACK processing over the peer's un-ACKed list, oldest first (see tcp._kernel)
        kept = 0
        rtt_set = False
        sg = rv.segs
        k.out_rtt[i] = NAN
        for j in range(rv.seg_n):
            nq = sg[j].nxt
            if a == nq or not _gt(nq - a):
                if a == nq and not rtt_set and t != sg[j].ts:
                    k.out_rtt[i] = t - sg[j].ts
                    rtt_set = True
                continue
            if _gt(a - sg[j].seq):
                sg[kept].seq = a  # partial ACK trims the segment
            elif kept != j:
                sg[kept].seq = sg[j].seq
            if kept != j:
                sg[kept].nxt = nq
                sg[kept].ts = sg[j].ts
            kept += 1
        rv.seg_n = <int32_t>kept
        if kept == 0 and rv.seg_cap > 0:
            # an emptied list is given back (small blocks to the pool), so finished connections'
            # memory is recycled by new ones instead of growing the working set (fewer page faults)
            if rv.seg_cap == SMALL:
                (<Seg**>rv.segs)[0] = pool
                pool = rv.segs
            else:
                free(rv.segs)
            rv.segs = NULL
            rv.seg_cap = 0
        # iRTT: most recent pure SYN -> first pure ACK (set after the analysis)
        x = fl & (SYN | ACK)
        if k.out_irtt != NULL:
            k.out_irtt[i] = NAN
        if x == SYN:
            cv.mru_syn = t
        elif x == ACK and cv.irtt < 0 and cv.mru_syn >= 0:
            cv.irtt = t - cv.mru_syn
            if k.out_irtt != NULL:
                k.out_irtt[i] = cv.irtt
            if streams:  # may be set again while negative (timestamps out of order): last wins
                st[cv.sid].irtt = cv.irtt
                st[cv.sid].has_irtt = True
        if streams:
            sp = &st[cv.sid]
            k.out_sid[i] = cv.sid
            sp.last_frame = r  # a row until _table turns it into a frame number
            sp.last_ts = t
            sp.pkts[d] += 1
            sp.byts[d] += ln
            if fl & (FIN | RST | SYN):
                if fl & FIN:
                    sp.fin[d] += 1
                if fl & RST:
                    sp.rst[d] += 1
                if fl & SYN:
                    if fl & ACK:
                        sp.synack[d] += 1
                        if sp.sa_dir < 0:
                            sp.sa_dir = <int32_t>d
                    else:
                        sp.syn[d] += 1
                        if sp.syn_dir < 0:
                            sp.syn_dir = <int32_t>d
                    if not sp.has_syn[d]:
                        sp.has_syn[d] = True
                        sp.mss[d] = k.mss[r]
                        sp.ws[d] = <int32_t>wsv
            if ln > 0:
                sp.data_pkts += 1
            if af != 0:
                sp.flagged += 1
                if af & RETR:
                    sp.retrans += 1
                    if ln > 0:
                        sp.retrans_data += 1
                if af & ZW:
                    sp.zero_window += 1
                if af & (LOST | ACKLOST):
                    sp.lost += 1
    else:
        rc = 0
    for j in range(seen):
        free(cs[j].d[0].segs)
        free(cs[j].d[1].segs)
    while pool != NULL:
        sg = pool
        pool = (<Seg**>pool)[0]
        free(sg)
    if owned:
        free(cs)
    free(tab.slots)
    if rc != 0:
        free(st)
        st = NULL
    res.streams = st
    res.ns = ns
    res.nconv = seen
    return rc


cdef void _inputs(Cols* k, const int64_t[::1] rows, const int64_t[::1] seq, const int64_t[::1] ack,
                  const int16_t[::1] flags, const int32_t[::1] win, const int32_t[::1] seglen, const double[::1] ts,
                  const int16_t[::1] wscale):
    memset(k, 0, sizeof(Cols))
    k.nrows = min(seq.shape[0], ack.shape[0], flags.shape[0], win.shape[0], seglen.shape[0], ts.shape[0],
                  wscale.shape[0])
    k.rows = &rows[0]
    k.seq = &seq[0]
    k.ack = &ack[0]
    k.flags = &flags[0]
    k.win = &win[0]
    k.seglen = &seglen[0]
    k.ts = &ts[0]
    k.wscale = &wscale[0]


cdef void _check(int rc) except *:
    if rc == -2:
        raise IndexError("segment row, conversation id or direction out of range")
    if rc < 0:
        raise MemoryError()


def analyze(const int64_t[::1] rows, const int64_t[::1] conv, const int64_t[::1] dirn, int64_t nconv,
            const int64_t[::1] seq, const int64_t[::1] ack, const int16_t[::1] flags, const int32_t[::1] win,
            const int32_t[::1] seglen, const double[::1] ts, const int16_t[::1] wscale):
    """(flags, sub-stream, iRTT, ack_rtt) per segment: see :func:`netghost.forensics.tcp.analyze_tcp_sequences`.

    Segment ``i`` is conversation ``conv[i]`` (``0 <= conv[i] < nconv``), direction ``dirn[i]``, fields
    at ``rows[i]``; segments are analysed in index order, which must be capture order.
    """
    cdef Py_ssize_t n = rows.shape[0]
    of = np.empty(n, np.int64)
    osub = np.empty(n, np.int64)
    oirtt = np.empty(n, np.float64)
    ortt = np.empty(n, np.float64)
    if n == 0:
        return of, osub, oirtt, ortt
    cdef int64_t[::1] ofv = of, osv = osub
    cdef double[::1] oiv = oirtt, orv = ortt
    cdef Cols k
    cdef Result res
    cdef int rc
    _inputs(&k, rows, seq, ack, flags, win, seglen, ts, wscale)
    k.conv = &conv[0]
    k.dirn = &dirn[0]
    k.out_flags = &ofv[0]
    k.out_sub = &osv[0]
    k.out_irtt = &oiv[0]
    k.out_rtt = &orv[0]
    with nogil:
        rc = _run(&k, n, nconv, False, &res, NULL, 0)
    _check(rc)
    return of, osub, oirtt, ortt


def analyze_streams(const int64_t[::1] rows, const uint64_t[::1] src_hi, const uint64_t[::1] src_lo,
                    const int32_t[::1] sport, const uint64_t[::1] dst_hi, const uint64_t[::1] dst_lo,
                    const int32_t[::1] dport, const int64_t[::1] seq, const int64_t[::1] ack,
                    const int16_t[::1] flags, const int32_t[::1] win, const int32_t[::1] seglen,
                    const double[::1] ts, const int16_t[::1] wscale, const int32_t[::1] mss,
                    const int64_t[::1] frame, out=None):
    """Grouping + rules + stream table in one pass (see :func:`netghost.forensics.flows.analyze_tcp`).

    ``out``: optional preallocated (aflags int64, ack_rtt float64, sid int64, order int64) arrays of
    ``len(rows)`` elements (e.g. file-backed ones from :mod:`netghost.forensics.spill`); they are
    filled and returned.

    Returns:
        (aflags, ack_rtt, sid, order, table) where ``order`` lists segments stream by stream (capture
        order inside) and ``table`` is a dict of the :class:`~netghost.forensics.flows.TcpStreams`
        columns except ``conn_state``, plus ``syn_c``/``synack_s`` (pure SYNs from the client, SYN-ACKs
        from the server) for it.
    """
    cdef Py_ssize_t n = rows.shape[0]
    if out is None:
        of, ortt, sid, order = np.empty(n, np.int64), np.empty(n, np.float64), np.empty(n, np.int64), np.empty(n, np.int64)
    else:
        of, ortt, sid, order = out
        if not all(a.shape == (n,) for a in (of, ortt, sid, order)):
            raise ValueError("output arrays must have one element per segment")
    if n == 0:
        return of, ortt, sid, order, _table(NULL, 0, NULL)
    cdef int64_t[::1] ofv = of, sidv = sid, ov = order
    cdef double[::1] orv = ortt
    cdef Cols k
    cdef Result res
    cdef int rc
    cdef int64_t* counts = NULL
    cdef int64_t j
    _inputs(&k, rows, seq, ack, flags, win, seglen, ts, wscale)
    k.src_hi = &src_hi[0]
    k.src_lo = &src_lo[0]
    k.sport = &sport[0]
    k.dst_hi = &dst_hi[0]
    k.dst_lo = &dst_lo[0]
    k.dport = &dport[0]
    k.mss = &mss[0]
    k.frame = &frame[0]
    k.nrows = min(k.nrows, src_hi.shape[0], src_lo.shape[0], sport.shape[0], dst_hi.shape[0], dst_lo.shape[0],
                  dport.shape[0], mss.shape[0], frame.shape[0])
    k.out_flags = &ofv[0]
    k.out_rtt = &orv[0]
    k.out_sid = &sidv[0]
    with nogil:
        rc = _run(&k, n, 0, True, &res, <char*>&ov[0], n * sizeof(int64_t))
        if rc == 0:
            counts = <int64_t*>malloc((res.ns + 1) * sizeof(int64_t))
            if counts != NULL:
                for j in range(res.ns):
                    counts[j] = res.streams[j].pkts[0] + res.streams[j].pkts[1]
                _bucket_order(&sidv[0], n, counts, res.ns, &ov[0])
    free(counts)
    if rc != 0 or counts == NULL:
        free(res.streams)
        _check(rc)
        raise MemoryError()
    try:
        table = _table(res.streams, res.ns, &frame[0])
    finally:
        free(res.streams)
    return of, ortt, sid, order, table


cdef dict _table(Agg* st, int64_t ns, const int64_t* frame):
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
    if ns == 0:
        return out
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
    cdef int64_t j, o, q
    cdef Agg* sp
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
            first_frame[j] = sp.first_frame
            last_frame[j] = frame[sp.last_frame]
            first_ts[j] = sp.first_ts
            last_ts[j] = sp.last_ts
            if sp.first_dir == o:
                c_hi[j] = sp.src_hi; c_lo[j] = sp.src_lo; c_port[j] = sp.sport
                s_hi[j] = sp.dst_hi; s_lo[j] = sp.dst_lo; s_port[j] = sp.dport
            else:
                c_hi[j] = sp.dst_hi; c_lo[j] = sp.dst_lo; c_port[j] = sp.dport
                s_hi[j] = sp.src_hi; s_lo[j] = sp.src_lo; s_port[j] = sp.sport
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
