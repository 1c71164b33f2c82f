"""``nslookup`` as BIND 9.18 prints it, answered like :mod:`netghost.lab.probes._dig`.

``nslookup NAME [SERVER]``: a found name is a ``Non-authoritative answer`` (exit 0), NXDOMAIN is
``** server can't find NAME: NXDOMAIN`` (exit 1), an unreachable server is
``;; connection timed out; no servers could be reached`` (exit 1).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from netghost.lab.probes._vantage import Vantage, console_main, is_ip

__all__ = ["main", "run"]


def run(argv: Sequence[str], v: Vantage) -> tuple[int, str, str]:
    """Run ``nslookup argv`` from vantage ``v``; returns (exit code, stdout, stderr)."""
    args = [a for a in argv if not a.startswith("-")]
    if not args:
        return 1, "", "nslookup: interactive mode is not supported by the lab shim\n"
    name = args[0]
    server = args[1] if len(args) > 1 else v.resolver
    if not is_ip(server):
        return 1, "", f";; Got SERVFAIL reply from {v.resolver}, trying next server\n"
    if not v.resolver_reachable(server):
        return 1, ";; connection timed out; no servers could be reached\n\n", ""
    head = f"Server:\t\t{server}\nAddress:\t{server}#53\n\n"
    ans = v.resolve(name)
    if ans.rcode == "NXDOMAIN":
        return 1, f"{head}** server can't find {name.rstrip('.')}: NXDOMAIN\n\n", ""
    if not ans.addresses:  # the name exists with other records only (a TXT): NODATA, not NXDOMAIN
        return 1, f"{head}Non-authoritative answer:\n*** Can't find {name.rstrip('.')}: No answer\n\n", ""
    lines = ["Non-authoritative answer:"]
    owner = name.rstrip(".")
    for target in ans.cname_chain:
        lines.append(f"{owner}\tcanonical name = {target}.")
        owner = target
    for addr in ans.addresses:
        lines += [f"Name:\t{owner}", f"Address: {addr}"]
    return 0, head + "\n".join(lines) + "\n\n", ""


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry: print like nslookup and return its exit code."""
    return console_main(run, argv)


if __name__ == "__main__":
    sys.exit(main())
