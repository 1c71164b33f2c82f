"""``ss`` (iproute2 5.15) on the engineer's own machine: its sockets, not a VM's.

This is the seed's warning made concrete: ``ss`` run locally lists the laptop's listeners
(systemd-resolved, CUPS) and its own connections (the az CLI talking to ARM), and can say
nothing about what listens on a VM in Azure. :data:`SOCKETS` is shared with ``netstat``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from netghost.lab.probes._vantage import Vantage, console_main

__all__ = ["SOCKETS", "Sock", "local_sockets", "main", "run"]


@dataclass(frozen=True)
class Sock:
    proto: str  # tcp | udp
    state: str  # LISTEN | ESTAB | UNCONN
    local: str
    peer: str
    process: str
    recv_q: int = 0
    send_q: int = 0


SOCKETS = (
    Sock("tcp", "LISTEN", "127.0.0.53%lo:53", "0.0.0.0:*", 'users:(("systemd-resolve",pid=612,fd=14))', 0, 4096),
    Sock("tcp", "LISTEN", "127.0.0.1:631", "0.0.0.0:*", 'users:(("cupsd",pid=901,fd=7))', 0, 128),
    Sock("udp", "UNCONN", "127.0.0.53%lo:53", "0.0.0.0:*", 'users:(("systemd-resolve",pid=612,fd=13))'),
    Sock("udp", "UNCONN", "0.0.0.0:5353", "0.0.0.0:*", 'users:(("avahi-daemon",pid=640,fd=12))'),
)


def local_sockets(v: Vantage) -> list[Sock]:
    """The machine's sockets: the fixed listeners plus its HTTPS session to Azure Resource Manager."""
    rng = v.rng("ss")
    arm = Sock("tcp", "ESTAB", f"{v.ip}:{rng.randint(40000, 60000)}", "20.190.160.131:443",
               'users:(("python3",pid=31337,fd=5))')
    return sorted([*SOCKETS, arm], key=lambda s: s.proto != "udp")  # ss lists udp before tcp


def _select(argv: Sequence[str], socks: list[Sock]) -> tuple[list[Sock], set[str]]:
    flags = {ch for a in argv if a.startswith("-") and not a.startswith("--") for ch in a[1:]}
    flags |= {{"--tcp": "t", "--udp": "u", "--listening": "l", "--all": "a", "--numeric": "n",
               "--processes": "p"}.get(a, "") for a in argv}
    protos = {p for p, f in (("tcp", "t"), ("udp", "u")) if f in flags} or {"tcp", "udp"}
    listening = {"LISTEN", "UNCONN"}
    if "a" in flags:
        chosen = [s for s in socks if s.proto in protos]
    elif "l" in flags:
        chosen = [s for s in socks if s.proto in protos and s.state in listening]
    else:
        chosen = [s for s in socks if s.proto in protos and s.state not in listening]
    return chosen, flags


def run(argv: Sequence[str], v: Vantage) -> tuple[int, str, str]:
    """Run ``ss argv`` on the engineer's machine; returns (exit code, stdout, stderr)."""
    chosen, flags = _select(argv, local_sockets(v))
    netid = len(flags & {"t", "u"}) != 1  # ss drops the Netid column when one protocol is chosen
    head = (["Netid"] if netid else []) + ["State", "Recv-Q", "Send-Q", "Local Address:Port", "Peer Address:Port",
                                           "Process"]
    rows = []
    for s in chosen:
        row = ([s.proto] if netid else []) + [s.state, str(s.recv_q), str(s.send_q), s.local, s.peer,
                                              s.process if "p" in flags else ""]
        rows.append(row)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = []
    for r in [head, *rows]:
        lines.append(" ".join(c.ljust(w) if i < len(head) - 1 else c for i, (c, w) in enumerate(zip(r, widths,
                                                                                                      strict=True))))
    return 0, "\n".join(line.rstrip() for line in lines) + "\n", ""


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry: print like ss and return its exit code."""
    return console_main(run, argv)


if __name__ == "__main__":
    sys.exit(main())
