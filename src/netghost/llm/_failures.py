"""The failure classes of a model call: the ``failure`` of the gateway's WAL record and of ``LlmError``.

Data only, and free of the SDK, so that a caller deciding what a failure means (the agent's exit code,
``ghost-agent --help``) does not load google-genai to know it.
"""

from __future__ import annotations

__all__ = ["FAILURES", "REPLY_FAILURES", "RETRIED_FINISH_REASONS"]

FAILURES: dict[str, str] = {
    "api_error": "the API answered with an HTTP error (a 4xx other than 429, or 429/5xx after the last retry)",
    "transport": "no answer: the connection failed, timed out or was cut",
    "no_client": "the SDK client could not be built (credentials)",
    "response_too_large": "the answer was larger than the gateway accepts",
    "malformed_response": "the answer was not a GenerateContentResponse (not JSON, not an object, unreadable)",
    "blocked": "the prompt was blocked (promptFeedback.blockReason), no candidate came back",
    "no_candidate": "the answer held no candidate",
    "finish_reason": "the model stopped for a reason other than STOP (SAFETY, MAX_TOKENS, RECITATION, ...)",
    "empty_reply": "the model stopped with no text and no function call",
    "internal_error": "the call ended in an error of the product itself (the record is written before it is raised)",
    "interrupted": "Ctrl-C during the call",
}
"""Every ``failure`` class the gateway records, with its meaning (the README's table is this one)."""

REPLY_FAILURES = frozenset({"response_too_large", "malformed_response", "blocked", "no_candidate", "finish_reason",
                            "empty_reply"})
"""The classes where an answer came but could not be used (the rest: no usable answer came at all)."""

RETRIED_FINISH_REASONS = frozenset({"MALFORMED_FUNCTION_CALL"})
"""Finish reasons worth one more request at once: the model's own call was garbled, a new sample may not be.
SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT and SPII would only repeat; MAX_TOKENS would cut again."""
