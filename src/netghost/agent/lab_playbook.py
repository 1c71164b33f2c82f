"""A fixed investigation playbook: the demo's stand-in for the Gemini brain.

Until the agent loop lands, ``ghost-agent demo`` needs *something* to decide which commands to run.
This playbook is that something: the sequence a careful engineer follows for "A cannot reach
B:port" (control-plane checks, then a packet capture on the client, then the PCAP engine). It goes
through exactly the same Safe-Exec Shell as the model will — classification, the human gate, the
hash-chained audit — so the demo shows the real safety path, not a shortcut. It knows nothing about
the lab: it sees only the symptom and the command outputs.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netghost.shell import SafeExecShell

__all__ = ["PlaybookResult", "Symptom", "run_playbook"]

_BLOB_URL = re.compile(r"^https://(?P<account>[a-z0-9]+)\.blob\.core\.windows\.net/(?P<container>[^/]+)/(?P<blob>.+)$")


@dataclass(frozen=True)
class Symptom:
    """What the engineer reports: ``client`` (a VM in ``resource_group``) cannot reach ``server:port``."""

    client: str
    resource_group: str
    server: str
    port: int
    storage_account: str

    def sentence(self) -> str:
        """The complaint as the engineer would type it."""
        return f"{self.client} cannot reach {self.server} on port {self.port}"


@dataclass
class PlaybookResult:
    """Everything the playbook saw, keyed by audit_id so every conclusion can cite its evidence."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    conclusions: list[tuple[str, str]] = field(default_factory=list)  # (text, audit_id)
    semantic: dict[str, Any] | None = None
    capture_file: Path | None = None


StepHook = Callable[[str, dict[str, Any]], None]


class _Run:
    """One playbook run: issues commands through the shell and records each response."""

    def __init__(self, shell: SafeExecShell, on_step: StepHook | None) -> None:
        self.shell = shell
        self.on_step = on_step
        self.result = PlaybookResult()

    def cmd(self, argv: list[str], why: str) -> dict[str, Any]:
        response = self.shell.execute({"command": shlex.join(argv), "reasoning": why})
        self.result.steps.append({"command": shlex.join(argv), **response})
        if self.on_step is not None:
            self.on_step(shlex.join(argv), response)
        return response

    def conclude(self, text: str, response: dict[str, Any]) -> None:
        self.result.conclusions.append((text, str(response["audit_id"])))


def _ok(response: dict[str, Any]) -> bool:
    return bool(response["status"] == "completed" and response["exit_code"] == 0)


def _json(response: dict[str, Any]) -> Any:
    try:
        return json.loads(response["output"])
    except (json.JSONDecodeError, TypeError):
        return None


def _tsv_fields(response: dict[str, Any]) -> list[str]:
    """az renders a list of scalars one per line and a row of columns tab-separated: take both."""
    return str(response["output"]).split() if _ok(response) else []


def run_playbook(symptom: Symptom, shell: SafeExecShell, work_dir: Path, *,
                 on_step: StepHook | None = None, poll_interval_s: float = 0.5,
                 poll_limit: int = 120, sleep: Callable[[float], None] = time.sleep) -> PlaybookResult:
    """Investigate ``symptom`` through ``shell``; returns the evidence and cited conclusions.

    Args:
        symptom: the engineer's complaint.
        shell: the Safe-Exec Shell every command goes through (its gate decides what runs).
        work_dir: where downloaded captures and engine outputs go.
        on_step: called after every command with its command line and shell response.
        poll_interval_s: wall seconds between capture status polls.
        poll_limit: polls before giving up on a capture.
        sleep: injected so tests can run without waiting.
    """
    run = _Run(shell, on_step)
    s = symptom
    client_ip, location = _resolve_client(run, s)
    server_ip = _resolve_server(run, s)
    if client_ip and server_ip:
        _control_plane(run, s, client_ip, server_ip)
    if location:
        _capture(run, s, location, work_dir, interval=poll_interval_s, limit=poll_limit, sleep=sleep)
    return run.result


def _resolve_client(run: _Run, s: Symptom) -> tuple[str | None, str | None]:
    r = run.cmd(["az", "vm", "show", "-g", s.resource_group, "-n", s.client, "-d",
                 "--query", "[privateIps, location]", "-o", "tsv"],
                f"Resolve {s.client}'s private IP and region before testing its path.")
    fields = _tsv_fields(r)
    if len(fields) < 2:
        return None, None
    return fields[0].split(",")[0], fields[1]


def _resolve_server(run: _Run, s: Symptom) -> str | None:
    r = run.cmd(["az", "vm", "show", "-g", s.resource_group, "-n", s.server, "-d",
                 "--query", "privateIps", "-o", "tsv"],
                f"Resolve {s.server}'s private IP: the destination of the failing flow.")
    fields = _tsv_fields(r)
    return fields[0].split(",")[0] if fields else None


def _control_plane(run: _Run, s: Symptom, client_ip: str, server_ip: str) -> None:
    for direction, vm, local, remote in (
        ("Outbound", s.client, f"{client_ip}:*", f"{server_ip}:{s.port}"),
        ("Inbound", s.server, f"{server_ip}:{s.port}", f"{client_ip}:*"),
    ):
        r = run.cmd(["az", "network", "watcher", "test-ip-flow", "-g", s.resource_group, "--vm", vm,
                     "--direction", direction, "--protocol", "TCP", "--local", local, "--remote", remote],
                    f"Ask Network Watcher whether NSGs allow the {direction.lower()} leg of {s.sentence()}.")
        doc = _json(r)
        if _ok(r) and isinstance(doc, dict) and doc.get("access") == "Deny":
            run.conclude(f"NSG verdict: {direction} TCP {client_ip} -> {server_ip}:{s.port} is DENIED by "
                         f"{doc.get('ruleName')} (evaluated on {vm})", r)
    r = run.cmd(["az", "network", "watcher", "show-next-hop", "-g", s.resource_group, "--vm", s.client,
                 "--source-ip", client_ip, "--dest-ip", server_ip],
                f"Check which route {s.client} uses towards {server_ip}.")
    doc = _json(r)
    if _ok(r) and isinstance(doc, dict) and doc.get("nextHopType") not in (None, "VnetLocal"):
        run.conclude(f"Next hop from {client_ip} to {server_ip} is {doc.get('nextHopType')} "
                     f"{doc.get('nextHopIpAddress') or ''} ({doc.get('routeTableId')})".rstrip(), r)


def _capture(run: _Run, s: Symptom, location: str, work_dir: Path, *, interval: float, limit: int,
             sleep: Callable[[float], None]) -> None:
    name = f"ghost_{s.client}_{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}"
    r = run.cmd(["az", "network", "watcher", "packet-capture", "create", "-g", s.resource_group, "-n", name,
                 "--vm", s.client, "--storage-account", s.storage_account, "--time-limit", "60",
                 "--query", "storageLocation.storagePath", "-o", "tsv"],
                f"Capture 60 s of {s.client}'s traffic to see what happens to packets for {s.server}:{s.port}.")
    if not _ok(r):
        return
    match = _BLOB_URL.match(str(r["output"]).strip())
    status = ""
    for _ in range(limit):
        p = run.cmd(["az", "network", "watcher", "packet-capture", "show-status", "-l", location, "-n", name,
                     "--query", "packetCaptureStatus", "-o", "tsv"], "Poll the capture until it stops.")
        status = str(p["output"]).strip() if _ok(p) else "Error"
        if status in ("Stopped", "Error"):
            break
        sleep(interval)
    if status != "Stopped" or match is None:
        return
    local = work_dir / f"{name}.cap"
    work_dir.mkdir(parents=True, exist_ok=True)
    d = run.cmd(["az", "storage", "blob", "download", "--account-name", match["account"], "-c", match["container"],
                 "-n", match["blob"], "-f", str(local), "--auth-mode", "login", "--no-progress", "-o", "none"],
                "Download the finished capture for offline analysis.")
    if not _ok(d) or not local.exists():
        return
    run.result.capture_file = local
    a = run.cmd(["pcap-forensics", str(local), "--semantic-dir", str(work_dir), "--report-dir", str(work_dir)],
                "Analyse the capture with the PCAP forensic engine.")
    semantic_path = work_dir / f"{local.stem}_semantic.json"
    if _ok(a) and semantic_path.exists():
        run.result.semantic = json.loads(semantic_path.read_text(encoding="utf-8"))
        for finding in run.result.semantic.get("findings", [])[:3]:
            run.conclude(f"Capture: {finding.get('title') or finding.get('summary') or finding}", a)
