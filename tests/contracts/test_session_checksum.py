"""``_checksum`` of ghost_session.json is computed and verified exactly as seed 001 §3 step 2 says."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.contracts import (
    CHECKSUM_KEY,
    Hypothesis,
    HypothesisState,
    SessionState,
    check_session_checksum,
    compute_session_checksum,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "001_s8_session-state.json"


def _seed_algorithm(session_data: dict[str, Any]) -> str:
    """Seed 001 §3 step 2, transcribed: pop the checksum, dump with sort_keys, hash, hexdigest."""
    session_data = dict(session_data)
    session_data.pop("_checksum", None)
    return hashlib.sha256(json.dumps(session_data, sort_keys=True).encode()).hexdigest()


def _session() -> SessionState:
    return SessionState(
        session_id="ghost_20250115_143022",
        created_at="2025-01-15T14:30:22Z",
        model="gemini-2.5-flash",
        hypothesis_log=[
            Hypothesis(
                id="h1",
                description="NSG blocks TCP 6379 — ünïcode too",
                state=HypothesisState.ACTIVE,
                denial_count=0,
            )
        ],
        denial_tracker={"h1": 0},
        active_hypothesis_ids=["h1"],
    )


def test_checksum_matches_the_seed_algorithm_on_the_seed_example() -> None:
    data = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert compute_session_checksum(data) == _seed_algorithm(data)
    assert len(compute_session_checksum(data)) == 64


def test_saved_file_verifies_after_a_round_trip_through_disk(tmp_path: Path) -> None:
    path = tmp_path / "ghost_session.json"
    path.write_text(json.dumps(_session().to_file_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
    loaded = json.loads(path.read_text(encoding="utf-8"))
    assert check_session_checksum(loaded) == "ok"
    assert loaded[CHECKSUM_KEY] == _seed_algorithm(loaded)
    assert SessionState.model_validate(loaded).checksum == loaded[CHECKSUM_KEY]


def test_checksum_does_not_depend_on_indentation_or_key_order() -> None:
    data = _session().to_file_dict()
    reordered = dict(reversed(list(data.items())))
    compact = json.loads(json.dumps(reordered, separators=(",", ":")))
    assert check_session_checksum(compact) == "ok"


def test_edited_file_is_a_mismatch_and_missing_checksum_is_absent() -> None:
    data = _session().to_file_dict()
    edited = dict(data, turn_count=data["turn_count"] + 1)
    assert check_session_checksum(edited) == "mismatch"
    unsigned = {k: v for k, v in data.items() if k != CHECKSUM_KEY}
    assert check_session_checksum(unsigned) == "absent"
    assert check_session_checksum(dict(unsigned, _checksum=None)) == "absent"


def test_saved_file_carries_every_field_and_the_format_version() -> None:
    data = _session().to_file_dict()
    assert data["v"] == 2  # v2: the sealed format (v1 files carried only the unkeyed checksum)
    assert set(data) == {
        "v", "session_id", "created_at", "resumed_from", "model", "audit_dir", "turn_count",
        "rca_report_path", "hypothesis_log", "denial_tracker", "consecutive_denial_counter",
        "active_hypothesis_ids", "active_task_ids", "evidence_conflicts", "manual_cleanup_pending",
        "is_resume", "audit_heads", "rca_confidence", "_checksum",
    }  # fmt: skip


def test_the_seal_is_made_from_the_content_and_the_seed_checksum_covers_it() -> None:
    """The sealing function sees the content without either trailer; the seed's recipe then covers the seal,
    so a reader following seed 001 still verifies the file and an edited seal breaks its checksum."""
    seen: list[dict[str, Any]] = []

    def seal(content: Any) -> str:
        seen.append(dict(content))
        return "hmac-sha256:sealed"

    data = _session().to_file_dict(seal=seal)
    assert seen == [{k: v for k, v in data.items() if k not in ("_seal", CHECKSUM_KEY)}]
    assert data["_seal"] == "hmac-sha256:sealed" and check_session_checksum(data) == "ok"
    assert data[CHECKSUM_KEY] == _seed_algorithm(data)
    assert check_session_checksum(dict(data, _seal="hmac-sha256:other")) == "mismatch"
    assert SessionState.model_validate(data).seal == "hmac-sha256:sealed"


_json_leaf = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=20)


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(["model", "audit_dir", "rca_report_path", "resumed_from", "session_id"]),
    value=st.text(min_size=1, max_size=30),
)
def test_any_change_to_a_field_is_detected(key: str, value: str) -> None:
    data = _session().to_file_dict()
    if data[key] == value:
        return
    assert check_session_checksum(dict(data, **{key: value})) == "mismatch"


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=10).filter(lambda k: k != CHECKSUM_KEY), _json_leaf, max_size=8))
def test_compute_agrees_with_the_seed_algorithm_for_any_json_object(data: dict[str, Any]) -> None:
    assert compute_session_checksum(data) == _seed_algorithm(data)
    signed = dict(data, _checksum=compute_session_checksum(data))
    assert check_session_checksum(signed) == "ok"
