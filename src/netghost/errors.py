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
    │   ├── ArtifactError        an artifact is missing, malformed or its hash differs
    │   └── WorkflowError        an illegal workflow transition was requested
    ├── ShellError               the Safe-Exec Shell was misused (bad request shape, bad config)
    ├── OrchestratorError
    ├── CaptureFormatError       a file is not a capture we can read (also a ValueError)
    └── LabError                 a lab world or simulator input is invalid

Each component may subclass these in its own ``errors`` module; it never raises bare
``Exception`` and never swallows one.
"""

from __future__ import annotations

__all__ = [
    "ArtifactError",
    "CaptureFormatError",
    "ContractError",
    "GovernanceError",
    "LabError",
    "NetGhostError",
    "OrchestratorError",
    "PlanTokenMismatchError",
    "PolicyError",
    "ShellError",
    "WalCorruptError",
    "WalError",
    "WalLockedError",
    "WorkflowError",
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
    """Raised when a policy file, rule table or Rego bundle is invalid or its examples fail."""


class ArtifactError(GovernanceError):
    """Raised when an artifact is missing, malformed, has the wrong role or a different hash."""


class WorkflowError(GovernanceError):
    """Raised when a workflow step is requested out of CabinCrew order."""


class ShellError(NetGhostError):
    """Raised when the Safe-Exec Shell is misused (malformed request, invalid configuration)."""


class OrchestratorError(NetGhostError):
    """Raised by the cloud orchestrator for invariant breaks (not for failed tasks)."""


class CaptureFormatError(NetGhostError, ValueError):
    """Raised when a file is not a packet capture the forensics engine can read."""


class LabError(NetGhostError, ValueError):
    """Raised when a lab scenario or a simulator input is invalid."""
