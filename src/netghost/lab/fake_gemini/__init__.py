"""netghost.lab.fake_gemini: a local fake Gemini API that answers the real google-genai SDK from a script.

Tests (and a person at a terminal, ``python -m netghost.lab.fake_gemini --script FILE.json``) run whole
investigations against it: each request gets the next scripted turn (text, function calls, or a 429/500/503
on demand) or a raw reply (any status, headers and bytes: HTML, truncated or wrongly typed JSON, bad
encodings, any finish reason, a cut connection, a broken SSE stream), every request body is recorded, and
a request the script cannot answer fails loudly. Inside: ``_turns`` (a turn and its wire bodies),
``_raw`` (a raw reply), ``_server`` (the HTTP server), ``_cli`` (the command).
"""

from netghost.lab.fake_gemini._cli import load_script, main
from netghost.lab.fake_gemini._raw import RawReply, as_raw, sse_body
from netghost.lab.fake_gemini._server import FakeGemini, Responder, ScriptItem, as_item
from netghost.lab.fake_gemini._turns import FakeCall, FakeTurn, as_turn

__all__ = [
    "FakeCall",
    "FakeGemini",
    "FakeTurn",
    "RawReply",
    "Responder",
    "ScriptItem",
    "as_item",
    "as_raw",
    "as_turn",
    "load_script",
    "main",
    "sse_body",
]
