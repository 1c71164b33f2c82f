"""``pcap-forensics CAPTURE [--semantic-dir DIR] [--report-dir DIR] [--format md,json] [--max-memory SIZE]``,
``pcap-forensics --fleet SOURCE... [--scheduler ADDRESS] [--workers N] [--out DIR]``; ``--out DIR`` also
names the one folder of a single capture's (or a comparison's) outputs.

Exit codes: 0 success (also for an empty or truncated capture, which the report explains); 2 for a
missing file, a file that is not a capture or an unsupported format, each with a one-line message.
``--compare`` hands over to compare_report.run_compare; ``--narrative`` and ``--format html`` use
narrative.py / html_report.py (each optional: without its module or key a notice says so and the
deterministic outputs are unchanged). ``--fleet`` hands over to ``fleet.run_fleet_cli`` (exit 0 when
every capture was analysed, 1 when some failed, 2 when none could be).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from netghost.errors import CaptureFormatError
from netghost.forensics import spill
from netghost.forensics.engine import Analysis, analyze_capture
from netghost.forensics.outputs import write_capture_outputs

__all__ = ["build_parser", "main", "run"]

PROG = "pcap-forensics"
FORMATS = ("md", "json", "html")
PROGRESS_MIN_BYTES = 64 * 1024 * 1024


def build_parser() -> argparse.ArgumentParser:
    """The CLI's argument parser (also used by the shell's allowlist tests)."""
    p = argparse.ArgumentParser(prog=PROG, description="Wireshark-faithful capture forensics: semantic JSON + reports.")
    p.add_argument("capture", nargs="?",
                   help="pcap / pcapng file, optionally gzip-compressed (format detected by magic)")
    p.add_argument("--compare", metavar="CAPTURE_B", help="second capture point of the same path (two-point comparison)")
    p.add_argument("--semantic-dir", help="directory for {stem}_semantic.json (default: --out, else .)")
    p.add_argument("--report-dir", help="directory for the Markdown and HTML reports (default: --out, else .)")
    p.add_argument("--format", default="md,json", help="comma list of md, json, html (default: md,json)")
    p.add_argument("--narrative", action="store_true",
                   help="add a Gemini-written narrative when GEMINI_API_KEY (or Vertex settings) is present")
    p.add_argument("--max-memory", metavar="SIZE", type=_size,
                   help="RAM for the per-packet arrays (e.g. 512M, 2G; default: NETGHOST_PCAP_MEMORY, else half "
                        "the physical memory); past it they live in temporary files, so captures larger than "
                        "memory are analysed with the same results, only slower")
    f = p.add_argument_group("fleet", "many captures, one report, analysed on a Dask cluster")
    f.add_argument("--fleet", nargs="+", metavar="SOURCE",
                   help="capture files, folders, globs, az://container/prefix or https://ACCOUNT.blob.core.windows.net/"
                        "container/prefix (Blob auth from the environment: AZURE_STORAGE_* or az login)")
    f.add_argument("--scheduler", metavar="ADDRESS",
                   help="an existing Dask scheduler (tcp://host:8786); default: a local cluster")
    f.add_argument("--workers", type=_positive, metavar="N",
                   help="worker processes of the local cluster (default: one per core)")
    p.add_argument("--out", metavar="DIR",
                   help="folder of every output: with one capture (or --compare) its semantic JSON and reports; "
                        "with --fleet the fleet report and each capture's own outputs (default: . , with --fleet "
                        "fleet_report)")
    return p


def _size(text: str) -> int:
    try:
        n = spill.parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 (got {text!r}); e.g. 256M")
    return n


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from exc
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {n})")
    return n


_LEAKY = re.compile(r"\(magic [0-9a-fA-F]+\)")


def _fail(msg: str) -> int:
    """Print the one-line error (exit 2).

    Why the scrub: the seeds' agent relays stderr into an LLM transcript; a message quoting the first
    bytes of a non-capture file (a key, a config) would leak its contents, so byte dumps are removed
    here even if a lower layer adds one back.
    """
    print(f"{PROG}: error: {_LEAKY.sub('(unrecognised magic)', msg)}", file=sys.stderr)
    return 2


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
    if getattr(args, "fleet", None):
        return _run_fleet(args, formats)
    if args.capture is None:
        return _fail("a CAPTURE (or --fleet SOURCE...) is required")
    problem = _single_capture_dirs(args)
    if problem:
        return _fail(problem)
    if args.compare:
        return _run_compare(args)
    path = Path(args.capture)
    try:
        analysis = _analyze(path)
    except CaptureFormatError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{path}: {exc.strerror or exc}")
    try:
        res = write_capture_outputs(path, analysis, semantic_dir=Path(args.semantic_dir),
                                    report_dir=Path(args.report_dir), formats=formats, narrative=args.narrative)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"cannot write outputs: {where}{exc.strerror or exc}")
    for n in res.notices:
        print(f"{PROG}: {n}", file=sys.stderr)
    _print_done(res.sem, res.written)
    return 0


def _single_capture_dirs(args: argparse.Namespace) -> str | None:
    """Settle where one capture's (or a comparison's) outputs go; the error to print, or None.

    ``--out DIR`` puts every output in DIR (the fleet's option, honoured the same way here: a user who
    types it expects the files there, never in the current folder); it cannot be mixed with the two
    finer options, and the fleet-only options are refused rather than silently ignored.
    """
    fleet_only = [name for name, value in (("--scheduler", args.scheduler), ("--workers", args.workers)) if value is not None]
    if fleet_only:
        many = len(fleet_only) > 1
        return f"{' and '.join(fleet_only)} only appl{'y' if many else 'ies'} with --fleet SOURCE...; drop {'them' if many else 'it'}"
    if args.out is not None:
        if args.semantic_dir is not None or args.report_dir is not None:
            return "give --out DIR (every output in DIR) or --semantic-dir/--report-dir, not both"
        args.semantic_dir = args.report_dir = args.out
    args.semantic_dir = "." if args.semantic_dir is None else args.semantic_dir
    args.report_dir = "." if args.report_dir is None else args.report_dir
    return None


def _run_fleet(args: argparse.Namespace, formats: set[str]) -> int:
    if args.capture is not None or args.compare:
        return _fail("--fleet takes its captures as SOURCE arguments; give no CAPTURE or --compare with it")
    if args.semantic_dir is not None or args.report_dir is not None:
        return _fail("--fleet writes every output under --out DIR (each capture's in DIR/captures/); "
                     "drop --semantic-dir/--report-dir")
    from netghost.forensics.fleet import run_fleet_cli  # noqa: PLC0415  dask is imported only for a fleet

    return run_fleet_cli(args.fleet, out=Path(args.out or "fleet_report"), scheduler=args.scheduler, workers=args.workers,
                         formats=formats, max_memory=args.max_memory, prog=PROG)


def _run_compare(args: argparse.Namespace) -> int:
    try:
        from netghost.forensics.compare import run_compare  # noqa: PLC0415  compare mode is optional
    except ImportError:
        return _fail("--compare is not available in this build; analyse each capture alone")
    return int(run_compare(args, PROG, analyze=_analyze))


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
