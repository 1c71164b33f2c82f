"""The typed contracts of every JSON shape the product exchanges or stores.

Seeds 000-004 define the shapes; ARCHITECTURE.md adds the shell's extra fields and the WAL chain
fields. This package is the only place those shapes are written down in code: the shell, the
orchestrator, the agent and the MCP server import them from here (``from netghost.contracts import
TaskRecord``), and ``python -m netghost.contracts.export DIR`` writes their JSON Schemas.
"""

from __future__ import annotations

from netghost.contracts import cabincrew as _cabincrew
from netghost.contracts.audit import (
    ShellAuditRecord,
    StoredShellAuditRecord,
)
from netghost.contracts.base import (
    IsoTimestamp,
    Sha256Tag,
    WireModel,
    format_timestamp,
)
from netghost.contracts.cabincrew import *  # noqa: F403  see the note above __all__ +=
from netghost.contracts.chain import (
    CHAIN_FIELD_NAMES,
    ChainFields,
)
from netghost.contracts.meta import (
    ToolResultMeta,
)
from netghost.contracts.orchestrator_request import (
    INTENTS,
    CancelTaskRequest,
    CaptureTrafficRequest,
    CheckTaskRequest,
    CleanupTaskRequest,
    Intent,
    ListTasksRequest,
    OrchestratorRequest,
    parse_orchestrator_request,
)
from netghost.contracts.orchestrator_response import (
    CaptureResult,
    ListTasksResponse,
    OrchestratorErrorCode,
    OrchestratorErrorResponse,
    OrchestratorResponse,
    PairedTaskStatus,
    SingleEndFallbackResult,
    TaskCancelledResponse,
    TaskCompletedResponse,
    TaskFailedResponse,
    TaskPendingResponse,
    TaskResponseStatus,
    TaskTimedOutResponse,
    parse_orchestrator_response,
)
from netghost.contracts.orphans import (
    AbandonedTaskOrphan,
    NeedsCleanupOrphan,
    Orphan,
    StaleLocalFileOrphan,
    UntrackedAzureOrphan,
)
from netghost.contracts.session import (
    CHECKSUM_KEY,
    DenialEvent,
    EvidenceConflict,
    Hypothesis,
    HypothesisState,
    SessionChecksumStatus,
    SessionState,
    check_session_checksum,
    compute_session_checksum,
)
from netghost.contracts.shell import (
    OutputFormat,
    OutputMetadata,
    ShellAction,
    ShellClassification,
    ShellEnvironment,
    ShellErrorCode,
    ShellRequest,
    ShellResponse,
    ShellStatus,
)
from netghost.contracts.task import (
    CAPTURE_MAX_DURATION_SECONDS,
    TASK_RECORD_VERSION,
    TERMINAL_TASK_STATES,
    CaptureTrafficParameters,
    CleanupStatus,
    CleanupStep,
    DenialAction,
    StorageAuthMode,
    StoredTaskRecord,
    TargetType,
    TaskRecord,
    TaskState,
    TaskTimestamps,
)
from netghost.contracts.tools import (
    TOOL_NAMES,
    CancelTaskArgs,
    CaptureTrafficArgs,
    CheckTaskArgs,
    CleanupTaskArgs,
    CompleteInvestigationArgs,
    RunShellCmdArgs,
    ToolErrorResult,
    ToolName,
)

__all__ = [
    "CAPTURE_MAX_DURATION_SECONDS",
    "CHAIN_FIELD_NAMES",
    "CHECKSUM_KEY",
    "INTENTS",
    "TASK_RECORD_VERSION",
    "TERMINAL_TASK_STATES",
    "TOOL_NAMES",
    "AbandonedTaskOrphan",
    "CancelTaskArgs",
    "CancelTaskRequest",
    "CaptureResult",
    "CaptureTrafficArgs",
    "CaptureTrafficParameters",
    "CaptureTrafficRequest",
    "ChainFields",
    "CheckTaskArgs",
    "CheckTaskRequest",
    "CleanupStatus",
    "CleanupStep",
    "CleanupTaskArgs",
    "CleanupTaskRequest",
    "CompleteInvestigationArgs",
    "DenialAction",
    "DenialEvent",
    "EvidenceConflict",
    "Hypothesis",
    "HypothesisState",
    "Intent",
    "IsoTimestamp",
    "ListTasksRequest",
    "ListTasksResponse",
    "NeedsCleanupOrphan",
    "OrchestratorErrorCode",
    "OrchestratorErrorResponse",
    "OrchestratorRequest",
    "OrchestratorResponse",
    "Orphan",
    "OutputFormat",
    "OutputMetadata",
    "PairedTaskStatus",
    "RunShellCmdArgs",
    "SessionChecksumStatus",
    "SessionState",
    "Sha256Tag",
    "ShellAction",
    "ShellAuditRecord",
    "ShellClassification",
    "ShellEnvironment",
    "ShellErrorCode",
    "ShellRequest",
    "ShellResponse",
    "ShellStatus",
    "SingleEndFallbackResult",
    "StaleLocalFileOrphan",
    "StorageAuthMode",
    "StoredShellAuditRecord",
    "StoredTaskRecord",
    "TargetType",
    "TaskCancelledResponse",
    "TaskCompletedResponse",
    "TaskFailedResponse",
    "TaskPendingResponse",
    "TaskRecord",
    "TaskResponseStatus",
    "TaskState",
    "TaskTimedOutResponse",
    "TaskTimestamps",
    "ToolErrorResult",
    "ToolName",
    "ToolResultMeta",
    "UntrackedAzureOrphan",
    "WireModel",
    "check_session_checksum",
    "compute_session_checksum",
    "format_timestamp",
    "parse_orchestrator_request",
    "parse_orchestrator_response",
]
# CabinCrew models are owned by the governance engineer and grow with the kernel; re-export the
# module's whole public face so a new model there cannot be forgotten here.
__all__ += _cabincrew.__all__
__all__.sort(key=lambda name: (0 if name.isupper() else 1 if name[0].isupper() else 2, name))
