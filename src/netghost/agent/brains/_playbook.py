"""The offline playbook brain's place (issue 13 fills it in).

Until then ``--brain playbook`` runs this stand-in: it states that the playbook is not built yet and
concludes at once with ``confidence="low"``, so the loop, the session and the RCA run end to end
without a key. It never proposes a command.
"""

from __future__ import annotations

from collections.abc import Sequence

from netghost.agent.brains._protocol import FunctionCall, Message, ModelTurn, Part

__all__ = ["PlaybookBrain"]

_NOTE = "The offline playbook brain is not available yet (issue 13); concluding without investigating."


class PlaybookBrain:
    """The offline brain's stand-in: one turn, ``complete_investigation`` with low confidence."""

    name = "playbook"
    model = "playbook"

    def next_turn(self, history: Sequence[Message], *, system_prompt: str) -> ModelTurn:
        """Conclude immediately (see the module docstring)."""
        args = {
            "confidence": "low",
            "root_cause_summary": _NOTE,
            "recommended_actions": ["Run the investigation with --brain gemini."],
        }
        return ModelTurn(parts=(Part(text=_NOTE), Part(call=FunctionCall("complete_investigation", args))),
                         finish_reason="STOP")
