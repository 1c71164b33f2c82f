# Included by _compiled.pyx: the per-conversation state and the tshark rule machine (_run).
# Textual inclusion keeps one extension module, so the compiler inlines these helpers into the walk
# (no calls across modules). Not a module of its own.

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
    void* tick  # a Python callable (borrowed) run with the GIL every tick_every segments, or NULL
    Py_ssize_t tick_every


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
    cdef Py_ssize_t tick_at = k.tick_every if k.tick != NULL and k.tick_every > 0 else -1
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
        if i == tick_at:
            tick_at += k.tick_every
            _tick(k.tick)
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
            # ACKed unseen segment, one flag per hole (see _rules.py)
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
        # ACK processing over the peer's un-ACKed list, oldest first (see _rules.py)
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
