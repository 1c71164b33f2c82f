"""netghost.governance.onnx: learned second opinions in preflight (CabinCrew §6), run with ONNX Runtime.

Two models ship in ``models/``, each with a card (training data, features, metrics, threshold, SHA-256)
and rebuilt by ``training/`` with a fixed seed: the **command risk** model, which may turn a command the
deterministic tiers call SAFE into one a human approves (never the other way), and the **injection
screen**, which scores text about to reach the language model so the LLM gateway can mark it untrusted.
A model file whose hash is not its card's fails closed at load (``_model``). Inside: ``_features``
(argv and text to vectors, shared with training), ``_model`` (verified loading), ``_command`` (the
command stage), ``_screen`` (the screen).
"""

from netghost.governance.onnx._command import (
    COMMAND_MODEL,
    CommandRiskStage,
    LearnedDecision,
    command_risk_stage,
)
from netghost.governance.onnx._features import (
    argv_digest,
    command_tokens,
    command_vector,
    text_chunks,
    text_vector,
)
from netghost.governance.onnx._model import LoadedModel, load_model, models_dir
from netghost.governance.onnx._screen import SCREEN_MODEL, InjectionScreen, ScreenResult, injection_screen

__all__ = [
    "COMMAND_MODEL",
    "SCREEN_MODEL",
    "CommandRiskStage",
    "InjectionScreen",
    "LearnedDecision",
    "LoadedModel",
    "ScreenResult",
    "argv_digest",
    "command_risk_stage",
    "command_tokens",
    "command_vector",
    "injection_screen",
    "load_model",
    "models_dir",
    "text_chunks",
    "text_vector",
]
