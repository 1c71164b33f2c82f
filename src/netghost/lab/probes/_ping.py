"""``ping`` as iputils (Ubuntu 22.04, iputils-ping 20211215) prints it, answered by the lab.

Exit codes as iputils: 0 when at least one reply came back, 1 when none did, 2 on a usage error
or an unresolvable name. Time is never slept: ``-c`` probes are computed at once. Without ``-c``
the real tool runs until interrupted; the shim stops after 4 so an agent can never hang on it.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Sequence

from netghost.lab.probes._vantage import Vantage, console_main, is_ip, probe

__all__ = ["main", "run"]


def _parse(argv: Sequence[str]) -> tuple[dict[str, str], list[str]] | str:
    opts: dict[str, str] = {}
    rest: list[str] = []
    takes = set("cWiswtIl")
    it = iter(argv)
    for arg in it:
        if arg.startswith("-") and len(arg) > 1:
            flag = arg[1]
            if flag not in takes and flag not in "nqDO4v":
                return f"ping: invalid option -- '{flag}'"
            if flag in takes:
                value = arg[2:] or next(it, "")
                if not value:
                    return f"ping: option requires an argument -- '{flag}'"
                opts[flag] = value
            else:
                opts[flag] = ""
        else:
            rest.append(arg)
    return opts, rest


def run(argv: Sequence[str], v: Vantage) -> tuple[int, str, str]:
    """Run ``ping argv`` from vantage ``v``; returns (exit code, stdout, stderr)."""
    parsed = _parse(argv)
    if isinstance(parsed, str):
        return 2, "", parsed + "\n" + _usage()
    opts, rest = parsed
    if not rest:
        return 2, "", "ping: usage error: Destination address required\n"
    target = rest[-1]
    try:
        count = int(opts.get("c", "4"))
        size = int(opts.get("s", "56"))
    except ValueError:
        return 1, "", f"ping: invalid argument: '{opts.get('c') or opts.get('s')}'\n"
    ip = target
    if not is_ip(target):
        ans = v.resolve(target)
        if ans.rcode != "NOERROR" or not ans.addresses:
            return 2, "", f"ping: {target}: Name or service not known\n"
        ip = ans.addresses[0]
    p = probe(v, ip, "Icmp")
    rng = v.rng("ping", ip)
    lines = [f"PING {target} ({ip}) {size}({size + 28}) bytes of data."]
    rtts: list[float] = []
    for seq in range(1, count + 1):
        if p.verdict != "ok" or rng.random() < p.loss:
            rng.random()
            continue
        rtt = p.rtt_ms * (0.9 + rng.random() * 0.3)
        rtts.append(rtt)
        if "q" not in opts:
            who = ip if is_ip(target) or "n" in opts else f"{ip} ({ip})"
            lines.append(f"{size + 8} bytes from {who}: icmp_seq={seq} ttl={p.ttl} time={_ms(rtt)} ms")
    elapsed = int((count - 1) * 1000 + (sum(rtts) if rtts else 0) + (0 if rtts else 50))
    loss = round(100 * (count - len(rtts)) / count) if count else 0
    lines += ["", f"--- {target} ping statistics ---",
              f"{count} packets transmitted, {len(rtts)} received, {loss}% packet loss, time {elapsed}ms"]
    if rtts:
        mdev = statistics.pstdev(rtts)
        lines.append(f"rtt min/avg/max/mdev = {min(rtts):.3f}/{statistics.fmean(rtts):.3f}/{max(rtts):.3f}/{mdev:.3f} ms")
    lines.append("")
    return (0 if rtts else 1), "\n".join(lines) + ("\n" if not rtts else ""), ""


def _ms(rtt: float) -> str:
    return f"{rtt:.3f}" if rtt < 1 else f"{rtt:.2f}" if rtt < 10 else f"{rtt:.1f}" if rtt < 100 else f"{rtt:.0f}"


def _usage() -> str:
    return ("\nUsage\n  ping [options] <destination>\n\nOptions:\n  <destination>      dns name or ip address\n"
            "  -c <count>         stop after <count> replies\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry: print like ping and return its exit code."""
    return console_main(run, argv)


if __name__ == "__main__":
    sys.exit(main())
