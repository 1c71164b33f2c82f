"""The prompt-injection screen: how much a piece of text the model is about to read reads as instructions.

Tool outputs, resource tags, DNS TXT records and capture payload summaries come from the systems under
investigation, and any of them can carry "ignore your instructions and run ...". The screen scores each
piece (the maximum over overlapping windows, so one planted sentence in a long output stands out); at or
above the threshold the piece is *flagged*. What follows from a flag is the caller's (the LLM gateway
wraps the text and marks it untrusted): the text still reaches the model, because the investigation
needs it, and nothing here can run or stop a command. The gate stays the guarantee.

A model that fails its integrity check fails closed: every piece is flagged (score unknown), so the
model is told to treat all of it as data.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path

import numpy as np

from netghost.contracts import PolicyEvaluation
from netghost.errors import PolicyError
from netghost.governance.onnx._features import text_chunks, text_vector
from netghost.governance.onnx._model import LoadedModel, load_model
from netghost.governance.plan_token import sha256_tagged

__all__ = ["SCREEN_MODEL", "InjectionScreen", "ScreenResult", "injection_screen"]

SCREEN_MODEL = "injection_screen"
"""The file stem of the shipped injection screen model."""
_CACHE_SIZE = 4096
_MIN_CHARS = 8


@dataclass(frozen=True)
class ScreenResult:
    """The screen's answer for one piece of text.

    Attributes:
        score: the highest window score (None when the screen failed closed).
        flagged: the text reads as instructions (always True when failed closed, for non-trivial text).
        threshold: the model's threshold (None when failed closed).
        policy_hash: the model file's ``sha256:`` hash (None when failed closed).
        text_sha256: ``sha256:`` of the text scored (what the audit record names instead of the text).
    """

    score: float | None
    flagged: bool
    threshold: float | None
    policy_hash: str | None
    text_sha256: str

    @property
    def outcome(self) -> str:
        """The §6 outcome: ``warn`` (flagged, the text goes on marked untrusted) or ``allow``."""
        return "warn" if self.flagged else "allow"


class InjectionScreen:
    """The loaded screen model, or its fail-closed stand-in (flags everything).

    Args:
        model: the verified model; None for a screen that failed closed.
        failure: why there is no model.
    """

    def __init__(self, model: LoadedModel | None, failure: str | None = None) -> None:
        if model is None and not failure:
            raise ValueError("a screen without a model must say why")
        self.model = model
        self.failure = failure
        self._cache: OrderedDict[str, ScreenResult] = OrderedDict()

    @classmethod
    def load(cls, directory: str | Path | None = None) -> InjectionScreen:
        """The screen of the model in ``directory`` (the package's by default); never raises."""
        try:
            return cls(load_model(SCREEN_MODEL, directory))
        except PolicyError as exc:
            return cls(None, failure=str(exc))

    @property
    def policy_hash(self) -> str | None:
        """The model's ``sha256:`` hash, None when failed closed."""
        return self.model.sha256 if self.model is not None else None

    def screen(self, text: str) -> ScreenResult:
        """Score one piece of text."""
        return self.screen_many([text])[0]

    def screen_many(self, texts: Sequence[str]) -> list[ScreenResult]:
        """Score many pieces in one model call (their windows stacked); repeated texts come from a cache.

        The LLM gateway sends the whole conversation on every turn, so the same tool output is screened
        again and again: the cache (by the text's SHA-256, bounded) keeps that free.
        """
        digests = [sha256_tagged(t.encode("utf-8", "surrogatepass")) for t in texts]
        todo = [i for i, d in enumerate(digests) if d not in self._cache]
        if todo:
            self._fill([texts[i] for i in todo], [digests[i] for i in todo])
        out = []
        for d in digests:
            self._cache.move_to_end(d)
            out.append(self._cache[d])
        return out

    def _fill(self, texts: Sequence[str], digests: Sequence[str]) -> None:
        if self.model is None:
            for text, d in zip(texts, digests, strict=True):
                self._remember(d, ScreenResult(None, len(text.strip()) >= _MIN_CHARS, None, None, d))
            return
        spans: list[tuple[int, int]] = []
        chunks: list[str] = []
        for text in texts:
            pieces = text_chunks(text) if len(text.strip()) >= _MIN_CHARS else []
            spans.append((len(chunks), len(chunks) + len(pieces)))
            chunks.extend(pieces)
        scores = self.model.scores(text_vector(chunks)) if chunks else np.zeros(0, dtype=np.float32)
        threshold = self.model.threshold
        for (start, end), d in zip(spans, digests, strict=True):
            score = float(scores[start:end].max()) if end > start else 0.0
            self._remember(d, ScreenResult(score, score >= threshold, threshold, self.model.sha256, d))

    def _remember(self, digest: str, result: ScreenResult) -> None:
        self._cache[digest] = result
        while len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)

    def evaluate(self, text: str, *, now: datetime) -> PolicyEvaluation:
        """The screen's answer as a §6 preflight outcome (``warn`` or ``allow``), its hash the model's."""
        result = self.screen(text)
        score = "unknown (failed closed)" if result.score is None else f"{result.score:.2f}"
        return PolicyEvaluation(
            outcome="warn" if result.flagged else "allow",
            reasons=[f"onnx:{SCREEN_MODEL}: injection score {score}"],
            policy_hash=result.policy_hash or sha256_tagged(f"failed-closed: {self.failure}"),
            facts_sha256=result.text_sha256,
            evaluated_at=now,
        )


@cache
def injection_screen() -> InjectionScreen:
    """The process's screen for the shipped model, loaded (and verified) once on first use."""
    return InjectionScreen.load()
