"""A WAL entry read back and re-dumped keeps its exact text, so its stored hash stays valid."""

from __future__ import annotations

import json
from pathlib import Path

from netghost.contracts.cabincrew import WalEntry
from netghost.governance.plan_token import canonical_json, sha256_tagged
from netghost.governance.wal import WalWriter, read_wal


def test_wal_entry_redump_preserves_the_hash(tmp_path: Path) -> None:
    path = tmp_path / "wf.jsonl"
    with WalWriter(path) as writer:
        writer.append({"v": 1, "workflow_id": "wf-1", "entry_type": "workflow_started", "data": {}})
    (stored,) = read_wal(path).records
    stored["ts"] = stored["ts"][:20] + "000000Z"  # a whole second: the case datetime would shorten
    redumped = WalEntry.model_validate(stored).model_dump(mode="json")
    assert redumped["ts"] == stored["ts"]
    body = {k: v for k, v in redumped.items() if k != "sha256"}
    original = {k: v for k, v in stored.items() if k != "sha256"}
    assert sha256_tagged(canonical_json(body)) == sha256_tagged(canonical_json(original))
    assert json.loads(canonical_json(redumped)) == stored
