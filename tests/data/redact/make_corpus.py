"""Build the generated redaction corpora and measure the redactor on them, per class.

Every class has a seeded generator that varies format, vendor, spacing, case, quoting, line endings and the
surrounding text (a device prompt, a JSON-escaped run-command message, a log prefix, ``ps`` or history
rows). Secret samples list the exact substrings that must be gone; benign samples are look-alikes that
must come back unchanged.

    python -m tests.data.redact.make_corpus            # rewrite secrets.jsonl and benign.jsonl
    python -m tests.data.redact.make_corpus --check    # exit 1 if the files differ from the generators
    python -m tests.data.redact.make_corpus --report   # recall and benign alteration per class

Scoring: a secret counts as leaked when it survives whole, or when a run of at least half of it (and 8+
characters) survives; a benign sample's alteration is the number of its characters that do not survive
unchanged (difflib), over its length.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import shlex
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from tests.data.redact import captures, flags, gear, hashes, labels, public
from tests.data.redact._common import Gen, Sample

__all__ = ["BENIGN_CLASSES", "SECRET_CLASSES", "altered_chars", "benign_rows", "dump", "leaked", "secret_rows"]

HERE = Path(__file__).resolve().parent
SEED = 28
PER_CLASS = 60

SECRET_CLASSES: dict[str, Gen] = {**gear.SECRETS, **hashes.SECRETS, **captures.SECRETS, **flags.SECRETS, **labels.SECRETS}
BENIGN_CLASSES: dict[str, Gen] = {**gear.BENIGN, **hashes.BENIGN, **captures.BENIGN, **flags.BENIGN, **labels.BENIGN,
                                  **public.BENIGN}


def _generate(classes: dict[str, Gen], per_class: int, seed: int) -> Iterator[Sample]:
    for name, build in classes.items():
        rng = random.Random(f"{seed}:{name}")
        for i in range(per_class):
            sample = build(rng)
            keep = tuple(k for k in sample.keep if k and k in sample.text)
            yield Sample(sample.cls, sample.text, sample.secrets, keep, sample.command, sample.why,
                         {**sample.meta, "id": f"{name}-{i}"})


def _row(sample: Sample) -> dict[str, object]:
    return {k: v for k, v in asdict(sample).items() if v not in (None, "", (), {}, [])}


def secret_rows(per_class: int = PER_CLASS, seed: int = SEED) -> list[dict[str, object]]:
    return [_row(s) for s in _generate(SECRET_CLASSES, per_class, seed)]


def benign_rows(per_class: int = PER_CLASS, seed: int = SEED) -> list[dict[str, object]]:
    return [_row(s) for s in _generate(BENIGN_CLASSES, per_class, seed)]


def dump(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=True, sort_keys=True) + "\n" for row in rows)


def leaked(secret: str, out: str) -> bool:
    """The secret survives whole, or a run of half of it (8+ characters) survives."""
    if secret in out:
        return True
    n = max(8, len(secret) // 2)
    if len(secret) < 16:
        return False
    return any(secret[i : i + n] in out for i in range(len(secret) - n + 1))


def altered_chars(before: str, after: str) -> int:
    """Characters of ``before`` that do not survive unchanged in ``after``."""
    if before == after:
        return 0
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return len(before) - sum(block.size for block in matcher.get_matching_blocks())


def _report() -> None:
    from netghost.redact import redact, redact_argv

    print(f"{'secret class':<26} {'secrets':>7} {'leaked':>6} {'recall':>8} {'kept lost':>9} {'argv leaks':>10}")
    total = missed = 0
    for name in SECRET_CLASSES:
        rows = [r for r in _SECRETS if r["cls"] == name]
        n = leaks = lost = argv_leaks = 0
        for row in rows:
            out = redact(str(row["text"]), command=row.get("command")).text  # type: ignore[arg-type]
            for secret in row["secrets"]:  # type: ignore[attr-defined]
                n += 1
                leaks += leaked(secret, out)
            lost += sum(keep not in out for keep in row.get("keep", []))  # type: ignore[attr-defined]
            if row.get("meta", {}).get("argv"):  # type: ignore[attr-defined]
                argv = redact_argv(shlex.split(str(row["text"])))[0]
                argv_leaks += sum(any(leaked(s, a) for a in argv) for s in row["secrets"])  # type: ignore[attr-defined]
        total += n
        missed += leaks
        print(f"{name:<26} {n:>7} {leaks:>6} {(n - leaks) / n:>8.2%} {lost:>9} {argv_leaks:>10}")
    print(f"{'ALL':<26} {total:>7} {missed:>6} {(total - missed) / total:>8.2%}")
    print()
    print(f"{'benign class':<26} {'chars':>8} {'altered':>7} {'share':>7} {'samples hit':>11} {'kept lost':>9}")
    chars = changed = 0
    for name in BENIGN_CLASSES:
        rows = [r for r in _BENIGN if r["cls"] == name]
        c = a = hit = lost = 0
        for row in rows:
            text = str(row["text"])
            out = redact(text, command=row.get("command")).text  # type: ignore[arg-type]
            if row.get("meta", {}).get("argv"):  # type: ignore[attr-defined]
                argv = shlex.split(text)
                out_argv = redact_argv(argv)[0]
                if out_argv != argv:
                    out = shlex.join(out_argv)
                    text = shlex.join(argv)
            delta = altered_chars(text, out)
            c += len(text)
            a += delta
            hit += delta > 0
            lost += sum(keep not in out for keep in row.get("keep", []))  # type: ignore[attr-defined]
        chars += c
        changed += a
        print(f"{name:<26} {c:>8} {a:>7} {a / c:>7.2%} {hit:>11} {lost:>9}")
    print(f"{'ALL':<26} {chars:>8} {changed:>7} {changed / chars:>7.2%}")


_SECRETS: list[dict[str, object]] = []
_BENIGN: list[dict[str, object]] = []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare the files with the generators' output")
    parser.add_argument("--report", action="store_true", help="print recall and benign alteration per class")
    args = parser.parse_args()
    files = {HERE / "secrets.jsonl": dump(secret_rows()), HERE / "benign.jsonl": dump(benign_rows())}
    if args.report:
        _SECRETS[:] = [json.loads(line) for line in files[HERE / "secrets.jsonl"].splitlines()]
        _BENIGN[:] = [json.loads(line) for line in files[HERE / "benign.jsonl"].splitlines()]
        _report()
        return 0
    if args.check:
        stale = [p.name for p, text in files.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
        if stale:
            print("out of date:", ", ".join(stale), file=sys.stderr)
            return 1
        return 0
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        print(f"{path.name}: {text.count(chr(10))} rows, {len(text)} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
