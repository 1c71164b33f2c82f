"""A dual-end investigation of the lab, through the whole agent at the lab's default clock scale: the two
capture windows overlap as Azure's do, so the RCA's two-point section compares shared packets and
agrees with the conclusion (loss between the points), never "share no packet" or "not the same path"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.agent.lab_capture import investigate

_CONTRADICTION = re.compile(r"share no packet|not the same path|not the same time|windows never overlapped", re.I)


@pytest.mark.slow
def test_a_dual_end_rca_compares_shared_packets_and_never_contradicts_itself(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.delenv("NETGHOST_LAB_CLOCK_SCALE", raising=False)  # the lab's own default (fast-forwarded)
    audit = tmp_path / "audit"
    sid = investigate("path-packet-loss", audit, monkeypatch, peer="redis-primary")
    rca = (audit / f"ghost_rca_{sid}.md").read_text()
    (semantic,) = audit.glob("captures/*/artifacts/*_vs_*_semantic.json")
    comp = json.loads(semantic.read_text())["comparison"]
    a, b = comp["points"]["a"], comp["points"]["b"]
    overlap = min(a["last_ts"], b["last_ts"]) - max(a["first_ts"], b["first_ts"])
    assert overlap > 30.0  # two 60 s windows started seconds apart, not lab minutes apart
    assert comp["shared"] and comp["matched_packets"] > 1000
    assert "## Two-point comparison" in rca
    assert not _CONTRADICTION.search(rca), _CONTRADICTION.search(rca)
    top = re.search(r"\*\*Most likely issue:\*\* (.*)", rca)
    assert top is not None and "lost between" in top.group(1)  # the path's loss, the world's fault
