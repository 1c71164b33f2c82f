# Included by _compiled.pyx: the conversation hash table and group_conversations.
# Textual inclusion keeps one extension module, so the compiler inlines these helpers into the walk
# (no calls across modules). Not a module of its own.

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


cdef void _bucket_order(const int64_t* key, Py_ssize_t n, int64_t* pos, int64_t nkeys, int64_t* order,
                        void* tick=NULL, Py_ssize_t tick_every=0) noexcept nogil:
    """Counting sort: ``order`` lists indices grouped by ``key`` (ascending), index order inside.

    ``pos`` holds each key's count on entry (scratch, overwritten). ``tick`` (a Python callable, or
    NULL) is called every ``tick_every`` indices, as in ``_run``.
    """
    cdef Py_ssize_t i
    cdef Py_ssize_t tick_at = tick_every if tick != NULL and tick_every > 0 else -1
    cdef int64_t acc = 0, c
    for i in range(nkeys):
        c = pos[i]
        pos[i] = acc
        acc += c
    for i in range(n):
        if i == tick_at:
            tick_at += tick_every
            _tick(tick)
        c = key[i]
        order[pos[c]] = i
        pos[c] += 1


def group_conversations(const int64_t[::1] rows, const uint64_t[::1] src_hi, const uint64_t[::1] src_lo,
                        const int32_t[::1] sport, const uint64_t[::1] dst_hi, const uint64_t[::1] dst_lo,
                        const int32_t[::1] dport):
    """(conv, dirn, order): see :func:`netghost.forensics.tcp.group_conversations`."""
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
