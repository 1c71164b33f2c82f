"""The fleet run: submit every capture to Dask, write each one's outputs as it finishes, compare the
capture points that share flows, then write the fleet report.

Layout under ``--out DIR``: ``fleet_semantic.json``, ``fleet_report.md``, ``fleet_report.html``;
``captures/<id>/`` holds each capture's own outputs (the single-capture CLI's files, byte for byte);
``pairs/<A>_vs_<B>/`` each compared pair's two-point outputs. Every file is written atomically.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netghost.errors import CaptureFormatError
from netghost.forensics.fleet._cluster import dask_client
from netghost.forensics.fleet._html import render_fleet_html
from netghost.forensics.fleet._paths import PointPair, match_points, path_orders
from netghost.forensics.fleet._report import build_fleet_semantic, render_fleet_markdown
from netghost.forensics.fleet._sources import Source, expand_sources
from netghost.forensics.fleet._task import CaptureResult, PairResult, analyse_source, compare_pair
from netghost.forensics.outputs import semantic_text, write_atomic

__all__ = ["FleetResult", "run_fleet", "run_fleet_cli"]

ProgressFn = Callable[[CaptureResult, int, int], None]
FLEET_FILES = ("fleet_semantic.json", "fleet_report.md", "fleet_report.html")


@dataclass
class FleetResult:
    """What :func:`run_fleet` produced: the fleet document, every capture's result, the files written."""

    doc: dict[str, Any]
    results: list[CaptureResult]
    pairs: list[tuple[PointPair, PairResult | None]]
    written: list[Path] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 every capture analysed, 1 some failed, 2 none analysed."""
        ok = self.doc["fleet"]["analysed"]
        return 0 if ok == len(self.results) else 1 if ok else 2


def _write_dir(d: Path, files: dict[str, bytes], written: list[Path]) -> None:
    d.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        write_atomic(d / name, data)
        written.append(d / name)


def _lost(src: Source, exc: BaseException) -> CaptureResult:
    """A capture whose task itself failed (its worker died more than Dask allows, the cluster went away)."""
    return CaptureResult(id=src.id, uri=src.uri, name=src.name, ok=False, error=f"{type(exc).__name__}: {exc}")


def run_fleet(sources: list[Source], client: Any, *, out: Path, formats: set[str] | None = None,
              max_memory: int | None = None, run_info: dict[str, Any] | None = None,
              progress: ProgressFn | None = None, task: Callable[..., CaptureResult] = analyse_source,
              pair_task: Callable[..., PairResult] = compare_pair) -> FleetResult:
    """Analyse ``sources`` on ``client``'s cluster and write the fleet outputs under ``out``.

    Args:
        sources: the captures (:func:`expand_sources`).
        client: a ``distributed.Client``.
        out: the output folder.
        formats: each capture's own outputs (md, json, html); the fleet report is always md, json and html.
        max_memory: the engine's memory budget on each worker (bytes).
        run_info: recorded in the document's ``run`` (sources, scheduler, workers).
        progress: called with each finished capture's result, the count finished and the total.
        task: the per-capture task (default :func:`analyse_source`; tests wrap it).
        pair_task: the per-pair task (default :func:`compare_pair`).

    Raises:
        OSError: an output cannot be written (``filename`` names it).
    """
    from dask.distributed import as_completed  # noqa: PLC0415  only a fleet imports dask

    t0 = time.perf_counter()
    fmts = tuple(sorted((formats or {"md", "json"}) & {"md", "json", "html"}))
    written: list[Path] = []
    out.mkdir(parents=True, exist_ok=True)
    futures = {client.submit(task, s, fmts, max_memory, key=f"capture-{i}-{s.id}", pure=False): s
               for i, s in enumerate(sources)}
    results: dict[str, CaptureResult] = {}
    for fut in as_completed(list(futures)):  # type: ignore[no-untyped-call]
        src = futures[fut]
        try:
            r = fut.result()
        except Exception as exc:  # a task that Dask gave up on (KilledWorker, ...): reported, the rest go on
            r = _lost(src, exc)
        if r.ok:
            _write_dir(out / "captures" / r.id, r.outputs, written)
            r.outputs = dict.fromkeys(r.outputs, b"")  # names only from here on: the bytes are on disk
        results[r.id] = r
        if progress is not None:
            progress(r, len(results), len(sources))
    ordered = [results[s.id] for s in sources]
    flows = {r.id: r.flows for r in ordered if r.ok}
    by_id = {s.id: s for s in sources}
    matched = match_points(flows)
    pair_futs = [client.submit(pair_task, by_id[pp.a], by_id[pp.b], fmts, max_memory, key=f"pair-{pp.a}-{pp.b}", pure=False)
                 for pp in matched]
    pairs: list[tuple[PointPair, PairResult | None]] = []
    for pp, fut in zip(matched, pair_futs, strict=True):
        try:
            pr: PairResult | None = fut.result()
        except Exception as exc:  # as for captures: reported in the pair's row
            pr = PairResult(a=pp.a, b=pp.b, ok=False, error=f"{type(exc).__name__}: {exc}")
        if pr is not None and pr.ok:
            _write_dir(out / "pairs" / f"{pp.a}_vs_{pp.b}", pr.outputs, written)
        pairs.append((pp, pr))
    info = {"sources": [], "scheduler": "local", "workers": 0, **(run_info or {}),
            "wall_s": round(time.perf_counter() - t0, 3)}
    doc = build_fleet_semantic(ordered, pairs, path_orders(flows), info)
    for name, text in zip(FLEET_FILES, (semantic_text(doc), render_fleet_markdown(doc), render_fleet_html(doc)), strict=True):
        write_atomic(out / name, text)
        written.append(out / name)
    return FleetResult(doc=doc, results=ordered, pairs=pairs, written=written)


@contextmanager
def _quiet_dask() -> Iterator[None]:
    """Keep distributed's INFO/WARNING chatter (worker start, a worker's death) off the user's stderr:
    the fleet reports those outcomes itself."""
    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def _line_progress(prog: str) -> ProgressFn:
    def show(r: CaptureResult, done: int, total: int) -> None:
        what = f"ok ({r.seconds:.2f} s)" if r.ok else f"FAILED: {r.error}"
        print(f"{prog}: [{done}/{total}] {r.id}: {what}", file=sys.stderr, flush=True)
    return show


def run_fleet_cli(specs: list[str], *, out: Path, scheduler: str | None, workers: int | None,
                  formats: set[str], max_memory: int | None, prog: str = "pcap-forensics") -> int:
    """``pcap-forensics --fleet``: expand the sources, run the fleet, print where the report is.

    Exit 0 when every capture was analysed, 1 when some failed (listed in the report), 2 when none
    could be analysed or the sources or output folder are unusable.
    """
    try:
        sources = expand_sources(specs)
    except CaptureFormatError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # Blob Storage unreachable or refused (credentials come from the environment)
        print(f"{prog}: error: cannot list the sources: {exc}", file=sys.stderr)
        return 2
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"{prog}: error: cannot write outputs: {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    run_info: dict[str, Any] = {"sources": list(specs), "scheduler": scheduler or "local"}
    try:
        with _quiet_dask(), dask_client(scheduler, workers) as client:
            run_info["workers"] = len(client.scheduler_info().get("workers", {}))
            if sys.stderr.isatty():
                from rich.console import Console  # noqa: PLC0415
                from rich.progress import Progress  # noqa: PLC0415

                with Progress(console=Console(file=sys.stderr), transient=True) as bar:
                    tid = bar.add_task(f"analysing {len(sources)} captures", total=len(sources))

                    def show(r: CaptureResult, done: int, total: int) -> None:
                        bar.update(tid, completed=done, description=f"{r.id} {'ok' if r.ok else 'FAILED'}")
                    res = run_fleet(sources, client, out=out, formats=formats, max_memory=max_memory,
                                    run_info=run_info, progress=show)
            else:
                res = run_fleet(sources, client, out=out, formats=formats, max_memory=max_memory, run_info=run_info,
                                progress=_line_progress(prog))
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{prog}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    f = res.doc["fleet"]
    top = res.doc["captures"][0] if res.doc["captures"] else None
    head = f"; most trouble: {top['id']} (score {top['trouble_score']})" if top and top["trouble_score"] > 0 else ""
    print(f"fleet: {f['captures']} captures, {f['analysed']} analysed, {f['failed']} failed, "
          f"{len(res.doc['pairs'])} capture-point pairs compared{head}")
    for r in res.results:
        if not r.ok:
            print(f"{prog}: failed: {r.id}: {r.error}", file=sys.stderr)
    for name in FLEET_FILES:
        print(f"wrote {out / name}")
    return res.exit_code
