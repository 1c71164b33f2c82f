"""The session's read cache: a SAFE, stable ``az`` read asked again within a short time is answered from it.

Why: one investigation reads the same things several times (the orchestrator's preflight re-reads the VM
and Network Watcher the agent just read), and each real ``az`` call costs seconds. What may be kept is
decided by the classifier (``Classification.cacheable``: a SAFE az read by the built-in read-verb rule, not
one of the moment's-state reads of az.toml's ``[cache]``, such as a capture's status), never by the caller.

The key is the exact argv, the working directory and the child's whole environment (PATH, the Azure
config dir, the identity's variables: another login or another lab is another key), hashed so no value
of it is kept. Only a successful answer (exit 0) is kept, for ``ttl_s`` seconds of the injected clock
(default :data:`DEFAULT_TTL_S`, 60 s: long enough for one investigation's repeats, short against a cloud
that changes under it). Anything that ran after a person's approval (a RISKY command may change what the
reads said) empties the cache. A served answer is audited as its own record naming its source
(``cached_from``); see :class:`netghost.shell.SafeExecShell`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_TTL_S", "CachedRead", "ReadCache"]

DEFAULT_TTL_S = 60.0
_KEPT = ("status", "exit_code", "error", "output", "stderr", "output_metadata")
_MAX_ENTRIES = 512


@dataclass(frozen=True)
class CachedRead:
    """One kept answer: the audit id of the record that produced it, its fields, and when it was kept."""

    source: str
    fields: dict[str, Any]
    stored: float


class ReadCache:
    """Answers of SAFE stable reads by (argv, cwd, environment), each for ``ttl_s`` seconds.

    ``ReadCache.DEFAULT_TTL_S`` is the default TTL (60 s).

    Args:
        ttl_s: how long an answer is served (0 keeps nothing).
        clock: monotonic seconds (tests inject one).
    """

    DEFAULT_TTL_S = DEFAULT_TTL_S

    def __init__(self, ttl_s: float = DEFAULT_TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        if not ttl_s >= 0:
            raise ValueError(f"ttl_s must be >= 0, got {ttl_s!r}")
        self.ttl_s = float(ttl_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, CachedRead] = {}

    @staticmethod
    def key(argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> str:
        """The entry key: a digest of the exact argv, the cwd and the child's environment."""
        blob = json.dumps([list(argv), cwd, sorted(env.items())], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, key: str) -> CachedRead | None:
        """The answer kept under ``key`` if it is younger than the TTL."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if self._clock() - entry.stored >= self.ttl_s:
                del self._entries[key]
                return None
            return entry

    def put(self, key: str, source: str, fields: Mapping[str, Any]) -> None:
        """Keep a record's answer (only a completed one with exit 0; nothing when the TTL is 0)."""
        if self.ttl_s <= 0 or fields.get("status") != "completed" or fields.get("exit_code") != 0:
            return
        kept = json.loads(json.dumps({k: fields.get(k) for k in _KEPT}))
        with self._lock:
            if len(self._entries) >= _MAX_ENTRIES:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = CachedRead(source, kept, self._clock())

    def clear(self) -> None:
        """Forget everything (a command that may have changed the cloud ran)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
