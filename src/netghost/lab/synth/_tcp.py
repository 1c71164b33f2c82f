"""A small, deterministic TCP conversation simulator that emits :class:`~._packets.Pkt`.

It plays Linux's visible behaviour, nothing more: SYN with MSS/SACK-permitted/timestamps/window
scale, SYN retries with exponential backoff (1, 2, 4 s), RST+ACK from a closed port, data in
MSS-sized segments with an initial window of 10, ACK every second full segment or after the
40 ms delayed-ACK timer, piggy-backed ACKs, duplicate ACKs with SACK blocks on a hole, fast
retransmit after three duplicate ACKs, RTO retransmission (200 ms floor, doubling), FIN teardown.

The :class:`PathModel` decides each packet's fate (delivered after the one-way delay, or lost),
so the same code produces the healthy control and every data-plane fault: a black hole (SYNs
never answered), a path MTU that silently eats large DF packets, random loss, and a middlebox
that forges resets.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from netghost.lab.synth._packets import Pkt
from netghost.lab.synth._pcap import TcpOpts, encode_ipv4, icmp_error, tcp_segment

__all__ = ["Endpoint", "PathModel", "TcpConv"]

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
MIN_RTO = 0.2
DELACK = 0.04
SEG_GAP = 12e-6  # back-to-back segments on a 1 Gb/s vNIC
MAX_RTO_RETRIES = 6


@dataclass
class Endpoint:
    """One side of a connection: its address, sequence state and Linux-like constants."""

    ip: str
    port: int
    isn: int
    ident: int
    ts_base: int
    mss: int = 1460
    wscale: int = 7
    syn_win: int = 64240
    win: int = 502
    ttl: int = 64
    snd_nxt: int = 0
    rcv_nxt: int = 0
    ts_recent: int = 0

    def next_ident(self) -> int:
        self.ident = (self.ident + 1) & 0xFFFF
        return self.ident

    def tsval(self, t: float) -> int:
        return (self.ts_base + int(t * 1000)) & 0xFFFFFFFF


@dataclass
class PathModel:
    """The fate of packets between the two endpoints.

    Attributes:
        owd: one-way delay in seconds.
        hops: routers in between (the receiver sees TTL lowered by this much).
        blackhole: nothing from the client reaches the server (NSG deny, no route, dead hop).
        mtu: packets with a larger IP length are dropped silently (PMTU black hole; DF is set).
        loss: probability that a data segment or SYN is lost, drawn from ``rng``.
        rst_after: a middlebox forges resets once the server has sent more than this many bytes.
        rst_ttl: the TTL the middlebox writes into its forged resets.
        rst_to_server: the middlebox resets both ends (the default); False: only the client is told, as
            an IDS that tears down one host's sessions does, and the server finds out from the client.
        via: the appliance the path is routed through; MTU and loss drops happen there, it
            forges the resets, and a capture on it sees the traffic pass (see ``_packets``).
        dropped_leaving_via: the black hole is the appliance's own outbound NSG: the appliance receives
            and forwards the client's packets (its capture shows them leaving), the NSG drops them after.
        reply_blackhole: nothing from the server gets back (no route back, a stateful box on the way back).
        client_after_syn_lost: only the client's SYN gets through; its later segments die at a stateful box
            that never saw the server's SYN-ACK (the reply bypassed it).
        far_client, far_server, far_port: what the server's side sees of a translated connection (the
            firewall's address as the source, the load balancer member and its backend port).
    """

    owd: float
    hops: int = 0
    blackhole: bool = False
    mtu: int | None = None
    loss: float = 0.0
    rst_after: int | None = None
    rst_ttl: int = 255
    rst_to_server: bool = True
    via: str | None = None
    dropped_leaving_via: bool = False
    reply_blackhole: bool = False
    client_after_syn_lost: bool = False
    far_client: str | None = None
    far_server: str | None = None
    far_port: int | None = None
    rng: random.Random = field(default_factory=lambda: random.Random(0))

    def lost(self, pkt: Pkt, from_client: bool, payload: int, syn: bool) -> bool:
        if self.blackhole and from_client:
            return True
        if (self.reply_blackhole and not from_client) or (self.client_after_syn_lost and from_client and not syn):
            return True
        if self.mtu is not None and pkt.size > self.mtu:
            return True
        if self.loss and (payload or syn):
            return self.rng.random() < self.loss
        return False

    def route(self, pkt: Pkt, from_client: bool, payload: int, syn: bool) -> list[Pkt]:
        """Decide ``pkt``'s fate in place (arrival, passage through ``via``); returns what the
        appliance emits because of it: an ICMP fragmentation-needed that is filtered on the way
        back, so only a capture on the appliance ever shows it."""
        lost = self.lost(pkt, from_client, payload, syn)
        if not lost:
            pkt.arrive = pkt.t + self.owd
        if self.via is not None and self.blackhole and from_client and self.dropped_leaving_via:
            pkt.via, pkt.hop_t, pkt.hop_fwd = self.via, pkt.t + self.owd / 2, True
            return []
        if self.via is None or (self.blackhole and from_client):
            return []
        pkt.via, pkt.hop_t, pkt.hop_fwd = self.via, pkt.t + self.owd / 2, not lost
        if lost and self.mtu is not None and pkt.size > self.mtu:
            quoted = encode_ipv4(pkt.src, pkt.dst, pkt.proto, pkt.l4[:8], ident=pkt.ident, ttl=pkt.ttl, df=pkt.df)
            quoted = quoted[:2] + pkt.size.to_bytes(2, "big") + quoted[4:]
            icmp = icmp_error(3, 4, quoted, self.mtu)
            return [Pkt(pkt.hop_t + 15e-6, self.via, pkt.src, 1, self.rng.getrandbits(16), 64, False, icmp, None)]
        return []


@dataclass
class _Seg:
    seq: int
    data: bytes
    flags: int
    sent_at: float = 0.0
    acked: bool = False
    sacked: bool = False


class TcpConv:
    """One TCP connection between ``client`` and ``server`` over ``path``; packets go to ``pkts``."""

    def __init__(self, client: Endpoint, server: Endpoint, path: PathModel) -> None:
        self.c, self.s, self.path = client, server, path
        self.pkts: list[Pkt] = []
        self.reset = False

    # ---- emission ----------------------------------------------------------------------------
    def emit(self, t: float, frm: Endpoint, flags: int, *, seq: int, data: bytes = b"",
             opts: TcpOpts | None = None, ack: bool = True) -> Pkt:
        to = self.s if frm is self.c else self.c
        opts = opts or TcpOpts(ts=(frm.tsval(t), frm.ts_recent))
        ack_no = frm.rcv_nxt if ack else 0
        flags = flags | (ACK if ack else 0)
        win = frm.syn_win if flags & SYN else frm.win
        l4 = tcp_segment(frm.ip, to.ip, frm.port, to.port, seq=seq, ack=ack_no, flags=flags, win=win, opts=opts,
                         payload=data)
        ident = frm.next_ident() if not (flags & RST and not flags & ACK) else 0
        pkt = Pkt(t, frm.ip, to.ip, 6, ident, frm.ttl, True, l4, None, self.path.hops)
        self.translate(pkt, frm is self.c)
        extra = self.path.route(pkt, frm is self.c, len(data), bool(flags & SYN))
        if pkt.arrive is not None:
            to.ts_recent = opts.ts[0] if opts.ts else to.ts_recent
        self.pkts.append(pkt)
        self.pkts.extend(extra)
        return pkt

    def translate(self, pkt: Pkt, from_client: bool) -> None:
        """Give a packet of a translated connection its server-side view (see :class:`PathModel`)."""
        path = self.path
        if path.far_client is None and path.far_server is None:
            return
        client = path.far_client or self.c.ip
        server = path.far_server or self.s.ip
        port = path.far_port or self.s.port
        pkt.to_far = from_client
        pkt.far = (client, server, self.c.port, port) if from_client else (server, client, port, self.c.port)

    # ---- connection phases -------------------------------------------------------------------
    def handshake(self, t: float, syn_tries: int = 4) -> float | None:
        """SYN / SYN-ACK / ACK; returns when the client is established, None if never answered."""
        c, s = self.c, self.s
        c.snd_nxt = c.isn + 1
        backoff = 1.0
        for _ in range(syn_tries):
            syn = self.emit(t, c, SYN, seq=c.isn, ack=False,
                            opts=TcpOpts(mss=c.mss, sack_perm=True, ts=(c.tsval(t), 0), wscale=c.wscale))
            if syn.arrive is not None:
                s.rcv_nxt = c.isn + 1
                s.snd_nxt = s.isn + 1
                t2 = syn.arrive + 30e-6
                sa = self.emit(t2, s, SYN, seq=s.isn,
                               opts=TcpOpts(mss=s.mss, sack_perm=True, ts=(s.tsval(t2), c.tsval(t)), wscale=s.wscale))
                if sa.arrive is not None:
                    c.rcv_nxt = s.isn + 1
                    self.emit(sa.arrive + 20e-6, c, 0, seq=c.snd_nxt)
                    return sa.arrive + 20e-6
            t += backoff
            backoff *= 2
        return None

    def refuse(self, t: float) -> float:
        """A SYN answered with RST+ACK by a closed port (what Linux does with no listener)."""
        c = self.c
        syn = self.emit(t, c, SYN, seq=c.isn, ack=False,
                        opts=TcpOpts(mss=c.mss, sack_perm=True, ts=(c.tsval(t), 0), wscale=c.wscale))
        if syn.arrive is None:
            return t
        self.s.rcv_nxt = c.isn + 1
        rst = self.emit(syn.arrive + 25e-6, self.s, RST, seq=0, opts=TcpOpts())
        return rst.arrive or syn.arrive

    def transfer(self, t: float, frm: Endpoint, data: bytes, *, piggyback: bool) -> tuple[float, bool]:
        """Send ``data`` from ``frm`` until the peer has all of it; returns (time, success).

        With ``piggyback`` the receiver's final ACK is left for its next segment to carry (a
        response or FIN), as a real application answering within the delayed-ACK timer does.
        """
        to = self.s if frm is self.c else self.c
        mss = min(frm.mss, to.mss) - 12  # timestamps option
        segs = [_Seg(frm.snd_nxt + i, data[i:i + mss], PSH if i + mss >= len(data) else 0)
                for i in range(0, len(data), mss)]
        end = frm.snd_nxt + len(data)
        cwnd, nxt, rto, tries = 10, 0, MIN_RTO + 2 * self.path.owd, 0
        recovering = False
        while not all(sg.acked for sg in segs):
            holes = [sg for sg in segs[:nxt] if not sg.acked and not sg.sacked]
            if holes:  # retransmit the first hole (Linux after RTO: cwnd 1)
                burst = holes[:1]
            else:
                burst = segs[nxt:nxt + cwnd]
                nxt += len(burst)
                frm.snd_nxt = burst[-1].seq + len(burst[-1].data) if burst else end
            before = sum(sg.acked for sg in segs)
            arrivals = []
            for i, sg in enumerate(burst):
                ts = t + i * SEG_GAP
                sg.sent_at = ts
                pkt = self.emit(ts, frm, sg.flags, seq=sg.seq, data=sg.data)
                if self._inject(frm, sg, pkt):
                    return pkt.t, False
                if pkt.arrive is not None:
                    arrivals.append((pkt.arrive, sg))
            last_ack, dupacks, third_dup = self._receive(arrivals, segs, to, piggyback and nxt >= len(segs))
            if all(sg.acked for sg in segs):
                frm.snd_nxt = end
                return max(last_ack, t), True
            holes = [sg for sg in segs[:nxt] if not sg.acked and not sg.sacked]
            progress = sum(sg.acked for sg in segs) > before
            if not holes:
                cwnd = min(cwnd * 2, max(1, ((to.win << to.wscale) // mss) - 1))  # stay inside the peer's window
                t, recovering, tries = max(last_ack, t), False, 0
                continue
            if recovering and progress:  # SACK recovery: next hole as soon as the ACK comes back
                t, tries = max(last_ack, t) + 20e-6, 0
                continue
            tries += 1
            if tries > MAX_RTO_RETRIES:
                return t + rto, False
            recovering = True
            if dupacks >= 3 and third_dup is not None:
                t = third_dup + 50e-6
            else:
                t = max(min(sg.sent_at for sg in holes) + rto, last_ack)
                rto *= 2
        return t, True

    def _receive(self, arrivals: list[tuple[float, _Seg]], segs: list[_Seg], rcv: Endpoint,
                 piggyback: bool) -> tuple[float, int, float | None]:
        """The receiver's ACKs for one burst.

        Returns (time the sender has seen the last ACK, duplicate ACKs sent, arrival time of the
        third duplicate ACK at the sender or None).
        """
        arrivals.sort(key=lambda a: a[0])
        pending, last, dup, third = 0, 0.0, 0, None
        for when, sg in arrivals:
            if sg.seq + len(sg.data) <= rcv.rcv_nxt:  # a copy of data already held: ACK at once
                last = self._ack(when + 5e-6, rcv, segs)
                pending = 0
                continue
            if sg.seq != rcv.rcv_nxt:  # beyond a hole: duplicate ACK with SACK, immediately
                sg.sacked = True
                last = self._ack(when + 5e-6, rcv, segs)
                pending = 0
                dup += 1
                if dup == 3:
                    third = last
                continue
            had_hole = any(o.sacked for o in segs)
            rcv.rcv_nxt += len(sg.data)
            sg.acked = True
            absorbed = True
            while absorbed:
                absorbed = False
                for o in segs:
                    if o.sacked and o.seq == rcv.rcv_nxt:
                        rcv.rcv_nxt += len(o.data)
                        o.sacked, o.acked, absorbed = False, True, True
            pending += 1
            if pending >= 2 or had_hole:
                last = self._ack(when + 5e-6, rcv, segs)
                pending = 0
        if pending and arrivals:
            if piggyback:
                last = max(last, arrivals[-1][0] + self.path.owd)
            else:
                last = self._ack(arrivals[-1][0] + DELACK, rcv, segs)
        return last, dup, third

    def _ack(self, t: float, rcv: Endpoint, segs: list[_Seg]) -> float:
        blocks = _sack_blocks([sg for sg in segs if sg.sacked and not sg.acked])
        opts = TcpOpts(ts=(rcv.tsval(t), rcv.ts_recent), sack=blocks[:3])
        pkt = self.emit(t, rcv, 0, seq=rcv.snd_nxt, opts=opts)
        return pkt.arrive if pkt.arrive is not None else t

    def _inject(self, frm: Endpoint, sg: _Seg, pkt: Pkt) -> bool:
        """A middlebox cutting the transfer: the server's segment is eaten, both ends get a RST."""
        after = self.path.rst_after
        if after is None or frm is not self.s or sg.seq + len(sg.data) - (self.s.isn + 1) <= after:
            return False
        pkt.arrive = None
        pkt.hop_fwd = False  # the box that forges the resets ate the segment: it never leaves the appliance
        self.forge_resets(pkt.t + self.path.owd / 2, server_seq=sg.seq, eaten=sg.data)
        return True

    def forge_resets(self, t: float, server_seq: int | None = None, eaten: bytes = b"") -> None:
        """RSTs forged by a box in the middle at ``t``, towards the client and (unless the path says
        client only) the server, each claiming to come from the other end: right sequence numbers,
        but the box's TTL, IP ID 0 and no DF. ``eaten`` is the server's segment the box dropped."""
        half = self.path.owd / 2
        seq_s = self.s.snd_nxt if server_seq is None else server_seq
        to_client = tcp_segment(self.s.ip, self.c.ip, self.s.port, self.c.port, seq=seq_s, ack=self.c.snd_nxt,
                                flags=RST | ACK, win=0, opts=TcpOpts(), payload=b"")
        to_server = tcp_segment(self.c.ip, self.s.ip, self.c.port, self.s.port, seq=self.c.snd_nxt, ack=0,
                                flags=RST, win=0, opts=TcpOpts(), payload=b"")
        legs = [(self.s.ip, self.c.ip, to_client)]
        if self.path.rst_to_server:
            legs.append((self.c.ip, self.s.ip, to_server))
        for src, dst, l4 in legs:
            forged = Pkt(t, src, dst, 6, 0, self.path.rst_ttl, False, l4, t + half, forged=True, via=self.path.via)
            self.translate(forged, src == self.c.ip)
            self.pkts.append(forged)
        self.reset = True
        if not self.path.rst_to_server:
            self._stale_server(t, seq_s, eaten)

    def _stale_server(self, t: float, seq: int, eaten: bytes) -> None:
        """Only the client was reset: the server, still established, resends the segment the box ate
        once its retransmission timer fires (200 ms, Linux's minimum RTO); the client, whose socket is
        gone, answers it with a RST of its own (RFC 9293 §3.10.7.1: seq = the segment's ACK, no ACK
        flag, no options), with its real TTL. An idle connection (nothing outstanding) just stays
        open on the server: nothing more is on the wire."""
        if not eaten:
            return
        again = self.emit(t + 0.2, self.s, PSH, seq=seq, data=eaten)
        if again.arrive is not None:
            self.emit(again.arrive + 20e-6, self.c, RST, seq=self.c.snd_nxt, opts=TcpOpts(), ack=False)

    def _fin(self, t: float, frm: Endpoint) -> tuple[Endpoint, float | None]:
        """``frm`` sends a FIN (it takes one sequence number); the peer counts it only if it arrives.

        Returns the peer and the FIN's arrival time (``None`` when the path dropped it).
        """
        to = self.s if frm is self.c else self.c
        fin = self.emit(t, frm, FIN, seq=frm.snd_nxt)
        frm.snd_nxt += 1
        if fin.arrive is not None:
            to.rcv_nxt += 1
        return to, fin.arrive

    def close(self, t: float, first: Endpoint) -> float:
        """FIN from ``first`` (carrying any pending ACK), FIN from the peer, last ACK."""
        second, arrive = self._fin(t, first)
        if arrive is None:
            return t
        t2 = arrive + 60e-6
        _, arrive2 = self._fin(t2, second)
        if arrive2 is None:
            return t2
        last = self.emit(arrive2 + 10e-6, first, 0, seq=first.snd_nxt)
        return last.t

    def resend(self, t: float, frm: Endpoint, seq: int, data: bytes) -> None:
        """A retransmission of data the peer already holds; the peer ACKs it at once."""
        to = self.s if frm is self.c else self.c
        pkt = self.emit(t, frm, PSH, seq=seq, data=data)
        if pkt.arrive is not None:
            self.emit(pkt.arrive + 10e-6, to, 0, seq=to.snd_nxt,
                      opts=TcpOpts(ts=(to.tsval(pkt.arrive), to.ts_recent), sack=((seq, seq + len(data)),)))

    def abandon(self, t: float, first: Endpoint) -> float:
        """The application gives up on a stalled transfer: its FIN is ACKed, the peer's data stays
        unacknowledged (so no FIN comes back)."""
        second, arrive = self._fin(t, first)
        if arrive is None:
            return t
        return self.emit(arrive + 30e-6, second, 0, seq=second.snd_nxt).t


def _sack_blocks(segs: list[_Seg]) -> tuple[tuple[int, int], ...]:
    blocks: list[list[int]] = []
    for sg in sorted(segs, key=lambda s: s.seq):
        if blocks and blocks[-1][1] == sg.seq:
            blocks[-1][1] = sg.seq + len(sg.data)
        else:
            blocks.append([sg.seq, sg.seq + len(sg.data)])
    return tuple((a, b) for a, b in reversed(blocks))
