"""The exception tree of the whole product.

Expected outcomes (a denied command, a failed task, a timeout) are *values* in the response
models, never exceptions. Exceptions are for broken inputs and broken invariants::

    NetGhostError
    ├── ContractError            a JSON document does not match its contract
    ├── GovernanceError
    │   ├── WalError
    │   │   ├── WalLockedError   a second writer tried to open a WAL file that has one
    │   │   └── WalCorruptError  a chain is broken where the caller needs it intact
    │   ├── PlanTokenMismatchError  what is about to run is not what was approved
    │   ├── PolicyError          a policy file or bundle fails to load or its examples fail
    │   ├── ApprovalMismatchError   an approval answers another plan-token than the request's
    │   ├── ArtifactError        an artifact is missing, malformed or its hash differs
    │   │   └── ArtifactValidationError  a workspace's artifacts fail validation (every problem listed)
    │   ├── WorkspaceError       a workspace cannot be created fresh or is not a workspace
    │   └── WorkflowError        an illegal workflow transition was requested
    │       ├── ReceiptError     an engine's receipt (the take-off result) is malformed
    │       └── WorkflowTransitionError  an entry is not allowed in the workflow's current state
    ├── ShellError               the Safe-Exec Shell was misused (bad request shape, bad config)
    ├── OrchestratorError
    │   ├── TaskTransitionError  a task was asked along an edge the transition table does not have
    │   └── PlanViolation        a command is not in the task's plan, or its plan-token broke
    ├── BrainError               the agent's brain could not produce a turn (API error, malformed answer)
    ├── LlmError                 a model call failed for good, or its answer could not be used
    ├── CaptureFormatError       a file is not a capture we can read (also a ValueError)
    ├── ColumnNotDecodedError    a packet column was read that this analysis did not decode
    └── LabError                 a lab world or simulator input is invalid
        ├── AzError              a simulated ``az`` failure (exact stderr text and exit code)
        └── ArmFailure           lab ARM answers a request with an error (HTTP status, ARM or Blob code)

Every class lives here, so the whole tree reads in one file; components import and raise them.
Where the raiser knows the subject (a path, an argv, a task or workflow id, a column) it passes it
as a keyword and the error carries it as a typed attribute, so a caller can act on it without
parsing the message. Nothing raises bare ``Exception`` and nothing swallows one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "ApprovalMismatchError",
    "ArmFailure",
    "ArtifactError",
    "ArtifactValidationError",
    "AzError",
    "BrainError",
    "CaptureFormatError",
    "ColumnNotDecodedError",
    "ContractError",
    "GovernanceError",
    "LabError",
    "LlmError",
    "NetGhostError",
    "OrchestratorError",
    "PlanTokenMismatchError",
    "PlanViolation",
    "PolicyError",
    "ReceiptError",
    "ShellError",
    "TaskTransitionError",
    "WalCorruptError",
    "WalError",
    "WalLockedError",
    "WorkflowError",
    "WorkflowTransitionError",
    "WorkspaceError",
]


class NetGhostError(Exception):
    """Root of every error this product raises on purpose."""


class ContractError(NetGhostError, ValueError):
    """Raised when a JSON document does not validate against its contract model."""


class GovernanceError(NetGhostError):
    """Raised by the CabinCrew kernel when an integrity or policy invariant would break."""


class WalError(GovernanceError):
    """Raised when a write-ahead log cannot be opened or appended to."""


class WalLockedError(WalError):
    """Raised when a second writer opens a WAL file that another writer holds.

    One writer per file is what keeps ``seq`` monotonic and the chain linear.
    """

    def __init__(self, path: str) -> None:
        super().__init__(f"WAL {path} is already open for writing by another process or handle")
        self.path = path


class WalCorruptError(WalError):
    """Raised when a caller needs an intact chain (e.g. to resume) and the chain is broken."""

    def __init__(self, path: str, seq: int | None, detail: str) -> None:
        where = f"seq {seq}" if seq is not None else "unknown position"
        super().__init__(f"WAL {path} is corrupt at {where}: {detail}")
        self.path = path
        self.seq = seq
        self.detail = detail


class PlanTokenMismatchError(GovernanceError):
    """Raised when the plan about to run hashes differently from the approved plan-token."""

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(f"plan-token mismatch: approved {expected}, about to run {actual}")
        self.expected = expected
        self.actual = actual


class PolicyError(GovernanceError, ValueError):
    """Raised when a policy file, rule table or Rego bundle is invalid or its examples fail.

    ``path`` is the file, directory or bundle at fault (a Rego module's name when it came from
    memory); ``rule`` the rule inside it: its id, or ``#n`` (its place in the file) before it has one.
    """

    def __init__(self, message: str, *, path: Path | str | None = None, rule: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.rule = rule


class ApprovalMismatchError(GovernanceError):
    """Raised when a response names a different plan-token than the request it is offered for."""

    def __init__(self, request_token: str, response_token: str) -> None:
        super().__init__(f"approval response answers {response_token}, not the pending request {request_token}")
        self.request_token = request_token
        self.response_token = response_token


class ArtifactError(GovernanceError):
    """Raised when an artifact is missing, malformed, has the wrong role or a different hash."""


class ArtifactValidationError(ArtifactError):
    """Raised when a workspace's artifacts fail validation; ``problems`` lists every finding."""

    def __init__(self, root: Path, problems: Sequence[str]) -> None:
        super().__init__(f"artifacts of {root} are invalid: " + "; ".join(problems))
        self.root = root
        self.problems = list(problems)


class WorkspaceError(GovernanceError):
    """Raised when a workspace cannot be created fresh or is not a workspace."""

    def __init__(self, message: str, *, path: Path | None = None, task_id: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.task_id = task_id


class WorkflowError(GovernanceError):
    """Raised when a workflow step is requested out of CabinCrew order."""


class ReceiptError(WorkflowError):
    """Raised when an engine's receipt (the take-off result) is malformed."""


class WorkflowTransitionError(WorkflowError):
    """Raised when an entry is not allowed in the workflow's current state.

    ``event`` is the WAL entry type and its qualifier (step name, outcome, decision), as the
    transition table keys it.
    """

    def __init__(
        self, workflow_id: str, from_state: str | None, event: tuple[str, str | None], detail: str = ""
    ) -> None:
        name = event[0] + (f"({event[1]})" if event[1] else "")
        msg = f"workflow {workflow_id}: {name} is not allowed in state {from_state}"
        super().__init__(msg + (f": {detail}" if detail else ""))
        self.workflow_id = workflow_id
        self.from_state = from_state
        self.event = event


class ShellError(NetGhostError):
    """Raised when the Safe-Exec Shell is misused (malformed request, invalid configuration).

    ``field`` names the request or configuration field at fault; ``argv`` the command, where one
    was parsed; ``path`` the file (an audit dir, a rule table) the shell could not use.
    """

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        argv: Sequence[str] | None = None,
        path: Path | str | None = None,
    ) -> None:
        super().__init__(message)
        self.field = field
        self.argv = list(argv) if argv is not None else None
        self.path = path


class OrchestratorError(NetGhostError):
    """Raised by the cloud orchestrator for invariant breaks (not for failed tasks)."""


class TaskTransitionError(OrchestratorError):
    """Raised when a task is asked to move along an edge the transition table does not have."""

    def __init__(self, task_id: str, from_state: str, to_state: str) -> None:
        super().__init__(f"task {task_id}: {from_state} -> {to_state} is not in the transition table")
        self.task_id = task_id
        self.from_state = from_state
        self.to_state = to_state


class PlanViolation(OrchestratorError):
    """Raised (and turned into a halted task) when a command is not in the plan or the token broke."""

    def __init__(self, task_id: str, reason: str, detail: str) -> None:
        super().__init__(f"task {task_id}: {detail}")
        self.task_id = task_id
        self.reason = reason
        self.detail = detail


class BrainError(NetGhostError):
    """The brain could not produce a turn (API error, quota, network, a malformed answer).

    ``code`` is the HTTP status when there was one (429, 500 ...), ``status`` the API's status word
    (``RESOURCE_EXHAUSTED`` ...), ``failure`` the LLM gateway's class of the failure (``api_error``,
    ``transport``, ``malformed_response``, ``finish_reason`` ...; see ``netghost.llm``) when the gateway
    named one. The loop saves the session and prints the resume command (seed 001 §9).
    """

    def __init__(self, message: str, *, code: int | None = None, status: str | None = None,
                 failure: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.failure = failure


class CaptureFormatError(NetGhostError, ValueError):
    """Raised when a file is not a packet capture the forensics engine can read.

    ``path`` is the capture (None for bytes handed in memory); ``offset`` the byte where reading
    failed, when the reader knows it.
    """

    def __init__(self, message: str, *, path: Path | str | None = None, offset: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.offset = offset


class ColumnNotDecodedError(NetGhostError, AttributeError):
    """A ``Packets`` column was read that this analysis did not decode (ask for it in ``columns=``)."""

    def __init__(self, column: str) -> None:
        super().__init__(
            f"packet column {column!r} was not decoded in this analysis; "
            f"pass it in analyze_capture(columns=...) to have it"
        )
        self.column = column


class LabError(NetGhostError, ValueError):
    """Raised when a lab scenario or a simulator input is invalid.

    ``world`` names the scenario (a shipped name or a YAML path) and ``path`` the file or the
    dotted place inside it at fault, when the raiser knows them.
    """

    def __init__(self, message: str, *, world: str | None = None, path: Path | str | None = None) -> None:
        super().__init__(message)
        self.world = world
        self.path = path


class LlmError(NetGhostError):
    """Raised by the LLM gateway when a model call fails for good: a 4xx other than 429 (never retried),
    a transport failure, or 429/5xx still failing after the last retry.

    ``status`` is the HTTP status of the last answer (``None`` when no answer came: a refused connection,
    a timeout, a client that could not be built); ``attempts`` counts the requests sent; ``failure`` is
    the class recorded in the gateway's WAL record (``netghost.llm.FAILURES``: ``api_error``,
    ``transport``, ``malformed_response``, ``blocked``, ``finish_reason``, ``empty_reply`` ...).
    """

    def __init__(self, message: str, *, model: str, status: int | None, attempts: int,
                 failure: str = "api_error") -> None:
        super().__init__(message)
        self.model = model
        self.status = status
        self.attempts = attempts
        self.failure = failure


class AzError(LabError):
    """A simulated ``az`` failure: the exact stderr text and the exit code to return."""

    def __init__(self, exit_code: int, stderr: str) -> None:
        super().__init__(stderr.splitlines()[0] if stderr else f"az exit {exit_code}")
        self.exit_code = exit_code
        self.stderr = stderr


class ArmFailure(LabError):
    """Raised inside lab ARM when a request must be answered with an error, as Azure answers it.

    ``status`` is the HTTP status, ``code`` and ``message`` the error body's; ``kind`` says the form:
    ``arm`` (ARM's JSON ``{"error": {"code", "message"}}``), ``storage`` (Blob's XML error with
    ``x-ms-error-code``) or ``client`` (an error the real CLI makes up itself, before any request).
    """

    def __init__(self, status: int, code: str, message: str, kind: str = "arm") -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.kind = kind
