"""The Task Registry: ``orchestrator_tasks_{session_id}.jsonl`` written through the governance WAL.

Each save appends the whole task (hash-chained, fsync'ed); the current state of a task is its last
record. At start the registry reads every session's file in ``task_dir`` (a restarted session
resumes its tasks; other sessions' tasks feed orphan detection), keeps the last record per task in
time order, and reports every line it had to skip by file and line number (``read_wal().issues``):
a corrupt line is a warning, never silently dropped. If the file cannot be opened or written the
registry keeps going in memory with a warning, as seed 000's error table says; state is then lost
on exit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from netghost.contracts import CHAIN_FIELD_NAMES, TaskRecord
from netghost.errors import WalError
from netghost.governance import WalWriter, read_wal

__all__ = ["REGISTRY_GLOB", "Registry", "registry_path"]

REGISTRY_GLOB = "orchestrator_tasks_*.jsonl"


def registry_path(task_dir: Path, session_id: str) -> Path:
    """Where a session's registry lives."""
    return task_dir / f"orchestrator_tasks_{session_id}.jsonl"


class Registry:
    """Load, hold and append task records for one session.

    Args:
        task_dir: directory of every session's registry file.
        session_id: this session (names the file written to).
        clock: time source for the WAL's ``ts``.
        warn: receives each warning (corrupt line, unwritable file) as one line of text.
    """

    def __init__(
        self,
        task_dir: Path,
        session_id: str,
        *,
        clock: Callable[[], datetime],
        warn: Callable[[str], None],
    ) -> None:
        self.task_dir = task_dir
        self.session_id = session_id
        self.path = registry_path(task_dir, session_id)
        self._warn = warn
        self.warnings: list[str] = []
        self.tasks: dict[str, TaskRecord] = {}
        self.origin: dict[str, str] = {}
        self._writer: WalWriter | None = None
        self._load_all()
        try:
            self._writer = WalWriter(self.path, clock=clock)
        except (OSError, WalError) as exc:
            self._degrade(f"cannot open {self.path}: {exc}")

    # ---- reading ---------------------------------------------------------------------------

    def _note(self, text: str) -> None:
        self.warnings.append(text)
        self._warn(text)

    def _files(self) -> Iterator[Path]:
        try:
            yield from sorted(self.task_dir.glob(REGISTRY_GLOB))
        except OSError as exc:
            self._note(f"Task Registry directory {self.task_dir} unreadable: {exc}")

    def _load_all(self) -> None:
        """Last record per task over every session file, ordered by the WAL's ``ts``."""
        found: list[tuple[str, int, str, TaskRecord]] = []
        for index, path in enumerate(self._files()):
            try:
                result = read_wal(path)
            except OSError as exc:
                self._note(f"Task Registry {path} unreadable: {exc}")
                continue
            for issue in result.issues:
                self._note(f"Task Registry {path} line {issue.line_no} skipped ({issue.kind}): {issue.detail}")
            for line_no, raw in zip(result.line_numbers, result.records, strict=True):
                body = {k: v for k, v in raw.items() if k not in CHAIN_FIELD_NAMES}
                try:
                    record = TaskRecord.model_validate(body)
                except ValidationError as exc:
                    first = exc.errors()[0]
                    self._note(f"Task Registry {path} line {line_no} skipped (not a task record): "
                               f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}")
                    continue
                found.append((str(raw.get("ts", "")), index, path.name, record))
        for _ts, _index, name, record in sorted(found, key=lambda item: (item[0], item[1])):
            self.tasks[record.task_id] = record
            self.origin[record.task_id] = name

    # ---- writing ---------------------------------------------------------------------------

    @property
    def durable(self) -> bool:
        """False once the registry fell back to memory only."""
        return self._writer is not None

    def _degrade(self, why: str) -> None:
        self._note(f"Task Registry not writable ({why}); tasks are kept in memory only and are lost on exit")
        if self._writer is not None:
            self._writer.close()
        self._writer = None

    def save(self, record: TaskRecord) -> TaskRecord:
        """Append ``record`` (write-ahead: callers act only after this returns) and remember it."""
        if self._writer is not None:
            try:
                self._writer.append(record.model_dump(mode="json"))
            except (OSError, WalError) as exc:
                self._degrade(f"append to {self.path} failed: {exc}")
        self.tasks[record.task_id] = record
        self.origin[record.task_id] = self.path.name
        return record

    def get(self, task_id: str) -> TaskRecord | None:
        """The last record of ``task_id``, or None."""
        return self.tasks.get(task_id)

    def close(self) -> None:
        """Release the registry file (another orchestrator of this session may then open it)."""
        if self._writer is not None:
            self._writer.close()

    def session_of(self, task_id: str) -> str | None:
        """The session whose file last recorded ``task_id``."""
        name = self.origin.get(task_id)
        if name is None:
            return None
        return name.removeprefix("orchestrator_tasks_").removesuffix(".jsonl")
