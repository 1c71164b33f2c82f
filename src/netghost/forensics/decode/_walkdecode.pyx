# cython: language_level=3
"""Compiled record walk + packet decode, written straight into the engine's final columns.

Why one fused pass: the pure path walks the pcap records (a Python loop), builds a batch of offsets,
decodes it with ~100 vectorised numpy passes into fresh per-batch columns and then copies those into
the growing column store. Here each record is walked and decoded once, while its bytes are hot in
cache, into the preallocated final columns (no per-batch object, no copy).

The decode is :func:`netghost.forensics.decode.decode_batch` field for field: same issue codes, same
bounds-clipped reads of garbage (every read is clipped to ``[0, len(buf) - 9]`` exactly like
``gather.Gather``), same integer wrap-around when a value is stored in a narrower column. Parity
with the numpy reference is tested on the corpus and on mutated captures.

Column pointers travel in a C struct built from a tuple of numpy arrays in :data:`COLUMNS` order
(the Python side owns the arrays and checks their dtypes; see ``_columns.py``).
"""

from libc.string cimport memcpy
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t, uintptr_t

# Columns whose absent value is 0 (the rare ICMP-quoted addresses, flags, issue): the store allocates
# them zeroed (calloc: untouched pages cost nothing) and the kernel writes only non-zero values, so on a
# capture without ICMP errors those ~36 bytes per packet never fault a page in.
ZERO_COLUMNS = ("vlan", "ip_frag", "in_src_hi", "in_src_lo", "in_dst_hi", "in_dst_lo", "sack_perm", "issue")

# Columns no analysis reads: the caller may pass ``None`` for them and the kernel skips their stores
# (fewer fresh pages to fault in; see decode_absent.OPTIONAL_COLUMNS).
OPTIONAL_COLUMNS = ("caplen", "wirelen", "tcp_hlen", "tsecr")

# (name, numpy dtype) in the order of the pointers in ``Cols`` below; bool columns are uint8 views.
COLUMNS = (
    ("frame", "int64"), ("ts", "float64"), ("caplen", "int64"), ("wirelen", "int64"), ("linktype", "int32"),
    ("ethertype", "int32"), ("vlan", "bool"), ("l3", "int8"),
    ("src_hi", "uint64"), ("src_lo", "uint64"), ("dst_hi", "uint64"), ("dst_lo", "uint64"),
    ("ttl", "int16"), ("ip_id", "int32"), ("dscp", "int16"), ("ip_frag", "bool"), ("proto", "int16"),
    ("sport", "int32"), ("dport", "int32"), ("seq", "int64"), ("ack", "int64"), ("tcp_flags", "int16"),
    ("win", "int32"), ("tcp_hlen", "int16"), ("paylen", "int32"), ("pay_hash", "uint64"),
    ("icmp_type", "int16"), ("icmp_code", "int16"), ("icmp_mtu", "int32"), ("in_proto", "int16"),
    ("in_src_hi", "uint64"), ("in_src_lo", "uint64"), ("in_dst_hi", "uint64"), ("in_dst_lo", "uint64"),
    ("in_sport", "int32"), ("in_dport", "int32"), ("mss", "int32"), ("wscale", "int16"), ("sack_perm", "bool"),
    ("tsval", "int64"), ("tsecr", "int64"), ("issue", "int8"),
)


cdef struct Cols:
    int64_t* frame
    double* ts
    int64_t* caplen
    int64_t* wirelen
    int32_t* linktype
    int32_t* ethertype
    uint8_t* vlan
    int8_t* l3
    uint64_t* src_hi
    uint64_t* src_lo
    uint64_t* dst_hi
    uint64_t* dst_lo
    int16_t* ttl
    int32_t* ip_id
    int16_t* dscp
    uint8_t* ip_frag
    int16_t* proto
    int32_t* sport
    int32_t* dport
    int64_t* seq
    int64_t* ack
    int16_t* tcp_flags
    int32_t* win
    int16_t* tcp_hlen
    int32_t* paylen
    uint64_t* pay_hash
    int16_t* icmp_type
    int16_t* icmp_code
    int32_t* icmp_mtu
    int16_t* in_proto
    uint64_t* in_src_hi
    uint64_t* in_src_lo
    uint64_t* in_dst_hi
    uint64_t* in_dst_lo
    int32_t* in_sport
    int32_t* in_dport
    int32_t* mss
    int16_t* wscale
    uint8_t* sack_perm
    int64_t* tsval
    int64_t* tsecr
    int8_t* issue


cdef extern from "sys/mman.h" nogil:
    int madvise(void* addr, size_t length, int advice)

cdef extern from *:
    void __builtin_prefetch(const void* addr) noexcept nogil
    uint64_t __builtin_bswap64(uint64_t x) noexcept nogil

# Software prefetch distance: the walk is a chain of dependent loads (each record's length says where
# the next starts), so without it every record header is a cache miss paid in full. The walk streams
# prefetches over every cache line up to this many bytes ahead of the current record.
# Measured on the 2M bench (hot page cache): 0 B 0.32 s, 2 KiB 0.24 s, 4-16 KiB 0.20 s; every line
# (64 B steps) beats every other line (128 B: 0.28 s).
cdef enum:
    PREFETCH = 4096
    PF_STEP = 64

cdef uint64_t V4 = 0xFFFFFFFFFFFFFFFFULL
cdef uint64_t GOLD = 0x9E3779B97F4A7C15ULL


cdef inline uintptr_t _addr(object arr, Py_ssize_t row) except 0:
    """Address of ``arr[row]`` (the Python side guarantees dtype, contiguity and capacity)."""
    cdef uintptr_t base = <uintptr_t>arr.__array_interface__["data"][0]
    return base + <uintptr_t>(row * arr.itemsize) if base else <uintptr_t>1


cdef inline uintptr_t _opt_addr(object arr, Py_ssize_t row) except? 0:
    """``_addr``, or NULL for an optional column the caller does not want (``None``)."""
    return 0 if arr is None else _addr(arr, row)


cdef int _fill_cols(Cols* c, tuple cols, Py_ssize_t row) except -1:
    if len(cols) != len(COLUMNS):
        raise ValueError("column tuple does not match COLUMNS")
    for i in range(len(COLUMNS)):
        if cols[i] is None and COLUMNS[i][0] not in OPTIONAL_COLUMNS:
            raise ValueError(f"column {COLUMNS[i][0]} is required")
    c.frame = <int64_t*>_addr(cols[0], row)
    c.ts = <double*>_addr(cols[1], row)
    c.caplen = <int64_t*>_opt_addr(cols[2], row)
    c.wirelen = <int64_t*>_opt_addr(cols[3], row)
    c.linktype = <int32_t*>_addr(cols[4], row)
    c.ethertype = <int32_t*>_addr(cols[5], row)
    c.vlan = <uint8_t*>_addr(cols[6], row)
    c.l3 = <int8_t*>_addr(cols[7], row)
    c.src_hi = <uint64_t*>_addr(cols[8], row)
    c.src_lo = <uint64_t*>_addr(cols[9], row)
    c.dst_hi = <uint64_t*>_addr(cols[10], row)
    c.dst_lo = <uint64_t*>_addr(cols[11], row)
    c.ttl = <int16_t*>_addr(cols[12], row)
    c.ip_id = <int32_t*>_addr(cols[13], row)
    c.dscp = <int16_t*>_addr(cols[14], row)
    c.ip_frag = <uint8_t*>_addr(cols[15], row)
    c.proto = <int16_t*>_addr(cols[16], row)
    c.sport = <int32_t*>_addr(cols[17], row)
    c.dport = <int32_t*>_addr(cols[18], row)
    c.seq = <int64_t*>_addr(cols[19], row)
    c.ack = <int64_t*>_addr(cols[20], row)
    c.tcp_flags = <int16_t*>_addr(cols[21], row)
    c.win = <int32_t*>_addr(cols[22], row)
    c.tcp_hlen = <int16_t*>_opt_addr(cols[23], row)
    c.paylen = <int32_t*>_addr(cols[24], row)
    c.pay_hash = <uint64_t*>_addr(cols[25], row)
    c.icmp_type = <int16_t*>_addr(cols[26], row)
    c.icmp_code = <int16_t*>_addr(cols[27], row)
    c.icmp_mtu = <int32_t*>_addr(cols[28], row)
    c.in_proto = <int16_t*>_addr(cols[29], row)
    c.in_src_hi = <uint64_t*>_addr(cols[30], row)
    c.in_src_lo = <uint64_t*>_addr(cols[31], row)
    c.in_dst_hi = <uint64_t*>_addr(cols[32], row)
    c.in_dst_lo = <uint64_t*>_addr(cols[33], row)
    c.in_sport = <int32_t*>_addr(cols[34], row)
    c.in_dport = <int32_t*>_addr(cols[35], row)
    c.mss = <int32_t*>_addr(cols[36], row)
    c.wscale = <int16_t*>_addr(cols[37], row)
    c.sack_perm = <uint8_t*>_addr(cols[38], row)
    c.tsval = <int64_t*>_addr(cols[39], row)
    c.tsecr = <int64_t*>_opt_addr(cols[40], row)
    c.issue = <int8_t*>_addr(cols[41], row)
    return 0


# The bounds-clipped reads and the per-packet decode live in _walkdecode_decode.pxi (textually
# included: the same module, so the compiler still inlines them into the loops below).
include "_walkdecode_decode.pxi"


# ---- entry points ----------------------------------------------------------------------------------

def walk_decode_pcap(const uint8_t[::1] buf, Py_ssize_t n, Py_ssize_t start, bint big, double scale,
                     int32_t linktype, int64_t maxrec, tuple cols, Py_ssize_t row0, Py_ssize_t room,
                     int64_t first_frame, int64_t[::1] payoff, int64_t[::1] capend, Py_ssize_t aux0,
                     const uint8_t[::1] port_mark, int64_t[::1] cand, Py_ssize_t ncand):
    """Walk pcap records of ``buf[start:n]`` and decode each into row ``row0 + j`` of ``cols``.

    Args:
        buf: the window (padded or followed by real bytes; reads are clipped to ``len(buf) - 9``).
        n: bytes of the window that belong to it; start: offset of the first record header.
        big: big-endian record headers; scale: seconds per timestamp fraction unit.
        linktype: the file's link type; maxrec: largest acceptable caplen.
        cols: arrays in ``COLUMNS`` order; row0: first row to write; room: rows available from row0.
        first_frame: frame number of row ``row0``.
        payoff, capend: window-relative payload offset / captured end per record, written at ``aux0 + j``.
        port_mark: 65536 flags; a record with a flagged source or destination port is a DNS candidate.
        cand: receives the window-relative rows (``aux0 + j``) of candidates from index ``ncand`` on
            (capacity >= ``len(payoff)``).

    Returns:
        ``(records, end position, bad caplen or -1, full, candidates so far)``; ``full`` means ``room``
        ran out before the window did (call again from the returned position with more room).
    """
    cdef Cols c
    _fill_cols(&c, cols, row0)
    if port_mark.shape[0] < 65536 or cand.shape[0] < payoff.shape[0]:
        raise ValueError("port_mark needs 65536 entries and cand the capacity of payoff")
    cdef const uint8_t* pm = &port_mark[0]
    cdef int64_t* cd = &cand[0]
    cdef const uint8_t* b = &buf[0]
    cdef int64_t hi = max(<int64_t>buf.shape[0] - 9, 0)
    cdef int64_t pos = start, incl, end, sec, frac, wire
    cdef Py_ssize_t k = 0
    cdef int64_t bad = -1
    cdef bint full = False
    cdef int64_t* po = &payoff[aux0] if payoff.shape[0] > aux0 else NULL
    cdef int64_t* ce = &capend[aux0] if capend.shape[0] > aux0 else NULL
    if payoff.shape[0] - aux0 < room:
        room = payoff.shape[0] - aux0
    if capend.shape[0] - aux0 < room:
        room = capend.shape[0] - aux0
    cdef int64_t pf = pos, pf_end = buf.shape[0]
    with nogil:
        while pos + 16 <= n:
            while pf < pos + PREFETCH and pf < pf_end:
                __builtin_prefetch(b + pf)
                pf += PF_STEP
            incl = _rd32(b, pos + 8, big)
            if incl > maxrec:
                bad = incl
                break
            end = pos + 16 + incl
            if end > n:
                break
            if k >= room:
                full = True
                break
            sec = _rd32(b, pos, big)
            frac = _rd32(b, pos + 4, big)
            c.frame[k] = first_frame + k
            c.ts[k] = <double>sec + <double>frac * scale
            wire = _rd32(b, pos + 12, big)
            if c.caplen != NULL:
                c.caplen[k] = incl
            if c.wirelen != NULL:
                c.wirelen[k] = wire
            c.linktype[k] = linktype
            if _decode_one(b, hi, pos + 16, incl, wire, linktype, &c, k, po + k, ce + k, pm):
                cd[ncand] = aux0 + k
                ncand += 1
            k += 1
            pos = end
    return k, pos, bad, full, ncand


def decode_into(const uint8_t[::1] buf, const int64_t[::1] off, const int64_t[::1] caplen,
                const int64_t[::1] wirelen, const double[::1] ts, const int32_t[::1] lt, tuple cols,
                Py_ssize_t row0, int64_t first_frame, int64_t[::1] payoff, int64_t[::1] capend,
                const uint8_t[::1] port_mark, int64_t[::1] cand):
    """Decode the records of a reader batch into rows ``row0 ..`` of ``cols`` (capacity checked by the caller).

    ``payoff``/``capend`` (length >= records) receive each record's payload offset and captured end;
    ``cand`` the batch-relative rows whose source or destination port is flagged in ``port_mark``.
    Returns the number of candidates.
    """
    cdef Py_ssize_t n = off.shape[0], i
    if caplen.shape[0] != n or wirelen.shape[0] != n or ts.shape[0] != n or lt.shape[0] != n:
        raise ValueError("batch columns differ in length")
    if payoff.shape[0] < n or capend.shape[0] < n or cand.shape[0] < n or port_mark.shape[0] < 65536:
        raise ValueError("payoff/capend/cand too short or port_mark not 65536 entries")
    if n == 0:
        return 0
    cdef Py_ssize_t nc = 0
    cdef Cols c
    _fill_cols(&c, cols, row0)
    cdef const uint8_t* b = &buf[0]
    cdef int64_t hi = max(<int64_t>buf.shape[0] - 9, 0)
    with nogil:
        for i in range(n):
            c.frame[i] = first_frame + i
            c.ts[i] = ts[i]
            if c.caplen != NULL:
                c.caplen[i] = caplen[i]
            if c.wirelen != NULL:
                c.wirelen[i] = wirelen[i]
            c.linktype[i] = lt[i]
            if _decode_one(b, hi, off[i], caplen[i], wirelen[i], lt[i], &c, i, &payoff[i], &capend[i], &port_mark[0]):
                cand[nc] = i
                nc += 1
    return nc


def populate(tuple cols, Py_ssize_t row0, Py_ssize_t n):
    """Fault in rows ``row0 .. row0 + n`` of each column ahead of the kernel (``MADV_POPULATE_WRITE``).

    Why: the columns are fresh anonymous memory, and the kernel's stores would take one page fault per
    4 KiB page of each column; one madvise per column maps the same pages without the per-fault
    trap (measured ~25% less system time per page on the bench VM). Advisory: kernels without
    ``MADV_POPULATE_WRITE`` (Linux < 5.14) return an error that is ignored, and the stores fault as before.
    """
    cdef uintptr_t a, e
    cdef object arr
    if n <= 0:
        return
    for arr in cols:
        a = _addr(arr, row0)
        e = a + <uintptr_t>(n * arr.itemsize)
        a &= ~(<uintptr_t>4095)
        madvise(<void*>a, e - a, 23)


def walk_pcap(const uint8_t[::1] buf, Py_ssize_t n, bint big, int64_t maxrec, int64_t[:, ::1] out):
    """Record walk only (the pure decode path's reader on big files): ``out[0..4, k]`` = header offset,
    seconds, fraction, caplen, wire length. Returns ``(records, end position, bad caplen or -1)``."""
    cdef const uint8_t* b = &buf[0]
    cdef int64_t pos = 0, incl, end
    cdef Py_ssize_t k = 0, cap = out.shape[1]
    cdef int64_t bad = -1
    with nogil:
        while pos + 16 <= n and k < cap:
            incl = _rd32(b, pos + 8, big)
            if incl > maxrec:
                bad = incl
                break
            end = pos + 16 + incl
            if end > n:
                break
            out[0, k] = pos
            out[1, k] = _rd32(b, pos, big)
            out[2, k] = _rd32(b, pos + 4, big)
            out[3, k] = incl
            out[4, k] = _rd32(b, pos + 12, big)
            k += 1
            pos = end
    return k, pos, bad


def walk_pcapng_packets(const uint8_t[::1] data, int64_t pos, int64_t n, bint big, const int32_t[::1] if_lt,
                        const double[::1] if_div, const int64_t[::1] if_off, int64_t[::1] offs, int64_t[::1] caps,
                        int64_t[::1] wires, double[::1] tss, int32_t[::1] lts, Py_ssize_t k, int64_t maxblock):
    """Walk consecutive well-formed packet blocks (EPB, SPB, obsolete PB) of ``data[pos:n]``.

    Stops at the first block it does not handle itself: any other type (SHB, IDB, ...), a length the
    Python walker reports as corrupt, a block running past ``n``, or a malformed packet block (the
    Python walker then skips it with its warning). Packet facts go to ``offs``... ``lts`` from index
    ``k`` (capacity checked by the caller: one entry per 12 bytes of ``data``). The timestamp is
    ``units * if_div[iface] + if_off[iface]``; an SPB takes the chunk's previous packet's (or 0.0).

    Returns:
        ``(position of the first unhandled block, packets written so far)``.
    """
    cdef const uint8_t* b = &data[0]
    cdef Py_ssize_t nif = if_lt.shape[0], cap_out = offs.shape[0]
    cdef int64_t btype, blen, blen_body, iid, cap, wire, hi32, lo32
    cdef uint64_t units
    with nogil:
        while pos + 12 <= n and k < cap_out:
            btype = _rd32(b, pos, big)
            if btype != 6 and btype != 3 and btype != 2:
                break
            blen = _rd32(b, pos + 4, big)
            if blen < 12 or blen % 4 or blen > maxblock or pos + blen > n:
                break
            blen_body = blen - 12
            if btype == 3:
                if blen_body < 4 or nif == 0:
                    break
                wire = _rd32(b, pos + 8, big)
                cap = min(wire, blen_body - 4)
                offs[k] = pos + 12
                caps[k] = cap
                wires[k] = wire
                tss[k] = tss[k - 1] if k > 0 else 0.0
                lts[k] = if_lt[0]
            else:
                if blen_body < 20:
                    break
                if btype == 6:
                    iid = _rd32(b, pos + 8, big)
                    hi32 = _rd32(b, pos + 12, big)
                    lo32 = _rd32(b, pos + 16, big)
                    cap = _rd32(b, pos + 20, big)
                    wire = _rd32(b, pos + 24, big)
                else:  # obsolete PB: 16-bit interface id and drops count
                    if big:
                        iid = (<int64_t>b[pos + 8] << 8) | b[pos + 9]
                    else:
                        iid = (<int64_t>b[pos + 9] << 8) | b[pos + 8]
                    hi32 = _rd32(b, pos + 12, big)
                    lo32 = _rd32(b, pos + 16, big)
                    cap = _rd32(b, pos + 20, big)
                    wire = _rd32(b, pos + 24, big)
                if iid >= nif or 20 + cap > blen_body:
                    break
                units = (<uint64_t>hi32 << 32) | <uint64_t>lo32
                offs[k] = pos + 28
                caps[k] = cap
                wires[k] = wire
                tss[k] = <double>units * if_div[iid] + <double>if_off[iid]
                lts[k] = if_lt[iid]
            k += 1
            pos += blen
    return pos, k
