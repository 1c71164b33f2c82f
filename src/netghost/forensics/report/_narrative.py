"""Optional Gemini-written narrative paragraph on top of the deterministic report (``--narrative``).

WHY: the deterministic report is the evidence; a narrative paragraph helps a human read it. So the
model only ever sees a *bounded* digest of the semantic JSON (counts, ranked findings with frame
numbers, worst flows, the comparison's totals), never packets or payload, and whatever it writes is
added above the report, clearly labelled, without changing a line of the report itself.

The call goes through the product's LLM gateway (:mod:`netghost.llm`), like every Gemini call: the
digest is redacted with the shared redactor before it leaves, 429/5xx are retried with backoff, and
with ``audit_dir`` one hash-chained record per call is appended to ``<audit_dir>/llm_calls.jsonl``
(the forensics CLI passes none today, so by default no audit file is written beside the reports: a
narrative is an optional, read-only add-on and the report directory is the user's, not an audit trail).

Configuration is google-genai's own environment, read in :mod:`netghost.llm`: ``GEMINI_API_KEY`` (or
``GOOGLE_API_KEY``), or Vertex AI with ``GOOGLE_GENAI_USE_VERTEXAI=true`` plus
``GOOGLE_CLOUD_PROJECT``/``GOOGLE_CLOUD_LOCATION``; ``GOOGLE_GEMINI_BASE_URL`` redirects the SDK (used by
the tests' local fake server). The model is ``GHOST_MODEL`` (default ``gemini-2.5-flash``). Without any
of these, the result says so and no request is made.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from netghost.errors import LlmError, WalError
from netghost.llm import DEFAULT_MODEL, backend, model_default
from netghost.redact import redact
from netghost.safetext import md_block

if TYPE_CHECKING:
    from netghost.llm import LlmGateway

__all__ = ["AUDIT_FILE", "DEFAULT_MODEL", "MAX_INPUT_CHARS", "NarrativeResult", "generate_narrative",
           "narrative_config", "narrative_input", "with_narrative"]

AUDIT_FILE = "llm_calls.jsonl"
MAX_INPUT_CHARS = 12_000
NO_KEY = ("--narrative: no Gemini credentials (set GEMINI_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI=true with "
          "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION); the deterministic report is unchanged")
INSTRUCTION = (
    "You are a senior network forensics engineer. From the JSON digest of a packet-capture analysis, write ONE "
    "paragraph (at most 180 words) for an on-call engineer: what most likely went wrong, where on the path, and "
    "what to check next. Use only facts present in the digest; cite finding ids (F1, F2 ...) and frame numbers "
    "as evidence; say when the evidence is inconclusive. No headings, no lists, no speculation beyond the digest."
)
UNCHANGED = "the deterministic report is unchanged"


@dataclass
class NarrativeResult:
    """The paragraph (``None`` when none was produced) and a one-line status for stderr."""

    text: str | None
    message: str
    model: str | None = None


def narrative_config(environ: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """Return (backend, model): backend is ``"gemini"``, ``"vertex"`` or ``None`` when not configured.

    Args:
        environ: the environment to read (default ``os.environ``).
    """
    return backend(environ), model_default(environ)


def _finding(f: dict[str, Any]) -> dict[str, Any]:
    m = f.get("metrics", {})
    return {"id": f.get("id"), "severity": f["severity"], "confidence": f["confidence"], "title": f["title"],
            "frames": f["evidence"]["frames"][:5], "flows": f["flows"][:3],
            **({"point": m["point"]} if m.get("point") else {})}


def _comparison(c: dict[str, Any]) -> dict[str, Any]:
    return {
        "points": {k: {"file": v["file"], "packets": v["packets"]} for k, v in c["points"].items()},
        "shared": c["shared"], "matched_packets": c["matched_packets"], "clock_offset_ms": c["clock_offset_ms"],
        "lost_a_to_b": c["lost"]["a_to_b"]["count"], "lost_b_to_a": c["lost"]["b_to_a"]["count"],
        "injected_at_b": c["injected"]["at_b"]["count"], "injected_at_a": c["injected"]["at_a"]["count"],
        "blocked_at_b": c["blocked"]["at_b"]["count"], "blocked_at_a": c["blocked"]["at_a"]["count"],
        "delay_ms": c["delay_ms"], "injected_packets": c["injected_packets"][:3],
        "modified": {"ttl_raised": c["modified"]["ttl"]["raised_packets"],
                     "dscp_changed": c["modified"]["dscp"]["changed_packets"],
                     "mss_clamped": c["modified"]["mss_clamped"]["count"],
                     "nat_rewritten": c["modified"]["nat"]["rewritten_packets"]},
        "note": c["note"],
    }


def narrative_input(sem: dict[str, Any], max_chars: int = MAX_INPUT_CHARS) -> str:
    """The bounded digest sent to the model: counts, ranked findings, worst flows, comparison totals.

    Whatever the capture size the text is at most ``max_chars`` characters: findings and flows are
    dropped from the bottom of their rankings until it fits.
    """
    s = sem["summary"]
    digest: dict[str, Any] = {
        "capture": {k: sem["capture"].get(k) for k in ("file", "duration_s", "truncated")},
        "summary": {k: s.get(k) for k in ("packets", "tcp_conversations", "tcp_analysis", "rst_packets",
                                          "syn_without_synack", "conn_states", "dns_rcodes", "icmp", "icmpv6",
                                          "decode_issues")},
        "findings": [_finding(f) for f in sem.get("findings", [])[:15]],
        "worst_flows": [{k: f.get(k) for k in ("id", "client", "server", "conn_state", "retransmissions",
                                               "handshake_rtt_ms", "rst")} for f in sem.get("flows", [])[:8]],
    }
    if sem.get("comparison"):
        digest["comparison"] = _comparison(sem["comparison"])
    text = json.dumps(digest, ensure_ascii=False, separators=(",", ":"))
    while len(text) > max_chars and (digest["worst_flows"] or digest["findings"]):
        digest["worst_flows" if digest["worst_flows"] else "findings"].pop()
        text = json.dumps(digest, ensure_ascii=False, separators=(",", ":"))
    return text[:max_chars]


def _gateway(environ: Mapping[str, str] | None, client: Any, audit_dir: str | os.PathLike[str] | None) -> LlmGateway:
    audit = Path(audit_dir) / AUDIT_FILE if audit_dir is not None else None
    factory = (lambda _options: client) if client is not None else None
    from netghost.llm import LlmGateway  # noqa: PLC0415  the gateway loads only when a narrative is asked for

    return LlmGateway(audit=audit, environ=environ, client_factory=factory)


def generate_narrative(sem: dict[str, Any], *, environ: Mapping[str, str] | None = None, client: Any = None,
                       audit_dir: str | os.PathLike[str] | None = None,
                       gateway: LlmGateway | None = None) -> NarrativeResult:
    """Ask Gemini for the narrative paragraph, through the LLM gateway; never raises for a missing key
    or a failing API.

    Args:
        sem: the semantic document (single or compare mode).
        environ: environment to read the configuration from (default ``os.environ``).
        client: an existing ``google.genai.Client`` (default: one built from the environment).
        audit_dir: where the gateway appends its record of the call (``llm_calls.jsonl``); none by default.
        gateway: an existing gateway (its owner closes it); ``environ``, ``client`` and ``audit_dir`` then
            only choose the model.
    """
    found, model = narrative_config(environ)
    if found is None and client is None and gateway is None:
        return NarrativeResult(None, NO_KEY)
    try:
        own = gateway or _gateway(environ, client, audit_dir)
    except (WalError, OSError) as exc:  # no audit trail, no call: the gateway must not be bypassed
        return NarrativeResult(None, f"--narrative: cannot open the LLM audit log ({exc}); {UNCHANGED}", model)
    try:
        from google.genai import types  # noqa: PLC0415  the SDK loads only when a narrative is asked for

        config = types.GenerateContentConfig(system_instruction=INSTRUCTION, temperature=0.2, max_output_tokens=1024)
        resp = own.generate(model, narrative_input(sem), config, purpose="forensics_narrative")
        text = redact(resp.text or "").text.strip()  # the model's text: no secret is kept or shown
    except LlmError as exc:
        # the deterministic report must still be written: report the failure, do not raise
        cause = type(exc.__cause__ or exc).__name__
        return NarrativeResult(None, f"--narrative: Gemini call failed ({cause}: {str(exc)[:200]}); {UNCHANGED}", model)
    finally:
        if gateway is None:
            own.close()
    if not text:
        return NarrativeResult(None, f"--narrative: the model returned no text; {UNCHANGED}", model)
    return NarrativeResult(text, f"--narrative: paragraph written by {model}", model)


def with_narrative(report_md: str, text: str | None, model: str | None = None) -> str:
    """Insert the labelled narrative under the report's title; the report is returned unchanged when ``text`` is None."""
    if not text:
        return report_md
    title, _, rest = report_md.partition("\n")
    who = f"Gemini ({model})" if model else "Gemini"
    block = (f"\n## Narrative (written by {who} from the semantic summary; the findings below are the evidence)\n\n"
             f"{md_block(text)}\n")  # the model's text: shown, never read as Markdown
    return f"{title}\n{block}{rest if rest.startswith(chr(10)) else chr(10) + rest}"
