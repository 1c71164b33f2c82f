"""The one append-only, hash-chained JSONL log: shell audit, task registry and workflow WALs.

Every record is one line of canonical JSON carrying ``seq`` (1, 2, 3... per file), ``ts``
(ISO-8601 UTC), ``prev_sha256`` (the previous record's ``sha256``, ``None`` for the first) and
``sha256`` (over the canonical JSON of the record without ``sha256``). Chaining makes an edit,
a deletion, a reordering or an insertion visible to :func:`verify`.

Anchoring (see :mod:`netghost.governance._anchor`): each line ends with ``"hmac"``, a MAC of the
record's ``sha256`` under the installation's audit key, and after every append the writer signs a
checkpoint of the head outside the audit directory. :func:`verify` checks both by default, so cutting
records off the end, a torn or deleted last record, a forged record with a recomputed hash and an
edited-and-rechained log are all breaks. The ``hmac`` member is not part of the record: readers get
records without it (:attr:`WalReadResult.seals` holds them). A log written before anchoring verifies
as before, reported as unanchored (legacy); the first anchored writer to open it checkpoints its head.

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
import contextlib
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
from netghost.governance._anchor import (
    AuditKey,
    SignedHead,
    anchor_path,
    find_checkpoint,
    fsync_dir,
    load_key,
    open_checkpoint,
    read_checkpoint,
    write_checkpoint,
)
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
    "signed_head",
    "verify",
]

RESERVED_KEYS = frozenset({"seq", "ts", "prev_sha256", "sha256", "hmac"})
"""Keys the WAL owns; a caller passing one would be forging chain fields."""

KeySource = AuditKey | str | os.PathLike[str] | None
"""An :class:`AuditKey`, the path of a key file, or None for the installation's default key."""

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
_SEAL_MEMBER = b',"hmac":"'


def _fast_hash(raw: bytes, stored: str, seal: str | None = None) -> str | None:
    """Hash a line written by :class:`WalWriter` straight from its bytes, or None if it can't.

    A writer line is ``<canonical body without the closing brace>,"sha256":"<hash>","hmac":"<mac>"}``
    (before anchoring, without the ``hmac`` member). The final members before the last brace are
    necessarily top-level, so hashing the prefix plus ``}`` is exactly the hash of the canonical
    body; if the result differs (edited record, or a line in another layout), the caller
    re-serialises the parsed record instead.
    """
    if seal is not None:
        cut = raw.rfind(_SEAL_MEMBER)
        if cut < 0 or raw[cut + len(_SEAL_MEMBER) : -2] != seal.encode():
            return None
        raw = raw[:cut] + b"}"
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
    seals: list[str | None] = field(default_factory=list, repr=False, compare=False)
    """Each record's ``hmac`` (None for a record written before anchoring)."""


@dataclass(frozen=True)
class ChainBreak:
    """One integrity problem found by :func:`verify`.

    ``kind`` is one of ``hash_mismatch`` (record edited), ``chain_break`` (``prev_sha256`` does
    not name the previous record), ``missing`` (records deleted; ``seq`` is the first missing
    one), ``out_of_order`` (records reordered), ``duplicate_seq`` (a record inserted with an
    existing seq), ``corrupt_line`` (unparseable line; ``seq`` is inferred when possible) and
    ``torn_tail`` (an unfinished last line a crash can leave: not a break of the chain) and
    ``head_mismatch`` (the last record is not the expected head: truncated or extended).

    The anchor's breaks: ``mac_mismatch`` / ``mac_missing`` (a record whose hash checks but whose
    ``hmac`` does not: forged or re-chained without the key), ``truncated`` (the log ends before its
    checkpoint: records cut off its end, a torn or deleted last record), ``checkpoint_mismatch`` (the
    checkpointed record was rewritten, or the checkpoint is another log's), ``checkpoint_missing`` /
    ``checkpoint_invalid`` (an anchored log without a valid checkpoint) and ``key_missing``.
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
    anchor: str = "unchecked"
    """``checkpoint`` (the end is anchored), ``legacy`` (written before anchoring), ``none`` (an
    anchored log without a usable checkpoint or key: see the breaks) or ``unchecked``."""
    notices: list[str] = field(default_factory=list)
    """What a reader should know that is not a break (unanchored legacy log, records past the
    checkpoint after a crash)."""
    checkpoint: SignedHead | None = None

    @property
    def ok(self) -> bool:
        """True when the chain of complete records is intact (a torn tail is tolerated)."""
        return all(b.kind == "torn_tail" for b in self.breaks)

    @property
    def torn_tail(self) -> bool:
        """True when the file ends with an unfinished line."""
        return any(b.kind == "torn_tail" for b in self.breaks)


def _parse_line(raw: bytes) -> tuple[dict[str, Any], str | None] | str:
    """Return the record of one line and its seal, or a string saying why it is not one.

    The seal is the ``hmac`` member *after* ``sha256`` (where the writer puts it); it is taken off
    the record. An ``hmac`` key anywhere else is ordinary (hashed) data of a record.
    """
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
    seal: str | None = None
    if "hmac" in obj and next(reversed(obj)) == "hmac":
        keys = list(obj)
        if len(keys) >= 2 and keys[-2] == "sha256":
            value = obj.pop("hmac")
            seal = value if isinstance(value, str) else repr(value)
    return obj, seal


def _parse_bytes(data: bytes) -> WalReadResult:
    records: list[dict[str, Any]] = []
    issues: list[WalIssue] = []
    line_numbers: list[int] = []
    raw_lines: list[bytes] = []
    seals: list[str | None] = []
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline (or is empty)
    for idx, raw in enumerate(lines, start=1):
        parsed = _parse_line(raw)
        if isinstance(parsed, str):
            issues.append(WalIssue(idx, "corrupt_line", parsed, raw))
        else:
            records.append(parsed[0])
            seals.append(parsed[1])
            line_numbers.append(idx)
            raw_lines.append(raw)
    if tail:
        issues.append(WalIssue(len(lines) + 1, "torn_tail", f"unfinished last line ({len(tail)} bytes)", tail))
    return WalReadResult(records, issues, line_numbers, raw_lines, seals)


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


def verify(
    path: str | os.PathLike[str], *, expected_head: str | None = None, key: KeySource = None
) -> VerifyReport:
    """Check the whole chain of a WAL file and report every break, never only the first.

    Each record's hash is recomputed; its ``prev_sha256`` must name a record with ``seq - 1``
    (first record: ``None``); seqs must rise by one in file order. Deleted records are reported
    once per missing run with the first missing seq; unparseable lines are reported with the
    seq they most likely held.

    A chain alone cannot show that records were cut off its *end* or re-chained; the anchor
    does: every record's ``hmac`` is checked against the audit key and the log's end against its
    signed checkpoint (see the module docstring). A log written before anchoring is reported as
    ``anchor="legacy"`` with a notice. ``expected_head`` (a head cited elsewhere, e.g. by the RCA)
    is still checked when given.

    Args:
        path: the JSONL file.
        expected_head: the ``sha256`` the last record must have (reported as ``head_mismatch``).
        key: the audit key (or its file); the installation's default key when None (never created here).

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
    anchor = _check_anchor(Path(path), result, recomputed, key)
    breaks.extend(anchor.breaks)
    breaks.sort(key=lambda b: (b.line_no, b.seq or 0))
    head = records[-1]["sha256"] if records else None
    if expected_head is not None and head != expected_head:
        breaks.append(_head_mismatch(records, line_nos, expected_head))
    return VerifyReport(str(path), len(records), head, breaks, anchor.status, anchor.notices, anchor.checkpoint)


_LEGACY = (
    "unanchored (legacy): no record carries a MAC and there is no checkpoint; the log was written "
    "before audit anchoring, so records cut off its end cannot be detected"
)


@dataclass
class _Anchor:
    status: str = "legacy"
    breaks: list[ChainBreak] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    checkpoint: SignedHead | None = None


def _resolve_key(key: KeySource, *, create: bool) -> AuditKey | None:
    if isinstance(key, AuditKey):
        return key
    return load_key(key, create=create)


def _check_anchor(path: Path, result: WalReadResult, recomputed: list[str], key_source: KeySource) -> _Anchor:
    """The anchor's breaks: each record's MAC, and the log's end against its signed checkpoint."""
    out = _Anchor()
    records = result.records
    sealed = any(s is not None for s in result.seals)
    last_line = result.line_numbers[-1] if result.line_numbers else 0
    try:
        key = _resolve_key(key_source, create=False)
    except WalError as exc:
        out.status = "none"
        out.breaks.append(ChainBreak(None, last_line, "key_missing", str(exc)))
        return out
    if key is None:
        if sealed:
            out.status = "none"
            detail = "no audit key: the records' MACs and the checkpoint cannot be checked"
            out.breaks.append(ChainBreak(None, last_line, "key_missing", detail))
        else:
            out.notices.append(_LEGACY)
        return out
    log_id = records[0]["sha256"] if records and records[0]["seq"] == 1 else None
    found = find_checkpoint(key, path, log_id)
    if isinstance(found, str):
        out.status = "none"
        out.breaks.append(ChainBreak(None, last_line, "checkpoint_invalid", found))
        found = None
    elif found is None:
        if not sealed:
            out.notices.append(_LEGACY)
            return out
        out.status = "none"
        detail = (
            f"no checkpoint for this log in {key.anchors_dir}: it was deleted (with records cut off "
            "the end?) or the log was copied from another installation"
        )
        out.breaks.append(ChainBreak(records[-1]["seq"] if records else None, last_line, "checkpoint_missing", detail))
    else:
        out.status, out.checkpoint = "checkpoint", found
        _checkpoint_breaks(path, result, key, found, log_id=log_id, out=out)
    seal_breaks = _seal_breaks(path.name, result, recomputed, key, found)
    out.breaks.extend(seal_breaks)
    if seal_breaks or any(h != rec["sha256"] for rec, h in zip(records, recomputed, strict=True)):
        out.notices = [n for n in out.notices if "after the checkpoint" not in n]
    return out


def _checkpoint_breaks(
    path: Path, result: WalReadResult, key: AuditKey, cp: SignedHead, *, log_id: str | None, out: _Anchor
) -> None:
    """The log's end against its checkpoint: truncated, rewritten, or extended after a crash."""
    records = result.records
    last_seq: int = max((rec["seq"] for rec in records), default=0)
    last_line = result.line_numbers[-1] if result.line_numbers else 0
    if not cp.check(key):
        out.status = "none"
        detail = "the checkpoint's MAC does not check: it was forged or swapped for one signed by another key"
        out.breaks.append(ChainBreak(cp.seq, last_line, "checkpoint_invalid", detail))
        return
    if cp.name != path.name or (log_id is not None and cp.seq > 0 and cp.log_id != log_id):
        detail = f"the checkpoint is log {cp.log_id} ({cp.name}), not this one: swapped or replaced"
        out.breaks.append(ChainBreak(cp.seq, last_line, "checkpoint_mismatch", detail))
        return
    if cp.seq == 0:  # the checkpoint of the log when it was new (empty)
        if last_seq > 0:
            out.notices.append(
                f"{last_seq} record(s) after the checkpoint of the new, empty log (appended just before a "
                "crash); each was checked by its MAC"
            )
        return
    at = {rec["seq"]: rec["sha256"] for rec in records}
    if last_seq < cp.seq:
        detail = (
            f"the log ends at record {last_seq} but its checkpoint names record {cp.seq} ({cp.sha256}): "
            "records were cut off its end"
        )
        out.breaks.append(ChainBreak(last_seq + 1, last_line, "truncated", detail))
    elif at.get(cp.seq) != cp.sha256:
        detail = f"record {cp.seq} is not the checkpointed record {cp.sha256}: rewritten or removed"
        out.breaks.append(ChainBreak(cp.seq, last_line, "checkpoint_mismatch", detail))
    elif last_seq > cp.seq:
        out.notices.append(
            f"{last_seq - cp.seq} record(s) after the checkpoint at seq {cp.seq} (appended just before a "
            "crash); each was checked by its MAC"
        )


def _seal_breaks(
    name: str, result: WalReadResult, recomputed: list[str], key: AuditKey, cp: SignedHead | None
) -> list[ChainBreak]:
    """Records whose hash checks but whose MAC does not: forged, or re-chained without the key.

    A record without a MAC is accepted only in a legacy prefix: before the first sealed record and
    not past the checkpoint. A record whose hash already fails is left to ``hash_mismatch``.
    """
    breaks: list[ChainBreak] = []
    checkpointed = cp.seq if cp is not None else 0
    sealed_from: int | None = None
    for rec, line_no, h, seal in zip(result.records, result.line_numbers, recomputed, result.seals, strict=True):
        seq: int = rec["seq"]
        if seal is not None and sealed_from is None:
            sealed_from = seq
        if h != rec["sha256"]:
            continue
        if seal is None:
            if (sealed_from is not None and seq > sealed_from) or seq > checkpointed:
                breaks.append(ChainBreak(seq, line_no, "mac_missing", "record has no MAC: forged or re-chained"))
        elif not key.check_seal(name, rec["sha256"], seal):
            breaks.append(ChainBreak(seq, line_no, "mac_mismatch", "record's MAC does not check: forged or re-chained"))
    return breaks


def signed_head(path: str | os.PathLike[str], *, key: KeySource = None) -> SignedHead | None:
    """The signed head (checkpoint) of the log at ``path``, for the session file and the RCA to cite.

    None when the log has no checkpoint (written before anchoring and never reopened) or there is no
    audit key; a new, empty log's checkpoint is its empty head (seq 0). Check a cited head later with
    ``SignedHead.from_dict(d).check(key)`` and ``verify(path, expected_head=d["sha256"])``.

    Raises:
        WalError: the key file is unusable.
    """
    audit_key = _resolve_key(key, create=False)
    if audit_key is None:
        return None
    found = read_checkpoint(audit_key, path)
    return found if isinstance(found, SignedHead) else None


def _rehash(result: WalReadResult) -> tuple[list[str], dict[int, set[str]]]:
    """Each record's recomputed hash, and seq -> every hash (stored and recomputed) a successor
    may legitimately link to."""
    hashes_by_seq: dict[int, set[str]] = {}
    recomputed: list[str] = []
    for rec, raw, seal in zip(result.records, result.raw_lines, result.seals, strict=True):
        h = _fast_hash(raw, rec["sha256"], seal) or _record_hash(rec)
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
        key: the audit key that seals records and signs the checkpoint (an :class:`AuditKey` or
            a key file); the installation's default key, created on first use, when None.

    Raises:
        WalLockedError: another writer holds the file.
        WalError: the log does not match its checkpoint (cut, rewritten, a forged last record,
            or deleted): it fails closed rather than extend a tampered log and re-anchor it. Run
            ``ghost-agent audit verify``; to start afresh, move the log and its checkpoint aside.
        OSError: the file or directory cannot be created.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fsync: bool = True,
        clock: Callable[[], datetime] | None = None,
        key: KeySource = None,
    ) -> None:
        self.path = Path(path)
        self._key = _resolve_key(key, create=True)
        assert self._key is not None  # created when missing
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
        self._anchor_fd: int | None = None  # the checkpoint file, opened at the first checkpoint
        try:
            os.fchmod(fd, 0o600)
            if created:
                fsync_dir(parent)
            self._next_seq, self._head, last_seal = self._resume(fd)
            self._log_id = _first_sha(fd)
            self._anchor_file = anchor_path(self._key, self.path)
            self._checkpoint = self._open_anchor(last_seal)
        except BaseException:
            self.close()
            raise

    def _open_anchor(self, last_seal: str | None) -> SignedHead | None:
        """Check the log against its checkpoint before extending it; checkpoint a legacy log's head.

        Raises:
            WalError: the log does not match its checkpoint.
        """
        assert self._key is not None
        last_seq = self._next_seq - 1
        found = read_checkpoint(self._key, self.path)
        if isinstance(found, str):
            raise WalError(self._refusal(found))
        if found is None:
            if last_seq == 0:
                # a new log: checkpoint it empty now, so that a crash between the first append and its
                # checkpoint leaves a log that continues a checkpoint (a missing one means deleted)
                return self._write_checkpoint()
            if last_seal is not None:
                raise WalError(self._refusal("its records carry MACs but its checkpoint is gone"))
            return self._write_checkpoint()  # a legacy log: anchor it from here on
        problem = self._mismatch(found, last_seq, last_seal)
        if problem is not None:
            raise WalError(self._refusal(problem))
        return self._write_checkpoint() if last_seq > found.seq else found

    def _mismatch(self, cp: SignedHead, last_seq: int, last_seal: str | None) -> str | None:
        """Why the log at open does not continue its checkpoint ``cp``, or None."""
        assert self._key is not None
        if not cp.check(self._key):
            return "its checkpoint's MAC does not check"
        if cp.name != self.path.name or (cp.seq > 0 and cp.log_id != self._log_id):  # an empty log has no id yet
            return f"its checkpoint is another log's ({cp.name}, {cp.log_id})"
        if last_seq < cp.seq:
            return f"it ends at record {last_seq}, before its checkpoint at record {cp.seq} (records cut off)"
        if last_seq == cp.seq and self._head != cp.sha256:
            return f"record {cp.seq} is not the checkpointed record (rewritten)"
        if last_seq > cp.seq and not (
            last_seal is not None and self._head is not None and self._key.check_seal(self.path.name, self._head, last_seal)
        ):
            return f"its last record {last_seq} is past the checkpoint and has no valid MAC (forged)"
        return None

    def _refusal(self, problem: str) -> str:
        return (
            f"audit log {self.path} does not match its checkpoint: {problem}. Not extending it; run "
            f"`ghost-agent audit verify {self.path}`, then move the log and {self._anchor_file} aside "
            "to start a new one"
        )

    def _write_checkpoint(self) -> SignedHead:
        assert self._key is not None
        if self._anchor_fd is None:
            self._anchor_fd = open_checkpoint(self._anchor_file)
        self._checkpoint = write_checkpoint(
            self._key,
            self.path,
            log_id=self._log_id,
            seq=self._next_seq - 1,
            sha256=self._head,
            durable=self._fsync,
            target=self._anchor_file,
            fd=self._anchor_fd,
        )
        return self._checkpoint

    @property
    def key(self) -> AuditKey:
        """The key that seals this log: a record written beside it (a provisional record) is sealed
        with the same key, bound to this log."""
        assert self._key is not None
        return self._key

    @property
    def signed_head(self) -> SignedHead | None:
        """The signed head after the last append (a new log's is its empty head, seq 0): for the session
        file and RCA."""
        return self._checkpoint

    @staticmethod
    def _resume(fd: int) -> tuple[int, str | None, str | None]:
        """Truncate a torn tail and find the last complete record (scanning back from the end)."""
        size = os.fstat(fd).st_size
        if size == 0:
            return 1, None, None
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
            return 1, None, None
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
                if not isinstance(parsed, str):
                    record, seal = parsed
                    stored = str(record["sha256"])
                    if _record_hash(record) != stored:  # edited in place, its stored hash kept: do not build on it
                        raise WalError(f"the last record (seq {record['seq']}) does not hash to its stored sha256 "
                                       "(rewritten): not extending this log; run `ghost-agent audit verify` on it")
                    return int(record["seq"]) + 1, stored, seal
            pos = start
        return 1, None, None

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
        assert self._key is not None
        with self._mutex:
            if self._fd is None:
                raise WalError(f"WAL {self.path} is closed")
            stored: dict[str, Any] = dict(record)
            stored["seq"] = self._next_seq
            stored["ts"] = format_ts(self._clock())
            stored["prev_sha256"] = self._head
            body = canonical_json(stored)
            stored["sha256"] = sha256_tagged(body)
            seal = self._key.seal(self.path.name, stored["sha256"])
            # The hash and seal members go last, so a reader can hash the line's prefix without
            # re-serialising (see _fast_hash); the line is canonical JSON up to those members.
            line = (body[:-1] + ',"sha256":"' + stored["sha256"] + '","hmac":"' + seal + '"}\n').encode("utf-8")
            start = os.fstat(self._fd).st_size
            try:
                view = memoryview(line)
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
                if self._fsync:
                    os.fsync(self._fd)
            except BaseException:
                if self._settle(start, len(line), stored["sha256"]):
                    self._checkpoint_after_interrupt()
                raise
            self._advance(stored["sha256"])
            try:
                self._write_checkpoint()  # after the record is durable: a crash leaves it behind, never ahead
            except BaseException:
                self._checkpoint_after_interrupt()
                raise
            return stored

    def _checkpoint_after_interrupt(self) -> None:
        """Bring the checkpoint up to a record that is in the file although its append was interrupted.

        Why: Ctrl-C landing after the line was written but before (or inside) the checkpoint write left
        the checkpoint behind the log; for a log's first record there was none at all, and reopening the
        log (``--resume``) refused it as "its checkpoint is gone". One more attempt; a real I/O failure
        here is the caller's exception already on its way.
        """
        with contextlib.suppress(Exception):
            self._write_checkpoint()

    def _advance(self, sha: str) -> None:
        self._next_seq += 1
        self._head = sha
        if self._log_id is None:
            self._log_id = self._head

    def _settle(self, start: int, size: int, sha: str) -> bool:
        """After an append was interrupted (Ctrl-C's KeyboardInterrupt lands between ``os.write`` returning
        and the writer's state moving on; a failed write): the writer's state follows the file, so the next
        record never takes the same ``seq`` and forks the chain. A whole line in the file counts as written
        (its fsync may not have run: the caller gets the exception); a torn one is cut off.

        Returns:
            True when the record counts as written (the writer moved on to the next seq).
        """
        with contextlib.suppress(OSError):
            end = os.fstat(self._fd).st_size if self._fd is not None else start
            if end >= start + size:
                self._advance(sha)
                return True
            if end > start and self._fd is not None:
                os.ftruncate(self._fd, start)
        return False

    def close(self) -> None:
        """Release the lock and close the file (idempotent)."""
        with self._mutex:
            anchor_fd, self._anchor_fd = self._anchor_fd, None
            if anchor_fd is not None:
                os.close(anchor_fd)
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


def _first_sha(fd: int) -> str | None:
    """The ``sha256`` of the log's first record (its identity), None for an empty log or one that
    does not start with seq 1."""
    data = b""
    offset = 0
    while b"\n" not in data:
        chunk = os.pread(fd, _TAIL_CHUNK, offset)
        if not chunk:
            return None
        data += chunk
        offset += len(chunk)
    parsed = _parse_line(data.split(b"\n", 1)[0])
    if isinstance(parsed, str) or parsed[0]["seq"] != 1:
        return None
    return str(parsed[0]["sha256"])

