"""netghost.llm: the LLM gateway every Gemini call in the product passes (CabinCrew §8).

:class:`LlmGateway` redacts everything outgoing with the shared redactor, retries 429/5xx with bounded
backoff (the SDK itself does not retry), and appends one hash-chained WAL record per call (model,
tokens, latency, SHA-256 of the exact request body, redactions, attempts, outcome); a call that fails
for good raises :class:`~netghost.errors.LlmError`. :func:`model_default` (``GHOST_MODEL``, default
``gemini-2.5-flash``) and :func:`has_credentials` are the one place the agent and the forensics
narrative read their model and credentials from. Inside: ``_settings`` (model, backend, client
factory), ``_outgoing`` (redaction of contents and config), ``_retry`` (what to retry, how long to
wait), ``_gateway`` (the gateway and its audit record).
"""

from netghost.llm._gateway import RECORD_KIND, LlmGateway
from netghost.llm._settings import (
    DEFAULT_MODEL,
    MODEL_ENV,
    ClientFactory,
    backend,
    default_client_factory,
    has_credentials,
    model_default,
)

__all__ = [
    "DEFAULT_MODEL",
    "MODEL_ENV",
    "RECORD_KIND",
    "ClientFactory",
    "LlmGateway",
    "backend",
    "default_client_factory",
    "has_credentials",
    "model_default",
]
