"""``curl`` as curl 7.81 (Ubuntu 22.04) reports connection outcomes, answered by the lab.

Exit codes are curl's: 6 could not resolve host, 7 connection refused, 28 timeout, 1 when a
non-HTTP service answers (``Received HTTP/0.9 when not allowed``), 0 on an HTTP answer. ``-s``
silences errors unless ``-S``; ``-o FILE`` writes the body; ``-w`` expands ``%{http_code}``,
``%{time_connect}``, ``%{time_total}``, ``%{remote_ip}``; ``-I`` prints headers only.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from netghost.lab.probes._vantage import Vantage, console_main, is_ip, probe

__all__ = ["main", "run"]

_TAKES = {"-o", "--output", "-w", "--write-out", "-m", "--max-time", "--connect-timeout", "-H", "--header",
          "-X", "--request", "-d", "--data", "-u", "--user", "-A", "--user-agent", "--resolve"}
_HTTP_PORTS = {80, 443, 8080, 8443}


def _parse(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    opts: dict[str, str] = {}
    urls: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg in _TAKES:
            opts[arg] = next(it, "")
        elif arg.startswith("--"):
            opts[arg] = ""
        elif arg.startswith("-") and len(arg) > 1:
            for ch in arg[1:]:
                opts["-" + ch] = ""
        else:
            urls.append(arg)
    return opts, urls


def run(argv: Sequence[str], v: Vantage) -> tuple[int, str, str]:
    """Run ``curl argv`` from vantage ``v``; returns (exit code, stdout, stderr)."""
    opts, urls = _parse(argv)
    silent = "-s" in opts or "--silent" in opts
    show = "-S" in opts or "--show-error" in opts

    def fail(code: int, message: str) -> tuple[int, str, str]:
        err = f"curl: ({code}) {message}\n" if (not silent or show) else ""
        return code, _write_out(opts, "000", 0.0, 0.0, ""), err

    if not urls:
        return 2, "", "curl: try 'curl --help' or 'curl --manual' for more information\n"
    url = urls[0] if "://" in urls[0] else "http://" + urls[0]
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return 3, "", "curl: (3) URL using bad/illegal format or missing URL\n"
    ip = host
    if not is_ip(host):
        ans = v.resolve(host)
        if ans.rcode != "NOERROR" or not ans.addresses:
            return fail(6, f"Could not resolve host: {host}")
        ip = ans.addresses[0]
    p = probe(v, ip, "Tcp", port)
    rng = v.rng("curl", ip, port)
    if p.verdict == "drop":
        limit = opts.get("--connect-timeout") or opts.get("-m") or opts.get("--max-time")
        if limit:
            ms = int(float(limit) * 1000) + rng.randint(0, 2)
            return fail(28, f"Connection timed out after {ms} milliseconds")
        return fail(28, f"Failed to connect to {host} port {port} after {129000 + rng.randint(0, 4000)} ms: "
                        "Connection timed out")
    connect = p.rtt_ms * (0.9 + rng.random() * 0.3) / 1000
    if p.verdict == "refused":
        return fail(7, f"Failed to connect to {host} port {port} after {max(1, int(connect * 1000))} ms: "
                       "Connection refused")
    if port not in _HTTP_PORTS:
        return fail(1, "Received HTTP/0.9 when not allowed")
    total = connect * (3 if parts.scheme == "https" else 2)
    body = f"<html><body><h1>{host}</h1><p>served by the netghost lab</p></body></html>\n"
    head = (f"HTTP/1.1 200 OK\r\nServer: nginx/1.18.0 (Ubuntu)\r\nDate: {v.now.strftime('%a, %d %b %Y %H:%M:%S GMT')}"
            f"\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n")
    out = head if ("-I" in opts or "--head" in opts) else (head if "-i" in opts else "") + body
    target = opts.get("-o") or opts.get("--output")
    if target:
        Path(v.cwd, target).write_text(out, encoding="utf-8")  # relative to the caller's directory
        out = ""
    return 0, out + _write_out(opts, "200", connect, total, ip), ""


def _write_out(opts: dict[str, str], code: str, connect: float, total: float, ip: str) -> str:
    fmt = opts.get("-w") or opts.get("--write-out")
    if not fmt:
        return ""
    return (fmt.replace("%{http_code}", code).replace("%{time_connect}", f"{connect:.6f}")
            .replace("%{time_total}", f"{total:.6f}").replace("%{remote_ip}", ip).replace("\\n", "\n"))


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry: print like curl and return its exit code."""
    return console_main(run, argv)


if __name__ == "__main__":
    sys.exit(main())
