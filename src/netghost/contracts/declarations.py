"""The six tool declarations (seed 001 §1): names, descriptions and JSON Schema parameters.

They live here, beside the argument models they describe, because two faces offer the same tools: the
agent hands them to Gemini, and the MCP server lists them to any MCP client (without the hypothesis
arguments, which only the agent's loop reads), so both show the seed's descriptions word for word.

Why hand-written rather than ``model_json_schema()`` of the contracts' argument models: pydantic adds
``title`` to every property and ``anyOf: [X, null]`` for optional fields, which the API either rejects or
shows the model as noise. The names, descriptions and parameters are the seed's; a test holds each
declaration's properties and required list to the matching model in ``netghost.contracts``.

**How the brain reports hypothesis changes** (the seed leaves it open): every tool takes two optional
arguments beyond the seed's, ``hypotheses`` (a list of ``{id, description, state, ...}`` updates) and
``active_hypothesis_ids`` (the up to three hypotheses the call tests). The loop applies them to the
session file (the single source of truth) *before* dispatching the call, so a denial of that very call
is charged to the hypotheses it was meant to test. They are taken off the arguments before the call is
validated against the seed's contract, so the shell and the orchestrator never see them.
"""

from __future__ import annotations

from typing import Any

from netghost.contracts.tools import FAULT_TYPES

__all__ = ["HYPOTHESIS_ARGS", "TOOL_DECLARATIONS", "tool_declaration"]

_HYPOTHESES: dict[str, Any] = {
    "type": "array",
    "description": (
        "Optional. Hypothesis updates made with this call: a new hypothesis (id, description), or a "
        "state change (CONFIRMED / REFUTED / CONTRADICTED, or ACTIVE to reopen one) with the audit_id "
        "that decided it. The Ghost Agent records them in the session's hypothesis log."
    ),
    "items": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "Short id, e.g. h1."},
            "description": {"type": "string", "description": "The falsifiable statement (when new)."},
            "state": {"type": "string", "enum": ["ACTIVE", "CONFIRMED", "REFUTED", "CONTRADICTED"]},
            "resolving_audit_id": {"type": "string", "description": "The audit_id that decided it."},
            "conflicting_audit_ids": {
                "type": "array", "items": {"type": "string"},
                "description": "For CONTRADICTED: the audit_ids of the results that disagree.",
            },
            "higher_fidelity_source": {
                "type": "string", "description": "For CONTRADICTED: the evidence tier you trust.",
            },
        },
        "required": ["id"],
    },
}
_ACTIVE: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string"},
    "description": (
        "Optional. The ids of the (up to 3) hypotheses this call tests. A denial of this call counts "
        "against each of them."
    ),
}
HYPOTHESIS_ARGS: tuple[str, ...] = ("hypotheses", "active_hypothesis_ids")
"""The arguments every tool takes for hypothesis reporting; the loop removes them before dispatch."""

_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}


def _decl(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    props = {**properties, "hypotheses": _HYPOTHESES, "active_hypothesis_ids": _ACTIVE}
    return {
        "name": name,
        "description": description,
        "parameters_json_schema": {"type": "object", "properties": props, "required": required},
    }


TOOL_DECLARATIONS: tuple[dict[str, Any], ...] = (
    _decl(
        "run_shell_cmd",
        "Execute a single diagnostic or Azure read-only command through the Safe-Exec Shell.\n"
        "The Shell will classify the command (SAFE/RISKY/FORBIDDEN) and apply HITL gating\n"
        "if needed. SAFE commands are auto-approved. RISKY commands require explicit user approval.\n"
        "FORBIDDEN commands are unconditionally blocked — do not retry them.\n"
        "Use this for: ping, dig, traceroute, ss, netstat, curl (GET only),\n"
        "az <service> <resource> list/show/get, cat <file_path>.\n"
        "RESTRICTION — cat: only permitted for paths under audit_dir (./audit/) or\n"
        "paths returned in result.report_path (or result.fleet_report_path, a scale set's\n"
        "fleet report) from a completed orchestrator task.\n"
        "Do not cat arbitrary system paths, home directories, or config files.",
        {
            "command": {
                "type": "string",
                "description": "The complete shell command to execute. Must be a single command (no && or ;\n"
                               "chaining). Do not use sudo. Do not redirect to system paths.",
            },
            "reasoning": {
                "type": "string",
                "description": "One sentence explaining why this command is needed for the investigation.\n"
                               "This is shown to the user during HITL review and written to the audit trail.",
            },
        },
        ["command", "reasoning"],
    ),
    _decl(
        "capture_traffic",
        "Start an Azure Network Watcher packet capture on a VM or between two VMs.\n"
        "Returns immediately with a task_id — the capture runs asynchronously.\n"
        "Use check_task to poll for completion. Requires storage_account and\n"
        "resource_group parameters. Capture is HITL-gated (RISKY az create command).\n"
        'For dual-end captures use "source_vm_name to dest_vm_name" as target.',
        {
            "target": {
                "type": "string",
                "description": 'VM name, full Azure resource ID, or "source_vm to dest_vm" for\n'
                               "dual-end comparison capture. Full resource IDs are unambiguous and\n"
                               "required when multiple VMs share a name across resource groups:\n"
                               "  /subscriptions/{sub}/resourceGroups/{rg}/providers/\n"
                               "  Microsoft.Compute/virtualMachines/{vm-name}\n"
                               "Short names are resolved within the given resource_group.",
            },
            "resource_group": {"type": "string",
                               "description": "Azure resource group containing the target VM(s)."},
            "storage_account": {"type": "string",
                                "description": "Azure storage account name for storing the capture blob, or\n"
                                               "its full resource ID when it is in another resource group\n"
                                               "than the target (a bare name is looked up in resource_group)."},
            "duration_seconds": {"type": "integer",
                                 "description": "Capture duration in seconds. Default 60. Max 300."},
            "investigation_context": {
                "type": "string",
                "description": "One sentence describing what network behaviour is being captured.\n"
                               "Written to the audit trail and used in HITL approval reasoning.",
            },
            "storage_auth_mode": {
                "type": "string",
                "enum": ["login", "key"],
                "description": 'Authentication mode for Azure Storage operations. Default: "login"\n'
                               '(Entra ID / RBAC). Use "key" when the environment uses storage\n'
                               "access keys rather than Entra ID. Maps directly to the Orchestrator's\n"
                               "storage_auth_mode parameter, which is passed to every az storage command.",
            },
        },
        ["target", "resource_group", "storage_account"],
    ),
    _decl(
        "check_task",
        "Poll the status of an Azure packet capture task created by capture_traffic.\n"
        "The Orchestrator burst-polls Azure internally (up to 45 seconds).\n"
        'Continue calling this tool until status is "task_completed", "task_failed",\n'
        '"task_cancelled", or "task_timed_out". Do not poll more than once per 10 seconds.',
        {"task_id": {"type": "string", "description": "The task_id returned by capture_traffic."}},
        ["task_id"],
    ),
    _decl(
        "cancel_task",
        "Abort an in-progress Azure packet capture. The Orchestrator will attempt\n"
        "to delete provisioned Azure resources. If resources were created, a HITL\n"
        "prompt will appear for each deletion (RISKY az delete commands).\n"
        "Idempotent if the task is already in a terminal state.",
        {
            "task_id": {"type": "string", "description": "The task_id to cancel."},
            "reason": {"type": "string", "description": "Brief reason for cancellation (written to audit trail)."},
        },
        ["task_id"],
    ),
    _decl(
        "cleanup_task",
        "Delete Azure resources (packet capture record, storage blob, local .pcap file)\n"
        "created by a completed or failed task. Each deletion is a RISKY command and\n"
        "will trigger a HITL prompt. Call after the forensic report has been read.\n"
        "Idempotent — safe to call if cleanup was already attempted.",
        {"task_id": {"type": "string", "description": "The task_id whose resources should be cleaned up."}},
        ["task_id"],
    ),
    _decl(
        "complete_investigation",
        "Signal that the investigation is complete and request RCA report generation.\n"
        "Call this when: (a) the root cause has been identified with sufficient confidence,\n"
        "(b) all hypotheses are exhausted, or (c) denial_threshold_reached = true for\n"
        "all active hypotheses. The CLI will generate ghost_rca_{sid}.md and exit.",
        {
            "confidence": {
                "type": "string",
                "enum": ["high", "medium", "low"],
                "description": '"high" — root cause confirmed with command evidence.\n'
                               '"medium" — probable cause with partial evidence.\n'
                               '"low" — all hypotheses unverifiable due to access denials.',
            },
            "root_cause_summary": {"type": "string",
                                   "description": "One to three sentences summarising the finding."},
            "confirmed_hypotheses": {**_STRINGS,
                                     "description": "List of hypothesis IDs confirmed by evidence."},
            "refuted_hypotheses": {**_STRINGS, "description": "List of hypothesis IDs disproved by evidence."},
            "unverifiable_hypotheses": {**_STRINGS,
                                        "description": "List of hypothesis IDs blocked by repeated HITL denials."},
            "contradicted_hypotheses": {
                **_STRINGS,
                "description": "List of hypothesis IDs where tool results produced contradictory evidence.\n"
                               "Document the specific audit_ids of the conflicting results and the\n"
                               "higher-fidelity source used for resolution in root_cause_summary.",
            },
            "recommended_actions": {**_STRINGS, "description": "Concrete next steps for the operator."},
            "diagnosis": {
                "type": "object",
                "description": "Optional structured verdict, scored by the diagnosis benchmark. is_anomaly: false\n"
                               "when nothing is wrong. Each fault names the resource at fault (its full ARM id,\n"
                               "or its name) at the level the evidence shows it: the NSG rule, the route, the\n"
                               "private DNS zone, the VM, the peering. fault_type is one of: "
                               + ", ".join(FAULT_TYPES) + ".",
                "properties": {
                    "is_anomaly": {"type": "boolean"},
                    "faults": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "resource_id": {"type": "string"},
                                "fault_type": {"type": "string", "enum": list(FAULT_TYPES)},
                            },
                            "required": ["resource_id", "fault_type"],
                        },
                    },
                },
                "required": ["is_anomaly"],
            },
        },
        ["confidence", "root_cause_summary"],
    ),
)


def tool_declaration(name: str) -> dict[str, Any]:
    """The declaration named ``name``.

    Raises:
        KeyError: no tool has that name.
    """
    for decl in TOOL_DECLARATIONS:
        if decl["name"] == name:
            return decl
    raise KeyError(name)
