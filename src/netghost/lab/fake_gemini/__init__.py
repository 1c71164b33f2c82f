"""netghost.lab.fake_gemini: a local fake Gemini API that answers the real google-genai SDK from a script.

Tests (and a person at a terminal, ``python -m netghost.lab.fake_gemini --script FILE.json``) run whole
investigations against it: each request gets the next scripted turn (text, function calls, or a 429/500/503
on demand), every request body is recorded, and a request the script cannot answer fails loudly.
Inside: ``_turns`` (a turn and its wire bodies), ``_server`` (the HTTP server), ``_cli`` (the command).
"""

from netghost.lab.fake_gemini._cli import load_script, main
from netghost.lab.fake_gemini._server import FakeGemini, Responder, ScriptItem
from netghost.lab.fake_gemini._turns import FakeCall, FakeTurn, as_turn

__all__ = ["FakeCall", "FakeGemini", "FakeTurn", "Responder", "ScriptItem", "as_turn", "load_script", "main"]
