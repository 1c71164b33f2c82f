"""A gateway pointed at a fake Gemini server, with a recording sleeper (tests never sleep)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from netghost.governance import read_wal
from netghost.lab import FakeGemini
from netghost.llm import LlmGateway


@dataclass
class Rig:
    """A fake server, a gateway talking to it, the WAL path and the waits the gateway asked for."""

    fake: FakeGemini
    gateway: LlmGateway
    wal: Path
    slept: list[float] = field(default_factory=list)

    def records(self) -> list[dict[str, Any]]:
        return read_wal(self.wal).records


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []

    def make(turns: Any, **kw: Any) -> Rig:
        fake = FakeGemini(turns)
        slept: list[float] = []
        wal = tmp_path / "audit" / "llm_calls.jsonl"
        gateway = LlmGateway(audit=wal, environ={"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": fake.base_url},
                             sleeper=slept.append, **kw)
        made.append(Rig(fake, gateway, wal, slept))
        return made[-1]

    yield make
    for r in made:
        r.gateway.close()
        r.fake.close()
