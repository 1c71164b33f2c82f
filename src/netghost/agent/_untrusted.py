"""Where model, tool and user text enters the session: redacted once, at the door.

Why at the door: what the model says (hypothesis descriptions, its conclusion, the commands it had
denied) and what the user types (the problem statement) is kept in the session file, the journal and
the RCA, shown on the screen and sent back to the model. Redacting each copy where it is written
leaves a copy that forgets; redacting where the text comes in leaves nothing to forget. The places
that write it out still pass it through the redactor (it is idempotent), and escape it for their
medium (:mod:`netghost.safetext`).
"""

from __future__ import annotations

from typing import Any

from netghost.contracts import CompleteInvestigationArgs
from netghost.redact import redact, redact_value

__all__ = ["redact_intent", "scrub", "scrub_completion"]


def scrub(value: Any) -> Any:
    """``value`` with every string in it redacted, as :func:`netghost.redact.redact_value` does."""
    return redact_value(value)


def scrub_completion(completion: CompleteInvestigationArgs) -> CompleteInvestigationArgs:
    """The conclusion with every string in it redacted (summary, actions, ids, the diagnosis)."""
    return CompleteInvestigationArgs.model_validate(scrub(completion.model_dump(mode="json")))


def redact_intent(text: str) -> tuple[str, str | None]:
    """(the user's problem statement redacted, the line the screen shows when something was taken out).

    The line names the kinds of secret (``password``, ``azure_storage_key`` ...), never a value.
    """
    done = redact(text)
    if not done.count:
        return text, None
    kinds = ", ".join(done.kinds)
    return done.text, (f"Your problem statement held {done.count} secret(s) ({kinds}): redacted before it was "
                       "sent to the model or written to the journal.")
