"""``ghost-agent`` with no subcommand: the investigation (seed 001 §3 startup, §4 loop, §7 RCA, §9 errors).

Wiring only: the brain (Gemini through the LLM gateway, or the playbook), the Safe-Exec Shell with the
right approval callback (and, in a lab, the lab's confinement), the orchestrator on a watched shell with the
session's budgets, the console, the session file and the journal; then startup, the loop, and one of
the endings (:mod:`netghost.agent._ending`): every way out, an exception included, saves the session,
cleans up the session's tasks or lists them loudly, and exits with a code that says whether resources
remain. The lab is prepared by the caller (``cli``), because only the CLI's entries may import the lab.

Outside the lab the environment preflight (``netghost.orchestrator.check_environment``) runs first,
before the orphan scan and before any model turn: a missing ``az``, no login, an expired login, a
half-set managed identity, a subscription or provider that cannot work end the run with a named reason,
the command that fixes it and exit ``ExitCode.ENVIRONMENT`` (6). During the run every shell result is
watched for the same faults (``environment_fault``): one ends the loop the same way instead of feeding
the model a failure it would read as evidence.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console
from rich.text import Text

from netghost.agent._approval import closed_gate, lab_approver, terminal_approver
from netghost.agent._console import GhostConsole, InterruptFlag
from netghost.agent._dispatch import Dispatcher, ReadLog, WatchedShell, split_args, target_gate
from netghost.agent._ending import Ending, end_already_complete, end_stopped, end_with_rca
from netghost.agent._exit_codes import ExitCode, exit_code_for
from netghost.agent._journal import Journal
from netghost.agent._loop import Loop, LoopEnd
from netghost.agent._paths import audit_dir_problem
from netghost.agent._plan_cover import plan_cover
from netghost.agent._prompt import system_prompt
from netghost.agent._rca import chain_paths
from netghost.agent._rebuild import Rebuilt, shell_records
from netghost.agent._resume import already_ran, load_for_resume, session_task_ids, unfinished_tasks
from netghost.agent._session import new_session, new_session_id, save_session, set_aside
from netghost.agent._startup import report_orphans
from netghost.agent._untrusted import redact_intent
from netghost.agent.brains import Brain, Message, PlaybookBrain
from netghost.contracts import CompleteInvestigationArgs, SessionState
from netghost.errors import NetGhostError, WalError
from netghost.governance import signed_head
from netghost.llm import has_credentials, model_default, model_environment
from netghost.orchestrator import (
    Budgets,
    CloudOrchestrator,
    EnvironmentStop,
    check_environment,
    environment_fault,
)
from netghost.redact import clean_text
from netghost.shell import EgressScope, HitlCallback, LabConfinement, ReadCache, SafeExecShell

if TYPE_CHECKING:
    from netghost.llm import LlmGateway

__all__ = ["SETUP_MESSAGE", "LabSetup", "Options", "run_agent"]

SETUP_MESSAGE = (
    "Gemini credentials are not set.\n"
    "Set GEMINI_API_KEY environment variable or add to .env file.\n"
    "(Vertex AI: GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT; offline: --brain playbook or --lab.)"
)


def _nothing_to_close() -> None:
    return None


@dataclass
class LabSetup:
    """A lab world prepared by the CLI: the shell's PATH and variables, the orchestrator's lab settings.

    ``close`` stops what the preparation started (the lab state's resident lab process); whoever
    prepared the lab calls it when the session ends.
    """

    name: str
    path: str
    env: dict[str, str]
    orchestrator: dict[str, Any] = field(default_factory=dict)
    scope: EgressScope | None = None  # the world's own network, for the MCP server (the agent seeds from its intent)
    confinement: LabConfinement | None = None
    """Only what the lab simulates runs without a person (None: an unsealed lab, for tests of the shell only)."""
    close: Callable[[], None] = _nothing_to_close


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
    check_environment: bool = True
    """Run the environment preflight before anything else (outside the lab; an embedder that drives its
    own shell with a fake cloud turns it off)."""
    budgets: Budgets = field(default_factory=Budgets.defaults)
    parallel_reads: bool = True
    """A turn's SAFE reads run at once (False: one by one, the benchmark's sequential baseline)."""
    read_cache_ttl_s: float = ReadCache.DEFAULT_TTL_S
    """How long the session's read cache serves a SAFE stable read again (0: no cache)."""


class _Faults:
    """The first shell result that showed a broken environment (every call is watched)."""

    def __init__(self) -> None:
        self.first: EnvironmentStop | None = None

    def see(self, command: str, response: Mapping[str, Any]) -> None:
        if self.first is None:
            self.first = environment_fault(command, response)

    def get(self) -> EnvironmentStop | None:
        return self.first


class _EnvironmentStopped(Exception):
    """The preflight stopped the run before the orchestrator (and its orphan scan) was built."""

    def __init__(self, stop: EnvironmentStop) -> None:
        super().__init__(stop.reason)
        self.stop = stop


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
    faults: _Faults = field(default_factory=_Faults)
    reads: ReadLog = field(default_factory=ReadLog)

    def save(self) -> None:
        _save_state(self.state)

    def close(self) -> None:
        self.orchestrator.close()
        self.shell.close()
        if self.gateway is not None:
            self.gateway.close()
        self.journal.close()


def _save_state(state: SessionState) -> None:
    """The session file, sealed, with the signed heads of the session's logs."""
    heads: dict[str, dict[str, Any]] = {}
    for name, path in chain_paths(Path(state.audit_dir), state.session_id).items():
        head = signed_head(path) if path.exists() else None
        if head is not None:
            heads[name] = head.to_dict()
    state.audit_heads = heads
    save_session(Path(state.audit_dir), state)


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
        return lab_approver(console, world=opts.lab.name, already_ran=ran, ask_human=human)
    return human or closed_gate


def _brain(opts: Options, state: SessionState, parts: _Parts, environ: Mapping[str, str]) -> Brain:
    if opts.brain == "playbook":
        return PlaybookBrain()
    # Here, not at the top: the Gemini brain and the gateway load the google-genai SDK (~1 s of CPU), which a
    # playbook run never calls.
    from netghost.agent.brains import GeminiBrain  # noqa: PLC0415
    from netghost.llm import LlmGateway  # noqa: PLC0415

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
        environ: where credentials and the model default are read (the process's own by default, with the
            model's variables of a ``./.env`` file it does not set itself).
        stdin: where answers are read; a terminal makes the run interactive.
        console: where everything is printed.
        now: the clock.
        brain: replaces the one ``opts.brain`` names (tests).
        approver: answers the approval prompts instead of ``--yes`` (the benchmark's scripted denials);
            honoured only with a lab world, like ``--yes``: never an automatic approver for the real cloud.
    """
    import sys  # noqa: PLC0415  the defaults are the process's streams at call time

    env = model_environment() if environ is None else environ
    stdin = stdin or sys.stdin
    console = console or Console(highlight=False)
    clock = now or (lambda: datetime.now(UTC))
    if brain is None and opts.brain == "gemini" and not has_credentials(env):
        print(SETUP_MESSAGE, file=sys.stderr)
        return ExitCode.ERROR
    problem = audit_dir_problem(opts.audit_dir)
    if problem is not None:
        print(f"ghost-agent: {problem.line}", file=sys.stderr)
        return problem.code
    ui = GhostConsole(console, stdin, interactive=_is_terminal(stdin))
    started = time.monotonic()
    state, rebuilt, warnings, code = _session(opts, ui, clock, env)
    if state is None:
        return code
    ran = already_ran(chain_paths(opts.audit_dir, state.session_id)["shell"])
    try:
        parts = _open(opts, ui, console, stdin, state=state, ran=ran, warnings=warnings,
                      approver=approver if opts.lab is not None else None)
    except WalError as exc:  # a log that does not match its checkpoint (tampered), or another run holds it
        console.print(Text.assemble(("[ERROR] ", "bold red"), " ".join(str(exc).split())), soft_wrap=True)
        return ExitCode.ERROR
    except OSError as exc:  # the directory went away or became read-only after the check
        console.print(Text.assemble(("[ERROR] ", "bold red"), f"The audit directory {opts.audit_dir} cannot be "
                                    f"written ({exc.strerror or exc}): give one you can write with --audit-dir DIR"),
                      soft_wrap=True)
        return ExitCode.ERROR
    except _EnvironmentStopped as stopped:
        return _environment_stop(opts, ui, state, stopped.stop)
    ending = Ending(opts.audit_dir, _resume_command(opts, state.session_id), started, clock)
    try:
        return _investigate(opts, parts, rebuilt, brain or _brain(opts, state, parts, env), ending)
    except KeyboardInterrupt:
        return end_stopped(parts, "Interrupted.", ending, ExitCode.INTERRUPTED)
    except Exception as exc:  # an internal error still ends like every other end: cleanup, save, resume line
        parts.ui.error(f"The investigation stopped on an internal error: {type(exc).__name__}: {exc}")
        try:
            parts.journal.write("session_event", event="internal_error", turn=state.turn_count,
                                error=f"{type(exc).__name__}: {exc}")
        except NetGhostError as again:  # the journal itself is what failed: the screen has said it
            parts.ui.error(f"The conversation log could not record it: {again}")
        return end_stopped(parts, "", ending, ExitCode.ERROR)
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
            return None, Rebuilt(), [], ExitCode.ERROR
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
    # the session's own capture reads and removals are answered by the capture plan's approval (_plan_cover)
    callback = plan_cover(approver or _callback(opts, ui, console, stdin, ran), opts.audit_dir, sid)
    faults = _Faults()

    def refused(line: str) -> None:  # a provisional audit record was refused: one line on screen, and in the RCA
        ui.console.print(Text.assemble(("[ERROR] ", "bold red"), line), soft_wrap=True)
        warnings.append(line)

    try:
        shell = SafeExecShell(sid, callback, audit_dir=opts.audit_dir,
                              path=lab.path if lab else None, env=lab.env if lab else None, cwd=opts.audit_dir,
                              on_notice=refused, confinement=lab.confinement if lab else None, learn_scope=True,
                              read_cache=ReadCache(opts.read_cache_ttl_s), parallel_reads=opts.parallel_reads)
    except BaseException:
        journal.close()
        raise
    # what the investigation has read of the cloud (earlier runs of a resumed session included): a capture
    # target must be one of them, or a person is asked
    reads = ReadLog.from_records(shell_records(chain_paths(opts.audit_dir, sid)["shell"]))

    def on_result(command: str, response: dict[str, Any]) -> None:
        reads.note(command, response)
        ui.shell_line(command, response)
        faults.see(command, response)

    watched = WatchedShell(shell, on_result=on_result)
    ui.banner(sid, resumed_from=state.resumed_from)
    if lab is None and opts.check_environment:
        _preflight(opts, ui, watched, journal, shell=shell, faults=faults)
    ui.notice("Checking for orphaned resources from previous sessions...")  # the orchestrator scans when built
    config = dict(lab.orchestrator) if lab else {}
    config.setdefault("local_capture_dir", str(opts.audit_dir / "captures"))
    config["budgets"] = opts.budgets
    try:
        orchestrator = CloudOrchestrator(watched, sid, task_dir=str(opts.audit_dir), console=console, **config)
    except BaseException:
        shell.close()
        journal.close()
        raise
    return _Parts(ui, state, journal, shell, watched, orchestrator, InterruptFlag().install(), warnings,
                  faults=faults, reads=reads)


def _preflight(opts: Options, ui: GhostConsole, watched: WatchedShell, journal: Journal, *, shell: SafeExecShell,
               faults: _Faults) -> None:
    """The environment preflight; raises :class:`_EnvironmentStopped` (shell and journal closed) on a stop."""
    ui.notice("Checking the Azure environment (az, login, subscription, Network Watcher)...")
    report = check_environment(watched, intent=opts.intent or "", say=ui.console.print)
    stop = report.stop or faults.get()
    if stop is None:
        journal.write("session_event", event="environment_checked", turn=0, az_version=report.az_version,
                      subscription=report.account.get("id"), regions=report.regions, roles=report.roles,
                      notes=report.notes, audit_ids=report.audit_ids)
        return
    journal.write("session_event", event="environment_stop", turn=0, **stop.to_dict())
    shell.close()
    journal.close()
    raise _EnvironmentStopped(stop)


def _environment_stop(opts: Options, ui: GhostConsole, state: SessionState, stop: EnvironmentStop) -> int:
    """Say why the environment cannot work and what to run; the session is kept (its audit holds the checks)."""
    for line in stop.lines():
        ui.error(line)
    try:
        _save_state(state)
    except (OSError, NetGhostError) as exc:
        ui.error(f"The session could not be saved: {exc}")
    ui.notice(f"Nothing was investigated. Fix the environment, then run again (or: {_resume_command(opts, state.session_id)})")
    return ExitCode.ENVIRONMENT


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
    intent = clean_text(opts.intent or "").strip()  # argv may carry undecodable bytes as lone surrogates
    if not intent:
        ui.notice("")
        ui.notice("=== Ghost Agent Ready ===")
        ui.notice("What network problem should I investigate?")
        intent = clean_text(ui.ask("> ")).strip()
    if not intent:
        ui.error("No problem statement: give --intent TEXT or type it at the prompt.")
        return None
    intent, redacted = redact_intent(intent)  # before the journal and the model see it
    if redacted:
        ui.notice(redacted)
    parts.journal.write("session_event", event="started", turn=0, model=state.model)
    parts.journal.write("user_turn", turn=0, text=intent)
    parts.shell.scope = parts.shell.scope.with_text(intent)  # probes may go to the hosts the problem names
    return [Message.user_text(intent)]


def _reconcile(parts: _Parts) -> str:
    """Resume: ask check_task about every task a crash left in flight (never re-create one)."""
    state = parts.state
    lines = ["Session resumed (is_resume = True). Re-validate before continuing."]
    registry = Path(state.audit_dir) / f"orchestrator_tasks_{state.session_id}.jsonl"
    # the registry is the source of truth: every task an earlier run created, listed in the session file or not
    known = list(dict.fromkeys([*state.active_task_ids, *session_task_ids(registry)]))
    for task_id in unfinished_tasks(registry, known):
        result = parts.orchestrator.orchestrate({"intent": "check_task", "task_id": task_id})
        parts.journal.write("orchestrator_call", turn=state.turn_count, index=-1, name="check_task", call_id=None,
                            meta={}, request={"intent": "check_task", "task_id": task_id}, response=result,
                            shell_audit_ids=[])
        lines.append(f"Task {task_id} was in flight: check_task says {result.get('status')} "
                     f"({result.get('state')}): {result.get('message', '')}")
    return "\n".join(lines)


def _investigate(opts: Options, parts: _Parts, rebuilt: Rebuilt, brain: Brain, ending: Ending) -> int:
    state = parts.state
    if state.rca_report_path:  # nothing to investigate; what it left in the cloud is still cleaned up
        parts.ui.notice(f"Session {state.session_id} is complete: {state.rca_report_path}")
        report_orphans(parts.ui, parts.orchestrator, state)
        return end_already_complete(parts, ending)
    history = _start(opts, parts, rebuilt)
    if history is None:
        return ExitCode.USAGE
    parts.save()
    if rebuilt.completion is not None or rebuilt.done:
        end = LoopEnd("complete" if rebuilt.completion else "done",
                      completion=CompleteInvestigationArgs.model_validate(split_args(rebuilt.completion)[0])
                      if rebuilt.completion else None)
    else:
        prompt = system_prompt(str(opts.audit_dir), is_resume=state.is_resume)
        gate = target_gate(parts.shell.hitl_callback, parts.reads, session_id=state.session_id, now=ending.clock,
                           timeout_s=parts.shell.approval_timeout_s, say=parts.ui.notice)
        dispatcher = Dispatcher(parts.watched, parts.orchestrator, target_check=gate)
        loop = Loop(brain=brain, dispatcher=dispatcher, state=state, journal=parts.journal, ui=parts.ui,
                    system_prompt=prompt, history=history, save=parts.save, now=ending.clock,
                    interrupted=parts.flag, budgets=opts.budgets, broken=parts.faults.get)
        fault = parts.faults.get()  # the start-up orphan scan, or a resume's re-validation, already failed
        end = LoopEnd("environment", environment=fault) if fault is not None else loop.run()
    if end.reason == "interrupted":
        return end_stopped(parts, "Stopped at the approval prompt (Ctrl-C): the command was denied.", ending,
                           ExitCode.INTERRUPTED)
    if end.reason == "brain_error":
        code = exit_code_for(end.error)
        what = "The model's reply could not be used" if code == ExitCode.MODEL_REPLY else "The Gemini API call failed"
        failure = f" ({end.error.failure})" if end.error is not None and end.error.failure else ""
        parts.ui.error(clean_text(" ".join(f"{what}{failure}: {end.error}".split()), limit=400))
        return end_stopped(parts, "", ending, code)
    if end.reason == "environment" and end.environment is not None:
        parts.journal.write("session_event", event="environment_stop", turn=parts.state.turn_count,
                            **end.environment.to_dict())
        for line in end.environment.lines():
            parts.ui.error(line)
        parts.ui.notice("The investigation stopped: a tool failure says the environment cannot work, so its results "
                        "are no evidence about the network.")
        return end_stopped(parts, "Fix the environment, then resume.", ending, ExitCode.ENVIRONMENT)
    return end_with_rca(parts, end, ending)
