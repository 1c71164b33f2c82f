"""Generate the az operations catalogue from the installed azure-cli (run with azure-cli's own Python).

    /path/to/azure-cli/venv/bin/python tools/az_catalogue/generate.py            # write the package data
    /path/to/azure-cli/venv/bin/python tools/az_catalogue/generate.py --check    # compare, exit 1 on drift
    ... generate.py --out /tmp/az_catalogue.json.gz

The catalogue ships as ``src/netghost/shell/classify/data/az_catalogue.json.gz`` (gzip, mtime 0, so
the same azure-cli always gives the same bytes). Nothing here uses a network or an account: see
``_load``. README.md in this directory documents each decision.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from az_catalogue._catalogue import build_catalogue  # noqa: E402
from az_catalogue._command import command_facts  # noqa: E402
from az_catalogue._load import load  # noqa: E402
from az_catalogue._secrets import context_of, mark_hidden  # noqa: E402

DEFAULT_OUT = HERE.parents[1] / "src" / "netghost" / "shell" / "classify" / "data" / "az_catalogue.json.gz"

_CONFIG_READ = re.compile(r"""config\.(?:get|getboolean|getint|getfloat|get_value)\(\s*['"]([a-z_]+)['"]\s*,\s*['"]([a-z_0-9.]+)['"]""")


def config_keys() -> list[str]:
    """Every ``section.key`` azure-cli and knack read from their configuration (``az config set``
    writes these), found in their source."""
    import azure.cli
    import knack

    keys: set[str] = set()
    roots = [Path(next(iter(azure.cli.__path__))), Path(knack.__file__).parent]
    for root in roots:
        for path in root.rglob("*.py"):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            keys.update(f"{a}.{b}" for a, b in _CONFIG_READ.findall(text))
    return sorted(keys)


def mark_spec_secrets(facts: dict[str, Any]) -> None:
    """Every field an AAZ schema flags ``secret`` (the spec's ``x-ms-secret``) is write-only wherever
    it appears, also in the SDK models older commands deserialise the same resource into."""
    for f in facts.values():
        for rid, leaves in sorted(f.effects.responses.items()):
            if not rid.startswith("aaz:"):
                continue
            for leaf in leaves or ():
                names = [p for p in leaf.path if p not in ("[]", "{}")]
                if leaf.marked and names:
                    mark_hidden(context_of(names), names[-1], f"x-ms-secret (flagged secret by {rid.rsplit('.', 2)[-2]})")


def generate() -> tuple[dict[str, Any], dict[str, float]]:
    """Load azure-cli, analyse every command, build the catalogue; also return timings."""
    t0 = time.monotonic()
    loaded = load()
    t1 = time.monotonic()
    facts = {}
    for name, cmd in sorted(loaded.commands.items()):
        facts[name] = command_facts(loaded.cli, name, cmd, loaded.parsers[name])
    t2 = time.monotonic()
    mark_spec_secrets(facts)
    doc = build_catalogue(loaded.version, facts, config_keys())
    t3 = time.monotonic()
    return doc, {"load": t1 - t0, "analyse": t2 - t1, "build": t3 - t2}


def encode(doc: dict[str, Any]) -> bytes:
    """The catalogue's bytes: one command per line inside the JSON (readable when unpacked), gzip
    with no timestamp or name so the output is reproducible."""
    head = {k: v for k, v in doc.items() if k not in ("ops", "commands")}
    lines = ["{"]
    for k, v in head.items():
        lines.append(f"{json.dumps(k)}: {json.dumps(v, separators=(',', ':'))},")
    lines.append('"ops": [')
    lines.append(",\n".join(json.dumps(op, separators=(",", ":")) for op in doc["ops"]))
    lines.append("],")
    lines.append('"commands": {')
    lines.append(",\n".join(f"{json.dumps(n)}: {json.dumps(e, separators=(',', ':'))}" for n, e in doc["commands"].items()))
    lines.append("}}")
    raw = "\n".join(lines).encode("utf-8")
    return gzip.compress(raw, compresslevel=9, mtime=0)


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the catalogue."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    doc, timings = generate()
    data = encode(doc)
    stats = summary(doc)
    print(f"azure-cli {doc['azure_cli']}: {stats}; load {timings['load']:.1f} s, analyse {timings['analyse']:.1f} s, "
          f"build {timings['build']:.1f} s; {len(data)} bytes gzip", file=sys.stderr)  # fmt: skip
    if args.check:
        old = args.out.read_bytes() if args.out.exists() else b""
        if old == data:
            return 0
        print(f"{args.out} differs from what azure-cli {doc['azure_cli']} gives: regenerate it", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    return 0


def summary(doc: dict[str, Any]) -> str:
    """Counts worth reporting: commands, operations, and how many carry secrets."""
    ops = doc["ops"]
    cmds = doc["commands"]
    shown = {i for i, op in enumerate(ops) if op[3] == 2}
    secret_cmds = sum(1 for e in cmds.values() if any(isinstance(x, int) and x in shown for x in e["a"]))
    return (f"{len(cmds)} commands, {len(ops)} operations ({len(shown)} with secrets in the response, "
            f"{sum(1 for op in ops if op[3] == 1)} with hidden secret fields, {sum(1 for op in ops if op[3] == 3)} opaque), "
            f"{secret_cmds} commands always reach a secret-bearing response")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
