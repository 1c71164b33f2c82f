"""The one append-only, hash-chained JSONL log: shell audit, task registry and workflow WALs.

Every record is one line of canonical JSON carrying ``seq`` (1, 2, 3... per file), ``ts``
(ISO-8601 UTC), ``prev_sha256`` (the previous record's ``sha256``, ``None`` for the first) and
``sha256`` (over the canonical JSON of the record without ``sha256``). Chaining makes an edit,
a deletion, a reordering or an insertion visible to :func:`verify`.

Durability: a record is *acknowledged* when :meth:`WalWriter.append` returns; by then it was
written with one ``os.write`` on an ``O_APPEND`` descriptor (there is no user-space buffer to
flush) and, unless ``fsync=False``, ``fsync``-ed. A crash can only leave a torn *last* line,
which readers ignore and the next writer truncates away before appending.

One writer per file: the writer holds a non-blocking exclusive ``flock``; a second writer (in
another process or this one) gets :class:`~netghost.errors.WalLockedError` instead of
interleaving lines and forking the chain.
"""

from __future__ import annotations

import bisect
import fcntl
import json
import os
import re
import threading
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from netghost.errors import WalError, WalLockedError
from netghost.governance.plan_token import canonical_json, sha256_tagged

__all__ = [
    "RESERVED_KEYS",
    "ChainBreak",
    "VerifyReport",
    "WalIssue",
    "WalReadResult",
    "WalWriter",
    "format_ts",
    "read_wal",
    "replay_latest",
    "verify",
]

RESERVED_KEYS = frozenset({"seq", "ts", "prev_sha256", "sha256"})
"""Keys the WAL owns; a caller passing one would be forging chain fields."""

_TAIL_CHUNK = 1 << 16
_SEQ_RE = re.compile(rb'"seq":(\d+)')


def format_ts(moment: datetime) -> str:
    """Format ``moment`` as ISO-8601 UTC with microseconds and a ``Z`` (naive means UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _utcnow() -> datetime:
    return datetime.now(UTC)


_HASH_MEMBER = b',"sha256":"'


def _fast_hash(raw: bytes, stored: str) -> str | None:
    """Hash a line written by :class:`WalWriter` straight from its bytes, or None if it can't.

    A writer line is ``<canonical body without the closing brace>,"sha256":"<hash>"}``. The
    final member before the last brace is necessarily top-level, so hashing the prefix plus
    ``}`` is exactly the hash of the canonical body; if the result differs (edited record, or a
    line in another layout), the caller re-serialises the parsed record instead.
    """
    cut = raw.rfind(_HASH_MEMBER)
    if cut < 0 or not raw.endswith(b'"}') or raw[cut + len(_HASH_MEMBER) : -2] != stored.encode():
        return None
    digest = sha256_tagged(raw[:cut] + b"}")
    return digest if digest == stored else None


def _record_hash(record: dict[str, Any]) -> str:
    """Hash of the record without its ``sha256`` (popped and put back: no copy on the hot path)."""
    stored = record.pop("sha256")
    try:
        return sha256_tagged(canonical_json(record))
    finally:
        record["sha256"] = stored


@dataclass(frozen=True)
class WalIssue:
    """A line the reader could not use. ``kind`` is ``"torn_tail"`` or ``"corrupt_line"``."""

    line_no: int
    kind: Literal["torn_tail", "corrupt_line"]
    detail: str
    raw: bytes = field(default=b"", repr=False, compare=False)


@dataclass(frozen=True)
class WalReadResult:
    """Records of the structurally valid lines, in file order, and the lines that were skipped."""

    records: list[dict[str, Any]]
    issues: list[WalIssue]
    line_numbers: list[int] = field(default_factory=list, repr=False, compare=False)
    raw_lines: list[bytes] = field(default_factory=list, repr=False, compare=False)


@dataclass(frozen=True)
class ChainBreak:
    """One integrity problem found by :func:`verify`.

    ``kind`` is one of ``hash_mismatch`` (record edited), ``chain_break`` (``prev_sha256`` does
    not name the previous record), ``missing`` (records deleted; ``seq`` is the first missing
    one), ``out_of_order`` (records reordered), ``duplicate_seq`` (a record inserted with an
    existing seq), ``corrupt_line`` (unparseable line; ``seq`` is inferred when possible) and
    ``torn_tail`` (an unfinished last line a crash can leave: not a break of the chain) and
    ``head_mismatch`` (the last record is not the expected head: truncated or extended).
    """

    seq: int | None
    line_no: int
    kind: str
    detail: str


@dataclass(frozen=True)
class VerifyReport:
    """The result of :func:`verify`; ``ok`` is true when nothing but a torn tail was found."""

    path: str
    records: int
    head_sha256: str | None
    breaks: list[ChainBreak]

    @property
    def ok(self) -> bool:
        """True when the chain of complete records is intact (a torn tail is tolerated)."""
        return all(b.kind == "torn_tail" for b in self.breaks)

    @property
    def torn_tail(self) -> bool:
        """True when the file ends with an unfinished line."""
        return any(b.kind == "torn_tail" for b in self.breaks)


def _parse_line(raw: bytes) -> dict[str, Any] | str:
    """Return the record of one line, or a string saying why it is not one."""
    if not raw.strip():
        return "empty line"
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"not JSON: {exc}"
    if not isinstance(obj, dict):
        return "not a JSON object"
    seq = obj.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return "no positive integer 'seq'"
    if not isinstance(obj.get("sha256"), str):
        return "no 'sha256'"
    return obj


def _parse_bytes(data: bytes) -> WalReadResult:
    records: list[dict[str, Any]] = []
    issues: list[WalIssue] = []
    line_numbers: list[int] = []
    raw_lines: list[bytes] = []
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline (or is empty)
    for idx, raw in enumerate(lines, start=1):
        parsed = _parse_line(raw)
        if isinstance(parsed, str):
            issues.append(WalIssue(idx, "corrupt_line", parsed, raw))
        else:
            records.append(parsed)
            line_numbers.append(idx)
            raw_lines.append(raw)
    if tail:
        issues.append(WalIssue(len(lines) + 1, "torn_tail", f"unfinished last line ({len(tail)} bytes)", tail))
    return WalReadResult(records, issues, line_numbers, raw_lines)


def read_wal(path: str | os.PathLike[str]) -> WalReadResult:
    """Read every complete, well-formed record of a WAL file, reporting the lines skipped.

    A torn last line (no trailing newline) and corrupted lines are skipped and reported as
    :class:`WalIssue`; the hash chain is not checked here (that is :func:`verify`).

    Args:
        path: the JSONL file.

    Raises:
        OSError: the file cannot be read.
    """
    return _parse_bytes(Path(path).read_bytes())


def replay_latest(path: str | os.PathLike[str], key: str) -> dict[str, dict[str, Any]]:
    """Return the last record per ``str(record[key])`` ("last record per task_id wins").

    Records without ``key`` and unreadable lines are skipped.

    Args:
        path: the JSONL file.
        key: the record field that identifies an entity (e.g. ``"task_id"``).

    Raises:
        OSError: the file cannot be read.
    """
    latest: dict[str, dict[str, Any]] = {}
    for record in read_wal(path).records:
        if key in record and record[key] is not None:
            latest[str(record[key])] = record
    return latest


def verify(path: str | os.PathLike[str], *, expected_head: str | None = None) -> VerifyReport:
    """Check the whole chain of a WAL file and report every break, never only the first.

    Each record's hash is recomputed; its ``prev_sha256`` must name a record with ``seq - 1``
    (first record: ``None``); seqs must rise by one in file order. Deleted records are reported
    once per missing run with the first missing seq; unparseable lines are reported with the
    seq they most likely held.

    A chain cannot show that records were cut off its *end*; pass the head hash remembered
    elsewhere (e.g. printed by an earlier verify) as ``expected_head`` to detect that too.

    Args:
        path: the JSONL file.
        expected_head: the ``sha256`` the last record must have (reported as ``head_mismatch``).

    Raises:
        OSError: the file cannot be read.
    """
    result = read_wal(path)
    records, line_nos = result.records, result.line_numbers
    recomputed, hashes_by_seq = _rehash(result)
    seen = set(hashes_by_seq)
    issue_breaks, corrupt_seqs = _issue_breaks(result, seen)
    breaks = _chain_breaks(result, recomputed, hashes_by_seq, sorted(seen | corrupt_seqs))
    breaks.extend(issue_breaks)
    breaks.sort(key=lambda b: (b.line_no, b.seq or 0))
    head = records[-1]["sha256"] if records else None
    if expected_head is not None and head != expected_head:
        breaks.append(_head_mismatch(records, line_nos, expected_head))
    return VerifyReport(str(path), len(records), head, breaks)


def _rehash(result: WalReadResult) -> tuple[list[str], dict[int, set[str]]]:
    """Each record's recomputed hash, and seq -> every hash (stored and recomputed) a successor
    may legitimately link to."""
    hashes_by_seq: dict[int, set[str]] = {}
    recomputed: list[str] = []
    for rec, raw in zip(result.records, result.raw_lines, strict=True):
        h = _fast_hash(raw, rec["sha256"]) or _record_hash(rec)
        recomputed.append(h)
        hashes_by_seq.setdefault(rec["seq"], set()).update({h, rec["sha256"]})
    return recomputed, hashes_by_seq


def _issue_breaks(result: WalReadResult, seen: set[int]) -> tuple[list[ChainBreak], set[int]]:
    """The skipped lines as breaks, with the seq each most likely held, and the seqs of the
    corrupt lines (which then do not count as missing)."""
    corrupt_seqs: set[int] = set()
    issue_breaks: list[ChainBreak] = []
    for issue in result.issues:
        guess = _guess_seq(issue, result, seen)
        if issue.kind == "corrupt_line" and guess is not None and guess not in seen:
            corrupt_seqs.add(guess)
        issue_breaks.append(ChainBreak(guess, issue.line_no, issue.kind, issue.detail))
    return issue_breaks, corrupt_seqs


def _guess_seq(issue: WalIssue, result: WalReadResult, seen: set[int]) -> int | None:
    """The seq an unparseable line held: from its raw bytes, else one after its neighbour."""
    m = _SEQ_RE.search(issue.raw)
    if m is not None:
        return int(m.group(1))
    idx = bisect.bisect_left(result.line_numbers, issue.line_no)
    neighbour: int = result.records[idx - 1]["seq"] + 1 if idx > 0 else 1
    return neighbour if neighbour not in seen else None


def _chain_breaks(
    result: WalReadResult, recomputed: list[str], hashes_by_seq: dict[int, set[str]], known: list[int]
) -> list[ChainBreak]:
    """Breaks of the parsed records, in file order: their hashes, links and seq order.

    ``known`` is every seq present or held by a corrupt line, sorted.
    """
    breaks: list[ChainBreak] = []
    max_seq = 0
    seq_counts: dict[int, int] = {}
    for rec, line_no, h in zip(result.records, result.line_numbers, recomputed, strict=True):
        seq: int = rec["seq"]
        seq_counts[seq] = seq_counts.get(seq, 0) + 1
        if h != rec["sha256"]:
            breaks.append(ChainBreak(seq, line_no, "hash_mismatch", f"stored {rec['sha256']}, content hashes to {h}"))
        link = _link_break(seq, line_no, rec.get("prev_sha256"), hashes_by_seq)
        if link is not None:
            breaks.append(link)
        if seq_counts[seq] > 1:
            breaks.append(ChainBreak(seq, line_no, "duplicate_seq", f"seq {seq} appears again"))
        elif seq <= max_seq:
            breaks.append(ChainBreak(seq, line_no, "out_of_order", f"seq {seq} after seq {max_seq}"))
        elif seq > max_seq + 1:
            breaks.extend(_gap_breaks(seq, line_no, max_seq, known, hashes_by_seq))
        max_seq = max(max_seq, seq)
    return breaks


def _link_break(seq: int, line_no: int, prev: object, hashes_by_seq: dict[int, set[str]]) -> ChainBreak | None:
    """A record's ``prev_sha256`` must be None for seq 1, else name a record with ``seq - 1``."""
    if seq == 1:
        if prev is not None:
            return ChainBreak(seq, line_no, "chain_break", "first record has a prev_sha256")
    elif seq - 1 in hashes_by_seq and prev not in hashes_by_seq[seq - 1]:
        return ChainBreak(seq, line_no, "chain_break", f"prev_sha256 {prev} names no record {seq - 1}")
    return None


def _gap_breaks(seq: int, line_no: int, max_seq: int, known: list[int], seen: Container[int]) -> list[ChainBreak]:
    """A record jumps past ``max_seq + 1``: the seqs in between came earlier (out of order) or are
    missing (reported once per run). Works on the known seqs inside the gap, never on the gap
    itself (a forged seq may be huge)."""
    breaks: list[ChainBreak] = []
    lo, hi = bisect.bisect_right(known, max_seq), bisect.bisect_left(known, seq)
    if any(s in seen for s in known[lo:hi]):
        breaks.append(ChainBreak(seq, line_no, "out_of_order", f"seq {seq} before seq {max_seq + 1}"))
    for first, last in _gaps(max_seq + 1, seq - 1, known[lo:hi]):
        span = f"{first}" if first == last else f"{first}..{last}"
        breaks.append(ChainBreak(first, line_no, "missing", f"record(s) {span} missing before seq {seq}"))
    return breaks


def _head_mismatch(records: list[dict[str, Any]], line_nos: list[int], expected_head: str) -> ChainBreak:
    """The break for a last record that is not ``expected_head``: truncated or extended."""
    last_seq = records[-1]["seq"] if records else None
    last_line = line_nos[-1] if line_nos else 0
    anchored = next((r["seq"] for r in records if r["sha256"] == expected_head), None)
    where = f"it is record {anchored}: records after it were appended" if anchored is not None else (
        "no record has it: records were cut off the end or rewritten")
    return ChainBreak(last_seq, last_line, "head_mismatch", f"expected head {expected_head}; {where}")


def _gaps(first: int, last: int, present: list[int]) -> list[tuple[int, int]]:
    """Runs of integers in ``first..last`` that are not in the sorted list ``present``."""
    runs: list[tuple[int, int]] = []
    cursor = first
    for p in present:
        if p > cursor:
            runs.append((cursor, p - 1))
        cursor = max(cursor, p + 1)
    if cursor <= last:
        runs.append((cursor, last))
    return runs


class WalWriter:
    """The single writer of one WAL file (see the module docstring for the guarantees).

    Args:
        path: the JSONL file; its parent directory is created 0700 if missing, the file 0600.
        fsync: fsync after every append (turn off only for benchmarks and throwaway logs).
        clock: returns the current time for ``ts`` (injected so tests are deterministic).

    Raises:
        WalLockedError: another writer holds the file.
        OSError: the file or directory cannot be created.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fsync: bool = True,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._clock = clock or _utcnow
        self._mutex = threading.Lock()
        parent = self.path.parent
        if not parent.exists():
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(parent, 0o700)  # mkdir's mode is filtered by the umask
        created = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise WalLockedError(str(self.path)) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd: int | None = fd
        try:
            os.fchmod(fd, 0o600)
            if created:
                _fsync_dir(parent)
            self._next_seq, self._head = self._resume(fd)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _resume(fd: int) -> tuple[int, str | None]:
        """Truncate a torn tail and find the last complete record (scanning back from the end)."""
        size = os.fstat(fd).st_size
        if size == 0:
            return 1, None
        end = size
        last_nl = -1
        pos = size
        buf = b""
        # Find the last newline: everything after it is a torn tail.
        while pos > 0 and last_nl < 0:
            start = max(0, pos - _TAIL_CHUNK)
            chunk = os.pread(fd, pos - start, start)
            buf = chunk + buf
            i = chunk.rfind(b"\n")
            if i >= 0:
                last_nl = start + i
            pos = start
        if last_nl < 0:
            os.ftruncate(fd, 0)
            os.fsync(fd)
            return 1, None
        if last_nl + 1 < end:
            os.ftruncate(fd, last_nl + 1)
            os.fsync(fd)
            end = last_nl + 1
        # Walk complete lines backwards until one parses as a record.
        pos = end
        carry = b""
        while pos > 0:
            start = max(0, pos - _TAIL_CHUNK)
            data = os.pread(fd, pos - start, start) + carry
            lines = data.split(b"\n")
            carry = lines[0] if start > 0 else b""
            candidates = lines[1:] if start > 0 else lines
            for raw in reversed(candidates):
                parsed = _parse_line(raw)
                if isinstance(parsed, dict):
                    return int(parsed["seq"]) + 1, str(parsed["sha256"])
            pos = start
        return 1, None

    @property
    def next_seq(self) -> int:
        """The seq the next appended record will get."""
        return self._next_seq

    @property
    def head_sha256(self) -> str | None:
        """The ``sha256`` of the last record (``None`` for an empty log)."""
        return self._head

    def append(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """Append one record and return it as stored (with ``seq``, ``ts`` and both hashes).

        Args:
            record: plain JSON data; must not contain ``seq``, ``ts``, ``prev_sha256``, ``sha256``.

        Raises:
            ValueError: a reserved key is present, or a value is NaN/infinite.
            TypeError: a value is not JSON data.
            WalError: the writer is closed.
            OSError: the write or fsync failed (the record is then not acknowledged).
        """
        reserved = RESERVED_KEYS.intersection(record)
        if reserved:
            raise ValueError(f"reserved WAL keys in record: {sorted(reserved)}")
        with self._mutex:
            if self._fd is None:
                raise WalError(f"WAL {self.path} is closed")
            stored: dict[str, Any] = dict(record)
            stored["seq"] = self._next_seq
            stored["ts"] = format_ts(self._clock())
            stored["prev_sha256"] = self._head
            body = canonical_json(stored)
            stored["sha256"] = sha256_tagged(body)
            # The hash member goes last, so a reader can hash the line's prefix without
            # re-serialising (see _fast_hash); the line is canonical JSON up to that member.
            line = (body[:-1] + ',"sha256":"' + stored["sha256"] + '"}\n').encode("utf-8")
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            if self._fsync:
                os.fsync(self._fd)
            self._next_seq += 1
            self._head = stored["sha256"]
            return stored

    def close(self) -> None:
        """Release the lock and close the file (idempotent)."""
        with self._mutex:
            if self._fd is not None:
                fd, self._fd = self._fd, None
                os.close(fd)  # closing the descriptor releases the flock

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._fd is None

    def __enter__(self) -> WalWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:
            self.close()


def _fsync_dir(directory: Path) -> None:
    """Make a new directory entry durable (the file exists after a crash, not only its data)."""
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
