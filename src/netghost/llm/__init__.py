"""netghost.llm: the LLM gateway every Gemini call in the product passes (CabinCrew §8).

:class:`LlmGateway` redacts everything outgoing with the shared redactor, retries 429/5xx with bounded
backoff (the SDK itself does not retry), and appends one hash-chained WAL record per call (model,
tokens, latency, SHA-256 of the exact request body, redactions, attempts, outcome); a call that fails
for good raises :class:`~netghost.errors.LlmError`. :func:`model_default` (``GHOST_MODEL``, default
``gemini-2.5-flash``) and :func:`has_credentials` are the one place the agent and the forensics
narrative read their model and credentials from; :func:`model_environment` adds those of a ``.env``
file. Inside: ``_settings`` (model, backend, client factory), ``_outgoing`` (redaction of contents and config), ``_retry`` (what to retry, how long to
wait), ``_reply`` (an answer the SDK refuses read leniently, every answer judged usable or named as a
failure; :class:`RepairedResponse` carries the values dropped), ``_failures`` (the failure classes:
:data:`FAILURES`, :data:`REPLY_FAILURES`, data only), ``_screening`` (the injection screen on outgoing tool outputs: flagged text goes wrapped and marked
untrusted in the function response's ``_meta``, the record keeps the score), ``_gateway`` (the gateway
and its audit record).

The gateway half of this face is lazy (PEP 562): settings cost nothing to import, while the gateway
pulls in the redactor's rule tables and the WAL (~65 ms), which the ``pcap-forensics`` program must
not pay on every run for a narrative it is rarely asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from netghost._lazy import lazy_face
from netghost.llm._failures import FAILURES, REPLY_FAILURES
from netghost.llm._settings import (
    DEFAULT_MODEL,
    DOTENV_VARIABLES,
    MODEL_ENV,
    ClientFactory,
    backend,
    default_client_factory,
    has_credentials,
    model_default,
    model_environment,
)

if TYPE_CHECKING:
    from netghost.llm._gateway import MAX_RESPONSE_BYTES, RECORD_KIND, LlmGateway
    from netghost.llm._reply import Repair, RepairedResponse

__all__ = [
    "DEFAULT_MODEL",
    "DOTENV_VARIABLES",
    "FAILURES",
    "MAX_RESPONSE_BYTES",
    "MODEL_ENV",
    "RECORD_KIND",
    "REPLY_FAILURES",
    "ClientFactory",
    "LlmGateway",
    "Repair",
    "RepairedResponse",
    "backend",
    "default_client_factory",
    "has_credentials",
    "model_default",
    "model_environment",
]

_LAZY = {"MAX_RESPONSE_BYTES": "_gateway", "RECORD_KIND": "_gateway", "LlmGateway": "_gateway",
         "Repair": "_reply", "RepairedResponse": "_reply"}

__getattr__, __dir__ = lazy_face(__name__, _LAZY, __all__)
