"""The reports people look at, opened in a real browser (headless Chromium over the DevTools protocol).

Two lab investigations with a capture each (their HTML RCA and forensic report) and the RCA of a
dual-end one, one two-point compare report, a real capture's forensic report (a corpus capture in
bursts years apart) and a fleet report over corpus captures: every chart drawn (a laid-out SVG holding
data, every image decoded), the page no wider than 1280 px (no horizontal scrolling at that width), no
console error, nothing fetched, every audit link lands on a record in the same page. Screenshots of the
top of each page are taken, and one of the dual-end RCA's chart sections (below its fold); with
``REPORT_SCREENSHOTS_DIR`` set they are also written there (docs/screenshots).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from netghost.forensics import analyze_capture, build_semantic
from netghost.forensics.compare import write_compare_outputs
from netghost.forensics.fleet import run_fleet_cli
from netghost.forensics.report import write_html_report
from netghost.governance import replay_latest
from tests.agent.lab_capture import investigate
from tests.browser.cdp import Browser, find_chromium

DATA = Path(__file__).resolve().parent.parent / "data"
PAIRS = DATA / "pairs"
REAL = DATA / "pcaps" / "ndpi_1kxun.pcap"  # traffic in bursts, the last ones 5.8 years after the first
FLEET = ("chrissanders_ppa1e_ftp-crack.pcap", "chrissanders_tcp_retransmissions.pcapng", "chrissanders_synscan.pcapng",
         "zeek_smtp.pcap")
WIDTH = 1280
SHOTS = os.environ.get("REPORT_SCREENSHOTS_DIR")  # read at import: the autouse fixture scrubs nothing here
WORLDS = ("nsg-deny", "path-packet-loss")
PNG = b"\x89PNG\r\n\x1a\n"

_CHECK = """(() => {
  const charts = [...document.querySelectorAll('svg.chart')].map(s => {
    const box = s.getBoundingClientRect(), inner = s.getBBox();
    const data = [...s.querySelectorAll('[id^="ghost-data-"]')].map(d => d.getBBox()).filter(b => b.width + b.height > 0);
    return {label: s.getAttribute('aria-label'), w: box.width, h: box.height, iw: inner.width, ih: inner.height,
            texts: s.querySelectorAll('text').length, data: data.length,
            ladder: /ladder/i.test(s.getAttribute('aria-label') || '')};
  });
  const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > innerWidth + 1)
    .slice(0, 5).map(e => e.tagName + (e.className && e.className.baseVal === undefined ? '.' + e.className : ''));
  const images = [...document.images].map(i => ({w: i.naturalWidth, h: i.naturalHeight, done: i.complete}));
  const links = [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href').slice(1));
  const targets = links.map(id => document.getElementById(id));
  const external = [...document.querySelectorAll('[src],[href]')].map(e => e.getAttribute('src') || e.getAttribute('href'))
    .filter(u => !u.startsWith('#') && !u.startsWith('data:'));
  const sections = [...document.querySelectorAll('h4')].filter(h => h.textContent.startsWith('Charts:')).map(h => {
    let n = 0;
    for (let e = h.nextElementSibling; e && !/^H[1-4]$/.test(e.tagName); e = e.nextElementSibling)
      n += e.querySelectorAll('svg.chart').length;
    return {title: h.textContent, charts: n};
  });
  return {charts, sections, images, links: links.length, missing: links.filter((id, k) => !targets[k]),
          notRecords: targets.filter(t => t && !t.classList.contains('record')).length, external,
          fetched: performance.getEntriesByType('resource').length, title: document.title,
          scrollWidth: document.documentElement.scrollWidth, innerWidth: innerWidth, wide};
})()"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> page: the RCA and the forensic report of each lab world, a dual-end RCA and its compare
    report, one compare report of a real pair, a real capture's report and a fleet report."""
    root = tmp_path_factory.mktemp("pages")
    out: dict[str, Path] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(root / "home"))
        mp.setenv("XDG_CONFIG_HOME", str(root / "home" / ".config"))
        for world in WORLDS:
            audit = root / world / "audit"
            sid = investigate(world, audit, mp)
            out[f"rca_{world}"] = audit / f"ghost_rca_{sid}.html"
            (task,) = replay_latest(audit / f"orchestrator_tasks_{sid}.jsonl", "task_id").values()
            out[f"forensic_{world}"] = Path(task["report_path"].replace("_forensic_report.md", "_forensic_report.html"))
        audit = root / "dual" / "audit"
        sid = investigate("path-packet-loss", audit, mp, peer="redis-primary")
        out["rca_dual-end"] = audit / f"ghost_rca_{sid}.html"
    res = write_compare_outputs(PAIRS / "chrissanders_ppa2e_http_espn_A.pcap", PAIRS / "chrissanders_ppa2e_http_espn_B.pcap",
                                semantic_dir=root / "compare", report_dir=root / "compare", formats={"html"})
    (out["compare_http_espn"],) = res.written
    an = analyze_capture(REAL)
    out["forensic_real_1kxun"] = root / "real" / "ndpi_1kxun_forensic_report.html"
    out["forensic_real_1kxun"].parent.mkdir()
    write_html_report(out["forensic_real_1kxun"], build_semantic(an), an)
    src = root / "fleet_in"
    src.mkdir()
    for name in FLEET:
        shutil.copyfile(DATA / "pcaps" / name, src / name)
    for name in ("chrissanders_ppa2e_http_espn_A.pcap", "chrissanders_ppa2e_http_espn_B.pcap"):  # two points, shared flows
        shutil.copyfile(PAIRS / name, src / name)
    code = run_fleet_cli([str(src)], out=root / "fleet", scheduler=None, workers=1, formats={"html"}, max_memory=None)
    assert code == 0
    out["fleet"] = root / "fleet" / "fleet_report.html"
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    binary = find_chromium()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: .ci/run installs Debian's chromium package")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    b = Browser(binary, tmp_path_factory.mktemp("chromium-profile"), width=WIDTH)
    yield b
    b.close()


_CHART_REGION = """(() => {
  const heads = [...document.querySelectorAll('h4')].filter(h => h.textContent.startsWith('Charts:'));
  if (!heads.length) return null;
  const top = heads[0].getBoundingClientRect().top + scrollY - 8;
  const last = heads[heads.length - 1];
  let bottom = last.getBoundingClientRect().bottom;
  for (let e = last.nextElementSibling; e && !/^H[1-4]$/.test(e.tagName); e = e.nextElementSibling)
    bottom = Math.max(bottom, e.getBoundingClientRect().bottom);
  return [top, bottom + scrollY + 8 - top];
})()"""
MAX_SHOT_HEIGHT = 6000  # a region screenshot taller than this is cut (a PNG of the docs stays small)


def _checked(browser: Browser, page: Path, shot: Path, charts_shot: Path | None = None) -> dict[str, Any]:
    """The page's checks, its console errors and a screenshot of its top; with ``charts_shot`` also one of
    its chart sections (below the fold of an RCA: the part a top-of-page screenshot never shows)."""
    browser.open(page.as_uri())
    found: dict[str, Any] = browser.evaluate(_CHECK)
    found["errors"] = browser.console_errors()
    found["png"] = browser.screenshot(shot)
    if charts_shot is not None:
        region = browser.evaluate(_CHART_REGION)
        assert region is not None, page
        found["charts_png"] = browser.screenshot(charts_shot, (region[0], min(region[1], MAX_SHOT_HEIGHT)))
    return found


def _png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


@pytest.mark.slow
def test_reports_render_in_chromium(pages: dict[str, Path], browser: Browser, tmp_path: Path) -> None:
    seen = {}
    chartless: list[str] = []
    for name, page in pages.items():
        assert page.is_file(), name
        charts_shot = tmp_path / f"{name}_charts.png" if name == "rca_dual-end" else None
        found = _checked(browser, page, tmp_path / f"{name}.png", charts_shot)
        seen[name] = found
        assert found["errors"] == [], (name, found["errors"])
        assert found["external"] == [] and found["fetched"] == 0, name  # self-contained: nothing loaded
        assert found["scrollWidth"] <= WIDTH and found["innerWidth"] == WIDTH, (name, found["scrollWidth"], found["wide"])
        if not found["charts"] and name != "fleet":  # every capture's charts reach its report (checked last)
            chartless.append(name)
        for chart in found["charts"]:  # drawn: a laid-out box with drawn content, real text and data in it
            assert chart["w"] > 100 and chart["h"] > 50 and chart["iw"] > 0 and chart["ih"] > 0, (name, chart)
            assert chart["texts"] > 0, (name, chart)
            assert chart["data"] > 0 or chart["ladder"], (name, chart)  # a plot holds data (a ladder: its arrows)
        assert all(i["done"] and i["w"] > 0 and i["h"] > 0 for i in found["images"]), (name, found["images"])
        assert found["png"].startswith(PNG) and len(found["png"]) > 20_000, name  # a screenshot with content
        if name.startswith("rca_"):
            assert found["links"] > 0 and found["missing"] == [] and found["notRecords"] == 0, (name, found)
    sections = seen["rca_dual-end"]["sections"]  # each end's capture and the comparison, each with its charts
    assert len(sections) == 3 and all(s["charts"] > 0 for s in sections), sections
    assert sum(s["title"].startswith("Charts: This end") for s in sections) == 2, sections
    charts_png = seen["rca_dual-end"]["charts_png"]  # the docs' picture of those charts: drawn, page-wide, small
    width, height = _png_size(charts_png)
    assert charts_png.startswith(PNG) and width == WIDTH and 500 < height <= MAX_SHOT_HEIGHT, (width, height)
    assert len(charts_png) < 1_000_000, len(charts_png)
    labels = {name: [c["label"] for c in f["charts"]] for name, f in seen.items()}
    assert any("Sequence graph" in lab for labs in labels.values() for lab in labs)  # a flow with data
    assert any("Handshake ladder" in lab for labs in labels.values() for lab in labs)  # a flow without
    assert len(labels["compare_http_espn"]) == 3  # sequence graph, timeline, one-way delay
    assert seen["fleet"]["title"].startswith("Fleet")
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        for name in [*pages, "rca_dual-end_charts"]:
            shutil.copyfile(tmp_path / f"{name}.png", Path(SHOTS) / f"{name}.png")
    assert chartless == [], f"pages with no chart: {chartless}"
