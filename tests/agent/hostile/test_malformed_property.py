"""Generated malformed replies through the real google-genai SDK against the fake Gemini server.

The property: whatever comes back, no exception escapes but the documented clean stop
(:class:`~netghost.errors.LlmError` from the gateway, :class:`~netghost.errors.BrainError` from the
brain); every call leaves exactly one ``llm_call`` record naming the same failure class; a stop maps to a
non-zero exit code that says whether an answer came (4) or the API failed (3); and a usable reply becomes a
turn whose every string any strict UTF-8 writer accepts, whose calls the loop can answer, and which goes
back to the API unchanged on the next request.

Three levels, fastest first: the gateway and the brain's reader (the bulk, ≥ 2,000 replies), the loop with
the real brain, gateway and journal (a few hundred), and the whole ``ghost-agent`` command as a child
process (a handful, for the real exit code and stderr).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netghost.agent._dispatch import Dispatcher, WatchedShell
from netghost.agent._exit_codes import ExitCode, exit_code_for
from netghost.agent._journal import Journal
from netghost.agent._loop import Loop
from netghost.agent._session import new_session
from netghost.agent.brains import (
    INVALID_CALL,
    MAX_ARGS_BYTES,
    MAX_TEXT_CHARS,
    GeminiBrain,
    Message,
    ModelTurn,
    from_response,
    to_contents,
)
from netghost.errors import BrainError, LlmError
from netghost.governance import WalWriter, read_wal, verify
from netghost.lab.fake_gemini import FakeGemini, RawReply
from netghost.llm import FAILURES, RECORD_KIND, REPLY_FAILURES, LlmGateway
from tests.agent.fakes import NOW, RecordingUi, TableOrchestrator, TableShell

from .harness import complete, run_hostile
from .strategies import replies

MODEL = "gemini-2.5-flash"
BULK_EXAMPLES = 2_000
LOOP_EXAMPLES = 200
CLI_EXAMPLES = 4
FUNCTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")
COUNTS: dict[str, int] = {}
"""Generated replies per level (printed at the end of the module: the property test's count)."""


class _RecordingWal(WalWriter):
    """A real WAL that also keeps what it stored (re-reading a growing log every example would cost O(n²))."""

    def __init__(self, path: Path, **kw: Any) -> None:
        super().__init__(path, **kw)
        self.stored: list[dict[str, Any]] = []

    def append(self, record: Mapping[str, Any]) -> dict[str, Any]:
        out = super().append(record)
        self.stored.append(out)
        return out


class _Rig:
    """One fake server answering every request with the current reply, a gateway on a WAL, the WAL's records."""

    def __init__(self, wal: _RecordingWal) -> None:
        self.reply: RawReply | None = None
        self.fake = FakeGemini(lambda _body: self.reply)
        self.wal = wal
        self.gateway = LlmGateway(audit=self.wal, environ={"GEMINI_API_KEY": "k",
                                                           "GOOGLE_GEMINI_BASE_URL": self.fake.base_url},
                                  sleeper=lambda _s: None, max_retries=1)

    def close(self) -> None:
        self.gateway.close()
        self.fake.close()


@pytest.fixture(scope="module")
def rig() -> Iterator[_Rig]:
    with tempfile.TemporaryDirectory() as root:
        made = _Rig(_RecordingWal(Path(root) / "llm_calls.jsonl", fsync=False))  # durability is not under test
        yield made
        made.close()
        assert read_wal(made.wal.path).records == made.wal.stored  # what was kept is what is on disk


def _strict(value: Any) -> None:
    """Every string and key encodes as strict UTF-8 and holds no NUL (what the WAL and argv need)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")
    assert "\x00" not in text


def _check_stop(exc: LlmError, reply: RawReply, record: dict[str, Any]) -> None:
    assert exc.failure in FAILURES and exc.failure not in ("internal_error", "interrupted"), exc.failure
    assert record["outcome"] == "error" and record["failure"] == exc.failure
    assert "\n" not in str(exc) and len(str(exc)) < 600
    code = exit_code_for(BrainError(str(exc), failure=exc.failure))
    intact = reply.truncate_at is None
    if intact and reply.status == 200:
        assert exc.failure in REPLY_FAILURES and code == ExitCode.MODEL_REPLY, (exc.failure, str(exc))
    elif intact:
        assert exc.failure in {"api_error", "response_too_large"} and code in (ExitCode.MODEL_API,
                                                                                ExitCode.MODEL_REPLY), exc.failure
    else:
        assert exc.failure in {"transport", "api_error"}, exc.failure


def _check_turn(turn: ModelTurn) -> None:
    message = turn.message()
    data = message.to_json()
    _strict(data)
    assert sum(len(p.text or "") for p in turn.parts) <= MAX_TEXT_CHARS
    assert turn.text or turn.calls, "an empty turn must have been a stop (empty_reply)"
    for call in turn.calls:
        assert isinstance(call.args, dict)
        if call.error is None:
            assert call.name and len(json.dumps(call.args, ensure_ascii=False).encode()) <= MAX_ARGS_BYTES
        else:
            assert call.args == {} and (call.name == INVALID_CALL or FUNCTION_NAME.match(call.name))
    assert Message.from_json(json.loads(json.dumps(data))) == message  # the journal's round trip
    to_contents([Message.user_text("x"), message])  # and it can be sent back


@settings(max_examples=BULK_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
@given(reply=replies())
def test_any_reply_is_a_turn_or_a_named_stop(rig: _Rig, reply: RawReply) -> None:
    COUNTS["gateway and reader"] = COUNTS.get("gateway and reader", 0) + 1
    rig.reply = reply
    before = len(rig.wal.stored)
    try:
        response = rig.gateway.generate(MODEL, "web-vm-01 cannot reach redis", purpose="agent_turn")
    except LlmError as exc:
        (record,) = rig.wal.stored[before:]  # exactly one record for the call
        assert record["kind"] == RECORD_KIND
        _check_stop(exc, reply, record)
        return
    (record,) = rig.wal.stored[before:]
    assert record["outcome"] == "ok" and record["failure"] is None
    assert reply.status == 200 and reply.truncate_at is None
    _check_turn(from_response(response))


class _LoopRig:
    """The product's wiring: the real journal, and the gateway writing its records into it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.journal = Journal(root, "ghost_20250115_143022")
        self.reply: RawReply | None = None
        self.fake = FakeGemini(lambda _body: self.reply)
        self.gateway = LlmGateway(audit=self.journal.writer, environ={
            "GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": self.fake.base_url}, sleeper=lambda _s: None,
            max_retries=1)
        self.brain = GeminiBrain(MODEL, lambda m, c, cfg: self.gateway.generate(m, c, cfg, purpose="agent_turn"))

    def records_since(self, seq: int) -> list[dict[str, Any]]:
        """The journal's records from ``seq`` on, read from the end of the file (it only grows)."""
        start = max(0, self.journal.path.stat().st_size - 2_000_000)
        with self.journal.path.open("rb") as f:
            f.seek(start)
            lines = f.read().splitlines()[1 if start else 0 :]  # the first line read may be cut
        found = [json.loads(line) for line in lines[-50:] if line.strip()]
        return [r for r in found if r["seq"] >= seq]


@pytest.fixture(scope="module")
def loop_rig() -> Iterator[_LoopRig]:
    with tempfile.TemporaryDirectory() as root:
        made = _LoopRig(Path(root))
        yield made
        made.gateway.close()
        made.fake.close()
        made.journal.close()
        assert verify(made.journal.path).ok  # every record the loop and the gateway wrote still chains


@settings(max_examples=LOOP_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
@given(reply=replies(), more=st.booleans())
def test_the_loop_ends_with_a_meaningful_code_or_goes_on(loop_rig: _LoopRig, reply: RawReply, more: bool) -> None:
    COUNTS["loop"] = COUNTS.get("loop", 0) + 1
    loop_rig.reply = reply
    shell = TableShell()
    watched = WatchedShell(shell)
    state = new_session("ghost_20250115_143022", model=MODEL, audit_dir=loop_rig.root, now=NOW)
    history = [Message.user_text("web-vm-01 cannot reach redis-primary on port 6379")]
    ui = RecordingUi(["c", "go on"] if more else [], interactive=more)
    loop = Loop(brain=loop_rig.brain, dispatcher=Dispatcher(watched, TableOrchestrator(watched)), state=state,
                journal=loop_rig.journal, ui=ui, system_prompt="SP", history=history, save=lambda: None,
                now=lambda: NOW)
    seq = loop_rig.journal.writer.next_seq
    end = loop.turn()
    records = [r for r in loop_rig.records_since(seq) if r["kind"] == RECORD_KIND]
    assert len(records) == 1
    if end is not None and end.reason == "brain_error":
        assert end.error is not None and end.error.failure == records[-1]["failure"]
        assert exit_code_for(end.error) in (ExitCode.MODEL_API, ExitCode.MODEL_REPLY)
        assert state.turn_count == 0  # the turn did not happen: a resume asks again
        return
    assert records[-1]["outcome"] == "ok"
    assert end is None or end.reason in ("complete", "done")
    _strict(state.model_dump(mode="json"))
    _strict([m.to_json() for m in history])
    answered = [p.response for m in history[2:] for p in m.parts if p.response is not None]
    for response in answered:
        assert isinstance(response.response, dict) and response.response.get("status")


def _first_turn_only(reply: RawReply) -> Any:
    """The generated reply for the first turn (and its retries), then a model that completes."""
    done = complete("Done.")

    def answer(body: dict[str, Any]) -> Any:
        return reply if len(body.get("contents") or []) == 1 else done

    return answer


@pytest.mark.slow
@settings(max_examples=CLI_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
@given(reply=replies().filter(lambda r: r.truncate_at is None and len(r.body) < 200_000))
def test_the_command_line_never_shows_a_traceback(reply: RawReply) -> None:
    with tempfile.TemporaryDirectory() as root:
        run = run_hostile(Path(root), [_first_turn_only(reply)], subprocess_run=True)
        COUNTS["command line"] = COUNTS.get("command line", 0) + 1
        assert "Traceback" not in run.console, run.console[-3000:]
        assert run.code in (ExitCode.OK, ExitCode.MODEL_API, ExitCode.MODEL_REPLY), run.console[-2000:]
        calls = [r for r in run.records("ghost_turns") if r["kind"] == RECORD_KIND]
        assert calls, "every model call leaves its llm_call record"
        if run.code != ExitCode.OK:
            assert "Session saved. Resume with: ghost-agent --resume ghost_" in run.console
            assert calls[-1]["outcome"] == "error" and calls[-1]["failure"] in FAILURES
            assert exit_code_for(BrainError("", failure=calls[-1]["failure"])) == run.code


def test_zz_report_the_count(rig: _Rig, loop_rig: _LoopRig, capsys: pytest.CaptureFixture[str]) -> None:
    """Runs last in this module (tests run in file order): how many replies each level was given, and the
    requests the fake answered (retries included)."""
    requests = {"gateway and reader": len(rig.fake.requests), "loop": len(loop_rig.fake.requests)}
    with capsys.disabled():
        print(f"\nmalformed-reply property test: generated replies {COUNTS}, requests answered {requests}")
    if "gateway and reader" in COUNTS:  # the bulk ran in this session (not deselected)
        assert COUNTS["gateway and reader"] >= BULK_EXAMPLES
