"""A session's audit trail: which logs it must have, and whether each is there, whole and its own.

Verifying each log that exists (:func:`~netghost.governance.wal.verify`) cannot see a log that is not
there: a session whose shell audit was deleted whole verified clean. What says a log must exist is read
from real data, never assumed from the kind of session:

* the installation's anchors: each log gets a signed checkpoint outside the audit directory after its
  first record, naming its path, so a checkpoint of a log in this directory says the log existed and
  held at least that many records;
* the session file, when its seal checks: ``audit_heads`` pins each log's identity and head, and
  ``active_task_ids`` needs the task registry;
* the logs' cross references: audit ids cited by the conversation journal and the task registry
  (``{sid}_{seq}``) need the shell audit to reach that seq; a task the journal saw created needs the
  registry to hold it; an agent session (its journal says it started) needs its session file.

Each problem is one line naming the file: missing, truncated (it ends before what is cited or pinned),
from another session (its records, or its identity, belong to another log), a session file whose seal
does not check, or a provisional record that does not authenticate. The log names are the ones the
shell, the orchestrator and the agent write (``shell_audit_``, ``orchestrator_tasks_``, ``ghost_turns_``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netghost.errors import WalError
from netghost.governance._anchor import (
    AuditKey,
    SignedHead,
    anchor_path,
    iter_checkpoints,
    load_key,
    read_checkpoint,
)
from netghost.governance.provisional import (
    PROVISIONAL_SUFFIX,
    Provisional,
    read_provisional,
    rejected_provisionals,
)
from netghost.governance.session_seal import check_session_seal
from netghost.governance.wal import read_wal

__all__ = [
    "SESSION_FILE",
    "SESSION_LOGS",
    "TrailProblem",
    "TrailReport",
    "check_trail",
    "check_trails",
    "session_ids",
]

SESSION_LOGS: Mapping[str, str] = {
    "shell": "shell_audit_{sid}.jsonl",
    "orchestrator": "orchestrator_tasks_{sid}.jsonl",
    "turns": "ghost_turns_{sid}.jsonl",
}
"""A session's hash-chained logs by the names the session file's ``audit_heads`` uses."""

SESSION_FILE = "ghost_session.json"
_KEPT_SESSION = "ghost_session_{sid}.json"
_NAME = re.compile(r"^(shell_audit|orchestrator_tasks|ghost_turns)_(?P<sid>.+)\.jsonl$")
_KEPT = re.compile(r"^ghost_session_(?P<sid>.+)\.json$")


@dataclass(frozen=True)
class TrailProblem:
    """One thing wrong with a session's trail, about one file."""

    session_id: str
    file: str
    kind: str
    """``missing``, ``truncated``, ``foreign`` (another session's or another log's), ``session_file``
    (its seal does not check) or ``provisional`` (a provisional record that does not authenticate)."""
    detail: str

    @property
    def line(self) -> str:
        """The one line shown for it."""
        return f"{self.file}: {self.detail}"


@dataclass
class TrailReport:
    """The trail of one session in one directory: the logs it must have and what is wrong."""

    session_id: str
    directory: Path
    expected: dict[str, str] = field(default_factory=dict)
    """Each log the session must have, with the first reason found."""
    problems: list[TrailProblem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every log the session must have is there, whole and its own."""
        return not self.problems


def _sid_of(name: str) -> str | None:
    for pattern in (_NAME, _KEPT):
        m = pattern.match(name)
        if m is not None:
            return m.group("sid")
    if name.endswith(PROVISIONAL_SUFFIX):
        return _sid_of(name[: -len(PROVISIONAL_SUFFIX)])
    return None


def _key(key: AuditKey | str | os.PathLike[str] | None) -> AuditKey | None:
    if isinstance(key, AuditKey):
        return key
    try:
        return load_key(key, create=False)
    except WalError:
        return None


def _checkpoints_in(directory: Path, key: AuditKey | None) -> list[SignedHead]:
    """The checkpoints (valid MAC) of logs whose path is in ``directory``."""
    if key is None:
        return []
    where = directory.resolve()
    return [cp for cp in iter_checkpoints(key) if cp.path and Path(cp.path).resolve().parent == where]


def _own_checkpoints(directory: Path, names: Iterable[str], key: AuditKey | None) -> list[SignedHead]:
    """The checkpoints of the named logs in ``directory``, looked up by path (no scan of every anchor)."""
    if key is None:
        return []
    found = (read_checkpoint(key, directory / name) for name in names)
    return [cp for cp in found if isinstance(cp, SignedHead) and cp.check(key)]


def _session_file_claim(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def session_ids(directory: Path, *, key: AuditKey | str | os.PathLike[str] | None = None) -> list[str]:
    """Every session with a file in ``directory``, or a checkpoint saying it had one (sorted)."""
    found: set[str] = set()
    try:
        names = [p.name for p in directory.iterdir()]
    except OSError:
        names = []
    for name in names:
        sid = _sid_of(name)
        if sid is not None:
            found.add(sid)
    current = _session_file_claim(directory / SESSION_FILE)
    if current is not None and isinstance(current.get("session_id"), str):
        found.add(current["session_id"])
    for cp in _checkpoints_in(directory, _key(key)):
        sid = _sid_of(cp.name)
        if sid is not None:
            found.add(sid)
    return sorted(found)


def check_trails(directory: Path, *, key: AuditKey | str | os.PathLike[str] | None = None) -> list[TrailReport]:
    """:func:`check_trail` of every session in ``directory``."""
    audit_key = _key(key)
    checkpoints = _checkpoints_in(directory, audit_key)
    return [check_trail(directory, sid, key=audit_key, checkpoints=checkpoints)
            for sid in session_ids(directory, key=audit_key)]


class _Trail:
    """The expectations gathered for one session, then checked against its files."""

    def __init__(self, directory: Path, sid: str, key: AuditKey | None) -> None:
        self.directory, self.sid, self.key = directory, sid, key
        self.report = TrailReport(sid, directory)
        self.names = {kind: template.format(sid=sid) for kind, template in SESSION_LOGS.items()}
        self.reach: dict[str, tuple[int, str]] = {}  # file -> (the seq it must reach, why)
        self.pins: dict[str, dict[str, Any]] = {}  # file -> the head the session file pinned
        self.tasks: dict[str, str] = {}  # task id -> why the registry must hold it
        self.records: dict[str, list[dict[str, Any]]] = {}

    def problem(self, file: str, kind: str, detail: str) -> None:
        self.report.problems.append(TrailProblem(self.sid, file, kind, detail))

    def expect(self, file: str, why: str, seq: int = 0) -> None:
        self.report.expected.setdefault(file, why)
        if seq > self.reach.get(file, (0, ""))[0]:
            self.reach[file] = (seq, why)

    def cite(self, audit_id: object, why: str) -> None:
        """An audit id ``{sid}_{seq}`` cited somewhere: the shell audit must reach that seq."""
        prefix, _, seq = str(audit_id).rpartition("_")
        if prefix == self.sid and seq.isdigit():
            self.expect(self.names["shell"], f"{why} cites {audit_id}", int(seq))

    def read(self, file: str) -> list[dict[str, Any]] | None:
        if file not in self.records:
            path = self.directory / file
            try:
                self.records[file] = read_wal(path).records if path.is_file() else []
            except OSError:
                self.records[file] = []
        return self.records[file] if (self.directory / file).is_file() else None


def check_trail(
    directory: Path,
    session_id: str,
    *,
    key: AuditKey | str | os.PathLike[str] | None = None,
    checkpoints: Iterable[SignedHead] | None = None,
) -> TrailReport:
    """Which logs ``session_id`` must have in ``directory``, and what is wrong with them.

    Args:
        directory: the audit directory.
        session_id: the session.
        key: the audit key (the installation's by default); without one only the files' own cross
            references are checked, and a notice says so.
        checkpoints: the checkpoints of logs in ``directory`` when the caller already has them.
    """
    audit_key = _key(key)
    trail = _Trail(directory, session_id, audit_key)
    if audit_key is None:
        trail.report.notices.append("no audit key on this installation: the anchors and seals cannot be read")
    cps = list(checkpoints) if checkpoints is not None else _own_checkpoints(directory, trail.names.values(), audit_key)
    _from_anchors(trail, cps)
    _from_session_file(trail)
    _from_journal(trail)
    _from_registry(trail)
    _check_files(trail, cps)
    _check_provisional(trail)
    return trail.report


def _from_anchors(trail: _Trail, cps: list[SignedHead]) -> None:
    mine = set(trail.names.values())
    for cp in cps:
        if cp.name in mine and cp.seq > 0:
            trail.expect(cp.name, f"its checkpoint says it held {cp.seq} record(s)", cp.seq)


def _from_session_file(trail: _Trail) -> None:
    for path in (trail.directory / SESSION_FILE, trail.directory / _KEPT_SESSION.format(sid=trail.sid)):
        data = _session_file_claim(path)
        if data is None:
            if path.exists():
                trail.problem(path.name, "session_file", "not a readable session file")
            continue
        if data.get("session_id") != trail.sid:
            if path.name != SESSION_FILE:
                trail.problem(path.name, "foreign", f"it holds session {data.get('session_id')!r}, not {trail.sid}")
            continue
        reason = check_session_seal(data, key=trail.key, audit_dir=trail.directory)
        if reason is not None:
            trail.problem(path.name, "session_file", f"refused: {reason}")
            continue
        trail.report.expected.setdefault(path.name, "the session file")
        heads = data.get("audit_heads")
        for kind, head in (heads.items() if isinstance(heads, dict) else ()):
            file = trail.names.get(str(kind))
            seq = head.get("seq") if isinstance(head, dict) else None
            if file is not None and isinstance(seq, int) and seq > 0:
                trail.expect(file, f"{path.name} pins its record {seq}", seq)
                trail.pins[file] = head
        for task in data.get("active_task_ids") or ():
            trail.tasks.setdefault(str(task), f"{path.name} lists it as active")


def _from_journal(trail: _Trail) -> None:
    file = trail.names["turns"]
    records = trail.read(file)
    if records is None:
        return
    started = False
    for r in records:
        kind = r.get("kind")
        if kind == "session_event" and r.get("event") == "started":
            started = True
        elif kind == "shell_call":
            trail.cite(r.get("audit_id"), file)
        elif kind == "model_turn" and r.get("after_audit_id"):
            trail.cite(r.get("after_audit_id"), file)
        elif kind == "orchestrator_call":
            for audit_id in r.get("shell_audit_ids") or ():
                trail.cite(audit_id, file)
            request, response = r.get("request") or {}, r.get("response") or {}
            if (isinstance(request, dict) and isinstance(response, dict) and request.get("intent") == "capture_traffic"
                    and response.get("status") not in (None, "error") and response.get("task_id")):
                trail.tasks.setdefault(str(response["task_id"]), f"{file} saw it created")
    if started and not any((trail.directory / n).exists()
                           for n in (SESSION_FILE, _KEPT_SESSION.format(sid=trail.sid))):
        trail.problem(_KEPT_SESSION.format(sid=trail.sid), "missing",
                      f"missing: {file} shows an agent session, and neither {SESSION_FILE} nor this file holds it")


def _from_registry(trail: _Trail) -> None:
    file = trail.names["orchestrator"]
    if trail.tasks:
        trail.expect(file, next(iter(trail.tasks.values())))
    for r in trail.read(file) or ():
        for audit_id in r.get("shell_audit_ids") or ():
            trail.cite(audit_id, file)


def _check_files(trail: _Trail, cps: list[SignedHead]) -> None:
    for file in trail.names.values():
        records = trail.read(file)
        if records is None:
            why = trail.report.expected.get(file)
            if why is not None:
                trail.problem(file, "missing", f"missing, but {why}{_removal_hint(trail, file, cps)}")
            continue
        trail.report.expected.setdefault(file, "present")
        _check_own(trail, file, records)
    registry = trail.read(trail.names["orchestrator"]) or []
    held = {str(r.get("task_id")) for r in registry}
    for task, why in trail.tasks.items():
        if trail.read(trail.names["orchestrator"]) is not None and task not in held:
            trail.problem(trail.names["orchestrator"], "truncated", f"task {task} is not in it, but {why}")


def _check_own(trail: _Trail, file: str, records: list[dict[str, Any]]) -> None:
    """The log is whole (reaches what is cited and pinned) and this session's (records, identity)."""
    others = sorted({str(r["session_id"]) for r in records
                     if isinstance(r.get("session_id"), str) and r["session_id"] != trail.sid})
    if others:
        trail.problem(file, "foreign", f"it holds records of session {', '.join(others)}: "
                                       "replaced by (or mixed with) another session's log")
    last = max((r["seq"] for r in records), default=0)
    seq, why = trail.reach.get(file, (0, ""))
    if last < seq:
        trail.problem(file, "truncated", f"it ends at record {last}, but {why} (record {seq})")
    pin = trail.pins.get(file)
    if pin is None or not records:
        return
    log_id = records[0]["sha256"] if records[0].get("seq") == 1 else None
    if pin.get("log_id") is not None and log_id is not None and pin["log_id"] != log_id:
        trail.problem(file, "foreign", f"it is not the log the session file pinned (log id {log_id}, "
                                       f"pinned {pin['log_id']}): replaced")
        return
    at = next((r for r in records if r.get("seq") == pin.get("seq")), None)
    if at is not None and at.get("sha256") != pin.get("sha256"):
        trail.problem(file, "foreign", f"its record {pin.get('seq')} is not the head the session file pinned: rewritten")


def _removal_hint(trail: _Trail, file: str, cps: list[SignedHead]) -> str:
    if trail.key is None or not any(cp.name == file for cp in cps):
        return ""
    return f" (if it was removed on purpose, remove its checkpoint {anchor_path(trail.key, trail.directory / file)} too)"


def _check_provisional(trail: _Trail) -> None:
    """A provisional record waiting beside a log must authenticate; refused ones are noted."""
    for file in trail.names.values():
        log = trail.directory / file
        found = read_provisional(log, session_id=trail.sid, key=trail.key)
        if isinstance(found, Provisional):
            records = trail.read(file) or []
            last = records[-1] if records else {}
            if found.seq == last.get("seq", 0) + 1 and found.prev_sha256 == last.get("sha256"):
                trail.report.notices.append(f"{log.name}{PROVISIONAL_SUFFIX}: the provisional record of record "
                                            f"{found.seq} (a crash); the next writer appends it")
            elif not (found.seq == last.get("seq") and found.prev_sha256 == last.get("prev_sha256")):
                trail.problem(f"{file}{PROVISIONAL_SUFFIX}", "provisional",
                              f"its MAC checks but it does not continue {file} (replayed from an earlier point of the log)")
        elif found is not None:
            trail.problem(f"{file}{PROVISIONAL_SUFFIX}", "provisional", f"refused: {found.reason}")
        for kept in rejected_provisionals(log):
            trail.report.notices.append(f"{kept.name}: a refused provisional record kept aside (the chain records why)")
        for r in trail.read(file) or ():
            if r.get("kind") == "provisional_rejected":
                trail.report.notices.append(f"{file} record {r.get('seq')}: a provisional record was refused, "
                                            f"not appended: {r.get('reason')}")
