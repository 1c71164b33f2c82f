"""The HTML RCA of a lab investigation with a capture: links, records, chains, artifacts, charts; regenerated."""

from __future__ import annotations

import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from netghost.agent._rca_html import _UNSAFE_SVG
from netghost.agent.cli import main
from netghost.governance import read_wal, replay_latest, verify
from tests.agent.lab_capture import investigate


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.external: list[str] = []
        self.svgs = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        href = a.get("href") or ""
        if href.startswith("#"):
            self.links.append(href[1:])
        elif href or (a.get("src") and not str(a["src"]).startswith("data:")):
            self.external.append(href or str(a["src"]))
        self.svgs += tag == "svg"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    audit = tmp_path_factory.mktemp("rca") / "audit"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(audit.parent / "home"))
        mp.setenv("XDG_CONFIG_HOME", str(audit.parent / "home" / ".config"))
        return audit, investigate("nsg-deny", audit, mp)


def _parse(path: Path) -> tuple[str, _Page]:
    text = path.read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    return text, page


@pytest.mark.slow
def test_the_html_rca_cites_links_and_verifies(session: tuple[Path, str]) -> None:
    audit, sid = session
    path = audit / f"ghost_rca_{sid}.html"
    text, page = _parse(path)
    records = read_wal(audit / f"shell_audit_{sid}.jsonl").records
    assert page.external == []  # self-contained
    assert page.links and set(page.links) <= page.ids  # every citation resolves to a record on the page
    assert {r["audit_id"] for r in records} <= page.ids  # and every record is rendered
    assert set(re.findall(r"ghost_\d{8}_\d{6}_\d{3}", text)) <= {r["audit_id"] for r in records}
    summary = text.split("<h2>Investigation Summary</h2>", 1)[1].split("<h2>", 1)[0]
    assert re.search(r'<p>The capture \S+ shows the flow failing; see <a href="#ghost_\d{8}_\d{6}_\d{3}">', summary)
    report = verify(audit / f"shell_audit_{sid}.jsonl")
    chains = text.split('<table id="chains">', 1)[1].split("</table>", 1)[0]
    assert f"<td>{report.records}</td>" in chains and report.head_sha256 in chains and "intact" in chains
    (task,) = replay_latest(audit / f"orchestrator_tasks_{sid}.jsonl", "task_id").values()
    folder = Path(task["report_path"]).parent
    for artifact, digest in task["artifact_hashes"].items():  # names inside the task's artifacts folder
        assert digest in text  # the chain of custody stays in the report
        if artifact.endswith(".cap"):  # the capture itself was removed by the session's cleanup
            assert not (folder / artifact).exists() and task["cleanup_status"] == "completed"
            continue
        assert digest == "sha256:" + hashlib.sha256((folder / artifact).read_bytes()).hexdigest()
    assert page.svgs >= 2  # the capture's forensic charts are inlined
    assert "Handshake ladder of the worst flow" in text  # nsg-deny: SYNs never answered
    assert "Executive summary (read by" in text and "SYN to 10.1.2.4:6379" in text


@pytest.mark.slow
def test_report_regenerates_the_same_page_from_the_trail(session: tuple[Path, str], monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    audit, sid = session
    monkeypatch.setenv("HOME", str(audit.parent / "home"))  # the audit key the run signed its chains with
    monkeypatch.setenv("XDG_CONFIG_HOME", str(audit.parent / "home" / ".config"))
    path = audit / f"ghost_rca_{sid}.html"
    before = path.read_text(encoding="utf-8")
    path.unlink()
    assert main(["report", sid, "--audit-dir", str(audit)]) == 0
    assert capsys.readouterr().out.strip() == str(path)
    after = path.read_text(encoding="utf-8")
    dated = re.compile(r"Generated \S+ ")
    assert dated.sub("", after) == dated.sub("", before)
    assert main(["report", "ghost_20000101_000000", "--audit-dir", str(audit)]) == 2


@pytest.mark.parametrize(("figure", "unsafe"), [
    ('<use xlink:href="#m1a2" x="1"/>', False), ('<g clip-path="url(#p1)">', False), ("<use href='#ok'/>", False),
    ('<use xlink:href="https://evil.example/x"/>', True), ("<a href=x>", True), ('<g onload="x">', True),
    ('<rect fill="url(https://evil.example/f)"/>', True), ("<script>alert(1)</script>", True),
    ("<foreignObject><img src=x></foreignObject>", True), ('<style>@import "https://evil.example/c.css"</style>', True),
])
def test_a_chart_that_could_act_or_fetch_is_not_inlined(figure: str, unsafe: bool) -> None:
    """The charts are the only markup the page takes from a file: the engine's SVG refers only to itself."""
    assert bool(_UNSAFE_SVG.search(f"<figure><svg>{figure}</svg></figure>")) is unsafe


@pytest.fixture(scope="module")
def dual(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    audit = tmp_path_factory.mktemp("dual") / "audit"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(audit.parent / "home"))
        mp.setenv("XDG_CONFIG_HOME", str(audit.parent / "home" / ".config"))
        return audit, investigate("path-packet-loss", audit, mp, peer="redis-primary")


def _chart_sections(text: str) -> dict[str, int]:
    """``<h4>Charts: ...</h4>`` heading -> the number of inlined SVG charts under it (to the next heading)."""
    parts = re.split(r"<h4>Charts: (.*?)</h4>", text)
    return {title: len(re.findall(r"<svg\b[^>]*class=\"chart\"", re.split(r"<h[1-4]\b", body, maxsplit=1)[0]))
            for title, body in zip(parts[1::2], parts[2::2], strict=True)}


@pytest.mark.slow
def test_a_dual_end_rca_holds_the_charts_of_both_captures_and_their_comparison(
        dual: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each end's own report and the comparison, drawn through the shell before the cleanup removed the
    pcaps, each page's hash kept in the journal; an edited page is refused when the report is written again."""
    audit, sid = dual
    text = (audit / f"ghost_rca_{sid}.html").read_text(encoding="utf-8")
    tasks = replay_latest(audit / f"orchestrator_tasks_{sid}.jsonl", "task_id")
    ends = sorted(Path(t["local_pcap_path"]).name for t in tasks.values())
    sections = _chart_sections(text)
    assert sorted(sections) == sorted([*(f"This end&#x27;s capture ({name})" for name in ends), "The two ends compared"])
    assert all(n > 0 for n in sections.values()), sections
    assert "One-way delay between the capture points" in text.split("<h4>Charts: The two ends compared</h4>", 1)[1]
    drawn = [r for r in read_wal(audit / f"ghost_turns_{sid}.jsonl").records if r.get("kind") == "chart_drawn"]
    assert len(drawn) == 3 and all(Path(r["path"]).is_file() for r in drawn)
    assert text.count("Hash matches the journal&#x27;s record of its drawing.") == 3
    records = {r["audit_id"]: r for r in read_wal(audit / f"shell_audit_{sid}.jsonl").records}
    assert all(records[r["audit_id"]]["command"].startswith("pcap-forensics ") for r in drawn)
    assert all(not Path(t["local_pcap_path"]).exists() for t in tasks.values())  # cleaned up after drawing
    monkeypatch.setenv("HOME", str(audit.parent / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(audit.parent / "home" / ".config"))
    page = Path(drawn[0]["path"])
    page.write_text(page.read_text(encoding="utf-8").replace("</svg>", "<!-- edited --></svg>", 1), encoding="utf-8")
    assert main(["report", sid, "--audit-dir", str(audit)]) == 0
    again = (audit / f"ghost_rca_{sid}.html").read_text(encoding="utf-8")
    assert "Not inlined: its hash does not match the record." in again
    assert sum(_chart_sections(again).values()) < sum(sections.values())
