"""The tool-use loop of seed 001 §4: model turn, every call dispatched, results back, saved every turn.

Each turn: ask the brain (history in, model turn out); a turn with no function call is shown and offers
[C]ontinue / [D]one (without a terminal it counts as Done); otherwise every call is dispatched in order
(``run_shell_cmd`` to the shell, the task tools to the orchestrator, see :mod:`netghost.agent._dispatch`)
and ``complete_investigation`` ends the loop for the RCA. Before a call is dispatched its hypothesis
arguments are applied (:mod:`netghost.agent._hypotheses`); after it, a human's denial is charged to
the active hypotheses and the seed's ``_meta`` (with the human's reason) is put into the result the
model sees next (:mod:`netghost.agent._denials`). Every model turn and tool result is journaled, and
the session file is saved at the end of every turn. ``MAX_LOOP_TURNS`` ends in [E]xtend / [G]enerate.
A tool failure that means the environment is broken (``broken`` names it: az missing, not logged in, a
login Entra ID refuses ...) ends the loop at once with that reason: its result is no evidence about the
network, and no conclusion may be drawn from it.

Calls that need nobody's approval run together: a run of consecutive ``run_shell_cmd`` calls the shell would
run unasked (SAFE reads) goes to ``shell.execute_many`` at once (audit ids and results in call order, the
journal too); anything else (a RISKY command, a task tool, complete_investigation) is dispatched alone in its
place, after the calls before it ended and before the ones after it start. Why consecutive runs and not
"every SAFE call first": a read after a RISKY call may be meant to see its effect, and a denial or a Ctrl-C
at an approval must act on the rest of the turn exactly as when calls ran one by one (a denial answers that
call and the turn goes on; Ctrl-C stops it). Hypothesis updates of a run are applied in call order before it.

Two budgets are the loop's (``policies/budgets.toml``): the calls run from one turn (the rest of the turn
is answered with a ``budget_exceeded`` error and never dispatched) and the hypotheses of a session (a new
one past the limit is not recorded, and the result says so); each refusal is journaled (``budget_refused``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from netghost.agent._denials import charge_denial, is_denial
from netghost.agent._dispatch import Dispatched, Dispatcher, describe, split_args
from netghost.agent._hypotheses import apply_updates, mark_succeeded
from netghost.agent._journal import Journal
from netghost.agent._untrusted import redact_intent, scrub
from netghost.agent.brains import Brain, BrainError, FunctionCall, FunctionResponse, Message, ModelTurn, Part
from netghost.contracts import CompleteInvestigationArgs, SessionState
from netghost.orchestrator import Budgets, EnvironmentStop, budget_message
from netghost.redact import clean_text

__all__ = ["EXTEND_BY", "MAX_LOOP_TURNS", "Loop", "LoopEnd", "Ui"]

MAX_LOOP_TURNS = 50
EXTEND_BY = 10
EndReason = Literal["complete", "done", "max_turns", "interrupted", "brain_error", "environment"]
_SUCCESS = frozenset({"completed", "task_completed", "task_pending"})


class Ui(Protocol):
    """What the loop shows and asks. ``interactive`` is False without a terminal (choices take defaults)."""

    interactive: bool

    def brain(self, text: str) -> None:
        """Show the model's reasoning (``[Ghost Agent] ...``)."""

    def error(self, text: str) -> None:
        """Show an ``[ERROR]`` line."""

    def notice(self, text: str) -> None:
        """Show a plain line."""

    def choose(self, question: str, options: Mapping[str, str], default: str) -> str:
        """One of ``options``' keys; ``default`` when nobody can answer."""

    def ask(self, prompt: str) -> str:
        """A line of text ("" when nobody can answer)."""


@dataclass
class LoopEnd:
    """Why the loop stopped; ``completion`` holds complete_investigation's arguments when it was called."""

    reason: EndReason
    completion: CompleteInvestigationArgs | None = None
    error: BrainError | None = None
    last_text: str = ""
    environment: EnvironmentStop | None = None
    """``environment``: the fault that ended the loop."""


@dataclass
class Loop:
    """One investigation's loop.

    Args:
        brain: the model.
        dispatcher: the shell and the orchestrator behind the five dispatchable tools.
        state: the session (edited in place; ``save`` writes it).
        journal: the conversation log.
        ui: the console.
        system_prompt: the ``system_instruction``.
        history: the conversation so far (the user's problem statement first; a resumed one in full).
        save: writes the session file (called every turn and before every exit).
        now: the clock.
        interrupted: True once Ctrl-C was pressed at an approval prompt (the gate turned it into a denial).
        broken: the environment fault a tool call showed so far (None while the environment works).
        max_turns: ``MAX_LOOP_TURNS``.
        budgets: the session's budgets (calls per turn and hypotheses are enforced here).
    """

    brain: Brain
    dispatcher: Dispatcher
    state: SessionState
    journal: Journal
    ui: Ui
    system_prompt: str
    history: list[Message]
    save: Callable[[], None]
    now: Callable[[], datetime]
    interrupted: Callable[[], bool] = lambda: False
    broken: Callable[[], EnvironmentStop | None] = lambda: None
    max_turns: int = MAX_LOOP_TURNS
    budgets: Budgets = field(default_factory=Budgets.defaults)
    last_text: str = field(default="", init=False)

    def run(self) -> LoopEnd:
        """Turn until complete_investigation, Done, the turn limit (not extended), Ctrl-C or a brain error."""
        while True:
            while self.state.turn_count < self.max_turns:
                end = self.turn()
                if end is not None:
                    return end
            self.ui.notice(f"[Ghost Agent] Maximum investigation turns ({self.max_turns}) reached.")
            choice = self.ui.choose("Options: [E]xtend 10 more turns / [G]enerate RCA now",
                                    {"e": "extend", "g": "generate"}, default="g")
            self.journal.write("user_choice", turn=self.state.turn_count, choice=choice)
            if choice != "e":
                return LoopEnd("max_turns", last_text=self.last_text)
            self.max_turns += EXTEND_BY

    def turn(self) -> LoopEnd | None:
        """One turn; a :class:`LoopEnd` when the loop must stop."""
        self.state.turn_count += 1
        turn_no = self.state.turn_count
        try:
            reply = self.brain.next_turn(self.history, system_prompt=self.system_prompt)
        except BrainError as exc:
            self.state.turn_count -= 1  # the turn did not happen; a resume asks again
            self.journal.write("session_event", event="brain_error", turn=self.state.turn_count,
                               failure=exc.failure, message=str(exc))
            self.save()
            return LoopEnd("brain_error", error=exc, last_text=self.last_text)
        self.journal.write("model_turn", turn=turn_no, brain=self.brain.name, model=self.brain.model,
                           message=reply.message().to_json(), finish_reason=reply.finish_reason, usage=reply.usage,
                           after_audit_id=self.dispatcher.shell.last_audit_id)
        if reply.text:
            self.last_text = reply.text
            self.ui.brain(reply.text)
        if not reply.calls:
            return self._text_only(reply)
        self.history.append(reply.message())
        return self._dispatch_all(reply, turn_no)

    def _text_only(self, reply: ModelTurn) -> LoopEnd | None:
        if not reply.text:
            self.ui.brain("(the model returned no text and no tool call)")
        self.history.append(reply.message())
        choice = self.ui.choose("Continue investigation? [C]ontinue / [D]one", {"c": "continue", "d": "done"},
                                default="d")
        if choice == "d":
            self.journal.write("user_choice", turn=self.state.turn_count, choice="done")
            self.save()
            return LoopEnd("done", last_text=self.last_text)
        instruction, redacted = redact_intent(clean_text(self.ui.ask("Your next instruction > ")).strip()
                                              or "Continue the investigation.")
        if redacted:
            self.ui.notice(redacted)
        self.journal.write("user_choice", turn=self.state.turn_count, choice="continue")
        self.journal.write("user_turn", turn=self.state.turn_count, text=instruction)
        self.history.append(Message.user_text(instruction))
        self.save()
        return None

    def _dispatch_all(self, reply: ModelTurn, turn_no: int) -> LoopEnd | None:
        responses: list[Part] = []
        limit, count = self.budgets.calls_per_turn, len(reply.calls)
        if count > limit:
            self.journal.write("budget_refused", turn=turn_no, budget="calls_per_turn", limit=limit, count=count,
                               refused=[{"index": i, "name": c.name, "call_id": c.id}
                                        for i, c in enumerate(reply.calls) if i >= limit])
            self.ui.error(budget_message("calls_per_turn", limit, count, f"Calls {limit + 1}-{count} of turn "
                                                                          f"{turn_no} were not run."))
        index = 0
        while index < len(reply.calls):
            call = reply.calls[index]
            index += 1
            if index > limit:
                refusal = {"status": "error", "error": "budget_exceeded", "tool": call.name,
                           "budget": "calls_per_turn", "limit": limit, "count": count,
                           "message": budget_message("calls_per_turn", limit, count, "This call was not run.")}
                responses.append(Part(response=FunctionResponse(call.name, refusal, call.id)))
                continue
            if call.error is not None:  # malformed (no name, args not an object, too large): answered, not run
                responses.append(Part(response=FunctionResponse(call.name, self._malformed(call, index - 1), call.id)))
                continue
            reads = self._reads_from(reply.calls, index - 1, limit)
            if len(reads) > 1:  # SAFE reads side by side: run at once, answered and booked in call order
                index += len(reads) - 1
                for part in self._dispatch_reads(reads, index - len(reads), turn_no):
                    responses.append(part)
                fault = self.broken()
                if fault is not None:
                    self._close_turn(responses)
                    return LoopEnd("environment", last_text=self.last_text, environment=fault)
                continue
            notes = self._notes(call, turn_no)
            if call.name == "complete_investigation":
                end = self._complete(call, index - 1, notes)
                if isinstance(end, LoopEnd):
                    return end
                responses.append(Part(response=FunctionResponse(call.name, end, call.id)))
                continue
            result = self._dispatch_one(call, index - 1, turn_no, notes)
            responses.append(Part(response=FunctionResponse(call.name, result, call.id)))
            if self.interrupted():
                self._close_turn(responses)
                return LoopEnd("interrupted", last_text=self.last_text)
            fault = self.broken()
            if fault is not None:  # the rest of the turn's calls would fail the same way
                self._close_turn(responses)
                return LoopEnd("environment", last_text=self.last_text, environment=fault)
        self._close_turn(responses)
        return None

    def _notes(self, call: FunctionCall, turn_no: int) -> list[str]:
        """Apply ``call``'s hypothesis arguments (before it runs); the notes on what was refused."""
        _, extra = split_args(call.args)
        hypotheses, budget_note = self._hypotheses_within_budget(extra.get("hypotheses"), turn_no)
        notes = apply_updates(self.state, hypotheses, extra.get("active_hypothesis_ids"), now=self.now())
        return [budget_note, *notes] if budget_note else notes

    def _reads_from(self, calls: tuple[FunctionCall, ...] | list[FunctionCall], start: int,
                    limit: int) -> list[tuple[FunctionCall, dict[str, Any]]]:
        """The run of calls from ``start`` (within the budget) that the shell would run unasked: SAFE reads.

        Why only a run of consecutive ones: a read after a RISKY call may be meant to see its effect, and a
        denial or Ctrl-C at an approval must act on the rest of the turn as when calls ran one by one.
        """
        run: list[tuple[FunctionCall, dict[str, Any]]] = []
        for call in calls[start:limit]:
            request = self.dispatcher.shell_request(call.name, call.args) if call.error is None else None
            if request is None:
                break
            run.append((call, request))
        return run

    def _dispatch_reads(self, reads: list[tuple[FunctionCall, dict[str, Any]]], first: int,
                        turn_no: int) -> list[Part]:
        notes = [self._notes(call, turn_no) for call, _ in reads]  # in call order, before any of them runs
        done = self.dispatcher.call_reads([request for _, request in reads])
        return [Part(response=FunctionResponse(call.name, self._book(call, first + i, turn_no, d, n), call.id))
                for i, ((call, _), d, n) in enumerate(zip(reads, done, notes, strict=True))]

    def _hypotheses_within_budget(self, updates: object, turn_no: int) -> tuple[object, str | None]:
        """The updates without new hypotheses past the session's budget, and the note saying what was refused."""
        if not isinstance(updates, list):
            return updates, None
        known = {h.id for h in self.state.hypothesis_log}
        limit = self.budgets.hypotheses_per_session
        kept: list[object] = []
        refused: list[str] = []
        for update in updates:
            hid = str(update.get("id")) if isinstance(update, Mapping) and update.get("id") else None
            if hid is not None and hid not in known:
                if len(known) >= limit:
                    refused.append(hid)
                    continue
                known.add(hid)
            kept.append(update)
        if not refused:
            return updates, None
        count = len(known) + len(refused)
        shown = ", ".join(refused[:5]) + (f" and {len(refused) - 5} more" if len(refused) > 5 else "")
        self.journal.write("budget_refused", turn=turn_no, budget="hypotheses_per_session", limit=limit,
                           count=count, refused=refused[:100])
        return kept, budget_message("hypotheses_per_session", limit, count, f"Not recorded: {shown}.")

    def _close_turn(self, responses: list[Part]) -> None:
        self.history.append(Message("user", tuple(responses)))
        self.save()

    def _malformed(self, call: FunctionCall, index: int) -> dict[str, Any]:
        answer = {"status": "error", "error": "invalid_call", "tool": call.name, "message": call.error,
                  "hint": "Call one of the declared functions by name, with its arguments as a JSON object."}
        self.journal.write("invalid_call", turn=self.state.turn_count, index=index, name=call.name,
                           call_id=call.id, meta={}, response=answer, args=call.args)
        return answer

    def _complete(self, call: FunctionCall, index: int, notes: list[str]) -> LoopEnd | dict[str, Any]:
        tool_args, _ = split_args(call.args)
        try:
            args = CompleteInvestigationArgs.model_validate(scrub(tool_args))  # kept, shown and written
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
            answer = {"status": "error", "error": "invalid_arguments", "tool": call.name, "message": problems}
            self.journal.write("invalid_call", turn=self.state.turn_count, index=index, name=call.name,
                               call_id=call.id, meta={}, response=answer, args=call.args)
            return answer
        for note in notes:
            self.ui.notice(f"[Ghost Agent] hypothesis note: {note}")
        self.save()
        return LoopEnd("complete", completion=args, last_text=self.last_text)

    def _dispatch_one(self, call: FunctionCall, index: int, turn_no: int, notes: list[str]) -> dict[str, Any]:
        return self._book(call, index, turn_no, self.dispatcher.call(call.name, call.args), notes)

    def _book(self, call: FunctionCall, index: int, turn_no: int, done: Dispatched,
              notes: list[str]) -> dict[str, Any]:
        """The result the model sees of one dispatched call (with its ``_meta``), journaled."""
        result = dict(done.result)
        meta = self._meta(done, turn_no)
        if notes and "warning" not in meta:
            meta["warning"] = "Hypothesis updates refused: " + "; ".join(notes)
        if meta:
            result["_meta"] = {**(result.get("_meta") or {}), **meta}
        self._journal_call(call, index, turn_no, done, meta)
        return result

    def _meta(self, done: Dispatched, turn_no: int) -> dict[str, Any]:
        result = done.result
        meta: dict[str, Any] = {}
        if result.get("error") == "timeout":
            meta["timeout"] = True
        if done.kind in ("invalid", "refused"):
            return meta
        if done.kind == "orchestrator":
            # a "no" is charged once, in the call where a person said it: a create the orchestrator ran in this
            # call (the second end of a pair too, whatever the call's own status); never again when check_task
            # or cleanup_task reports the cancelled task later
            command, reason, audit_id = done.denial()
            if audit_id:
                meta.update(charge_denial(self.state, turn=turn_no, command=command, reason=reason,
                                          audit_id=audit_id, now=self.now()))
            elif result.get("status") in _SUCCESS:
                mark_succeeded(self.state)
            return meta
        if is_denial(result):
            command, reason, audit_id = done.denial()
            command = str(done.request.get("command", command))
            reason = result.get("denial_reason") or reason
            audit_id = str(result.get("audit_id") or audit_id)
            meta.update(charge_denial(self.state, turn=turn_no, command=command or describe("", done.request),
                                      reason=reason, audit_id=audit_id, now=self.now()))
        elif result.get("status") in _SUCCESS:
            mark_succeeded(self.state)
        return meta

    def _journal_call(self, call: FunctionCall, index: int, turn_no: int, done: Dispatched,
                      meta: dict[str, Any]) -> None:
        common = {"turn": turn_no, "index": index, "name": call.name, "call_id": call.id, "meta": meta}
        if done.kind == "shell":
            self.journal.write("shell_call", audit_id=done.result.get("audit_id"), **common)
        elif done.kind == "orchestrator":
            self.journal.write("orchestrator_call", request=done.request, response=done.result,
                               shell_audit_ids=done.audit_ids, **common)
            task_id = done.result.get("task_id")
            if call.name == "capture_traffic" and task_id and task_id not in self.state.active_task_ids:
                self.state.active_task_ids.append(str(task_id))
        elif done.kind == "refused":
            self.journal.write("refused_call", request=done.request, response=done.result, **common)
        else:
            self.journal.write("invalid_call", response=done.result, args=call.args, **common)
