# Included by _walkdecode.pyx (one extension module, so these inline readers and the per-packet
# decode compile into the walk loops with no call overhead across modules). Not a module of its own.

# ---- bounds-clipped big-endian reads (Gather semantics) ------------------------------------------

cdef inline int64_t _c(int64_t p, int64_t hi) noexcept nogil:
    return 0 if p < 0 else (hi if p > hi else p)


cdef inline int64_t _u8(const uint8_t* b, int64_t p, int64_t hi) noexcept nogil:
    return b[_c(p, hi)]


cdef inline int64_t _u16(const uint8_t* b, int64_t p, int64_t hi) noexcept nogil:
    p = _c(p, hi)
    return (<int64_t>b[p] << 8) | b[p + 1]


cdef inline int64_t _u32(const uint8_t* b, int64_t p, int64_t hi) noexcept nogil:
    p = _c(p, hi)
    return (<int64_t>b[p] << 24) | (<int64_t>b[p + 1] << 16) | (<int64_t>b[p + 2] << 8) | b[p + 3]


cdef inline uint64_t _u64(const uint8_t* b, int64_t p, int64_t hi) noexcept nogil:
    return (<uint64_t>_u32(b, p, hi) << 32) | <uint64_t>_u32(b, p + 4, hi)


cdef inline int64_t _rd32(const uint8_t* b, int64_t p, bint big) noexcept nogil:
    """Unclipped 32-bit read of a record-header field in the file's byte order."""
    if big:
        return (<int64_t>b[p] << 24) | (<int64_t>b[p + 1] << 16) | (<int64_t>b[p + 2] << 8) | b[p + 3]
    return (<int64_t>b[p + 3] << 24) | (<int64_t>b[p + 2] << 16) | (<int64_t>b[p + 1] << 8) | b[p]


# ---- the per-packet decode -------------------------------------------------------------------------

cdef bint _decode_one(const uint8_t* buf, int64_t hi, int64_t o, int64_t caplen, int64_t wirelen, int32_t lk,
                      Cols* c, Py_ssize_t r, int64_t* payoff_out, int64_t* capend_out,
                      const uint8_t* port_mark) noexcept nogil:
    """Decode one record into row ``r``; True when a port is marked in ``port_mark`` (DNS candidate)."""
    cdef int64_t end = o + caplen
    cdef int64_t lim = o + wirelen
    cdef int64_t iss = 0, et = -1, p = -1, ppp, ver, le, fam, q, tlen, ttype
    cdef bint vlan = False, known = True, found
    cdef int k
    if caplen == 0:
        iss = 1
    if lk == 1:
        et = _u16(buf, o + 12, hi)
        p = o + 14
        for k in range(3):
            if et == 0x8100 or et == 0x88A8 or et == 0x9100:
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
    elif lk == 12 or lk == 14 or lk == 101 or lk == 228 or lk == 229:
        ver = _u8(buf, o, hi) >> 4
        et = 0x0800 if ver == 4 else (0x86DD if ver == 6 else -1)
        p = o
    elif lk == 0 or lk == 108:
        le = _u8(buf, o, hi) | (_u8(buf, o + 1, hi) << 8) | (_u8(buf, o + 2, hi) << 16) | (_u8(buf, o + 3, hi) << 24)
        fam = le if (lk == 0 and le < 256) else _u32(buf, o, hi)
        if fam == 2:
            et = 0x0800
        elif fam == 10 or fam == 23 or fam == 24 or fam == 28 or fam == 30:
            et = 0x86DD
        else:
            et = -1
        p = o + 4
    elif lk == 239:  # NFLOG: 4-byte header, little-endian TLVs; NFULA_PAYLOAD (type 9) holds the packet
        fam = buf[o] if o < end else -1
        q = o + 4
        found = False
        while q + 4 <= end:
            tlen = buf[q] | (<int64_t>buf[q + 1] << 8)
            ttype = buf[q + 2] | (<int64_t>buf[q + 3] << 8)
            if tlen < 4:
                break
            if (ttype & 0x7FFF) == 9:
                p = q + 4
                et = 0x0800 if fam == 2 else (0x86DD if fam == 10 else -1)
                found = True
                break
            q += (tlen + 3) & ~3
        if not found:
            iss = 11
    else:
        known = False
        if iss == 0:
            iss = 3
    if known and iss == 0 and p > end:
        iss = 2
    if iss != 0:
        et = -1

    cdef int64_t l3 = 0, ttl = -1, ipid = -1, dscp = -1, proto = -1, l4 = -1, l4len = -1
    cdef int64_t vihl, ihl, tot, ff, nh, plen, hl
    cdef uint64_t sh = 0, sl = 0, dh = 0, dl = 0
    cdef bint frag = False
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
            sl = <uint64_t>_u32(buf, q + 12, hi)
            dl = <uint64_t>_u32(buf, q + 16, hi)
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
            for k in range(6):
                if not (nh == 0 or nh == 43 or nh == 44 or nh == 51 or nh == 60):
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

    cdef int64_t sport = -1, dport = -1, seq = -1, ack = -1, tfl = -1, win = -1, thl = -1
    cdef int64_t paylen = -1, payoff = -1, ity = -1, ico = -1, mtu = -1, inp = -1, isp = -1, idp = -1
    cdef int64_t mss = -1, wsc = -1, iq, pq
    cdef uint64_t ish = 0, isl = 0, idh = 0, idl = 0
    cdef bint sack = False, err
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
        elif proto == 1 or proto == 58:
            if q + 4 > end:
                iss = 10
            else:
                ity = _u8(buf, q, hi)
                ico = _u8(buf, q + 1, hi)
                if proto == 1:
                    if ity == 3 and ico == 4:
                        mtu = _u16(buf, q + 6, hi)
                    err = ity == 3 or ity == 4 or ity == 5 or ity == 11 or ity == 12
                else:
                    if ity == 2:
                        mtu = _u32(buf, q + 4, hi)
                    err = ity == 1 or ity == 2 or ity == 3 or ity == 4
                if err:
                    iq = q + 8
                    pq = -1
                    if proto == 1:
                        if iq + 20 <= end and (_u8(buf, iq, hi) >> 4) == 4:
                            inp = _u8(buf, iq + 9, hi)
                            ish = V4
                            idh = V4
                            isl = <uint64_t>_u32(buf, iq + 12, hi)
                            idl = <uint64_t>_u32(buf, iq + 16, hi)
                            pq = iq + (_u8(buf, iq, hi) & 15) * 4
                    elif iq + 40 <= end and (_u8(buf, iq, hi) >> 4) == 6:
                        inp = _u8(buf, iq + 6, hi)
                        ish = _u64(buf, iq + 8, hi)
                        isl = _u64(buf, iq + 16, hi)
                        idh = _u64(buf, iq + 24, hi)
                        idl = _u64(buf, iq + 32, hi)
                        pq = iq + 40
                    if pq >= 0 and (inp == 6 or inp == 17) and pq + 4 <= end:
                        isp = _u16(buf, pq, hi)
                        idp = _u16(buf, pq + 2, hi)

    # 64-bit fingerprint of the first 8 payload bytes + length (cross-capture matching)
    cdef int64_t avail = min(paylen, end - payoff)
    avail = 0 if avail < 0 else (8 if avail > 8 else avail)
    cdef uint64_t ph = 0
    if avail == 8 and payoff + 7 <= hi:  # the common case: 8 unclipped bytes, one big-endian load
        memcpy(&ph, buf + payoff, 8)
        ph = __builtin_bswap64(ph)
    else:
        for k in range(8):
            ph = (ph << 8) | <uint64_t>(_u8(buf, payoff + k, hi) if avail > k else 0)
    ph ^= <uint64_t>paylen * GOLD

    cdef int64_t tsv = -1, tse = -1, pp, z, kind, ln
    cdef bint is_syn
    if tfl >= 0 and thl > 20:
        is_syn = (tfl & 2) != 0
        pp = payoff - thl + 20
        z = min(payoff, end)
        for k in range(40):
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

    c.ethertype[r] = <int32_t>et
    c.src_hi[r] = sh
    c.src_lo[r] = sl
    c.dst_hi[r] = dh
    c.dst_lo[r] = dl
    c.ttl[r] = <int16_t>ttl
    c.ip_id[r] = <int32_t>ipid
    c.dscp[r] = <int16_t>dscp
    c.proto[r] = <int16_t>proto
    c.sport[r] = <int32_t>sport
    c.dport[r] = <int32_t>dport
    c.seq[r] = seq
    c.ack[r] = ack
    c.tcp_flags[r] = <int16_t>tfl
    c.win[r] = <int32_t>win
    if c.tcp_hlen != NULL:
        c.tcp_hlen[r] = <int16_t>thl
    c.paylen[r] = <int32_t>paylen
    c.pay_hash[r] = ph
    c.icmp_type[r] = <int16_t>ity
    c.icmp_code[r] = <int16_t>ico
    c.icmp_mtu[r] = <int32_t>mtu
    c.in_proto[r] = <int16_t>inp
    if ish:
        c.in_src_hi[r] = ish
    if isl:
        c.in_src_lo[r] = isl
    if idh:
        c.in_dst_hi[r] = idh
    if idl:
        c.in_dst_lo[r] = idl
    c.in_sport[r] = <int32_t>isp
    c.in_dport[r] = <int32_t>idp
    c.mss[r] = <int32_t>mss
    c.wscale[r] = <int16_t>wsc
    c.tsval[r] = tsv
    if c.tsecr != NULL:
        c.tsecr[r] = tse
    # char-typed stores last: they may alias anything (the struct's pointers included), so the
    # compiler would reload every column pointer after each one
    if vlan:
        c.vlan[r] = vlan
    c.l3[r] = <int8_t>l3
    if frag:
        c.ip_frag[r] = frag
    if sack:
        c.sack_perm[r] = sack
    if iss:
        c.issue[r] = <int8_t>iss
    payoff_out[0] = payoff
    capend_out[0] = end
    return (sport >= 0 and port_mark[sport] != 0) or (dport >= 0 and port_mark[dport] != 0)
