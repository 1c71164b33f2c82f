"""NIKA-style scoring of a structured diagnosis against a world's ground truth, with no LLM judge.

A diagnosis names faults as ``(resource_id, fault_type)``; the truth is the world's answer (one fault,
none for a healthy control, or the answer's ``faults`` list when the world has several). Three F1 scores over sets (localization: the resources; fault type:
the types; RCA: the pairs) and detection (is_anomaly right). Two empty sets agree (F1 = 1): a healthy
control diagnosed as healthy scores full marks.

Resource matching (written down in the lab's README): ids compare case-insensitively without a trailing
slash; a full ARM id matches the same id; a bare name (no ``/``) matches an id whose last segment is that
name. So ``DenyAllFromWebSubnet``, ``.../networkSecurityGroups/nsg-data/securityRules/DenyAllFromWebSubnet``
both match the rule, at the level the answers use: rule, route, zone, VM, peering.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Score", "f1", "resource_matches", "score_diagnosis"]


def _norm(text: str) -> str:
    return text.strip().rstrip("/").lower()


def resource_matches(predicted: str, truth: str) -> bool:
    """Does a diagnosed resource id name the true one (see the module docstring)?"""
    p, t = _norm(predicted), _norm(truth)
    if not p or not t:
        return False
    if p == t:
        return True
    return "/" not in p and t.rsplit("/", 1)[-1] == p


def f1(predicted: Iterable[Any], truth: Iterable[Any], match: Any = None) -> float:
    """F1 of two sets; ``match(p, t)`` decides equality (default ``==``). Both empty: 1.0."""
    preds, truths = list(dict.fromkeys(predicted)), list(dict.fromkeys(truth))
    if not preds and not truths:
        return 1.0
    if not preds or not truths:
        return 0.0
    same = match or (lambda a, b: a == b)
    hit_p = sum(1 for p in preds if any(same(p, t) for t in truths))
    hit_t = sum(1 for t in truths if any(same(p, t) for p in preds))
    precision, recall = hit_p / len(preds), hit_t / len(truths)
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class Score:
    """One investigation's scores."""

    detection: bool
    localization_f1: float
    fault_type_f1: float
    rca_f1: float


def score_diagnosis(diagnosis: Mapping[str, Any] | None, answer: Mapping[str, Any] | None) -> Score:
    """Score ``complete_investigation``'s diagnosis (None: the agent gave none) against the world's answer."""
    listed = [f for f in (answer or {}).get("faults") or [] if isinstance(f, Mapping)]
    truths = [(str(f["resource_id"]), str(f["fault_type"])) for f in listed
              if f.get("resource_id") and f.get("fault_type")]
    truth_type = (answer or {}).get("fault_type")
    truth_id = (answer or {}).get("resource_id")
    if not listed and truth_type and truth_id:
        truths = [(str(truth_id), str(truth_type))]
    diag = diagnosis or {}
    faults = [f for f in diag.get("faults") or [] if isinstance(f, Mapping)]
    preds = [(str(f.get("resource_id", "")), str(f.get("fault_type", ""))) for f in faults]
    anomaly = bool(diag.get("is_anomaly")) if diagnosis is not None else None
    return Score(
        detection=anomaly is not None and anomaly == bool(truths),
        localization_f1=f1([p[0] for p in preds], [t[0] for t in truths], resource_matches),
        fault_type_f1=f1([p[1] for p in preds], [t[1] for t in truths]),
        rca_f1=f1(preds, truths, lambda p, t: resource_matches(p[0], t[0]) and p[1] == t[1]),
    )
