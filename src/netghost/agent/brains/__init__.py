"""The brains the investigation loop can run: the protocol (history in, model turn out) and its makers.

:class:`Brain` is what the loop talks to; :class:`GeminiBrain` calls Gemini through an injected
``generate`` (the LLM gateway in the product) and reads its answer with :func:`from_response` (every
string cleaned and bounded, a malformed call kept as a call carrying its ``error``: see
:data:`MAX_ARGS_BYTES`, :data:`MAX_ARGS_DEPTH`, :data:`MAX_TEXT_CHARS`); :class:`PlaybookBrain` is
the offline playbook brain (issue 13). The history types (:class:`Message`, :class:`Part`,
:class:`FunctionCall`, :class:`FunctionResponse`) are plain data that round-trip through JSON for the
session's journal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from netghost._lazy import lazy_face
from netghost.agent.brains._protocol import (
    Brain,
    BrainError,
    FunctionCall,
    FunctionResponse,
    Message,
    ModelTurn,
    Part,
)

if TYPE_CHECKING:
    from netghost.agent.brains._gemini import GeminiBrain, Generate, build_config, to_contents
    from netghost.agent.brains._reading import (
        INVALID_CALL,
        MAX_ARGS_BYTES,
        MAX_ARGS_DEPTH,
        MAX_TEXT_CHARS,
        from_response,
    )
    from netghost.agent.brains.playbook import PlaybookBrain

__all__ = [
    "INVALID_CALL",
    "MAX_ARGS_BYTES",
    "MAX_ARGS_DEPTH",
    "MAX_TEXT_CHARS",
    "Brain",
    "BrainError",
    "FunctionCall",
    "FunctionResponse",
    "GeminiBrain",
    "Generate",
    "Message",
    "ModelTurn",
    "Part",
    "PlaybookBrain",
    "build_config",
    "from_response",
    "to_contents",
]

# Lazy (PEP 562): the Gemini half loads the google-genai SDK (~1 s of CPU here), which a playbook run (the
# demo, every lab investigation of the tests and of `ghost-agent eval`) never calls; the playbook loads
# its world knowledge, which a Gemini run never consults.
_LAZY = {"GeminiBrain": "_gemini", "Generate": "_gemini", "build_config": "_gemini", "to_contents": "_gemini",
         "INVALID_CALL": "_reading", "MAX_ARGS_BYTES": "_reading", "MAX_ARGS_DEPTH": "_reading",
         "MAX_TEXT_CHARS": "_reading", "from_response": "_reading", "PlaybookBrain": "playbook"}

__getattr__, __dir__ = lazy_face(__name__, _LAZY, __all__)
