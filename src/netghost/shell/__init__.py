"""netghost.shell: the Safe-Exec Shell (see ARCHITECTURE.md "The Safe-Exec Shell").

Public face: :class:`SafeExecShell` and :class:`HitlDecision` (the names the seeds import), the approval
callback type, :func:`ask_about` (the same gate for a step that is not a command), :class:`LabConfinement` (a sealed
lab), the terminal callback and its answer loop (:func:`prompt_decision`, :func:`visible`), and the pure helpers other parts use directly (:func:`classify`,
:func:`redact`, :func:`load_org_policy`). Other packages import only from here (see README.md for the map).
"""

from netghost.redact import Redaction, redact
from netghost.shell.classify import Classification, OrgPolicy, classify, load_org_policy
from netghost.shell.confine import LabConfinement
from netghost.shell.gate import GateOutcome, HitlCallback, HitlDecision, ask_about
from netghost.shell.hitl_terminal import prompt_decision, terminal_hitl_callback, visible
from netghost.shell.shell import SafeExecShell

__all__ = [
    "Classification",
    "GateOutcome",
    "HitlCallback",
    "HitlDecision",
    "LabConfinement",
    "OrgPolicy",
    "Redaction",
    "SafeExecShell",
    "ask_about",
    "classify",
    "load_org_policy",
    "prompt_decision",
    "redact",
    "terminal_hitl_callback",
    "visible",
]
