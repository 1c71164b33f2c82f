"""The outputs of one capture on disk: their names, their atomic writing, and the md/json/html set.

Why a module of its own: the single-capture CLI and the fleet (``fleet/``) write the same files with
the same bytes, so both call :func:`write_capture_outputs`; neither imports the other.

Every file is written to a temporary file in its target folder and renamed over the target
(:func:`write_atomic`): a reader, or a second run writing into the same folder, never sees a torn
document. ``x.pcap`` and ``x.pcapng`` analysed into one folder would share the stem ``x``; the second
one is named ``x_pcapng`` instead of overwriting the first one's outputs (:func:`output_stem`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netghost.forensics.engine import Analysis
from netghost.forensics.report import build_semantic, render_executive_summary, render_report

__all__ = ["CaptureOutputs", "Rendered", "capture_stem", "output_stem", "render_outputs", "semantic_text",
           "write_atomic", "write_capture_outputs", "write_via_temp"]

CAPTURE_EXTS = (".gz", ".pcapng", ".pcap", ".cap", ".dmp")


def capture_stem(name: str) -> str:
    """File name without capture extensions (``x.pcapng.gz`` → ``x``)."""
    for ext in CAPTURE_EXTS:
        if name.lower().endswith(ext):
            name = name[: -len(ext)]
    return name or "capture"


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to a temporary file beside ``path``, then rename it over ``path``.

    Raises:
        OSError: the folder or the file cannot be written (the temporary file is removed).
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would differ from what a plain write leaves
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _written_for(sdir: Path, rdir: Path, stem: str) -> str | None:
    """Name of the capture whose outputs already use ``stem`` in these folders (None: none do)."""
    sem = sdir / f"{stem}_semantic.json"
    if sem.is_file():
        try:
            return str(json.loads(sem.read_text(encoding="utf-8"))["capture"]["file"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
    summ = rdir / f"{stem}_executive_summary.md"
    if summ.is_file():
        try:
            first = summ.read_text(encoding="utf-8").split("\n", 1)[0]
        except OSError:
            return None
        head = "# Executive summary: "
        return first[len(head):] if first.startswith(head) else None
    return None


def output_stem(name: str, semantic_dir: Path, report_dir: Path) -> str:
    """The stem for capture ``name``'s outputs: :func:`capture_stem`, unless another capture's outputs
    (``x.pcap`` next to ``x.pcapng``) already use it in these folders; then the name with its dots made
    underscores (``x_pcapng``), so neither overwrites the other."""
    stem = capture_stem(name)
    owner = _written_for(semantic_dir, report_dir, stem)
    if owner is None or owner == name:
        return stem
    return name.replace(".", "_")


def semantic_text(sem: dict[str, Any]) -> str:
    """The semantic JSON file's text (one format for every writer)."""
    return json.dumps(sem, indent=1, ensure_ascii=False) + "\n"


@dataclass
class Rendered:
    """The Markdown forensic report, with the narrative (and its model) folded in when one was written."""

    markdown: str
    story: str | None = None
    model: str | None = None


def render_outputs(sem: dict[str, Any], *, narrative: bool, notices: list[str]) -> Rendered:
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
    return Rendered(report, story, model)


@dataclass
class CaptureOutputs:
    """What :func:`write_capture_outputs` produced: the document, the files written, notices for stderr."""

    sem: dict[str, Any]
    written: list[Path] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def write_capture_outputs(path: Path, analysis: Analysis, *, semantic_dir: Path, report_dir: Path,
                          formats: Iterable[str], narrative: bool = False) -> CaptureOutputs:
    """Build the semantic document of ``analysis`` (of the capture ``path``) and write the asked formats.

    Args:
        path: the capture file (its name and size go into the document).
        analysis: the capture's analysis.
        semantic_dir: folder of ``{stem}_semantic.json``.
        report_dir: folder of the Markdown (and HTML) reports.
        formats: subset of {"md", "json", "html"}.
        narrative: add the optional Gemini narrative.

    Raises:
        OSError: an output folder or file cannot be written; its ``filename`` names the path.
    """
    formats = set(formats)
    sem = build_semantic(analysis, path.stat().st_size)
    res = CaptureOutputs(sem=sem, notices=[f"warning: {w}" for w in analysis.info.warnings])
    rendered = render_outputs(sem, narrative=narrative, notices=res.notices)
    sdir, rdir = Path(semantic_dir), Path(report_dir)
    stem = output_stem(path.name, sdir, rdir)
    if stem != capture_stem(path.name):
        res.notices.append(f"outputs named {stem}_* (another capture's outputs already use {capture_stem(path.name)}_*)")
    if "json" in formats:
        _mkdir(sdir)
        out = sdir / f"{stem}_semantic.json"
        write_atomic(out, semantic_text(sem))
        res.written.append(out)
    if "md" in formats:
        _mkdir(rdir)
        for suffix, text in (("forensic_report", rendered.markdown), ("executive_summary", render_executive_summary(sem))):
            out = rdir / f"{stem}_{suffix}.md"
            write_atomic(out, text)
            res.written.append(out)
    if "html" in formats:
        _mkdir(rdir)
        res.notices += _write_html(rdir / f"{stem}_forensic_report.html", sem, analysis, rendered, res.written)
    return res


def _mkdir(d: Path) -> None:
    """Create an output folder; an error names the folder (``OSError.filename``)."""
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(d)
        raise
    if not d.is_dir():
        raise NotADirectoryError(20, "Not a directory", str(d))


def _write_html(out: Path, sem: dict[str, Any], analysis: Analysis, rendered: Rendered, written: list[Path]) -> list[str]:
    """HTML report with charts (matplotlib optional); returns its notices."""
    try:
        from netghost.forensics.report import write_html_report  # noqa: PLC0415  optional matplotlib
    except ImportError:
        return ["--format html is not available in this build; wrote md/json only"]
    return write_via_temp(out, lambda tmp: write_html_report(tmp, sem, analysis, markdown=rendered.markdown,
                                                             narrative=rendered.story, model=rendered.model), written)


def write_via_temp(out: Path, write: Callable[[Path], Iterable[str]], written: list[Path]) -> list[str]:
    """Let ``write`` write a temporary file beside ``out``, then rename it over ``out`` (appended to
    ``written``); for writers that take a path. Returns ``write``'s notices."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        notices = list(write(tmp))
        if tmp.stat().st_size:
            os.chmod(tmp, 0o644)
            os.replace(tmp, out)
            written.append(out)
    finally:
        tmp.unlink(missing_ok=True)
    return notices
