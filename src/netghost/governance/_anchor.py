"""The audit key and the signed checkpoints that anchor the end of every WAL.

Why: a hash chain shows edits, deletions and reorderings *inside* a log, but anyone who can write the
log can cut records off its end, or edit a record and recompute every hash after it, and the chain
still checks. Two things close that, both keyed with a per-installation secret the log's directory does
not hold:

* every record carries ``hmac`` = HMAC-SHA256(key, log name + its ``sha256``): a record forged or
  re-chained without the key does not check, and a record copied from another log does not either;
* a checkpoint (``seq``, ``sha256`` and the log's identity, MACed) is rewritten after every append in
  ``<key dir>/anchors/``, outside the audit directory: a log that ends before its checkpoint (cut, a
  torn last record, a deleted last record) or whose checkpointed record differs (rewritten) is caught,
  and deleting the checkpoint too is caught because a log whose records carry MACs must have one.

Why HMAC-SHA256 and not Ed25519 signatures: the installation that writes the log is the one that
verifies it (``ghost-agent audit verify``), so a public key buys nothing yet, while HMAC costs ~2 µs
per record to write and to verify (Ed25519 verification is ~50x that, and a 50,000-record log is
verified in full). A copy cited elsewhere (the session file, the RCA) carries the signed head from
:func:`read_checkpoint`; it can be re-checked with the same key.

The key is 32 random bytes, hex, in a 0600 file in a 0700 directory: ``$NETGHOST_AUDIT_KEY`` (a path),
else ``$XDG_CONFIG_HOME/netghost/audit.key``, else ``~/.config/netghost/audit.key``; it is created on
the first write.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.hmac import HMAC

from netghost.errors import WalError
from netghost.governance.plan_token import canonical_json

__all__ = [
    "KEY_ENV",
    "AuditKey",
    "SignedHead",
    "anchor_path",
    "default_key_path",
    "find_checkpoint",
    "fsync_dir",
    "iter_checkpoints",
    "load_key",
    "read_checkpoint",
    "write_checkpoint",
]

KEY_ENV = "NETGHOST_AUDIT_KEY"
"""Names the key file (tests, a second installation on one machine)."""

_TAG = "hmac-sha256:"
_RECORD_DOMAIN = b"netghost-wal-record-v1\x00"
_HEAD_DOMAIN = b"netghost-wal-head-v1\x00"
_KEY_ID_DOMAIN = b"netghost-key-id-v1\x00"
_KEY_BYTES = 32


def default_key_path() -> Path:
    """Where the key is: ``$NETGHOST_AUDIT_KEY``, else the XDG config dir, else ``~/.config``."""
    named = os.environ.get(KEY_ENV)
    if named:
        return Path(named).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".config"
    return base / "netghost" / "audit.key"


@dataclass(frozen=True)
class AuditKey:
    """The installation's MAC key and where it lives (its directory also holds the checkpoints)."""

    path: Path
    secret: bytes = field(repr=False)

    @property
    def anchors_dir(self) -> Path:
        """The checkpoints' directory, beside the key and outside every audit directory."""
        return self.path.parent / "anchors"

    def _mac(self, data: bytes) -> HMAC:
        mac = HMAC(self.secret, hashes.SHA256())
        mac.update(data)
        return mac

    def seal(self, name: str, sha256: str) -> str:
        """The ``hmac`` of the record with ``sha256`` in the log file called ``name``."""
        return _TAG + self._mac(_RECORD_DOMAIN + name.encode() + b"\x00" + sha256.encode()).finalize().hex()

    def check_seal(self, name: str, sha256: str, seal: str) -> bool:
        """True when ``seal`` is this key's ``hmac`` of that record (constant-time comparison)."""
        return self._check(_RECORD_DOMAIN + name.encode() + b"\x00" + sha256.encode(), seal)

    @property
    def key_id(self) -> str:
        """A public fingerprint of the key (16 hex): says *which* installation sealed a file, reveals nothing."""
        return self._mac(_KEY_ID_DOMAIN).finalize().hex()[:16]

    def mac_json(self, domain: bytes, body: Mapping[str, Any]) -> str:
        """The tagged HMAC of ``body``'s canonical JSON under ``domain`` (a label per kind of document,
        so a MAC made for one kind never checks as another)."""
        return _TAG + self._mac(domain + canonical_json(dict(body)).encode("utf-8")).finalize().hex()

    def check_json(self, domain: bytes, body: Mapping[str, Any], tag: object) -> bool:
        """True when ``tag`` is :meth:`mac_json` of ``body`` under ``domain`` (constant-time comparison)."""
        return self._check(domain + canonical_json(dict(body)).encode("utf-8"), tag)

    def sign_head(self, body: dict[str, Any]) -> str:
        return _TAG + self._mac(_HEAD_DOMAIN + canonical_json(body).encode("utf-8")).finalize().hex()

    def check_head(self, body: dict[str, Any], mac: str) -> bool:
        return self._check(_HEAD_DOMAIN + canonical_json(body).encode("utf-8"), mac)

    def _check(self, data: bytes, tag: object) -> bool:
        if not isinstance(tag, str) or not tag.startswith(_TAG):
            return False
        try:
            self._mac(data).verify(bytes.fromhex(tag[len(_TAG) :]))
        except (InvalidSignature, ValueError):
            return False
        return True


def load_key(path: str | os.PathLike[str] | None = None, *, create: bool) -> AuditKey | None:
    """The audit key at ``path`` (default: :func:`default_key_path`); None if absent and not ``create``.

    Raises:
        WalError: the key file is unreadable, malformed, or readable by group or others.
        OSError: it cannot be created.
    """
    key_path = Path(path).expanduser() if path is not None else default_key_path()
    key_path = key_path.absolute()
    if create and not key_path.exists():
        _create_key(key_path)
    try:
        fd = os.open(key_path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WalError(f"audit key {key_path} unreadable: {exc.strerror or exc}") from exc
    try:
        mode = os.fstat(fd).st_mode
        raw = os.read(fd, 4096)
    finally:
        os.close(fd)
    if stat.S_IMODE(mode) & 0o077:
        raise WalError(f"audit key {key_path} is readable by others (mode {stat.S_IMODE(mode):o}); chmod 600 it")
    try:
        secret = bytes.fromhex(raw.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        secret = b""
    if len(secret) != _KEY_BYTES:
        raise WalError(f"audit key {key_path} is not {_KEY_BYTES} hex-encoded bytes")
    return AuditKey(key_path, secret)


def _create_key(key_path: Path) -> None:
    """Create the key 0600 in a 0700 directory; a concurrent creator's key wins if it came first."""
    parent = key_path.parent
    if not parent.exists():
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(parent, 0o700)  # mkdir's mode is filtered by the umask
    tmp = parent / f".{key_path.name}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, (secrets.token_hex(_KEY_BYTES) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, key_path)  # fails if another process created the key meanwhile: keep theirs
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(parent)


@dataclass(frozen=True)
class SignedHead:
    """The signed head of one log: what the session file and the RCA cite to pin the log's end.

    ``log_id`` is the ``sha256`` of the log's first record (it names the log wherever the file is
    moved); ``name`` the file name the records' MACs are bound to; ``mac`` covers every other field.
    """

    log_id: str | None
    name: str
    seq: int
    sha256: str | None
    mac: str
    path: str = ""

    def body(self) -> dict[str, Any]:
        """The MACed fields (the path is where the checkpoint was written, not part of the identity)."""
        return {"v": 1, "log_id": self.log_id, "name": self.name, "seq": self.seq, "sha256": self.sha256}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data for the session file and the RCA."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SignedHead:
        """Read a head written by :meth:`to_dict` (or a checkpoint file).

        Raises:
            ValueError: a field is missing or has the wrong type.
        """
        seq, mac, name = data.get("seq"), data.get("mac"), data.get("name")
        log_id, sha = data.get("log_id"), data.get("sha256")
        if not (isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0):
            raise ValueError("seq")
        if not (isinstance(mac, str) and isinstance(name, str)):
            raise ValueError("mac/name")
        if not (log_id is None or isinstance(log_id, str)) or not (sha is None or isinstance(sha, str)):
            raise ValueError("log_id/sha256")
        return cls(log_id, name, seq, sha, mac, str(data.get("path", "")))

    def check(self, key: AuditKey) -> bool:
        """True when ``key`` signed exactly this head."""
        return key.check_head(self.body(), self.mac)


SLOT = 8192  # bytes per checkpoint slot: one padded JSON line (a head names an absolute path, < 4 KiB)


def anchor_path(key: AuditKey, log: str | os.PathLike[str]) -> Path:
    """The checkpoint file of the log at ``log`` (named by a hash of its absolute path)."""
    absolute = str(Path(log).resolve())
    return key.anchors_dir / f"{hashlib.sha256(absolute.encode()).hexdigest()[:32]}.head"


def open_checkpoint(target: Path) -> int:
    """Open (creating 0600, in a 0700 dir) the checkpoint file at ``target`` for :func:`write_checkpoint`."""
    if not target.parent.exists():
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(target.parent, 0o700)
    created = not target.exists()
    fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    if created:
        fsync_dir(target.parent)  # the new file's entry survives a crash like its first slot
    return fd


def write_checkpoint(
    key: AuditKey,
    log: Path,
    *,
    log_id: str | None,
    seq: int,
    sha256: str | None,
    durable: bool,
    target: Path | None = None,
    fd: int | None = None,
) -> SignedHead:
    """Sign and store the head of ``log`` in the slot of its seq's parity (two slots, written in place).

    Why two slots written in place rather than a new file renamed over the old one: the writer
    checkpoints after every append, and a create + rename per record cost 12-20x the append itself
    without fsync (and a second directory sync with it). A write torn by a crash spoils only the slot
    being written; the other still holds the previous head, which the log continues.

    ``fd`` is the open checkpoint file (:func:`open_checkpoint`) on the writer's hot path; ``target``
    is :func:`anchor_path` of ``log`` when the caller already has it.

    Raises:
        OSError: the checkpoint cannot be written.
    """
    head = SignedHead(log_id, log.name, seq, sha256, "", str(log.absolute()))
    head = SignedHead(log_id, log.name, seq, sha256, key.sign_head(head.body()), head.path)
    line = json.dumps(head.to_dict(), sort_keys=True).encode()
    if len(line) >= SLOT:
        raise OSError(f"checkpoint of {log} does not fit a {SLOT}-byte slot")
    own = fd is None
    if fd is None:
        fd = open_checkpoint(target or anchor_path(key, log))
    try:
        os.pwrite(fd, line.ljust(SLOT - 1) + b"\n", (seq % 2) * SLOT)
        if durable:
            os.fdatasync(fd)
    finally:
        if own:
            os.close(fd)
    return head


def _parse_slots(key: AuditKey, data: bytes) -> SignedHead | str | None:
    """The newest head among the two slots: a MAC-valid one first, else the newest that parses."""
    heads: list[SignedHead] = []
    for start in (0, SLOT):
        chunk = data[start : start + SLOT].strip()
        if chunk:
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                heads.append(SignedHead.from_dict(json.loads(chunk)))
    if not heads:
        return "no readable slot" if data.strip() else None
    valid = [h for h in heads if h.check(key)]
    return max(valid or heads, key=lambda h: h.seq)


def read_checkpoint(key: AuditKey, log: str | os.PathLike[str]) -> SignedHead | str | None:
    """The checkpoint stored for the log at ``log``: None if there is none, a string if it is unusable."""
    target = anchor_path(key, log)
    try:
        found = _parse_slots(key, target.read_bytes())
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"checkpoint {target} unreadable ({type(exc).__name__}: {exc})"
    return f"checkpoint {target} unreadable ({found})" if isinstance(found, str) else found


def find_checkpoint(key: AuditKey, log: str | os.PathLike[str], log_id: str | None) -> SignedHead | str | None:
    """The checkpoint of ``log``: by its path, else (a moved log) the one naming ``log_id``."""
    found = read_checkpoint(key, log)
    if found is not None or log_id is None:
        return found
    with contextlib.suppress(OSError):
        for candidate in sorted(key.anchors_dir.glob("*.head")):
            with contextlib.suppress(OSError):
                head = _parse_slots(key, candidate.read_bytes())
                if isinstance(head, SignedHead) and head.log_id == log_id and head.name == Path(log).name:
                    return head
    return None


def iter_checkpoints(key: AuditKey) -> Iterator[SignedHead]:
    """Every checkpoint this key signed (a valid MAC), in file-name order: the logs the installation wrote.

    Why: a log deleted whole leaves nothing in its directory to verify; its checkpoint, outside the
    audit directory, still says it existed (``path``, ``name``, the last ``seq``).
    """
    try:
        candidates = sorted(key.anchors_dir.glob("*.head"))
    except OSError:
        return
    for candidate in candidates:
        try:
            head = _parse_slots(key, candidate.read_bytes())
        except OSError:
            continue
        if isinstance(head, SignedHead) and head.check(key):
            yield head


def fsync_dir(directory: Path) -> None:
    """Make a new directory entry durable (the file exists after a crash, not only its data)."""
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
