"""``dig`` as BIND 9.18 (Ubuntu 22.04) prints it, answered from the world's DNS as seen from the
engineer's machine: a laptop asks a public resolver, so private zones come back NXDOMAIN, and
``@168.63.129.16`` (Azure DNS) is unreachable from outside Azure (``no servers could be reached``,
exit 9). NXDOMAIN is still exit 0, as with the real dig.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from netghost.lab.probes._vantage import Vantage, console_main, is_ip
from netghost.lab.world import DnsAnswer

__all__ = ["VERSION", "answer_records", "main", "run"]

VERSION = "9.18.28-0ubuntu0.22.04.1-Ubuntu"
_ROOT_SOA = ".\t\t\t86400\tIN\tSOA\ta.root-servers.net. nstld.verisign-grs.com. 2026112200 1800 900 604800 86400"


def answer_records(ans: DnsAnswer, qname: str, ttl: int) -> list[tuple[str, str, str]]:
    """(owner, type, value) of the answer section: the CNAME chain, then the A records."""
    out: list[tuple[str, str, str]] = []
    owner = qname.rstrip(".") + "."
    for target in ans.cname_chain:
        out.append((owner, "CNAME", target + "."))
        owner = target + "."
    out.extend((owner, "A", addr) for addr in ans.addresses)
    return out


def _parse_args(argv: Sequence[str]) -> tuple[str | None, str, str, bool]:
    """(``@server`` or None, name (default the root), query type, ``+short``) from dig's arguments."""
    server = None
    name = None
    qtype = "A"
    short = False
    for arg in argv:
        if arg.startswith("@"):
            server = arg[1:]
        elif arg.startswith("+"):
            short = short or arg == "+short"
        elif arg.upper() in ("A", "AAAA", "CNAME", "TXT", "MX", "NS", "SOA", "PTR", "ANY"):
            qtype = arg.upper()
        elif arg.startswith("-"):
            continue
        else:
            name = arg
    return server, "." if name is None else name, qtype, short


def run(argv: Sequence[str], v: Vantage) -> tuple[int, str, str]:
    """Run ``dig argv`` from vantage ``v``; returns (exit code, stdout, stderr)."""
    server, name, qtype, short = _parse_args(argv)
    cmdline = " ".join(argv)
    server = server or v.resolver
    if not is_ip(server):
        return 10, "", f"dig: couldn't get address for '{server}': not found\n"
    header = f"\n; <<>> DiG {VERSION} <<>> {cmdline}\n"
    if not v.resolver_reachable(server):
        err = "".join(f";; communications error to {server}#53: timed out\n" for _ in range(3))
        found = "; (1 server found)\n" if argv and any(a.startswith("@") for a in argv) else ""
        out = f"{err}{header}{found};; global options: +cmd\n;; no servers could be reached\n\n"
        return 9, (err + ";; no servers could be reached\n") if short else out, ""
    ans = v.resolve(name)
    ttl = 10 if ans.source.startswith("private-zone") else 300
    records = answer_records(ans, name, ttl) if qtype in ("A", "CNAME", "ANY") and ans.rcode == "NOERROR" else []
    if qtype in ("TXT", "ANY"):
        owner = name.rstrip(".") + "."
        records += [(owner, "TXT", '"' + t.replace('"', '\\"') + '"') for t in v.world.txt(name, v.inside)]
    if short:
        return 0, "".join(value + "\n" for _, _, value in records), ""
    rng = v.rng("dig", name, server)
    status = "NXDOMAIN" if ans.rcode == "NXDOMAIN" and not records else "NOERROR"
    authority = 0 if records else 1
    lines = [header.rstrip("\n")]
    if any(a.startswith("@") for a in argv):
        lines.append("; (1 server found)")
    lines += [";; global options: +cmd", ";; Got answer:",
              f";; ->>HEADER<<- opcode: QUERY, status: {status}, id: {rng.randint(1, 65535)}",
              f";; flags: qr rd ra; QUERY: 1, ANSWER: {len(records)}, AUTHORITY: {authority}, ADDITIONAL: 1", "",
              ";; OPT PSEUDOSECTION:", "; EDNS: version: 0, flags:; udp: 1232", ";; QUESTION SECTION:",
              f";{name.rstrip('.')}.\t\t\tIN\t{qtype}", ""]
    if records:
        lines.append(";; ANSWER SECTION:")
        lines += [f"{owner}\t\t{ttl}\tIN\t{rtype}\t{value}" for owner, rtype, value in records]
    else:
        lines += [";; AUTHORITY SECTION:", _ROOT_SOA]
    size = 40 + len(name) + sum(16 for _ in records) + (0 if records else 64)
    lines += ["", f";; Query time: {rng.randint(1, 3) if v.inside else rng.randint(12, 35)} msec",
              f";; SERVER: {server}#53({server}) (UDP)", f";; WHEN: {v.now.strftime('%a %b %d %H:%M:%S UTC %Y')}",
              f";; MSG SIZE  rcvd: {size}", "", ""]
    return 0, "\n".join(lines), ""


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry: print like dig and return its exit code."""
    return console_main(run, argv)


if __name__ == "__main__":
    sys.exit(main())
