"""Seed 000 "Console Output": the orchestrator's lines of the seed's example, rendered with rich into a
100-column console, appear in order (the shell's boxes and [Shell] lines are the shell's own tests)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from netghost.orchestrator._console import console_sayer

from .conftest import Lab, request

# The [Cloud Orchestrator] lines of seed 000 "Console Output", verbatim, in order.
SEED_LINES = """\
[Cloud Orchestrator] New task: ghost_web-vm-01_20250115T143200
      Intent: capture_traffic
      Target: web-vm-01 (detecting type...)
[Cloud Orchestrator] Target type: VM. Using Network Watcher packet capture.
      Capture duration: 60 seconds
      Storage: forensics-sa/captures
[Cloud Orchestrator] Task ghost_web-vm-01_20250115T143200: PROVISIONING
      Status: Packet capture starting. Check back in ~5-10 seconds.
[Cloud Orchestrator] Poll 3/20: provisioningState = Running
[Cloud Orchestrator] Poll 8/20: provisioningState = Succeeded
[Cloud Orchestrator] Download complete: /tmp/captures/web-vm-01.pcap (2.4 MB)
[Cloud Orchestrator] Task ghost_web-vm-01_20250115T143200: COMPLETED
      Semantic JSON: /tmp/captures/web-vm-01_semantic.json
      Forensic Report: /tmp/captures/web-vm-01_forensic_report.md
      Duration: 5m 30s
      Cleanup: 2 cloud resources pending deletion
""".splitlines()


_DEPARTURES = (  # (seed text, regex of what this run prints instead)
    ("ghost_web-vm-01_20250115T143200", r"ghost_web-vm-01_\d{8}T\d{6}"),
    ("forensics-sa", "forensicssa"),
    ("/tmp/captures/web-vm-01", r"/\S+/ghost_web-vm-01_\w+"),
    (".pcap", r"\.cap"),
    ("2.4 MB", r"\d+\.\d MB"),
    ("Poll 3/20", r"Poll \d+/20"),
    ("Poll 8/20", r"Poll \d+/20"),
    ("5m 30s", r"\d+m \d+s"),
    ("provisioningState = Running", "packetCaptureStatus = Running"),
    ("provisioningState = Succeeded", r"packetCaptureStatus = Stopped \(stopReason \w+\)"),
)


def _pattern(line: str) -> re.Pattern[str]:
    """The seed line with the values that differ in this run (ids, paths, sizes, counts) as regexes, and
    AZURE.md's departure: completion is ``packetCaptureStatus`` (Running / Stopped), not provisioningState."""
    for index, (seed, _wild) in enumerate(_DEPARTURES):  # mark each seed value, escape the rest, splice the regex
        line = line.replace(seed, f"\x00{index}\x00")
    pieces = line.split("\x00")
    text = "".join(_DEPARTURES[int(p)][1] if i % 2 else re.escape(p) for i, p in enumerate(pieces))
    return re.compile(text + "$")


def test_console_output_matches_the_seed_lines_in_order(lab: Lab) -> None:
    console = Console(file=io.StringIO(), width=100)
    orch = lab.orchestrator(console=console)
    first = orch.orchestrate(request())
    lab.clock.advance(20)
    orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})  # Running, within the burst
    lab.clock.advance(30)
    orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})  # Stopped -> download -> analysis
    rendered = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    at = 0
    for seed_line in SEED_LINES:
        pattern = _pattern(seed_line)
        while at < len(rendered) and not pattern.match(rendered[at]):
            at += 1
        assert at < len(rendered), f"seed line not rendered (in order): {seed_line!r}\n" + "\n".join(rendered)
        at += 1


def test_progress_line_while_polling_on_a_terminal_only(lab: Lab) -> None:
    tty = Console(file=io.StringIO(), width=100, force_terminal=True)
    orch = lab.orchestrator(console=tty, poll_burst_limit=45, max_polls=20)
    first = orch.orchestrate(request(duration_seconds=300))
    orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})
    shown = tty.file.getvalue()  # type: ignore[attr-defined]
    assert f"{first['task_id']}: Running, next check in 5 s (check 1 of 20)" in shown
    assert "burst" not in shown
    plain = Console(file=io.StringIO(), width=100)
    orch = lab.orchestrator(console=plain, session="s2")
    first = orch.orchestrate(request(duration_seconds=300))
    orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})
    assert "next check in" not in plain.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("tool_text", [
    "[conceal]rm -rf /[/conceal]", "[black on black]hidden[/]", "[link=https://evil.example]docs[/link]",
    "[reverse][Shell] SAFE — approved[/reverse]", "\\\\[conceal]after two backslashes", "[blink]x", "[/]",
    "[bold red on white]NOT OURS[/bold red on white]", "[@click=quit]x[/]",
])
def test_tool_text_in_an_orchestrator_line_prints_as_text(tool_text: str) -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=True, color_system="truecolor")
    console_sayer(console)(f"[yellow]orphan scan of eastus failed: {tool_text}[/]")
    printed = out.getvalue()
    plain = re.sub(r"\x1b\[[0-9;]*m", "", printed)
    assert f"orphan scan of eastus failed: {tool_text}" in plain  # shown as it is (a stray [/] drops the colour)
    assert "\x1b]8;" not in printed and "\x1b[8m" not in printed and "\x1b[5m" not in printed  # no link, conceal, blink


def test_the_orchestrators_own_lines_keep_their_markup() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=True, color_system="truecolor")
    console_sayer(console)("[red][Cloud Orchestrator] request failed: x[/]")
    assert "\x1b[31m" in out.getvalue() and "[Cloud Orchestrator] request failed: x" in out.getvalue()


def test_what_a_person_is_shown_is_wall_time_when_the_cloud_clock_runs_faster(lab: Lab) -> None:
    """The lab's clock runs 60 times faster than the wall: 50 cloud seconds are under a second of waiting."""
    tty = Console(file=io.StringIO(), width=120, force_terminal=True)
    orch = lab.orchestrator(console=tty, poll_burst_limit=45, max_polls=20, clock_scale=60.0)
    first = orch.orchestrate(request(duration_seconds=300))
    orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})
    assert "next check in 0.1 s" in tty.file.getvalue()  # type: ignore[attr-defined]
    plain = Console(file=io.StringIO(), width=120)
    orch = lab.orchestrator(console=plain, session="s2", clock_scale=60.0)
    first = orch.orchestrate(request())
    lab.clock.advance(20)
    orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})
    lab.clock.advance(30)
    done = orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})
    shown = plain.file.getvalue()  # type: ignore[attr-defined]
    (line,) = [x.strip() for x in shown.splitlines() if x.strip().startswith("Duration:")]
    assert done["duration_seconds"] >= 50  # the record keeps the cloud's time
    assert line == f"Duration: {round(done['duration_seconds'] / 60)}s"
