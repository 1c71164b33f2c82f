"""What ``ghost-agent``'s exit code says: one table, so that no two ways a session ends share a value.

Why a table and not literals at each ``return``: a script or a CI job that runs the agent must tell "the
RCA is written" from "the model's reply was unusable, resume later" from "captures are still running in
the cloud" without reading the console. Every end of a session picks its code here; ``ghost-agent
--help`` prints :func:`describe_exit_codes` and the agent README carries the same table. A new way to end
takes a new value in this table (never a value already listed).
"""

from __future__ import annotations

from enum import IntEnum

from netghost.errors import BrainError
from netghost.llm import REPLY_FAILURES

__all__ = ["MEANINGS", "ExitCode", "describe_exit_codes", "exit_code_for"]


class ExitCode(IntEnum):
    """The exit codes of an investigation (``ghost-agent`` without a subcommand); meanings in :data:`MEANINGS`."""

    OK = 0
    ERROR = 1
    USAGE = 2
    MODEL_API = 3
    MODEL_REPLY = 4
    LEFTOVERS = 5
    ENVIRONMENT = 6
    INTERRUPTED = 130


MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "the investigation ended and its RCA is written",
    ExitCode.ERROR: "the session could not start or go on (no credentials, a session that cannot be resumed)",
    ExitCode.USAGE: "bad command line, no problem statement, or a lab world that cannot be prepared",
    ExitCode.MODEL_API: "the model API failed after retries (HTTP error, quota, no answer); --resume SID later",
    ExitCode.MODEL_REPLY: "the model's reply could not be used (malformed, blocked, SAFETY or another non-STOP "
                          "finish, empty); --resume SID",
    ExitCode.LEFTOVERS: "the session ended with cloud leftovers (captures, blobs, local capture files), each listed "
                        "with the command that removes it; --resume SID finishes the cleanup",
    ExitCode.ENVIRONMENT: "the environment cannot work (no az, not logged in, an expired login, a managed identity "
                          "without its endpoint, ...): the named reason and the command that fixes it are printed; "
                          "fix it, then run again or --resume SID",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C); --resume SID",
}
"""What each code means (``--help`` and the agent README print this table)."""


def exit_code_for(error: BrainError | None) -> ExitCode:
    """The code for a session the brain stopped: :attr:`ExitCode.MODEL_REPLY` when an answer came but could
    not be used, :attr:`ExitCode.MODEL_API` otherwise."""
    failure = getattr(error, "failure", None)
    return ExitCode.MODEL_REPLY if failure in REPLY_FAILURES else ExitCode.MODEL_API


def describe_exit_codes() -> str:
    """The table as ``--help`` prints it: one line per code."""
    lines = ["exit codes:"]
    for code in ExitCode:
        lines.append(f"  {code.value:<4} {MEANINGS[code]}")
    return "\n".join(lines)
