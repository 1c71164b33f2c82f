"""Property: whatever a model accepts and writes, its exported JSON Schema accepts too.

Consumers outside Python validate against ``schemas/``; if the schema were stricter than the model
(or the model wrote something the schema rejects) those consumers would reject our own files.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.contracts import (
    HypothesisState,
    SessionState,
    TaskRecord,
    TaskState,
    parse_orchestrator_response,
)
from netghost.contracts.export import build_schemas


@functools.cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(build_schemas()[f"{name}.schema.json"])


_text = st.text(max_size=24)
_maybe_text = st.none() | _text
_stamp = st.builds(
    lambda d, frac: d.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z",
    st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1)),
    st.sampled_from(["", ".5", ".123456", ".000000"]),
)
_maybe_stamp = st.none() | _stamp
_paths = st.none() | st.from_regex(r"/tmp/captures/[a-z0-9_-]{1,12}\.(pcap|json|md)", fullmatch=True)


@st.composite
def _task_records(draw: st.DrawFn) -> dict[str, Any]:
    record: dict[str, Any] = {
        "task_id": "ghost_" + draw(st.from_regex(r"[a-z0-9-]{1,12}_2025\d{4}T\d{6}", fullmatch=True)),
        "intent": "capture_traffic",
        "state": draw(st.sampled_from(list(TaskState))).value,
        "timestamps": {
            "created": draw(_stamp),
            "last_poll": draw(_maybe_stamp),
            "completed": draw(_maybe_stamp),
        },
    }
    optional: dict[str, Any] = {
        "session_id": draw(_maybe_text),
        "target": draw(_maybe_text),
        "target_type": draw(st.sampled_from([None, "vm", "aks"])),
        "investigation_context": draw(_text),
        "parameters": draw(
            st.none()
            | st.fixed_dictionaries(
                {
                    "duration_seconds": st.integers(1, 300),
                    "storage_account": st.text(min_size=1, max_size=10),
                    "resource_group": st.text(min_size=1, max_size=10),
                }
            )
        ),
        "local_pcap_path": draw(_paths),
        "report_path": draw(_paths),
        "cleanup_plan": draw(
            st.lists(st.fixed_dictionaries({"command": _text, "executed": st.booleans()}), max_size=3)
        ),
        "cleanup_status": draw(st.sampled_from([None, "pending", "completed", "partial", "skipped"])),
        "poll_count": draw(st.integers(0, 20)),
        "shell_audit_ids": draw(st.lists(_text, max_size=3)),
        "error_detail": draw(_maybe_text),
        "duration_seconds": draw(st.none() | st.floats(0, 1e5, allow_nan=False)),
    }
    keep = draw(st.sets(st.sampled_from(sorted(optional))))
    record.update({k: v for k, v in optional.items() if k in keep})
    return record


@settings(max_examples=150, deadline=None)
@given(_task_records())
def test_task_records_agree_with_schema(document: dict[str, Any]) -> None:
    record = TaskRecord.model_validate(document)
    assert record.model_dump(mode="json", exclude_unset=True) == document
    full = record.model_dump(mode="json")
    _validator("task-record").validate(document)
    _validator("task-record").validate(full)
    assert TaskRecord.model_validate(full) == record


@settings(max_examples=100, deadline=None)
@given(
    hypotheses=st.lists(
        st.fixed_dictionaries(
            {
                "id": st.from_regex(r"h[0-9]{1,2}", fullmatch=True),
                "description": _text,
                "state": st.sampled_from([s.value for s in HypothesisState]),
                "denial_count": st.integers(0, 5),
            }
        ),
        max_size=4,
    ),
    turn_count=st.integers(0, 60),
    created_at=_stamp,
)
def test_session_files_agree_with_schema(
    hypotheses: list[dict[str, Any]], turn_count: int, created_at: str
) -> None:
    session = SessionState.model_validate(
        {
            "session_id": "ghost_20250115_143022",
            "created_at": created_at,
            "model": "gemini-2.5-flash",
            "turn_count": turn_count,
            "hypothesis_log": hypotheses,
            "denial_tracker": {h["id"]: h["denial_count"] for h in hypotheses},
        }
    )
    written = session.to_file_dict()
    _validator("session-state").validate(written)
    assert SessionState.model_validate(written).to_file_dict() == written


@settings(max_examples=150, deadline=None)
@given(
    status=st.sampled_from(
        ["task_pending", "task_completed", "task_failed", "task_cancelled", "task_timed_out"]
    ),
    state=st.sampled_from([s.value for s in TaskState]),
    extras=st.fixed_dictionaries(
        {},
        optional={
            "investigation_context": _text,
            "poll_count": st.integers(0, 20),
            "max_polls": st.integers(1, 20),
            "elapsed_seconds": st.floats(0, 1e4, allow_nan=False),
            "cleanup_status": st.sampled_from([None, "pending", "completed", "partial", "skipped"]),
            "error_detail": _maybe_text,
            "message": _text,
            "result": st.none()
            | st.fixed_dictionaries({}, optional={"report_path": _text, "local_pcap_path": _text})
            | st.fixed_dictionaries({"mode": st.just("single_end_fallback"), "report_path": _text}),
            "paired_task": st.fixed_dictionaries(
                {"task_id": _text, "state": st.sampled_from([s.value for s in TaskState])},
                optional={"poll_count": st.integers(0, 20), "error_detail": _text},
            ),
            "_meta": st.fixed_dictionaries(
                {}, optional={"denial_count": st.integers(0, 5), "warning": _text}
            ),
        },
    ),
)
def test_task_responses_agree_with_schema(status: str, state: str, extras: dict[str, Any]) -> None:
    document = {"task_id": "ghost_vm_20250115T143200", "status": status, "state": state, **extras}
    parsed = parse_orchestrator_response(document)
    assert parsed.status == status
    assert parsed.model_dump(mode="json", exclude_unset=True) == document
    _validator("orchestrator-response").validate(document)
