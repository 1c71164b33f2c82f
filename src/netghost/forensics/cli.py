"""``pcap-forensics CAPTURE [--semantic-dir DIR] [--report-dir DIR] [--format md,json] [--max-memory SIZE]``.

Exit codes: 0 success (also for an empty or truncated capture, which the report explains); 2 for a
missing file, a file that is not a capture or an unsupported format, each with a one-line message.
``--compare`` hands over to compare_report.run_compare; ``--narrative`` and ``--format html`` use
narrative.py / html_report.py (each optional: without its module or key a notice says so and the
deterministic outputs are unchanged).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from netghost.errors import CaptureFormatError
from netghost.forensics import spill
from netghost.forensics.engine import Analysis, analyze_capture
from netghost.forensics.report import build_semantic, render_executive_summary, render_report

__all__ = ["build_parser", "main", "run"]

PROG = "pcap-forensics"
FORMATS = ("md", "json", "html")
PROGRESS_MIN_BYTES = 64 * 1024 * 1024


def build_parser() -> argparse.ArgumentParser:
    """The CLI's argument parser (also used by the shell's allowlist tests)."""
    p = argparse.ArgumentParser(prog=PROG, description="Wireshark-faithful capture forensics: semantic JSON + reports.")
    p.add_argument("capture", help="pcap / pcapng file, optionally gzip-compressed (format detected by magic)")
    p.add_argument("--compare", metavar="CAPTURE_B", help="second capture point of the same path (two-point comparison)")
    p.add_argument("--semantic-dir", default=".", help="directory for {stem}_semantic.json (default: .)")
    p.add_argument("--report-dir", default=".", help="directory for the Markdown reports (default: .)")
    p.add_argument("--format", default="md,json", help="comma list of md, json, html (default: md,json)")
    p.add_argument("--narrative", action="store_true",
                   help="add a Gemini-written narrative when GEMINI_API_KEY (or Vertex settings) is present")
    p.add_argument("--max-memory", metavar="SIZE", type=_size,
                   help="RAM for the per-packet arrays (e.g. 512M, 2G; default: NETGHOST_PCAP_MEMORY, else half "
                        "the physical memory); past it they live in temporary files, so captures larger than "
                        "memory are analysed with the same results, only slower")
    return p


def _size(text: str) -> int:
    try:
        return spill.parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


_LEAKY = re.compile(r"\(magic [0-9a-fA-F]+\)")


def _fail(msg: str) -> int:
    """Print the one-line error (exit 2).

    Why the scrub: the seeds' agent relays stderr into an LLM transcript; a message quoting the first
    bytes of a non-capture file (a key, a config) would leak its contents, so byte dumps are removed
    here even if a lower layer adds one back.
    """
    print(f"{PROG}: error: {_LEAKY.sub('(unrecognised magic)', msg)}", file=sys.stderr)
    return 2


def _stem(path: Path) -> str:
    name = path.name
    for ext in (".gz", ".pcapng", ".pcap", ".cap", ".dmp"):
        if name.lower().endswith(ext):
            name = name[: -len(ext)]
    return name or "capture"


def _tune_numpy_for_big_runs() -> None:
    """Stop numpy from madvising huge pages for its large arrays (this process only).

    Why: with THP ``defrag=madvise`` (common on cloud VMs) every first touch of a madvised array can
    stall in synchronous compaction; on the 2M-packet benchmark that was ~2 s of system time out of
    ~6 s. Plain 4 KiB pages cost a fraction of it. ``_set_madvise_hugepage`` is numpy's own switch
    (private, so looked up defensively).
    """
    for mod in ("_core", "core"):
        setter = getattr(getattr(getattr(np, mod, None), "multiarray", None), "_set_madvise_hugepage", None)
        if setter is not None:
            setter(False)
            return


def _analyze(path: Path) -> Analysis:
    size = path.stat().st_size if path.is_file() else 0
    if size >= PROGRESS_MIN_BYTES:
        _tune_numpy_for_big_runs()
    if not (sys.stderr.isatty() and size >= PROGRESS_MIN_BYTES):
        return analyze_capture(path)
    from rich.console import Console  # noqa: PLC0415  only for big files on a terminal
    from rich.progress import Progress  # noqa: PLC0415

    with Progress(transient=True, console=Console(file=sys.stderr)) as prog:
        task = prog.add_task(f"analysing {path.name}", total=size)
        return analyze_capture(path, progress=lambda done, total: prog.update(task, completed=done))


def run(args: argparse.Namespace) -> int:
    """Execute a parsed command line; returns the exit code."""
    if getattr(args, "max_memory", None) is not None:
        spill.reset_budget(args.max_memory)
    formats = {f.strip() for f in str(args.format).split(",") if f.strip()}
    unknown = formats - set(FORMATS)
    if unknown:
        return _fail(f"unknown --format {', '.join(sorted(unknown))} (choose from md, json, html)")
    if args.compare:
        return _run_compare(args)
    path = Path(args.capture)
    try:
        analysis = _analyze(path)
    except CaptureFormatError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{path}: {exc.strerror or exc}")
    sem = build_semantic(analysis, path.stat().st_size)
    notices = [f"warning: {w}" for w in analysis.info.warnings]
    rendered = _render(sem, narrative=args.narrative, notices=notices)
    written: list[Path] = []
    try:
        notices += _write_outputs(args, formats, _stem(path), sem, analysis, rendered=rendered, written=written)
    except OSError as exc:
        return _fail(f"cannot write outputs: {exc.strerror or exc}")
    for n in notices:
        print(f"{PROG}: {n}", file=sys.stderr)
    _print_done(sem, written)
    return 0


def _run_compare(args: argparse.Namespace) -> int:
    try:
        from netghost.forensics.compare import run_compare  # noqa: PLC0415  compare mode is optional
    except ImportError:
        return _fail("--compare is not available in this build; analyse each capture alone")
    return int(run_compare(args, PROG, analyze=_analyze))


class _Rendered(NamedTuple):
    """The Markdown forensic report, with the narrative (and its model) folded in when one was written."""

    markdown: str
    story: str | None
    model: str | None


def _render(sem: dict[str, Any], *, narrative: bool, notices: list[str]) -> _Rendered:
    """Render the report; with ``narrative``, ask for the optional narrative first (its notice goes to
    ``notices``)."""
    story, model = None, None
    if narrative:
        try:
            from netghost.forensics.report import generate_narrative  # noqa: PLC0415  optional SDK
        except ImportError:
            notices.append("--narrative is not available in this build; the deterministic report is unchanged")
        else:
            nres = generate_narrative(sem)
            story, model = nres.text, nres.model
            notices.append(nres.message)
    report = render_report(sem)
    if story:
        from netghost.forensics.report import with_narrative  # noqa: PLC0415

        report = with_narrative(report, story, model)
    return _Rendered(report, story, model)


def _write_outputs(args: argparse.Namespace, formats: set[str], stem: str, sem: dict[str, Any],
                   analysis: Analysis, *, rendered: _Rendered, written: list[Path]) -> list[str]:
    """Write the requested formats, appending each file to ``written``; returns the notices (HTML's).

    Raises:
        OSError: an output directory or file cannot be written.
    """
    if "json" in formats:
        sdir = Path(args.semantic_dir)
        sdir.mkdir(parents=True, exist_ok=True)
        out = sdir / f"{stem}_semantic.json"
        out.write_text(json.dumps(sem, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(out)
    rdir = Path(args.report_dir)
    if "md" in formats:
        rdir.mkdir(parents=True, exist_ok=True)
        for suffix, text in (("forensic_report", rendered.markdown),
                             ("executive_summary", render_executive_summary(sem))):
            out = rdir / f"{stem}_{suffix}.md"
            out.write_text(text, encoding="utf-8")
            written.append(out)
    if "html" in formats:
        return _write_html(rdir / f"{stem}_forensic_report.html", sem, analysis, rendered.markdown, rendered.story,
                           rendered.model, written)
    return []


def _write_html(out: Path, sem: dict[str, Any], analysis: Analysis, report: str, story: str | None,  # noqa: PLR0917  internal
                model: str | None, written: list[Path]) -> list[str]:
    """HTML report with charts (html_report.py, matplotlib optional); returns its notices."""
    try:
        from netghost.forensics.report import write_html_report  # noqa: PLC0415  optional matplotlib
    except ImportError:
        return ["--format html is not available in this build; wrote md/json only"]
    out.parent.mkdir(parents=True, exist_ok=True)
    notices = list(write_html_report(out, sem, analysis, markdown=report, narrative=story, model=model))
    if out.exists():
        written.append(out)
    return notices


def _print_done(sem: dict[str, Any], written: list[Path]) -> None:
    s = sem["summary"]
    head = sem["findings"][0]["title"] if sem["findings"] else ("no traffic captured" if not s["packets"] else "no findings")
    print(f"{sem['capture']['file']}: {s['packets']} packets, {s['tcp_conversations']} TCP conversations, "
          f"{len(sem['findings'])} findings; top: {head}")
    for w in written:
        print(f"wrote {w}")


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point.

    The seeds' agent reads stderr through a shell: a Python traceback there is noise it cannot act
    on, so an unexpected failure becomes one line naming the exception (exit 2). The library itself
    never does this; its tests assert only ``CaptureFormatError`` escapes ``analyze_capture``.
    """
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except BrokenPipeError:
        # the reader of stdout went away (e.g. `| head -1`): outputs are written; leave quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except MemoryError:
        return _fail(f"{args.capture}: out of memory while analysing; retry with a smaller --max-memory "
                     "(e.g. --max-memory 256M: per-packet arrays past it go to temporary files)")
    except Exception as exc:  # last-resort boundary of a CLI (see docstring)
        return _fail(f"internal error analysing {args.capture}: {type(exc).__name__}: {exc}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
