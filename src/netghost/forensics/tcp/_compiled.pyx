# cython: language_level=3
"""Compiled TCP analysis: conversation grouping, the tshark 4.0 rule machine and the per-stream table.

This is a C port of :func:`netghost.forensics.tcp._rules.run_rules` (the readable statement of the rules, which stays the
source of truth; tests compare the two segment by segment). Two differences of *method*, none of
result:

* Segments are walked in **capture order** with one state block per conversation (instead of
  sorting segments by conversation and resetting one state block at each boundary). Conversations
  are independent, so the per-conversation sequence of states is the same; reading the columns
  sequentially is what makes this fast (no gather through a permutation, no cache miss per field).
* Conversations are found with an exact open-addressing hash table over the canonical
  (lower endpoint, upper endpoint) key, numbered by first appearance in one pass; a counting sort
  then gives the "each group contiguous, capture order inside" permutation without a full sort.

The per-stream aggregates of :func:`netghost.forensics.tcp.build_streams` are accumulated in the
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


cdef void _tick(void* fn) noexcept nogil:
    """Call the Python callable ``fn`` (no arguments) with the GIL; an exception it raises is only reported.

    Why: the walk reads every segment's columns and writes its outputs once, in capture order. When
    those arrays are file-backed (spilled past the memory budget) the pages walked stay in the
    process's resident set until released; the engine passes a release here so they leave as the walk
    goes instead of accumulating to the whole capture's columns.
    """
    with gil:
        (<object>fn)()


# conversation grouping (_tcp_table.pxi), then the rule machine over the segments (_tcp_rules.pxi);
# both textually included, so this stays one compiled module
include "_compiled_table.pxi"
include "_compiled_rules.pxi"


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
                    const int64_t[::1] frame, out=None, tick=None, Py_ssize_t tick_every=0, alloc=None,
                    bint last_rows=False):
    """Grouping + rules + stream table in one pass (see :func:`netghost.forensics.tcp.analyze_tcp`).

    ``out``: optional preallocated (aflags int64, ack_rtt float64, sid int64, order int64) arrays of
    ``len(rows)`` elements (e.g. file-backed ones from :mod:`netghost.forensics.spill`); they are
    filled and returned. ``tick``: optional callable (no arguments, should not raise) run every
    ``tick_every`` segments of the walk and of the final ordering, e.g. to release walked pages of
    file-backed columns (:func:`netghost.forensics.spill.release`); it changes no result. ``alloc``:
    optional ``alloc(n, dtype)`` giving the stream table's columns (e.g. :func:`netghost.forensics.spill.alloc`,
    so a table of 10^5-10^6 streams, ~250 bytes each, spills past the memory budget like the per-packet
    columns); ``np.empty`` when None. ``last_rows``: ``last_frame`` holds each stream's last segment's
    row instead of its frame number (the caller gathers the frame numbers, e.g. in pieces from a
    file-backed column: read here, 10^5 scattered rows would fault most of that column in at once).

    Returns:
        (aflags, ack_rtt, sid, order, table) where ``order`` lists segments stream by stream (capture
        order inside) and ``table`` is a dict of the :class:`~netghost.forensics.tcp.TcpStreams`
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
        return of, ortt, sid, order, _table(NULL, 0, NULL, alloc)
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
    if tick is not None and tick_every > 0:
        k.tick = <void*>tick  # borrowed: ``tick`` outlives the call
        k.tick_every = tick_every
    with nogil:
        rc = _run(&k, n, 0, True, &res, <char*>&ov[0], n * sizeof(int64_t))
        if rc == 0:
            counts = <int64_t*>malloc((res.ns + 1) * sizeof(int64_t))
            if counts != NULL:
                for j in range(res.ns):
                    counts[j] = res.streams[j].pkts[0] + res.streams[j].pkts[1]
                _bucket_order(&sidv[0], n, counts, res.ns, &ov[0], k.tick, k.tick_every)
    free(counts)
    if rc != 0 or counts == NULL:
        free(res.streams)
        _check(rc)
        raise MemoryError()
    try:
        table = _table(res.streams, res.ns, NULL if last_rows else &frame[0], alloc)
    finally:
        free(res.streams)
    return of, ortt, sid, order, table


cdef dict _table(Agg* st, int64_t ns, const int64_t* frame, alloc=None):
    """The stream columns with client/server resolved (client = first pure SYN's sender, else the
    receiver of the first SYN-ACK, else the first packet's sender).

    With ``frame`` NULL, ``last_frame`` holds each stream's last segment's row (the caller maps it to
    a frame number). Columns come from ``alloc(n, dtype)`` when given, except ``syn_c``/``synack_s``
    (short-lived: the caller derives conn_state from them and drops them).
    """
    new = np.empty if alloc is None else alloc
    names_i64 = ("first_frame", "last_frame", "pkts_c2s", "pkts_s2c", "bytes_c2s", "bytes_s2c", "syn", "synack",
                 "fin_c", "fin_s", "rst_c", "rst_s", "data_pkts", "retrans", "retrans_data", "flagged",
                 "zero_window", "lost", "mss_c", "mss_s", "ws_c", "ws_s")
    out = {name: new(ns, np.int64) for name in names_i64}
    for name in ("syn_c", "synack_s"):
        out[name] = np.empty(ns, np.int64)
    for name in ("first_ts", "last_ts", "irtt"):
        out[name] = new(ns, np.float64)
    for name in ("c_hi", "c_lo", "s_hi", "s_lo"):
        out[name] = new(ns, np.uint64)
    for name in ("c_port", "s_port"):
        out[name] = new(ns, np.int32)
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
            last_frame[j] = frame[sp.last_frame] if frame != NULL else sp.last_frame
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
