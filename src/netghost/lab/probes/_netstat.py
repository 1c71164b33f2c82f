"""``netstat`` (net-tools 2.10) on the engineer's own machine, from the same sockets as ``ss``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from netghost.lab.probes._ss import local_sockets
from netghost.lab.probes._vantage import Vantage, console_main

__all__ = ["main", "run"]

_STATES = {"LISTEN": "LISTEN", "ESTAB": "ESTABLISHED", "UNCONN": ""}


def run(argv: Sequence[str], v: Vantage) -> tuple[int, str, str]:
    """Run ``netstat argv`` on the engineer's machine; returns (exit code, stdout, stderr)."""
    flags = {ch for a in argv if a.startswith("-") and not a.startswith("--") for ch in a[1:]}
    protos = {p for p, f in (("tcp", "t"), ("udp", "u")) if f in flags} or {"tcp", "udp"}
    socks = [s for s in local_sockets(v) if s.proto in protos]
    if "a" in flags:
        title = "(servers and established)"
    elif "l" in flags:
        title = "(only servers)"
        socks = [s for s in socks if s.state in ("LISTEN", "UNCONN")]
    else:
        title = "(w/o servers)"
        socks = [s for s in socks if s.state not in ("LISTEN", "UNCONN")]
    pid = "p" in flags
    lines = [f"Active Internet connections {title}",
             "Proto Recv-Q Send-Q Local Address           Foreign Address         State      "
             + (" PID/Program name    " if pid else "")]
    for s in socks:
        local = s.local.replace("%lo", "")
        prog = ""
        if pid:
            name = s.process.split('"')[1] if '"' in s.process else "-"
            num = s.process.split("pid=")[1].split(",")[0] if "pid=" in s.process else ""
            prog = f" {num}/{name}"[:20].ljust(20) if num else " -".ljust(20)
        send_q = 0 if s.state == "LISTEN" else s.send_q
        lines.append(f"{s.proto:<5} {s.recv_q:>6} {send_q:>6} {local:<23} {s.peer:<23} "
                     f"{_STATES[s.state]:<11}{prog}")
    return 0, "\n".join(lines) + "\n", ""


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry: print like netstat and return its exit code."""
    return console_main(run, argv)


if __name__ == "__main__":
    sys.exit(main())
