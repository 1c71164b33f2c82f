"""The Cloud Orchestrator: packet captures as persistent, plan-bound, crash-safe tasks on the real Azure CLI.

:class:`CloudOrchestrator` turns the Brain's ``capture_traffic`` / ``check_task`` / ``cancel_task`` /
``list_tasks`` / ``cleanup_task`` requests (``netghost.contracts``) into ``az`` commands the real
azure-cli 2.91 accepts, run one by one through the Safe-Exec Shell; it keeps each task in a
hash-chained registry (the governance WAL), binds it to a CabinCrew plan checked by the preflight
policy, and answers with the contracts' response models. :data:`TRANSITIONS`, :data:`ROWS` and
:func:`step` are the lifecycle's transition table and its pure step; :class:`TaskTransitionError`
is raised for an edge the table does not have. :func:`check_environment` is the environment preflight
(can ``az`` work here at all), :func:`environment_fault` names a tool failure that means the environment
is broken, both with :data:`ENV_STOP_REASONS`. See README.md for the map of the modules.
"""

from netghost.orchestrator._budgets import BUDGET_NAMES, BUDGETS_ENV, Budgets, budget_message
from netghost.orchestrator._env_faults import ENV_STOP_REASONS, EnvironmentStop, environment_fault, stop_for
from netghost.orchestrator._environment import EnvironmentReport, check_environment
from netghost.orchestrator._orchestrator import CloudOrchestrator
from netghost.orchestrator._polling import backoff
from netghost.orchestrator._preflight import STOP_REASONS
from netghost.orchestrator._states import ROWS, TRANSITIONS, TaskTransitionError, Transition, step

__all__ = [
    "BUDGETS_ENV",
    "BUDGET_NAMES",
    "ENV_STOP_REASONS",
    "ROWS",
    "STOP_REASONS",
    "TRANSITIONS",
    "Budgets",
    "CloudOrchestrator",
    "EnvironmentReport",
    "EnvironmentStop",
    "TaskTransitionError",
    "Transition",
    "backoff",
    "budget_message",
    "check_environment",
    "environment_fault",
    "step",
    "stop_for",
]
