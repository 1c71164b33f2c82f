"""The CabinCrew governance kernel: WAL, plan-tokens, approvals, policy (Rego, rules, ONNX), workflows, artifacts.

Names are loaded lazily so that importing one submodule (the shell's WAL writer, the
``ghost-agent audit`` command) does not pay for pydantic models or the Rego engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from netghost._lazy import lazy_face

if TYPE_CHECKING:
    from netghost.governance._anchor import SignedHead
    from netghost.governance.approval import (
        ApprovalMismatchError,
        ApprovalRequest,
        ApprovalResponse,
        build_approval_request,
        check_response,
    )
    from netghost.governance.artifacts import (
        ArtifactValidationError,
        bind_artifacts,
        file_sha256,
        load_manifest,
        register_artifact,
        validate_artifacts,
    )
    from netghost.governance.onnx import (
        CommandRiskStage,
        InjectionScreen,
        LearnedDecision,
        ScreenResult,
        command_risk_stage,
        injection_screen,
    )
    from netghost.governance.plan_token import (
        canonical_json,
        compute_plan_token,
        sha256_tagged,
        verify_plan_token,
    )
    from netghost.governance.policy import (
        PolicyEngine,
        capture_plan_facts,
        command_facts,
        lint_rego,
        strictest,
    )
    from netghost.governance.wal import (
        ChainBreak,
        VerifyReport,
        WalIssue,
        WalReadResult,
        WalWriter,
        read_wal,
        replay_latest,
        signed_head,
        verify,
    )
    from netghost.governance.workflow import (
        TRANSITIONS,
        ReceiptError,
        Workflow,
        WorkflowTransitionError,
        replay_workflows,
        step,
    )
    from netghost.governance.workspace import Workspace, WorkspaceError, create_workspace, open_workspace

__all__ = [
    "TRANSITIONS",
    "ApprovalMismatchError",
    "ApprovalRequest",
    "ApprovalResponse",
    "ArtifactValidationError",
    "ChainBreak",
    "CommandRiskStage",
    "InjectionScreen",
    "LearnedDecision",
    "PolicyEngine",
    "ReceiptError",
    "ScreenResult",
    "SignedHead",
    "VerifyReport",
    "WalIssue",
    "WalReadResult",
    "WalWriter",
    "Workflow",
    "WorkflowTransitionError",
    "Workspace",
    "WorkspaceError",
    "bind_artifacts",
    "build_approval_request",
    "canonical_json",
    "capture_plan_facts",
    "check_response",
    "command_facts",
    "command_risk_stage",
    "compute_plan_token",
    "create_workspace",
    "file_sha256",
    "injection_screen",
    "lint_rego",
    "load_manifest",
    "open_workspace",
    "read_wal",
    "register_artifact",
    "replay_latest",
    "replay_workflows",
    "sha256_tagged",
    "signed_head",
    "step",
    "strictest",
    "validate_artifacts",
    "verify",
    "verify_plan_token",
]

_HOME: dict[str, str] = {
    "CommandRiskStage": "onnx",
    "InjectionScreen": "onnx",
    "LearnedDecision": "onnx",
    "ScreenResult": "onnx",
    "command_risk_stage": "onnx",
    "injection_screen": "onnx",
    "TRANSITIONS": "workflow",
    "ApprovalMismatchError": "approval",
    "ApprovalRequest": "approval",
    "ApprovalResponse": "approval",
    "ArtifactValidationError": "artifacts",
    "ChainBreak": "wal",
    "PolicyEngine": "policy",
    "VerifyReport": "wal",
    "WalIssue": "wal",
    "WalReadResult": "wal",
    "WalWriter": "wal",
    "Workflow": "workflow",
    "ReceiptError": "workflow",
    "SignedHead": "_anchor",
    "WorkflowTransitionError": "workflow",
    "Workspace": "workspace",
    "WorkspaceError": "workspace",
    "bind_artifacts": "artifacts",
    "build_approval_request": "approval",
    "canonical_json": "plan_token",
    "capture_plan_facts": "policy",
    "check_response": "approval",
    "command_facts": "policy",
    "compute_plan_token": "plan_token",
    "create_workspace": "workspace",
    "file_sha256": "artifacts",
    "lint_rego": "policy",
    "load_manifest": "artifacts",
    "open_workspace": "workspace",
    "read_wal": "wal",
    "register_artifact": "artifacts",
    "replay_latest": "wal",
    "replay_workflows": "workflow",
    "sha256_tagged": "plan_token",
    "signed_head": "wal",
    "step": "workflow",
    "strictest": "policy",
    "validate_artifacts": "artifacts",
    "verify": "wal",
    "verify_plan_token": "plan_token",
}

__getattr__, __dir__ = lazy_face(__name__, _HOME, __all__)
