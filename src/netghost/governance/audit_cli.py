"""``ghost-agent audit verify PATH...``: check hash-chained audit, registry and workflow logs.

Each PATH is a ``.jsonl`` file or a directory searched recursively for ``*.jsonl``. For every file
it prints the record count, the head hash, the anchor and every break. The anchor is checked by
default: each record's MAC under the installation's audit key and the log's end against its signed
checkpoint, so a log cut short, a torn or deleted last record, a forged record and a re-chained log
are breaks; a log written before anchoring is reported "unanchored (legacy)". Exit status: 0 when
every chain is intact (a torn last line from a crash is reported but tolerated), 1 when any chain
is broken, 2 when a path is missing or holds no log.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from netghost.governance.wal import VerifyReport, verify

__all__ = ["add_arguments", "collect_files", "run"]

EXIT_OK = 0
EXIT_BROKEN = 1
EXIT_USAGE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``verify`` action to the ``audit`` subparser."""
    actions = parser.add_subparsers(dest="audit_command", metavar="ACTION")
    verify_parser = actions.add_parser(
        "verify",
        help="verify the hash chain of .jsonl logs",
        description="Verify hash-chained JSONL logs; exit 0 only when every chain is intact.",
    )
    verify_parser.add_argument("paths", nargs="+", metavar="PATH", help="a .jsonl file or a directory of them")
    verify_parser.add_argument("--json", action="store_true", help="print one JSON report per file instead")
    verify_parser.add_argument(
        "--head",
        metavar="SHA256",
        help="the head hash the (single) file must end with; detects records cut off its end",
    )


def collect_files(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Expand PATH arguments into log files; also return the arguments that matched nothing."""
    files: list[Path] = []
    missing: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
            if not found:
                missing.append(f"{raw}: no .jsonl files")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            missing.append(f"{raw}: no such file or directory")
    return files, missing


def _render(console: Console, report: VerifyReport) -> None:
    status = Text("OK", style="bold green") if report.ok else Text("BROKEN", style="bold red")
    head = report.head_sha256 or "-"
    console.print(Text.assemble(status, f"  {report.path}"), soft_wrap=True)
    console.print(f"    records={report.records}  head={head}", soft_wrap=True, markup=False)
    console.print(f"    anchor: {_anchor_text(report)}", soft_wrap=True, markup=False)
    for notice in report.notices:
        console.print(Text(f"    note: {notice}", style="yellow"), soft_wrap=True)
    if not report.breaks:
        return
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
    for column in ("line", "seq", "kind", "detail"):
        table.add_column(column, overflow="fold")
    for b in report.breaks:
        style = "yellow" if b.kind == "torn_tail" else "red"
        table.add_row(str(b.line_no), "-" if b.seq is None else str(b.seq), Text(b.kind, style=style), b.detail)
    console.print(table)


def _anchor_text(report: VerifyReport) -> str:
    if report.checkpoint is not None and report.anchor == "checkpoint":
        return f"checkpoint at seq {report.checkpoint.seq} (hmac-sha256)"
    if report.anchor == "legacy":
        return "unanchored (legacy)"
    return "none (see the breaks)"


def _as_json(report: VerifyReport) -> str:
    return json.dumps(
        {
            "path": report.path,
            "ok": report.ok,
            "records": report.records,
            "head_sha256": report.head_sha256,
            "anchor": report.anchor,
            "checkpoint": report.checkpoint.to_dict() if report.checkpoint is not None else None,
            "notices": report.notices,
            "breaks": [
                {"seq": b.seq, "line_no": b.line_no, "kind": b.kind, "detail": b.detail} for b in report.breaks
            ],
        },
        sort_keys=True,
    )


def run(args: argparse.Namespace, *, console: Console | None = None) -> int:
    """Run ``ghost-agent audit ...``; returns the exit status.

    Args:
        args: the parsed arguments (``audit_command``, ``paths``, ``json``).
        console: where to print (tests pass one writing to a StringIO).
    """
    out = console or Console(highlight=False)
    err = Console(file=sys.stderr, highlight=False) if console is None else console
    if getattr(args, "audit_command", None) != "verify":
        err.print("usage: ghost-agent audit verify PATH [PATH ...]")
        return EXIT_USAGE
    files, missing = collect_files(list(args.paths))
    head = getattr(args, "head", None)
    if head is not None and len(files) != 1:
        err.print(Text("error: --head needs exactly one log file", style="red"))
        return EXIT_USAGE
    for problem in missing:
        err.print(Text(f"error: {problem}", style="red"))
    worst = EXIT_USAGE if missing else EXIT_OK
    broken = 0
    for path in files:
        try:
            report = verify(path, expected_head=head)
        except OSError as exc:
            err.print(Text(f"error: {path}: {exc.strerror or exc}", style="red"))
            worst = EXIT_USAGE
            continue
        if args.json:
            out.print(_as_json(report), soft_wrap=True, markup=False)
        else:
            _render(out, report)
        if not report.ok:
            broken += 1
    if not args.json:
        out.print(f"{len(files)} file(s) checked, {broken} broken")
    if worst == EXIT_OK and broken:
        return EXIT_BROKEN
    return worst
