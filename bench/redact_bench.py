"""Throughput of the secret redactor (``netghost.redact.redact``), before and after a change, in one run.

The redactor runs on every command's output and on every model request, so its speed is the shell's and
the gateway's. Two realistic inputs, built deterministically:
  * ``az-json-200``: a 200-line ``az network nsg rule list``-style JSON document (ids, etags, GUIDs,
    addresses), the commonest shape a command returns;
  * ``narrative-1mb``: a 1 MB capture narrative (frame lines, TCP/DNS/TLS/HTTP summaries, findings, a few
    headers and key-log-like lines), the largest text the forensics side sends.

The *before* redactor is the ``src/netghost/redact`` package at a git ref (default: the merge base with
``main``), exported to a temporary directory; the *after* one is this checkout's. Each is timed in its own
subprocess with the same inputs, so the figures and their ratio come from the same run on the same
machine. Goal (issue 28): after <= 1.5 x before on both inputs.

Run: ``.venv/bin/python bench/redact_bench.py [--before REF] [--rounds N] [--repeat N]``
"""

from __future__ import annotations

import argparse
import io
import json
import random
import subprocess
import sys
import tarfile
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = 28

_WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from netghost.redact import redact
import netghost.redact as face
assert face.__file__.startswith(sys.argv[1]), face.__file__
inputs = json.load(open(sys.argv[2]))
rounds = int(sys.argv[3])
out = {}
for name, text in inputs.items():
    redact(text)  # warm the regex caches
    best = None
    for _ in range(rounds * max(1, 200_000 // len(text))):  # small inputs get more tries
        t0 = time.perf_counter()
        redact(text)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    out[name] = best
print(json.dumps(out))
"""


def _guid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def az_json(rng: random.Random, lines: int = 200) -> str:
    """An ``az network nsg rule list -o json`` output of about ``lines`` lines."""
    sub = _guid(rng)
    rules = []
    while True:
        n = len(rules)
        rules.append(
            {
                "access": rng.choice(["Allow", "Deny"]),
                "destinationAddressPrefix": f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.0/24",
                "destinationAddressPrefixes": [],
                "destinationPortRange": str(rng.choice([22, 80, 443, 3389, 1433])),
                "direction": rng.choice(["Inbound", "Outbound"]),
                "etag": f'W/"{_guid(rng)}"',
                "id": f"/subscriptions/{sub}/resourceGroups/rg-net/providers/Microsoft.Network/"
                f"networkSecurityGroups/nsg-web/securityRules/rule-{n}",
                "name": f"rule-{n}",
                "priority": 100 + 10 * n,
                "protocol": rng.choice(["Tcp", "Udp", "*"]),
                "provisioningState": "Succeeded",
                "resourceGroup": "rg-net",
                "sourceAddressPrefix": rng.choice(["Internet", "VirtualNetwork", "10.1.0.0/16"]),
                "sourcePortRange": "*",
                "type": "Microsoft.Network/networkSecurityGroups/securityRules",
            }
        )
        text = json.dumps(rules, indent=2, sort_keys=True)
        if text.count("\n") + 1 >= lines:
            return text + "\n"


def _ip(rng: random.Random) -> str:
    return rng.choice(["10.0.1.", "10.1.0.", "52.239.170.", "20.190.151."]) + str(rng.randint(2, 250))


def narrative(rng: random.Random, size: int = 1_000_000) -> str:
    """A capture narrative of ``size`` characters: what the forensics side describes and sends."""
    hosts = ["stghost.blob.core.windows.net", "login.microsoftonline.com", "api.contoso.com", "kv.vault.azure.net"]
    parts: list[str] = []
    total = 0
    frame = 0
    while total < size:
        frame += 1
        a, b = _ip(rng), _ip(rng)
        sport, dport = rng.randint(1024, 65535), rng.choice([443, 80, 53, 1433, 22])
        roll = rng.random()
        if roll < 0.4:
            line = (
                f"Frame {frame}: {rng.randint(54, 1514)} bytes on wire, {a}:{sport} -> {b}:{dport} TCP "
                f"[{rng.choice(['SYN', 'ACK', 'PSH, ACK', 'FIN, ACK', 'RST'])}] seq={rng.getrandbits(32)} "
                f"ack={rng.getrandbits(32)} win={rng.choice([64240, 65535, 502])} len={rng.randint(0, 1460)}"
            )
        elif roll < 0.55:
            host = rng.choice(hosts)
            line = f"Frame {frame}: DNS query A {host} from {a} -> 168.63.129.16 answer {b} ttl={rng.randint(5, 3600)}"
        elif roll < 0.7:
            line = (
                f"Frame {frame}: TLSv1.3 ClientHello SNI={rng.choice(hosts)} cipher TLS_AES_256_GCM_SHA384 "
                f"session id {rng.randbytes(32).hex()}"
            )
        elif roll < 0.82:
            line = (
                f"Frame {frame}: HTTP GET /api/v1/orders?page={rng.randint(1, 40)}&sort=desc HTTP/1.1 "
                f"Host: {rng.choice(hosts)} User-Agent: curl/8.5.0 X-Request-Id: {_guid(rng)}"
            )
        elif roll < 0.92:
            line = (
                f"F{rng.randint(1, 30)} retransmissions {rng.randint(1, 40)}% on flow {a}:{sport} -> {b}:{dport} "
                f"(frames {frame}-{frame + rng.randint(2, 90)}); RTT p50 {rng.randint(1, 90)} ms, p99 "
                f"{rng.randint(90, 900)} ms; zero windows {rng.randint(0, 9)}"
            )
        elif roll < 0.97:
            line = (
                f"Frame {frame}: ICMP Destination unreachable (Port unreachable) {b} -> {a} "
                f"sha256 of payload {rng.randbytes(32).hex()}"
            )
        else:
            line = (
                f"Frame {frame}: HTTP/1.1 401 Unauthorized WWW-Authenticate: Bearer realm=\"{rng.choice(hosts)}\" "
                f"x-ms-request-id: {_guid(rng)} etag: \"0x8DC{rng.randbytes(6).hex().upper()}\""
            )
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts)[:size] + "\n"


def _export(ref: str, dest: Path) -> Path:
    """The ``src/netghost/redact`` package at ``ref``, as a stand-alone ``netghost.redact`` under ``dest``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref, "src/netghost/redact"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    tree = dest / "src"
    (tree / "netghost" / "__init__.py").write_text("")
    return tree


def _time(tree: Path, inputs: Path, rounds: int) -> dict[str, float]:
    run = subprocess.run(
        [sys.executable, "-c", _WORKER, str(tree), str(inputs), str(rounds)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(run.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default=None, help="git ref of the baseline (default: merge base with main)")
    parser.add_argument("--rounds", type=int, default=5, help="timed calls per input; the best one counts")
    parser.add_argument("--repeat", type=int, default=3, help="alternating before/after runs")
    args = parser.parse_args()
    ref = args.before or subprocess.run(
        ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], check=True, capture_output=True, text=True
    ).stdout.strip()
    rng = random.Random(SEED)
    inputs = {"az-json-200": az_json(rng), "narrative-1mb": narrative(rng)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "inputs.json"
        path.write_text(json.dumps(inputs))
        old_tree = _export(ref, Path(tmp) / "before")
        before: dict[str, float] = {}
        after: dict[str, float] = {}
        for _ in range(args.repeat):  # alternate, so a busy machine slows both sides alike
            for side, tree in ((before, old_tree), (after, ROOT / "src")):
                for name, best in _time(tree, path, args.rounds).items():
                    side[name] = min(best, side.get(name, best))
    print(f"before = {ref[:12]}, after = working tree; best of {args.repeat} alternating runs of {args.rounds}+ calls")
    print(f"{'input':<15} {'chars':>9} {'before ms':>10} {'after ms':>10} {'after MB/s':>11} {'ratio':>6}")
    worst = 0.0
    for name, text in inputs.items():
        ratio = after[name] / before[name]
        worst = max(worst, ratio)
        print(
            f"{name:<15} {len(text):>9} {before[name] * 1e3:>10.2f} {after[name] * 1e3:>10.2f} "
            f"{len(text) / after[name] / 1e6:>11.2f} {ratio:>6.2f}"
        )
    print(f"worst ratio after/before: {worst:.2f} (goal <= 1.5)")


if __name__ == "__main__":
    main()
