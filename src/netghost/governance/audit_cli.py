"""``ghost-agent audit verify [PATH...]``: check hash-chained audit, registry and workflow logs.

Each PATH is a ``.jsonl`` file or a directory searched recursively for ``*.jsonl``; with no PATH it
is ``./audit``, the directory every other command writes by default. For every file it prints the
record count, the head hash, the anchor and every break. The anchor is checked by default: each
record's MAC under the installation's audit key and the log's end against its signed checkpoint, so
a log cut short, a torn or deleted last record, a forged record and a re-chained log are breaks; a
log written before anchoring is reported "unanchored (legacy)".

A directory is also checked session by session (:mod:`netghost.governance.trail`): the logs each
session must have, read from the anchors, the sealed session file and the logs' cross references,
must all be there, whole and the session's own; the session file's seal must check; a provisional
record waiting beside a log must authenticate. One line per problem.

Exit status: 0 when every chain is intact and every session's trail complete (a torn last line from a
crash is reported but tolerated), 1 when any chain is broken or a trail incomplete, 2 when a path is
missing or holds no log (and no session says it should).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from netghost.governance.trail import TrailReport, check_trails
from netghost.governance.wal import VerifyReport, verify

__all__ = ["DEFAULT_PATH", "add_arguments", "collect_files", "run"]

DEFAULT_PATH = "./audit"
"""What a bare ``ghost-agent audit verify`` checks: the default ``--audit-dir`` of every command."""

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
    verify_parser.add_argument("paths", nargs="*", metavar="PATH",
                               help=f"a .jsonl file or a directory of them (default: {DEFAULT_PATH})")
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


def _render_trail(console: Console, trail: TrailReport) -> None:
    status = Text("OK", style="bold green") if trail.ok else Text("INCOMPLETE", style="bold red")
    logs = ", ".join(sorted(trail.expected)) or "-"
    console.print(Text.assemble(status, f"  session {trail.session_id} in {trail.directory}"), soft_wrap=True)
    console.print(f"    files: {logs}", soft_wrap=True, markup=False)
    for notice in trail.notices:
        console.print(Text(f"    note: {notice}", style="yellow"), soft_wrap=True)
    for problem in trail.problems:
        console.print(Text.assemble(("    " + problem.kind, "red"), f"  {problem.line}"), soft_wrap=True)


def _trail_json(trail: TrailReport) -> str:
    return json.dumps(
        {
            "session_id": trail.session_id,
            "directory": str(trail.directory),
            "ok": trail.ok,
            "expected": trail.expected,
            "notices": trail.notices,
            "problems": [{"file": p.file, "kind": p.kind, "detail": p.detail} for p in trail.problems],
        },
        sort_keys=True,
    )


def _trails(paths: list[str], files: list[Path]) -> dict[str, list[TrailReport]]:
    """The session trails of every directory argument (and its subdirectories holding logs)."""
    out: dict[str, list[TrailReport]] = {}
    for raw in paths:
        root = Path(raw)
        if not root.is_dir():
            continue
        resolved = root.resolve()
        dirs = {root} | {f.parent for f in files if f.resolve().is_relative_to(resolved)}
        out[raw] = [t for d in sorted(dirs) for t in check_trails(d)]
    return out


def _verify_files(files: list[Path], head: str | None, as_json: bool, out: Console, err: Console) -> tuple[int, int]:
    """Verify and print each file; (how many are broken, how many could not be read)."""
    broken = unreadable = 0
    for path in files:
        try:
            report = verify(path, expected_head=head)
        except OSError as exc:
            err.print(Text(f"error: {path}: {exc.strerror or exc}", style="red"))
            unreadable += 1
            continue
        if as_json:
            out.print(_as_json(report), soft_wrap=True, markup=False)
        else:
            _render(out, report)
        broken += not report.ok
    return broken, unreadable


def run(args: argparse.Namespace, *, console: Console | None = None) -> int:
    """Run ``ghost-agent audit ...``; returns the exit status.

    Args:
        args: the parsed arguments (``audit_command``, ``paths``, ``json``).
        console: where to print (tests pass one writing to a StringIO).
    """
    out = console or Console(highlight=False)
    err = Console(file=sys.stderr, highlight=False) if console is None else console
    if getattr(args, "audit_command", None) != "verify":
        err.print("usage: ghost-agent audit verify [PATH ...]")
        return EXIT_USAGE
    paths = list(args.paths) or [DEFAULT_PATH]
    files, missing = collect_files(paths)
    trails = _trails(paths, files)
    missing = [m for m in missing if not trails.get(m.split(": ", 1)[0])]  # a dir whose logs are all gone
    head = getattr(args, "head", None)
    if head is not None and len(files) != 1:
        err.print(Text("error: --head needs exactly one log file", style="red"))
        return EXIT_USAGE
    for problem in missing:
        hint = (" (the default): run it where ghost-agent ran, or name the audit directory: "
                "ghost-agent audit verify DIR") if not args.paths else ": give a .jsonl log or a directory of them"
        err.print(Text(f"error: {problem}{hint}", style="red"), soft_wrap=True)
    broken, unreadable = _verify_files(files, head, bool(args.json), out, err)
    worst = EXIT_USAGE if missing or unreadable else EXIT_OK
    sessions = [t for found in trails.values() for t in found]
    for trail in sessions:
        if args.json:
            out.print(_trail_json(trail), soft_wrap=True, markup=False)
        else:
            _render_trail(out, trail)
    incomplete = sum(1 for t in sessions if not t.ok)
    if not args.json:
        summary = f"{len(files)} file(s) checked, {broken} broken"
        if trails:
            summary += f"; {len(sessions)} session(s) checked, {incomplete} incomplete"
        out.print(summary)
    if worst == EXIT_OK and (broken or incomplete):
        return EXIT_BROKEN
    return worst
