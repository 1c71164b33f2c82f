"""Reading the session's own capture outputs and removing its own capture file, covered by the capture's plan.

Why: a person who approves a capture's plan (its plan-token) approves what the capture is for: the product
downloads the capture, analyses it, reads its own report and removes the local capture file. Asking again
for ``cat`` of the report the engine just wrote, or ``rm -f`` of the capture file it downloaded, teaches
people to press A without reading. So those two requests, and only those, are answered by the plan's
approval instead of a new question, and the audit says so: the decider is the policy
``capture_plan_approval``, naming the task, its plan-token and who approved it.

What is covered, exactly (anything else goes to the person as before):

- ``cat FILE ...`` (no option) where every FILE, symlinks resolved, is an artifact the task registered
  (its name is in ``artifact_hashes``) under that task's own directory inside ``DIR/captures``, and its
  content still has the registered sha256 (the product's own output, unchanged);
- ``rm -f FILE`` where FILE, symlinks resolved, is the task's own ``local_pcap_path`` inside ``DIR/captures``
  and the task's analysis is over (COMPLETED, CLEANING_UP or DONE, with its report recorded);

and in both cases the task belongs to this session and its capture was created on a plan a person approved
(the shell audit's record of the create: ``user_approved`` with a person as the decider, or ``--yes`` in a
lab). The model chooses none of this: the paths, hashes and approvals are read from the session's own
registry and audit, and the command is judged by the argv the shell will run (the request's plan).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from netghost.contracts import ApprovalRequest, DecidedBy
from netghost.governance import compute_plan_token, read_wal, replay_latest
from netghost.shell import HitlCallback, HitlDecision

__all__ = ["COVER_NAME", "plan_cover"]

COVER_NAME = "capture_plan_approval"
_ANALYSED = frozenset({"COMPLETED", "CLEANING_UP", "DONE"})
"""States after the capture's analysis (with its outputs recorded: a COMPLETED download alone is not one)."""


def plan_cover(ask: HitlCallback, audit_dir: Path, session_id: str) -> HitlCallback:
    """``ask`` with the session's own capture reads and removals answered by the capture plan's approval.

    A scripted approver (the benchmark's ``--deny``) may refuse first through its ``refuses(request)``
    method: its "no" is a test of the denial flow and is kept; a person at the terminal has none.
    """
    refuses = getattr(ask, "refuses", None)
    registry = audit_dir / f"orchestrator_tasks_{session_id}.jsonl"
    shell_log = audit_dir / f"shell_audit_{session_id}.jsonl"
    captures = os.path.realpath(audit_dir / "captures")
    cwd = str(audit_dir.resolve())  # the shell's working directory (the agent runs it in the audit directory)

    def decide(request: ApprovalRequest) -> HitlDecision:
        refused = refuses(request) if callable(refuses) else None
        if isinstance(refused, HitlDecision):
            return refused
        try:
            covered = _covering(request, registry, shell_log, captures, session_id=session_id, cwd=cwd)
        except (OSError, ValueError, KeyError, TypeError):  # a log that cannot be read covers nothing: ask
            covered = None
        if covered is None:
            return ask(request)
        task_id, token, approver = covered
        by = DecidedBy(kind="policy", name=COVER_NAME,
                       detail=f"task {task_id}, plan {token}, approved by {approver}")
        return HitlDecision.approve(reason=f"covered by the approval of capture {task_id}'s plan", by=by)

    return decide


def _covering(request: ApprovalRequest, registry: Path, shell_log: Path, captures: str, *,
              session_id: str, cwd: str) -> tuple[str, str, str] | None:
    argv = [str(a) for a in request.context.get("argv") or []]
    if len(argv) < 2 or argv[0] not in ("cat", "rm") or not registry.exists():
        return None
    # judge exactly what will run: the argv shown must hash to the request's plan-token (the shell re-checks
    # that token before it runs anything); a redacted or altered argv does not, and is asked about
    audit_id = str(request.context.get("audit_id") or "")
    seq = audit_id.rsplit("_", 1)[-1]
    plan = {"argv": argv, "cwd": cwd, "session_id": session_id, "seq": int(seq) if seq.isdigit() else -1}
    if compute_plan_token(plan) != request.plan_token:
        return None
    tasks = [t for t in replay_latest(registry, "task_id").values() if t.get("session_id") == session_id]
    if argv[0] == "cat":
        if any(a.startswith("-") for a in argv[1:]):
            return None
        owners = {_owner_of_artifact(os.path.realpath(os.path.join(cwd, a)), tasks, captures) for a in argv[1:]}
    else:
        if len(argv) != 3 or argv[1] != "-f":
            return None
        owners = {_owner_of_capture(os.path.realpath(os.path.join(cwd, argv[2])), tasks, captures)}
    if len(owners) != 1 or None in owners:
        return None
    owner = owners.pop()
    task = next(t for t in tasks if t.get("task_id") == owner)
    approved = _approved_by(task, shell_log)
    return None if approved is None else (str(task["task_id"]), str(task.get("plan_token")), approved)


def _inside(path: str, root: str) -> bool:
    return path.startswith(root + os.sep)


def _owner_of_artifact(path: str, tasks: Sequence[Mapping[str, Any]], captures: str) -> str | None:
    if not _inside(path, captures) or not os.path.isfile(path):
        return None
    for task in tasks:
        hashes = task.get("artifact_hashes") or {}
        home = os.path.realpath(os.path.join(captures, str(task.get("task_id"))))
        name = os.path.basename(path)
        if _inside(path, home) and name in hashes and _sha256(path) == str(hashes[name]).removeprefix("sha256:"):
            return str(task["task_id"])
    return None


def _owner_of_capture(path: str, tasks: Sequence[Mapping[str, Any]], captures: str) -> str | None:
    if not _inside(path, captures):
        return None
    for task in tasks:
        pcap = task.get("local_pcap_path")
        analysed = task.get("state") in _ANALYSED and (task.get("report_path") or task.get("semantic_json_path"))
        if pcap and analysed and os.path.realpath(str(pcap)) == path:
            return str(task["task_id"])
    return None


def _approved_by(task: Mapping[str, Any], shell_log: Path) -> str | None:
    """Who approved the task's capture create (a person, or --yes in a lab), or None."""
    token = task.get("plan_token")
    ids = set(task.get("shell_audit_ids") or [])
    if not token or not shell_log.exists():
        return None
    for record in read_wal(shell_log).records:
        if record.get("audit_id") not in ids or "packet-capture" not in str(record.get("command")):
            continue
        if record.get("action") != "user_approved" or record.get("status") != "completed":
            continue
        try:
            who = DecidedBy.model_validate(record.get("decided_by"))
        except ValueError:
            continue
        if who.is_person or who.kind == "flag":
            return who.label()
    return None


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
