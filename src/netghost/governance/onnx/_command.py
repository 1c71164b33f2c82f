"""The command risk model: a learned second opinion on what the deterministic tiers called SAFE.

It can only ask a human more often. The tiers stay the only thing that says SAFE or FORBIDDEN; this
stage looks at a command the tiers call SAFE and, when its score reaches the threshold chosen on a
validation split (so that at most 1% of everyday reads ask), answers ``require_approval`` with a
reason a human can act on: "learned risk 0.93: unusual options for `az vm show` (--foo)". Nothing it
answers ever lowers a verdict, and a model whose file does not match its card fails closed: every
command it would have scored asks a human.

Each decision is a preflight outcome (CabinCrew §6) whose policy hash is the model file's SHA-256:
:meth:`CommandRiskStage.evaluate` gives it as a :class:`~netghost.contracts.PolicyEvaluation` for a
workflow's WAL, :meth:`CommandRiskStage.decide` as the compact form the shell's audit record carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Literal

from netghost.contracts import PolicyEvaluation
from netghost.errors import PolicyError
from netghost.governance.onnx._features import (
    argv_digest,
    command_key,
    command_options,
    command_tokens,
    command_vector,
    lexicon_words,
)
from netghost.governance.onnx._model import LoadedModel, load_model
from netghost.governance.plan_token import canonical_json, sha256_tagged

__all__ = ["COMMAND_MODEL", "CommandRiskStage", "LearnedDecision", "command_risk_stage"]

COMMAND_MODEL = "command_risk"
"""The file stem of the shipped command risk model."""
_RULE = "onnx:command_risk"
_SHAPE_WORDS: dict[str, str] = {
    "s:at0": "a value read from a file (@...)", "s:url": "a URL", "s:home": "a home-directory path",
    "s:abspath": "an absolute path", "s:dotdot": "a parent-directory path", "s:dollar": "a `$`",
    "s:glob": "a glob", "s:brace": "a brace", "s:bslash": "a backslash", "s:pct": "a percent-encoding",
}


@dataclass(frozen=True)
class LearnedDecision:
    """One decision of the command risk stage.

    Attributes:
        outcome: ``allow`` (the tiers' SAFE stands) or ``require_approval`` (a human decides).
        score: the model's risk score (None when the stage failed closed and no model scored).
        threshold: the model's threshold (None when failed closed).
        policy_hash: the model file's ``sha256:`` hash (None when failed closed: no verified model decided).
        rule: ``onnx:command_risk:<outcome>:<score>`` for the audit record's ``policy_rule``.
        reason: what a human reads when the outcome is ``require_approval``.
    """

    outcome: Literal["allow", "require_approval"]
    score: float | None
    threshold: float | None
    policy_hash: str | None
    rule: str
    reason: str


class CommandRiskStage:
    """The loaded command risk model, or its fail-closed stand-in.

    Args:
        model: the verified model; None for a stage that failed closed.
        failure: why there is no model (shown in every reason when failed closed).
    """

    def __init__(self, model: LoadedModel | None, failure: str | None = None) -> None:
        if model is None and not failure:
            raise ValueError("a stage without a model must say why")
        self.model = model
        self.failure = failure
        meta = model.meta if model is not None else {}
        self._pairs = frozenset(meta.get("benign_pairs", ()))
        self._keys = frozenset(meta.get("known_keys", ()))
        self._reviewed = frozenset(meta.get("reviewed_safe", ()))

    @classmethod
    def load(cls, directory: str | Path | None = None) -> CommandRiskStage:
        """The stage of the model in ``directory`` (the package's by default); never raises.

        A model that fails its integrity check gives a stage that asks a human about every command
        the tiers call SAFE: fail closed, never open.
        """
        try:
            return cls(load_model(COMMAND_MODEL, directory))
        except PolicyError as exc:
            return cls(None, failure=str(exc))

    @property
    def policy_hash(self) -> str | None:
        """The model's ``sha256:`` hash, None when failed closed."""
        return self.model.sha256 if self.model is not None else None

    def score(self, argv: Sequence[str]) -> float:
        """The model's risk score for ``argv`` in [0, 1].

        Raises:
            PolicyError: the stage failed closed (there is no model to score with).
        """
        if self.model is None:
            raise PolicyError(f"the command risk model is unavailable: {self.failure}", rule=_RULE)
        row = command_vector(argv, self._pairs, self._keys)
        return float(self.model.scores(row)[0])

    def decide(self, argv: Sequence[str]) -> LearnedDecision:
        """Score a command the tiers called SAFE: ``allow`` below the threshold, else ``require_approval``."""
        if self.model is None:
            return LearnedDecision(
                "require_approval", None, None, None, f"{_RULE}:failed-closed",
                f"The learned risk check is unavailable ({self.failure}); a human must approve.",
            )  # fmt: skip
        threshold = self.model.threshold
        if argv_digest(argv) in self._reviewed:
            # A command the corpora's reviewers marked SAFE (and the tiers call SAFE): nothing unseen here.
            return LearnedDecision("allow", 0.0, threshold, self.model.sha256, f"{_RULE}:allow:reviewed", "")
        score = self.score(argv)
        if score < threshold:
            return LearnedDecision("allow", score, threshold, self.model.sha256, f"{_RULE}:allow:{score:.2f}", "")
        return LearnedDecision(
            "require_approval", score, threshold, self.model.sha256, f"{_RULE}:require_approval:{score:.2f}",
            f"learned risk {score:.2f}: {self._explain(argv)}; a human must approve it.",
        )  # fmt: skip

    def _explain(self, argv: Sequence[str]) -> str:
        key = command_key(argv)
        novel = sorted({o for o in command_options(argv) if f"{key}|{o}" not in self._pairs})
        if key not in self._keys:
            return f"`{key}` is not among the everyday reads the model learned"
        if novel:
            return f"unusual options for `{key}` ({', '.join(novel[:4])})"
        lowered = " ".join(argv[1:]).lower()
        seen = lexicon_words(lowered)[:3]
        shapes = [text for tok, text in _SHAPE_WORDS.items() if _has_shape(argv, tok)][:2]
        details = [*shapes, *(f"the word '{w}'" for w in seen)]
        return f"unusual arguments for `{key}`" + (f" ({', '.join(details)})" if details else "")

    def evaluate(self, argv: Sequence[str], *, now: datetime) -> PolicyEvaluation:
        """The decision as a §6 preflight outcome, its policy hash the model's SHA-256.

        A stage that failed closed answers ``require_approval`` under the hash ``sha256:`` of the
        failure text, so the WAL still says which (missing) model was asked.
        """
        decision = self.decide(argv)
        facts = {"kind": "shell_command", "argv": list(argv), "stage": COMMAND_MODEL}
        reasons = [f"{decision.rule}: {decision.reason}" if decision.reason else decision.rule]
        return PolicyEvaluation(
            outcome=decision.outcome,
            reasons=reasons,
            policy_hash=decision.policy_hash or sha256_tagged(f"failed-closed: {self.failure}"),
            facts_sha256=sha256_tagged(canonical_json(facts)),
            evaluated_at=now,
        )


def _has_shape(argv: Sequence[str], token: str) -> bool:
    return token in command_tokens(argv)


@cache
def command_risk_stage() -> CommandRiskStage:
    """The process's stage for the shipped model, loaded (and verified) once on first use."""
    return CommandRiskStage.load()
