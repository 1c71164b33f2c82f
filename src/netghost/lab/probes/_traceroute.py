"""``traceroute`` as traceroute 2.1.0 (Ubuntu 22.04) prints it, answered by the lab.

From a laptop outside Azure the trace shows the home gateway and the ISP, then silence (``* * *``)
to the hop limit: a private address has no route from there, which says nothing about the VNet.
Exit code is 0 whatever the result (as the real tool), 2 on a usage error.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from netghost.lab.probes._vantage import HOME_GATEWAY, Vantage, console_main, is_ip, probe

__all__ = ["main", "run"]

_USAGE = ("Usage:\n  traceroute [ -46dFITnreAUDV ] [ -f first_ttl ] [ -g gate,... ] [ -i device ] [ -m max_ttl ] "
          "[ -N squeries ] [ -p port ] [ -t tos ] [ -l flow_label ] [ -w MAX,HERE,NEAR ] [ -q nqueries ] "
          "[ -s src_addr ] [ -z sendwait ] [ --fwmark=num ] host [ packetlen ]\n")


def _parse_args(argv: Sequence[str]) -> tuple[int, bool, str, str] | None:
    """(max TTL, ``-n``, probe protocol, host) from traceroute's arguments; None for a usage error."""
    max_ttl, numeric, proto = 30, False, "Udp"
    rest: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg == "-m":
            value = next(it, "")
            if not value.isdigit():
                return None
            max_ttl = int(value)
        elif arg in ("-n",):
            numeric = True
        elif arg in ("-T", "--tcp"):
            proto = "Tcp"
        elif arg in ("-I", "--icmp"):
            proto = "Icmp"
        elif arg in ("-w", "-q", "-p", "-f"):
            next(it, "")
        elif arg.startswith("-"):
            continue
        else:
            rest.append(arg)
    if not rest:
        return None
    return max_ttl, numeric, proto, rest[0]


def run(argv: Sequence[str], v: Vantage) -> tuple[int, str, str]:
    """Run ``traceroute argv`` from vantage ``v``; returns (exit code, stdout, stderr)."""
    parsed = _parse_args(argv)
    if parsed is None:
        return 2, "", _USAGE
    max_ttl, numeric, proto, target = parsed
    ip = target
    if not is_ip(target):
        ans = v.resolve(target)
        if ans.rcode != "NOERROR" or not ans.addresses:
            return 2, "", f"{target}: Name or service not known\nCannot handle \"host\" cmdline arg `{target}' on position 1 (argc 1)\n"
        ip = ans.addresses[0]
    p = probe(v, ip, proto, 80 if proto == "Tcp" else 33434)  # type: ignore[arg-type]
    rng = v.rng("traceroute", ip)
    lines = [f"traceroute to {target} ({ip}), {max_ttl} hops max, 60 byte packets"]
    hops = list(p.hops)
    if p.verdict == "drop":
        hops = [h for h in hops if h is not None]
    for ttl in range(1, max_ttl + 1):
        hop = hops[ttl - 1] if ttl <= len(hops) else None
        if hop is None or (p.verdict == "drop" and ttl > len(hops)):
            lines.append(f"{ttl:2d}  * * *")
            continue
        base = 0.5 if hop == HOME_GATEWAY else p.rtt_ms if hop == ip else 8.0
        times = "  ".join(f"{base * (0.9 + rng.random() * 0.3):.3f} ms" for _ in range(3))
        label = hop if numeric else f"{'_gateway' if hop == HOME_GATEWAY else hop} ({hop})"
        lines.append(f"{ttl:2d}  {label}  {times}")
        if hop == ip:
            break
    return 0, "\n".join(lines) + "\n", ""


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry: print like traceroute and return its exit code."""
    return console_main(run, argv)


if __name__ == "__main__":
    sys.exit(main())
