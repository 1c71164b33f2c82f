"""Arguments of the six Gemini function declarations (seed 001 §1) and how they map to requests.

Gemini sends ``function_call.args`` as a dict; validating it against these models before dispatch turns
a malformed call into one clear error for the Brain instead of a ``KeyError`` deep in the loop. The
``to_request`` methods follow the seed's dispatch pseudocode (§4) literally.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from netghost.contracts.base import WireModel
from netghost.contracts.orchestrator_request import (
    CancelTaskRequest,
    CaptureTrafficRequest,
    CheckTaskRequest,
    CleanupTaskRequest,
)
from netghost.contracts.shell import ShellRequest
from netghost.contracts.task import (
    CAPTURE_MAX_DURATION_SECONDS,
    CaptureTrafficParameters,
    StorageAuthMode,
)

__all__ = [
    "FAULT_TYPES",
    "TOOL_NAMES",
    "CancelTaskArgs",
    "CaptureTrafficArgs",
    "CheckTaskArgs",
    "CleanupTaskArgs",
    "CompleteInvestigationArgs",
    "DiagnosedFault",
    "Diagnosis",
    "FaultType",
    "RunShellCmdArgs",
    "ToolErrorResult",
    "ToolName",
]

ToolName = Literal[
    "run_shell_cmd",
    "capture_traffic",
    "check_task",
    "cancel_task",
    "cleanup_task",
    "complete_investigation",
]
TOOL_NAMES: tuple[str, ...] = get_args(ToolName)  # derived: the two lists cannot drift apart


class RunShellCmdArgs(WireModel):
    """Tool 1: one command and one sentence of reasoning (both required)."""

    command: str
    reasoning: str

    def to_request(self) -> ShellRequest:
        """The ``shell.execute()`` request for this call."""
        return ShellRequest(command=self.command, reasoning=self.reasoning)


class CaptureTrafficArgs(WireModel):
    """Tool 2: start a capture; ``target`` may be ``"source_vm to dest_vm"`` for dual-end."""

    target: str = Field(min_length=1)
    resource_group: str = Field(min_length=1)
    storage_account: str = Field(min_length=1)
    duration_seconds: int = Field(default=60, ge=1, le=CAPTURE_MAX_DURATION_SECONDS)
    investigation_context: str = ""
    storage_auth_mode: StorageAuthMode | None = None

    def to_request(self) -> CaptureTrafficRequest:
        """The ``orchestrate()`` request, built as the seed's dispatch pseudocode builds it."""
        parameters = CaptureTrafficParameters(
            resource_group=self.resource_group,
            storage_account=self.storage_account,
            duration_seconds=self.duration_seconds,
        )
        if self.storage_auth_mode is not None:
            parameters.storage_auth_mode = self.storage_auth_mode
        return CaptureTrafficRequest(
            intent="capture_traffic",
            target=self.target,
            investigation_context=self.investigation_context,
            parameters=parameters,
        )


class CheckTaskArgs(WireModel):
    """Tool 3: poll a task."""

    task_id: str = Field(min_length=1)

    def to_request(self) -> CheckTaskRequest:
        """The ``orchestrate()`` request for this call."""
        return CheckTaskRequest(intent="check_task", task_id=self.task_id)


class CancelTaskArgs(WireModel):
    """Tool 4: abort a task; ``reason`` goes to the audit trail."""

    task_id: str = Field(min_length=1)
    reason: str | None = None

    def to_request(self) -> CancelTaskRequest:
        """The ``orchestrate()`` request; the reason travels only when the Brain gave one."""
        request = CancelTaskRequest(intent="cancel_task", task_id=self.task_id)
        if self.reason is not None:
            request.reason = self.reason
        return request


class CleanupTaskArgs(WireModel):
    """Tool 5: delete the resources of a completed or failed task."""

    task_id: str = Field(min_length=1)

    def to_request(self) -> CleanupTaskRequest:
        """The ``orchestrate()`` request for this call."""
        return CleanupTaskRequest(intent="cleanup_task", task_id=self.task_id)


FaultType = Literal[
    "nsg-deny",
    "udr-dead-appliance",
    "service-down",
    "dns-nxdomain",
    "dns-private-zone-not-linked",
    "pmtu-blackhole",
    "path-packet-loss",
    "middlebox-rst",
    "peering-disconnected",
    "private-endpoint-not-approved",
    "vpn-connection-down",
    "nva-ip-forwarding-off",
    "asymmetric-routing",
    "firewall-deny",
    "lb-health-probe-failing",
    "lb-backend-pool-empty",
    "lb-rule-port-mismatch",
    "snat-port-exhaustion",
    "bgp-propagation-disabled",
    "gateway-subnet-misconfigured",
    "dns-custom-server-no-forward",
    "vpn-mtu-mss",
    "paas-network-rules-deny",
]
"""A network fault's type: what the lab's worlds inject and what a diagnosis names (one list for both)."""
FAULT_TYPES: tuple[str, ...] = get_args(FaultType)
"""The fault-type vocabulary a diagnosis names (the lab's network faults; the benchmark scores on it).

Given to the model in ``complete_investigation``'s declaration, as NIKA gives its fault ontology, so a
structured diagnosis can be scored exactly without an LLM judge."""


class DiagnosedFault(WireModel):
    """One fault the investigation names: the resource at fault and what is wrong with it."""

    resource_id: str = Field(min_length=1)
    fault_type: str = Field(min_length=1)


class Diagnosis(WireModel):
    """The machine-readable verdict: is anything wrong, and which resources with which fault types."""

    is_anomaly: bool
    faults: list[DiagnosedFault] = Field(default_factory=list)


class CompleteInvestigationArgs(WireModel):
    """Tool 6: end the loop and generate the RCA (no response; not delegated to shell/orchestrator)."""

    confidence: Literal["high", "medium", "low"]
    root_cause_summary: str
    confirmed_hypotheses: list[str] = Field(default_factory=list)
    refuted_hypotheses: list[str] = Field(default_factory=list)
    unverifiable_hypotheses: list[str] = Field(default_factory=list)
    contradicted_hypotheses: list[str] = Field(default_factory=list)
    recommended_actions: list[str] = Field(default_factory=list)
    diagnosis: Diagnosis | None = None


class ToolErrorResult(WireModel):
    """What the loop returns to the Brain for a tool name it does not know (seed 001 §4)."""

    status: Literal["error"]
    error: Literal["unknown_tool"]
    tool: str
