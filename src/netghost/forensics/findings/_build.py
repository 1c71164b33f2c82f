"""Diagnostic findings: specific, ranked (severity, confidence), each with bounded evidence frames.

Each detector reads the analysis columns and emits findings in an investigator's vocabulary
("SYN to 10.0.2.4:6379 retried 3× with no answer → silently dropped (NSG/firewall)"). Detectors
are pure functions of the :class:`~netghost.forensics.engine.Analysis`, so they are testable with
synthetic captures whose faults are known. They live in _tcp.py, _pmtu.py, _window.py and
_other.py; this module runs them in dependency order and ranks the result.
"""

from __future__ import annotations

from netghost.forensics import spill
from netghost.forensics.engine import Analysis
from netghost.forensics.findings._context import (
    SEVERITIES,
    Ctx,
    Finding,
    capture_duplicates,
    finding,
    flow_id,
)
from netghost.forensics.findings._other import capture_quality, dns, icmp
from netghost.forensics.findings._pmtu import pmtu
from netghost.forensics.findings._tcp import resets, retransmissions, syn_failures
from netghost.forensics.findings._window import window_full, zero_window

__all__ = ["PER_KIND", "SEVERITIES", "build_findings", "capture_duplicates", "flow_id"]

PER_KIND = 3


def _cap_per_kind(found: list[Finding]) -> list[Finding]:
    """Keep the best PER_KIND findings of each kind; fold the rest into one "N more" finding.

    Why: on big captures one fault class (e.g. 50 unreachable hosts) would otherwise fill the whole
    bounded list and hide every other kind of problem from a reader with a small token budget.
    """
    by_kind: dict[str, list[Finding]] = {}
    for f in found:
        by_kind.setdefault(f["kind"], []).append(f)
    out: list[Finding] = []
    for kind, fs in by_kind.items():
        out += fs[:PER_KIND]
        rest = fs[PER_KIND:]
        if rest:
            frames = [fr for f in rest[:10] for fr in f["evidence"]["frames"][:1]]
            flows = [fl for f in rest[:10] for fl in f["flows"][:1]]
            out.append(finding(
                kind, max((f["severity"] for f in rest), key=SEVERITIES.index), min(f["confidence"] for f in rest),
                f"… and {len(rest)} more '{kind}' findings like the above",
                "; ".join(f["title"] for f in rest[:3])[:600], frames, flows, rest[0]["evidence"]["first_ts"],
                folded=len(rest),
            ))
    return out


def build_findings(a: Analysis, limit: int = 24, ctx: Ctx | None = None) -> list[Finding]:
    """Run every detector and rank: severity, then confidence, then evidence size.

    Detectors that explain a stream (SYN failures, PMTU) run before the retransmission-rate one,
    which leaves explained streams out so one symptom is not reported twice.

    Args:
        a: the capture analysis.
        limit: maximum number of findings kept (the semantic JSON stays compact).
        ctx: a :class:`Ctx` of ``a`` to reuse (its lazily built columns), e.g. from build_semantic.
    """
    if a.packets == 0:
        return []
    x = ctx if ctx is not None else Ctx(a)
    found: list[Finding] = []
    for detect in (syn_failures, resets, pmtu, retransmissions, zero_window, window_full, dns, icmp, capture_quality):
        found += detect(x)
        spill.release()  # each detector walks spilled columns: their pages leave RSS before the next one
    found.sort(key=lambda f: (-SEVERITIES.index(f["severity"]), -f["confidence"], -len(f["evidence"]["frames"])))
    found = _cap_per_kind(found)
    found.sort(key=lambda f: (-SEVERITIES.index(f["severity"]), -f["confidence"], "folded" in f["metrics"],
                              -len(f["evidence"]["frames"])))
    for i, f in enumerate(found[:limit], 1):
        f["id"] = f"F{i}"
    return found[:limit]
