"""Organisation policy: an optional rule file (TOML or YAML) layered over the built-in tiers.

Codex-execpolicy style: each rule is an argv *prefix* (each element a word or a list of
alternatives) with a decision, a mandatory justification, and ``match``/``not_match`` examples
that are checked when the file loads. When several rules match, the strictest decision wins.
A policy may tighten anything (SAFE -> RISKY/FORBIDDEN) or relax a named RISKY command to SAFE;
it can never loosen FORBIDDEN (the classifier enforces that, and loading refuses a SAFE rule whose
own examples are built-in FORBIDDEN).

File format (TOML; YAML has the same shape under a top-level ``rule:`` list)::

    [[rule]]
    id = "appgw-backend-health"              # optional; defaults to the prefix joined by spaces
    prefix = ["az", "network", "application-gateway", "show-backend-health"]
    decision = "SAFE"                         # SAFE | RISKY | FORBIDDEN (allow | prompt | forbidden)
    justification = "Read-only POST that reports backend probe health."
    match = ["az network application-gateway show-backend-health -g rg -n gw"]
    not_match = ["az network application-gateway update -g rg -n gw"]
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml

from netghost.errors import PolicyError
from netghost.shell.classify._classify import classify
from netghost.shell.classify._parse import ParseRejection, parse_command
from netghost.shell.classify._policy import Decision, OrgPolicy, OrgRule

__all__ = ["OrgPolicy", "OrgRule", "PolicyError", "load_org_policy", "parse_org_policy"]

_DECISIONS: dict[str, Decision] = {
    "SAFE": "SAFE", "ALLOW": "SAFE", "RISKY": "RISKY", "PROMPT": "RISKY", "FORBIDDEN": "FORBIDDEN",
}  # fmt: skip
_MEMORY = "<memory>"
"""The ``source`` of policy text handed in as bytes (no file)."""
_FIELDS = frozenset({"id", "prefix", "decision", "justification", "match", "not_match"})


def load_org_policy(path: str | os.PathLike[str]) -> OrgPolicy:
    """Load and verify a policy file (``.toml``, ``.yaml`` or ``.yml``).

    Args:
        path: The rule file.

    Raises:
        PolicyError: The file is unreadable, malformed, a rule lacks a justification, or an
            example does not behave as the rule says.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise PolicyError(f"organisation policy {p} cannot be read: {exc}", path=p) from exc
    fmt: Literal["toml", "yaml"] = "yaml" if p.suffix.lower() in (".yaml", ".yml") else "toml"
    return parse_org_policy(data, fmt=fmt, source=str(p))


def parse_org_policy(
    data: bytes, *, fmt: Literal["toml", "yaml"] = "toml", source: str = _MEMORY
) -> OrgPolicy:
    """Parse and verify policy text; the hash is SHA-256 over the exact bytes.

    Raises:
        PolicyError: As ``load_org_policy``.
    """
    try:
        text = data.decode("utf-8")
        doc: Any = yaml.safe_load(text) if fmt == "yaml" else tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise _policy_error(f"organisation policy {source} is not valid {fmt}: {exc}", source) from exc
    if not isinstance(doc, Mapping) or not isinstance(doc.get("rule", []), list) or set(doc) - {"rule"}:
        raise _policy_error(
            f"organisation policy {source}: expected only a `rule` list at the top level", source
        )
    rules = tuple(_compile_rule(raw, i, source) for i, raw in enumerate(doc.get("rule", [])))
    policy = OrgPolicy(rules=rules, hash="sha256:" + hashlib.sha256(data).hexdigest(), source=source)
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        raise _policy_error(f"organisation policy {source}: duplicate rule ids", source)
    for raw, rule in zip(doc.get("rule", []), rules, strict=True):
        _verify_examples(raw, rule, source)
    return policy


def _compile_rule(raw: Any, index: int, source: str) -> OrgRule:
    where = f"organisation policy {source}, rule #{index + 1}"

    def fail(detail: str) -> PolicyError:
        return _policy_error(f"{where}: {detail}", source, f"#{index + 1}")

    if not isinstance(raw, Mapping):
        raise fail("a rule must be a table")
    unknown = set(raw) - _FIELDS
    if unknown:
        raise fail(f"unknown fields {sorted(unknown)}")
    prefix_raw = raw.get("prefix")
    if not isinstance(prefix_raw, list) or not prefix_raw:
        raise fail("`prefix` must be a non-empty list")
    prefix: list[frozenset[str]] = []
    for el in prefix_raw:
        alts = [el] if isinstance(el, str) else el
        if not isinstance(alts, list) or not alts or not all(isinstance(a, str) and a for a in alts):
            raise fail("each prefix element is a word or a list of words")
        prefix.append(frozenset(alts))
    decision = _DECISIONS.get(str(raw.get("decision", "")).upper())
    if decision is None:
        raise fail("decision must be SAFE, RISKY or FORBIDDEN (allow, prompt, forbidden)")
    justification = str(raw.get("justification", "")).strip()
    if not justification:
        raise fail("a justification is mandatory")
    if decision == "SAFE" and len(prefix) < 2:
        raise fail("a SAFE rule must name a command, not a whole program (prefix of 2+ words)")
    rid = str(raw.get("id") or " ".join("|".join(sorted(p)) for p in prefix))
    return OrgRule(id=rid, prefix=tuple(prefix), decision=decision, justification=justification)


def _verify_examples(raw: Mapping[str, Any], rule: OrgRule, source: str) -> None:
    where = f"organisation policy {source}, rule {rule.id}"

    def fail(detail: str) -> PolicyError:
        return _policy_error(f"{where}: {detail}", source, rule.id)

    for field, want in (("match", True), ("not_match", False)):
        examples = raw.get(field, [])
        if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
            raise fail(f"`{field}` must be a list of command strings")
        for cmd in examples:
            parsed = parse_command(cmd)
            if isinstance(parsed, ParseRejection):
                raise fail(f"example {cmd!r} does not parse: {parsed.reason}")
            if rule.matches(parsed.argv) != want:
                raise fail(f"example {cmd!r} should {'' if want else 'not '}match the prefix")
            if want and rule.decision == "SAFE" and classify(cmd).verdict == "FORBIDDEN":
                raise fail(f"{cmd!r} is built-in FORBIDDEN; a policy can never loosen FORBIDDEN")
    if not raw.get("match"):
        raise fail("at least one `match` example is mandatory")


def _policy_error(message: str, source: str, rule: str | None = None) -> PolicyError:
    """The error for a policy read from ``source``: a file path, or ``<memory>`` (no path)."""
    return PolicyError(message, path=None if source == _MEMORY else source, rule=rule)
