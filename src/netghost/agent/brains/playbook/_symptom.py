"""The engineer's problem statement read into who, what and which kind of trouble.

Why by hand and not by a model: the playbook brain is the offline investigator (no key, no network), so
it reads the sentence with patterns an engineer's wording follows ("X cannot reach Y on port P",
"intermittent errors from X to Y", "name Z does not resolve", "large responses hang", "connection
refused"). Anything it cannot place still gets a plan: the generic kind.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Literal

__all__ = ["Kind", "Symptom", "complaints", "is_fqdn", "is_ip", "looks_like_host", "parse_symptom", "settle", "stated_address"]

Kind = Literal["unreachable", "intermittent", "large", "refused", "reset", "dns", "slow", "generic"]

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]"
_NOT = (r"(?:cannot|can't|can not|could not|couldn't|is unable to|are unable to|fails? to|failed to|no longer|"
        r"won't|does not|doesn't|do not|don't)")
_FETCH = r"(?:download|pull|fetch|read|load|receiv|get|copy|clon|sees|see)"
_PAIR = [
    # "X cannot download/pull/fetch (artifacts) from Y": here "from" introduces the server
    re.compile(rf"(?P<c>{_NAME})\s+(?:{_NOT}\s+)?{_FETCH}\w*\s+(?:\S+\s+){{0,2}}?from\s+(?P<s>{_NAME})", re.I),
    re.compile(rf"(?P<c>{_NAME})\s+(?:gets|sees|receives|hits)\s+.*?\bfrom\s+(?P<s>{_NAME})", re.I),
    re.compile(rf"responses?\s+from\s+(?P<s>{_NAME})\s+.*?\b(?:for|to|on|at)\s+(?P<c>{_NAME})", re.I),
    re.compile(rf"(?:from\s+)?(?P<c>{_NAME})\s+(?:cannot|can't|can not|could not|couldn't|is unable to|"
               rf"are unable to|fails? to|no longer|won't)\s+(?:reach|connect(?:\s+to)?|talk\s+to|access|open)\s+"
               rf"(?P<s>{_NAME})", re.I),
    re.compile(rf"from\s+(?P<c>{_NAME})\s+(?:to|towards)\s+(?P<s>{_NAME})", re.I),
    re.compile(rf"between\s+(?P<c>{_NAME})\s+and\s+(?P<s>{_NAME})", re.I),
    re.compile(rf"(?P<c>{_NAME})\s*(?:->|→|=>)\s*(?P<s>{_NAME})", re.I),
    re.compile(rf"(?P<c>{_NAME})\s+(?:to|towards)\s+(?P<s>{_NAME})", re.I),
]
_CLIENT = re.compile(rf"\b(?:from|on|for|at)\s+(?P<c>{_NAME})", re.I)
_PORT = re.compile(r"(?:\bport\s*|\bon\s+|(?<![\d.]):|\b(?:tcp|udp)[/ ]|\()(?P<p>\d{1,5})\b(?![.\d])|"
                   r"\b(?P<q>\d{1,5})/(?:tcp|udp)\b", re.I)
_ADDRESS_PORT = re.compile(r"\b(?:(?:\d{1,3}\.){3}\d{1,3}|[A-Za-z][\w.-]*):(?P<p>\d{1,5})\b")
_URL = re.compile(r"\b(?P<scheme>https?)://(?P<host>[A-Za-z0-9.-]+)(?::(?P<port>\d{1,5}))?", re.I)
_CIDR = re.compile(r"\(?\b(?P<net>(?:\d{1,3}\.){3}\d{1,3}/\d{1,2})\b\)?")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_RESOLVE = [
    re.compile(rf"(?:name\s+)?(?P<n>{_NAME}\.{_NAME})\s+(?:does not|doesn't|won't|will not|cannot|can't|fails to)\s+"
               r"resolve", re.I),
    re.compile(rf"(?:cannot|can't|fails? to|unable to)\s+resolve\s+(?P<n>{_NAME}\.{_NAME})", re.I),
    re.compile(rf"(?P<n>{_NAME}\.{_NAME})\s+(?:returns|gives|gets)\s+NXDOMAIN", re.I),
]
_NAMED_BY_WORDS = re.compile(
    r"(?:\bthe\s+)?(?P<w>(?:[A-Za-z][A-Za-z0-9-]*\s+){1,3}?)(?:dns\s+|host\s*)?name\s+(?:no longer|does not|doesn't|"
    r"won't|will not|cannot|can't|fails? to|stopped|has stopped)\s+resol", re.I)
_KINDS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    ("dns", re.compile(r"\b(resolve[sd]?|resolution|nxdomain|dns)\b", re.I)),
    ("large", re.compile(r"\b(large|big|bulk|mtu|hang[s]?|stall[s]?|freez\w*)\b", re.I)),
    ("refused", re.compile(r"\brefused\b", re.I)),
    ("reset", re.compile(r"\b(reset|resets|rst|dropped connections?)\b", re.I)),
    ("intermittent", re.compile(r"\b(intermittent\w*|sometimes|flaky|occasional\w*|sporadic\w*|packet loss|"
                                r"lossy|retransmi\w+)\b", re.I)),
    ("slow", re.compile(r"\b(slow|latency|sluggish)\b", re.I)),
    ("unreachable", re.compile(r"\b(cannot|can't|can not|unable|fail\w*|unreachable|time[sd]? ?out|timeouts?)\b",
                               re.I)),
)
_NOT_HOSTS = frozenset({"port", "the", "a", "an", "on", "from", "to", "and", "vm", "vms", "server", "host"})


@dataclass(frozen=True)
class Symptom:
    """What was reported: the client, the server (a VM name, an FQDN or an IP), the port and the kind."""

    text: str
    kind: Kind
    client: str | None = None
    server: str | None = None
    port: int | None = None
    client_range: str | None = None  # the clients are a network range ("the office (10.12.8.0/22)"), not a VM
    name_words: tuple[str, ...] = ()  # a name told by what it is for ("the orders API name no longer resolves")

    @property
    def server_is_name(self) -> bool:
        """The server was given as a DNS name, so resolution is part of the path."""
        return self.server is not None and is_fqdn(self.server)

    def flow(self) -> str:
        """``web-vm-01 -> redis-primary:6379`` (what the hypotheses talk about)."""
        server = self.server or "the server"
        return f"{self.client or 'the client'} -> {server}" + (f":{self.port}" if self.port else "")


def is_ip(text: str) -> bool:
    """An IPv4 or IPv6 address."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def is_fqdn(text: str) -> bool:
    """A dotted name that is not an address."""
    return "." in text.strip(".") and not is_ip(text) and any(c.isalpha() for c in text)


def looks_like_host(word: str | None) -> bool:
    """A word written like a host name or address (a digit, a dot or a dash), not a plain word."""
    return word is not None and bool(re.search(r"[\d.-]", word))


def _host(word: str | None) -> str | None:
    if word is None or word.lower() in _NOT_HOSTS or word.isdigit():
        return None
    return word.rstrip(".")


@cache
def _service_ports() -> dict[str, int]:
    doc = json.loads(resources.files("netghost.agent.brains.playbook").joinpath("service_ports.json").read_text())
    return {k: int(v) for k, v in doc.items() if not k.startswith("_")}


def _port_of(clean: str) -> int | None:
    """The port the complaint names: an ``address:port``, a number after "port"/"on"/":", a URL's (or its
    scheme's), else the first service word ("psql", "SQL", "HTTPS") that has a well-known port."""
    for pattern in (_ADDRESS_PORT, _PORT):
        m = pattern.search(clean)
        number = (m.groupdict().get("p") or m.groupdict().get("q")) if m else None
        if number and 0 < int(number) < 65536:
            return int(number)
    url = _URL.search(clean)
    if url:
        return int(url["port"]) if url["port"] else (443 if url["scheme"].lower() == "https" else 80)
    known = _service_ports()
    words = [w for w in clean.split() if not re.search(r"[\d.-]", w.strip(".,;:!?()'\""))]  # not host names
    return next((known[w.lower()] for w in _WORD.findall(" ".join(words)) if w.lower() in known), None)


def parse_symptom(text: str) -> Symptom:
    """Read the problem statement; unknown wording gives the ``generic`` kind with whatever was found."""
    raw = " ".join(text.split()).rstrip(".!?;, ")  # a sentence's full stop is not part of its last word
    ranges = [m["net"] for m in _CIDR.finditer(raw)]
    # a network range names where the clients are, never a host: read the rest without it
    clean = _URL.sub(lambda m: m["host"], _CIDR.sub(" ", raw)).replace("  ", " ")
    kind: Kind = next((k for k, pattern in _KINDS if pattern.search(clean)), "generic")
    if kind == "large" and re.search(r"\bhang\w*\s+(?:at|on|while|when)\s+connect", clean, re.I):
        kind = "unreachable"  # "hangs at connect" is a handshake that never completes, not a large transfer
    pairs = [(_host(m["c"]), _host(m["s"])) for pattern in _PAIR for m in pattern.finditer(clean)]
    pairs = [(c, s) for c, s in pairs if c and s]
    # a pair of host-looking words ("web-vm-01", "10.1.2.4", "db.corp.internal") beats plain words ("slow to talk")
    client, server = next((p for p in pairs if all(map(looks_like_host, p))), pairs[0] if pairs else (None, None))
    if server is None:
        for pattern in _RESOLVE:
            match = pattern.search(clean)
            if match:
                server = _host(match["n"])
                break
    if client is None and server is not None:
        client = next((_host(m["c"]) for m in _CLIENT.finditer(clean)
                       if _host(m["c"]) and m["c"].rstrip(".") != server), None)
    if server is not None and ":" in server and not is_ip(server):
        server = server.split(":", 1)[0]
    port = _port_of(raw)
    words: tuple[str, ...] = ()
    if server is None:
        named = _NAMED_BY_WORDS.search(clean)
        words = tuple(w for w in named["w"].split() if w.lower() not in _NOT_HOSTS) if named else ()
    if kind == "dns" and client is None and server is None and not words:
        kind = "generic"
    return Symptom(text=raw, kind=kind, client=client, server=server, port=port,
                   client_range=ranges[0] if ranges else None, name_words=words)


_SERVER_SIDE = re.compile(r"\b(?:stopped|stops|is not|isn't|no longer|not)\s+(?:answering|responding|accepting|listening)|"
                          r"\b(?:is|went|seems)\s+(?:down|unreachable|unavailable|offline)\b", re.I)
"""Wording that puts the one host it names on the server's side ("redis-01 stopped answering on 6379")."""
_CLAUSES = re.compile(r";\s+|:\s+|\.\s+(?=[A-Za-z])|,\s+(?:and\s+|but\s+|while\s+)?(?:also\s+)?|\s+and\s+also\s+")
_WORKS = re.compile(r"\b(?:fine|works?|working|succeed\w*|healthy|is up|are up|answers|unaffected|ok|okay)\b", re.I)


def complaints(s: Symptom, known: Callable[[str], bool]) -> list[Symptom]:
    """The failing flows one problem statement reports, each read on its own ("web-kr-01 logs two errors: the
    orders API name no longer resolves, and cache calls to 10.55.3.6:6380 time out").

    Why: two failures in one complaint may have two causes, and the investigation of the first must not end
    the second's. A clause is a complaint of its own when it names a server (an address, a host, a name) or a
    name that does not resolve, and does not say something works; a clause without a client of its own has the
    statement's. Fewer than two such clauses (or two that name the same server and port) leave the statement
    whole: ``[s]``.
    """
    found: list[Symptom] = []
    for clause in _CLAUSES.split(s.text):
        if _WORKS.search(clause) or len(clause.split()) < 2:
            continue
        part = settle(parse_symptom(clause.strip(' ,.;')), known)
        if part.server is None and part.client is not None and s.client is not None and part.client != s.client:
            part = replace(part, server=part.client, client=s.client)  # one host besides the statement's client
        if part.server is None and not part.name_words:
            continue
        client = part.client if part.client is not None and known(part.client) else s.client
        part = replace(part, text=clause.strip(" ,.;"), client=client,
                       client_range=part.client_range or (s.client_range if client == s.client else None))
        if part.server is not None and part.server == part.client:
            continue
        if all((x.server, x.port, x.name_words) != (part.server, part.port, part.name_words) for x in found):
            found.append(part)
    return found if len(found) >= 2 else [s]


_MENTION = re.compile(rf"(?:\b(?P<lead>from|by|to|towards|reach|reaching)\s+)?(?P<w>{_NAME})(?P<port>:\d{{1,5}}\b)?")


def _mentions(text: str) -> list[tuple[str, str]]:
    """Words in order, each with the side its wording suggests: "client" after "from"/"by", "server"
    after "to"/"reach" or with a ``:port``, else ""."""
    out: list[tuple[str, str]] = []
    for m in _MENTION.finditer(text):
        word = m["w"].rstrip(".")
        if word.isdigit() or word.lower() in _NOT_HOSTS:
            continue
        lead = (m["lead"] or "").lower()
        fetched = lead == "from" and re.search(rf"\b{_FETCH}\w*\s+(?:\S+\s+){{0,2}}$", text[:m.start()], re.I)
        side = "server" if m["port"] or fetched or lead in ("to", "towards", "reach", "reaching") else (
            "client" if lead in ("from", "by") else "")
        out.append((word, side))
    return out


def stated_address(text: str, name: str | None) -> str | None:
    """The address the complaint gives for a host name, written right after it ("wh-pg.internal (172.22.8.20)"):
    the address the client is meant to reach when no zone the investigator reads answers for the name."""
    if not name:
        return None
    m = re.search(rf"{re.escape(name)}\s*\(\s*(?P<ip>\d{{1,3}}(?:\.\d{{1,3}}){{3}})\s*\)", text, re.I)
    return m["ip"] if m and is_ip(m["ip"]) else None


def settle(s: Symptom, known: Callable[[str], bool]) -> Symptom:
    """Fix the client and the server the grammar could not place, using what the inventory knows.

    ``known(word)`` says whether a word names a host the subscription has (a VM by name or address).
    A side the patterns found and the inventory confirms stays. Otherwise the client is the known host
    the wording puts on the client's side ("from X"), else the first known host not on the server's
    side; the server is the first other address, dotted name or known host, preferring one the wording
    puts on the server's side ("to Y", "Y:5432"). With no such word the grammar's reading stands (a
    fuzzy word like "redis" or a subnet name is matched later). Wording the patterns misread ("X times
    out connecting to Y", "Y on port P times out from X") is thereby settled by the inventory.
    """
    def placed(word: str | None) -> bool:
        return word is not None and (known(word) or is_ip(word) or is_fqdn(word))

    client = s.client if s.client is not None and known(s.client) else None
    server = s.server if placed(s.server) and s.server != client else None
    if client is not None and server is not None:
        return s
    text = _URL.sub(lambda m: m["host"], _CIDR.sub(" ", s.text))
    mentions = [(w, side) for w, side in _mentions(text) if placed(w)]
    if client is None and s.client_range is None:  # clients named by their network are no VM of the inventory
        ranked = [w for w, side in mentions if side == "client"] + [w for w, side in mentions if side == ""]
        client = next((w for w in ranked if known(w) and w != server), s.client)
    if server is None:
        ranked = [w for w, side in mentions if side == "server"] + [w for w, side in mentions if side != "server"]
        server = next((w for w in ranked if w != client), None) or s.server
    if server is None and client is not None and _SERVER_SIDE.search(s.text) and not any(
            side == "client" and w == client for w, side in _mentions(text)):
        client, server = None, client  # the one host named is the one that stopped answering
    if (client, server) == (s.client, s.server):
        return s
    kind = s.kind if s.kind != "generic" or server is None else "unreachable"
    return replace(s, client=client, server=server, kind=kind)
