"""``ghost-agent`` with no subcommand: the investigation (seed 001 §3 startup, §4 loop, §7 RCA, §9 errors).

Wiring only: the brain (Gemini through the LLM gateway, or the playbook), the Safe-Exec Shell with the
right approval callback, the orchestrator on a watched shell, the console, the session file and the
journal; then startup, the loop, and the RCA. Every way out saves the session first; an API error or
Ctrl-C prints the resume command (seed 001 §9). The lab is prepared by the caller (``cli``), because
only the CLI's entries may import the lab.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console

from netghost.agent._approval import closed_gate, lab_approver, terminal_approver
from netghost.agent._console import GhostConsole, InterruptFlag
from netghost.agent._dispatch import Dispatcher, WatchedShell, split_args
from netghost.agent._journal import Journal
from netghost.agent._loop import Loop, LoopEnd
from netghost.agent._prompt import system_prompt
from netghost.agent._rca import chain_paths, write_rca
from netghost.agent._rca_html import draw_charts, write_rca_html
from netghost.agent._rebuild import Rebuilt
from netghost.agent._resume import already_ran, load_for_resume, unfinished_tasks
from netghost.agent._session import new_session, new_session_id, save_session, set_aside
from netghost.agent._startup import report_orphans
from netghost.agent.brains import Brain, GeminiBrain, Message, PlaybookBrain
from netghost.contracts import CompleteInvestigationArgs, SessionState
from netghost.errors import NetGhostError
from netghost.governance import signed_head
from netghost.llm import LlmGateway, has_credentials, model_default
from netghost.orchestrator import CloudOrchestrator
from netghost.shell import EgressScope, HitlCallback, SafeExecShell

__all__ = ["SETUP_MESSAGE", "LabSetup", "Options", "run_agent"]

SETUP_MESSAGE = (
    "Gemini credentials are not set.\n"
    "Set GEMINI_API_KEY environment variable or add to .env file.\n"
    "(Vertex AI: GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT; offline: --brain playbook or --lab.)"
)


@dataclass
class LabSetup:
    """A lab world prepared by the CLI: the shell's PATH and variables, the orchestrator's lab settings."""

    name: str
    path: str
    env: dict[str, str]
    orchestrator: dict[str, Any] = field(default_factory=dict)
    scope: EgressScope | None = None  # the world's own network, for the MCP server (the agent seeds from its intent)


@dataclass
class Options:
    """The command's options (``ghost-agent [--resume SID] [--model M] ...``)."""

    audit_dir: Path
    resume: str | None = None
    model: str | None = None
    brain: str = "gemini"
    intent: str | None = None
    yes: bool = False
    lab: LabSetup | None = None


@dataclass
class _Parts:
    """Everything one run holds open."""

    ui: GhostConsole
    state: SessionState
    journal: Journal
    shell: SafeExecShell
    watched: WatchedShell
    orchestrator: CloudOrchestrator
    flag: InterruptFlag
    warnings: list[str] = field(default_factory=list)
    gateway: LlmGateway | None = None

    def save(self) -> None:
        heads: dict[str, dict[str, Any]] = {}
        for name, path in chain_paths(Path(self.state.audit_dir), self.state.session_id).items():
            head = signed_head(path) if path.exists() else None
            if head is not None:
                heads[name] = head.to_dict()
        self.state.audit_heads = heads
        save_session(Path(self.state.audit_dir), self.state)

    def close(self) -> None:
        self.orchestrator.close()
        self.shell.close()
        if self.gateway is not None:
            self.gateway.close()
        self.journal.close()


def _resume_command(opts: Options, sid: str) -> str:
    words = ["ghost-agent", "--resume", sid, "--audit-dir", str(opts.audit_dir)]
    if opts.lab is not None:
        words += ["--lab", opts.lab.name]
    return shlex.join(words)


def _callback(opts: Options, ui: GhostConsole, console: Console, stdin: TextIO, ran: set[str]) -> HitlCallback:
    """The shell's approval callback. ``--yes`` counts only with a lab world: the CLI refuses it without
    ``--lab``, and a caller of :func:`run_agent` that sets ``yes`` without ``lab`` still gets a human or
    the closed gate, never an approver for the real cloud."""
    human = terminal_approver(console, stdin) if ui.interactive else None
    if opts.yes and opts.lab is not None:
        return lab_approver(console, already_ran=ran, ask_human=human)
    return human or closed_gate


def _brain(opts: Options, state: SessionState, parts: _Parts, environ: Mapping[str, str]) -> Brain:
    if opts.brain == "playbook":
        return PlaybookBrain()
    gateway = LlmGateway(audit=parts.journal.writer, environ=environ)
    parts.gateway = gateway

    def generate(model: str, contents: Any, config: Any) -> Any:
        return gateway.generate(model, contents, config, purpose="agent_turn")

    return GeminiBrain(state.model, generate)


def run_agent(opts: Options, *, environ: Mapping[str, str] | None = None, stdin: TextIO | None = None,
              console: Console | None = None, now: Callable[[], datetime] | None = None,
              brain: Brain | None = None, approver: HitlCallback | None = None) -> int:
    """Run (or resume) one investigation; the process exit code.

    Args:
        opts: the command's options.
        environ: where credentials and the model default are read (the process's own by default).
        stdin: where answers are read; a terminal makes the run interactive.
        console: where everything is printed.
        now: the clock.
        brain: replaces the one ``opts.brain`` names (tests).
        approver: answers the approval prompts instead of ``--yes`` (the benchmark's scripted denials);
            honoured only with a lab world, like ``--yes``: never an automatic approver for the real cloud.
    """
    import sys  # noqa: PLC0415  the defaults are the process's streams at call time

    env = os.environ if environ is None else environ
    stdin = stdin or sys.stdin
    console = console or Console(highlight=False)
    clock = now or (lambda: datetime.now(UTC))
    if brain is None and opts.brain == "gemini" and not has_credentials(env):
        print(SETUP_MESSAGE, file=sys.stderr)
        return 1
    ui = GhostConsole(console, stdin, interactive=_is_terminal(stdin))
    opts.audit_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    started = time.monotonic()
    state, rebuilt, warnings, code = _session(opts, ui, clock, env)
    if state is None:
        return code
    ran = already_ran(chain_paths(opts.audit_dir, state.session_id)["shell"])
    parts = _open(opts, ui, console, stdin, state=state, ran=ran, warnings=warnings,
                  approver=approver if opts.lab is not None else None)
    try:
        return _investigate(opts, parts, rebuilt, brain or _brain(opts, state, parts, env), clock=clock, started=started)
    except KeyboardInterrupt:
        return _stopped(opts, parts, "Interrupted.")
    finally:
        parts.flag.restore()
        parts.close()


def _is_terminal(stdin: TextIO) -> bool:
    try:
        return stdin.isatty()
    except (OSError, ValueError):
        return False


def _session(opts: Options, ui: GhostConsole, clock: Callable[[], datetime],
             env: Mapping[str, str]) -> tuple[SessionState | None, Rebuilt, list[str], int]:
    model = opts.model or model_default(env)
    if opts.resume:
        resumed = load_for_resume(ui, opts.audit_dir, opts.resume)
        if resumed.state is not None:
            if opts.model:
                resumed.state.model = opts.model
            return resumed.state, resumed.rebuilt, resumed.warnings, 0
        if resumed.abort:
            return None, Rebuilt(), [], 1
        set_aside(opts.audit_dir)
    else:
        set_aside(opts.audit_dir)
    sid = new_session_id(clock())
    while (opts.audit_dir / f"shell_audit_{sid}.jsonl").exists():  # two runs in one second
        time.sleep(1.0)
        sid = new_session_id(clock())
    state = new_session(sid, model=model if opts.brain == "gemini" else "playbook", audit_dir=opts.audit_dir,
                        now=clock())
    return state, Rebuilt(), [], 0


def _open(opts: Options, ui: GhostConsole, console: Console, stdin: TextIO, *, state: SessionState,
          ran: set[str], warnings: list[str], approver: HitlCallback | None = None) -> _Parts:
    sid = state.session_id
    journal = Journal(opts.audit_dir, sid)
    lab = opts.lab
    callback = approver or _callback(opts, ui, console, stdin, ran)
    shell = SafeExecShell(sid, callback, audit_dir=opts.audit_dir,
                          path=lab.path if lab else None, env=lab.env if lab else None, cwd=opts.audit_dir,
                          learn_scope=True)
    watched = WatchedShell(shell, on_result=ui.shell_line)
    ui.banner(sid, resumed_from=state.resumed_from)
    ui.notice("Checking for orphaned resources from previous sessions...")  # the orchestrator scans when built
    config = dict(lab.orchestrator) if lab else {}
    config.setdefault("local_capture_dir", str(opts.audit_dir / "captures"))
    orchestrator = CloudOrchestrator(watched, sid, task_dir=str(opts.audit_dir), console=console, **config)
    return _Parts(ui, state, journal, shell, watched, orchestrator, InterruptFlag().install(), warnings)


def _start(opts: Options, parts: _Parts, rebuilt: Rebuilt) -> list[Message] | None:
    ui, state = parts.ui, parts.state
    report_orphans(ui, parts.orchestrator, state)
    if state.is_resume:
        parts.journal.write("session_event", event="resumed", turn=state.turn_count)
        history = list(rebuilt.history)
        for part in history[0].parts if history and history[0].role == "user" else ():
            parts.shell.scope = parts.shell.scope.with_text(part.text or "")  # the problem statement's hosts
        note = _reconcile(parts)
        if note:
            parts.journal.write("user_turn", turn=state.turn_count, text=note)
            history.append(Message.user_text(note))
        return history
    intent = (opts.intent or "").strip()
    if not intent:
        ui.notice("")
        ui.notice("=== Ghost Agent Ready ===")
        ui.notice("What network problem should I investigate?")
        intent = ui.ask("> ").strip()
    if not intent:
        ui.error("No problem statement: give --intent TEXT or type it at the prompt.")
        return None
    parts.journal.write("session_event", event="started", turn=0, model=state.model)
    parts.journal.write("user_turn", turn=0, text=intent)
    parts.shell.scope = parts.shell.scope.with_text(intent)  # probes may go to the hosts the problem names
    return [Message.user_text(intent)]


def _reconcile(parts: _Parts) -> str:
    """Resume: ask check_task about every task a crash left in flight (never re-create one)."""
    state = parts.state
    lines = ["Session resumed (is_resume = True). Re-validate before continuing."]
    registry = Path(state.audit_dir) / f"orchestrator_tasks_{state.session_id}.jsonl"
    for task_id in unfinished_tasks(registry, state.active_task_ids):
        result = parts.orchestrator.orchestrate({"intent": "check_task", "task_id": task_id})
        parts.journal.write("orchestrator_call", turn=state.turn_count, index=-1, name="check_task", call_id=None,
                            meta={}, request={"intent": "check_task", "task_id": task_id}, response=result,
                            shell_audit_ids=[])
        lines.append(f"Task {task_id} was in flight: check_task says {result.get('status')} "
                     f"({result.get('state')}): {result.get('message', '')}")
    return "\n".join(lines)


def _investigate(opts: Options, parts: _Parts, rebuilt: Rebuilt, brain: Brain, *,
                 clock: Callable[[], datetime], started: float) -> int:
    state = parts.state
    if state.rca_report_path:
        parts.ui.notice(f"Session {state.session_id} is complete: {state.rca_report_path}")
        return 0
    history = _start(opts, parts, rebuilt)
    if history is None:
        return 2
    parts.save()
    if rebuilt.completion is not None or rebuilt.done:
        end = LoopEnd("complete" if rebuilt.completion else "done",
                      completion=CompleteInvestigationArgs.model_validate(split_args(rebuilt.completion)[0])
                      if rebuilt.completion else None)
    else:
        prompt = system_prompt(str(opts.audit_dir), is_resume=state.is_resume)
        loop = Loop(brain=brain, dispatcher=Dispatcher(parts.watched, parts.orchestrator), state=state,
                    journal=parts.journal, ui=parts.ui, system_prompt=prompt, history=history, save=parts.save,
                    now=clock, interrupted=parts.flag)
        end = loop.run()
    return _finish(opts, parts, end, clock, started)


def _finish(opts: Options, parts: _Parts, end: LoopEnd, clock: Callable[[], datetime], started: float) -> int:
    if end.reason == "interrupted":
        return _stopped(opts, parts, "Stopped at the approval prompt (Ctrl-C): the command was denied.")
    if end.reason == "brain_error":
        parts.ui.error(str(end.error))
        return _stopped(opts, parts, "", code=1)
    completion = end.completion or CompleteInvestigationArgs(
        confidence="low",
        root_cause_summary=end.last_text or "The investigation ended before the model concluded.",
    )
    state = parts.state
    parts.ui.notice("Generating root cause analysis report...")
    draw_charts(opts.audit_dir, state.session_id, parts.watched)  # before the RCAs: both count its records
    rca = write_rca(opts.audit_dir, state, completion, parts.watched, now=clock, warnings=parts.warnings)
    if rca.path is None:
        parts.ui.error(f"RCA report write failed ({rca.write_error}); the report follows.")
        parts.ui.console.print(rca.text, markup=False)
        state.rca_report_path = None
    else:
        state.rca_report_path = str(rca.path)
        parts.journal.write("session_event", event="rca_written", turn=state.turn_count, path=str(rca.path))
    _write_html(opts, parts, completion, clock)
    parts.save()
    parts.ui.closing(str(rca.path or "(stdout)"), confidence=completion.confidence, turns=state.turn_count,
                     duration_s=time.monotonic() - started)
    return 0


def _write_html(opts: Options, parts: _Parts, completion: CompleteInvestigationArgs,
                clock: Callable[[], datetime]) -> None:
    """The HTML RCA beside the Markdown (``ghost-agent report SID`` writes it again from the trail)."""
    try:
        path = write_rca_html(opts.audit_dir, parts.state, completion, now=clock, warnings=parts.warnings)
    except OSError as exc:
        parts.ui.error(f"HTML RCA write failed ({type(exc).__name__}: {exc}); the Markdown RCA stands.")
        return
    parts.ui.notice(f"HTML report: {path}")


def _stopped(opts: Options, parts: _Parts, why: str, code: int = 130) -> int:
    try:
        parts.save()
    except (OSError, NetGhostError) as exc:
        parts.ui.error(f"The session could not be saved: {exc}")
    if why:
        parts.ui.notice(why)
    parts.ui.notice(f"Session saved. Resume with: {_resume_command(opts, parts.state.session_id)}")
    return code
