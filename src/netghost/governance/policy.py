"""Preflight governance (CabinCrew §6): Rego policies in-process with regopy, plus Python rules.

Why both: Rego lets an organisation add its own policy files without touching code; the Python
rules are the floor that no policy set (not even one that drops the default) can remove, e.g. a
FORBIDDEN command is always denied and facts that are missing a field are never "allowed".

Rules only ever *add* reasons to ``deny``/``require_approval``/``warn`` sets and the strictest
non-empty set decides, so every extra policy can only tighten. The policies are compiled once
into a regopy bundle (~0.2 ms per query) and fed facts pre-computed in Python: regopy 1.5.2 gets
numbers wrong in ``min``/``max``/``sort`` and rejects or silently empties two comprehension forms,
so policies using those constructs are refused at load (see DEPENDENCIES.md §(a)). Results are
read with ``json.loads(str(output))`` while the ``Output`` is alive (its nodes dangle otherwise).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from regopy import Interpreter, RegoError

from netghost.contracts import PolicyEvaluation, PolicyOutcome
from netghost.errors import PolicyError
from netghost.governance.plan_token import canonical_json, sha256_tagged

__all__ = [
    "OUTCOME_ORDER",
    "PYTHON_RULES",
    "PolicyEngine",
    "PolicySource",
    "capture_plan_facts",
    "command_facts",
    "default_policy_sources",
    "lint_rego",
    "load_policy_dir",
    "strictest",
]

PolicySource = tuple[str, str]
"""(name, Rego source) of one policy module."""

OUTCOME_ORDER: tuple[PolicyOutcome, ...] = ("allow", "warn", "require_approval", "deny")
"""Outcomes from loosest to strictest."""

_PACKAGE = "netghost.preflight"
_QUERY = (
    'd := object.get(data.netghost.preflight, "deny", []); '
    'r := object.get(data.netghost.preflight, "require_approval", []); '
    'w := object.get(data.netghost.preflight, "warn", [])'
)
# Always compiled in, so the package exists even when no policy defines a rule in it.
_BASE_MODULE: PolicySource = ("_netghost_base.rego", "package netghost.preflight\n\n_netghost_base := true\n")
_BUNDLE_MANIFEST = "netghost-policy.json"
_SET_FOR: dict[str, PolicyOutcome] = {"d": "deny", "r": "require_approval", "w": "warn"}

# Constructs rego-cpp 1.5.2 evaluates wrongly (bugs 1-3 in DEPENDENCIES.md §(a)).
_BUGGY_CONSTRUCTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(min|max|sort)\s*\("), "min/max/sort compare numbers as strings in regopy 1.5.2"),
    (re.compile(r"\bsome\s+\w+\s*,\s*\w+\s+in\b"), "`some i, t in arr` fails with 'Invalid collection'"),
    (re.compile(r"\bsome\s+\w+\s*;"), "`some i; arr[i]` silently yields nothing; write `t := arr[i]`"),
)



def strictest(outcomes: Iterable[PolicyOutcome]) -> PolicyOutcome:
    """Return the strictest of ``outcomes`` (``allow`` when empty)."""
    return max(outcomes, key=OUTCOME_ORDER.index, default="allow")


def lint_rego(name: str, source: str) -> None:
    """Refuse a policy that uses a construct regopy 1.5.2 evaluates wrongly.

    Args:
        name: the policy's file name (for the message).
        source: its Rego text.

    Raises:
        PolicyError: a known-buggy construct is used.
    """
    for lineno, line in enumerate(source.splitlines(), start=1):
        code = line.split("#", 1)[0]
        for pattern, why in _BUGGY_CONSTRUCTS:
            if pattern.search(code):
                raise PolicyError(f"{name}:{lineno}: {why}", path=name)


def default_policy_sources() -> list[PolicySource]:
    """The policies shipped inside the package (``netghost/governance/policies/*.rego``)."""
    root = resources.files("netghost.governance").joinpath("policies")
    return sorted(
        (entry.name, entry.read_text(encoding="utf-8"))
        for entry in root.iterdir()
        if entry.name.endswith(".rego")
    )


def load_policy_dir(directory: str | Path) -> list[PolicySource]:
    """Read every ``*.rego`` file of a user's policy directory (sorted by name).

    Raises:
        PolicyError: the directory does not exist or holds no ``.rego`` file.
    """
    path = Path(directory)
    if not path.is_dir():
        raise PolicyError(f"policy directory {path} does not exist", path=path)
    files = sorted(path.glob("*.rego"))
    if not files:
        raise PolicyError(f"policy directory {path} holds no .rego file", path=path)
    return [(f"{path.name}/{f.name}", f.read_text(encoding="utf-8")) for f in files]


# ---- facts ---------------------------------------------------------------------------------


def _split_flags(argv: Sequence[str]) -> list[str]:
    """Flags of argv with combined short flags split (``-sk`` -> ``-s``, ``-k``)."""
    flags: list[str] = []
    for tok in argv[1:]:
        if tok.startswith("--"):
            flags.append(tok.split("=", 1)[0])
        elif tok.startswith("-") and len(tok) > 1 and not tok[1].isdigit():
            flags.extend(f"-{c}" for c in tok[1:] if c.isalpha())
    return flags


def command_facts(
    argv: Sequence[str],
    *,
    verdict: str | None = None,
    tier: int | None = None,
    environment: str | None = None,
) -> dict[str, Any]:
    """Pre-compute the facts the policies see for one command (tokenising stays in Python).

    Args:
        argv: the parsed command.
        verdict: the shell classification (``SAFE``/``RISKY``/``FORBIDDEN``), if known.
        tier: the classification tier, if known.
        environment: ``"azure"`` or ``"local"``; derived from argv[0] when omitted.
    """
    argv0 = argv[0] if argv else ""
    env = environment or ("azure" if argv0 == "az" else "local")
    az_verb = ""
    if argv0 == "az":
        positional = []
        for tok in argv[1:]:
            if tok.startswith("-"):
                break
            positional.append(tok)
        az_verb = positional[-1] if positional else ""
    return {
        "kind": "shell_command",
        "argv0": argv0,
        "argv": list(argv),
        "flags": _split_flags(argv),
        "az_verb": az_verb,
        "environment": env,
        "verdict": verdict,
        "tier": tier,
    }


_CREATE_VERBS = frozenset({"create", "start", "add", "deploy", "invoke"})
_CLEANUP_VERBS = frozenset({"delete", "stop", "remove", "purge"})


def capture_plan_facts(
    steps: Sequence[Sequence[str]],
    *,
    capture_duration_s: float,
    planned_steps: Sequence[Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Pre-compute the facts the policies see for a capture task's whole command plan.

    Args:
        steps: the argv of every step (create, poll, download, analyse, cleanup).
        capture_duration_s: how long the capture runs.
        planned_steps: the plan that was approved; steps not in it are counted as unplanned.
    """
    verbs = [command_facts(s)["az_verb"] for s in steps if s and s[0] == "az"]
    planned = {tuple(p) for p in planned_steps} if planned_steps is not None else None
    return {
        "kind": "capture_plan",
        "step_count": len(steps),
        "capture_duration_s": capture_duration_s,
        "creates_resources": any(v in _CREATE_VERBS for v in verbs),
        "has_cleanup": any(v in _CLEANUP_VERBS for v in verbs),
        "unplanned_steps": 0 if planned is None else sum(tuple(s) not in planned for s in steps),
    }


# ---- Python rules (the floor) ----------------------------------------------------------------

PythonRule = Callable[[Mapping[str, Any]], tuple[PolicyOutcome, str] | None]


def _rule_facts_complete(facts: Mapping[str, Any]) -> tuple[PolicyOutcome, str] | None:
    if not isinstance(facts.get("kind"), str) or not facts["kind"]:
        return "deny", "facts have no 'kind': the plan cannot be evaluated"
    return None


def _rule_forbidden_floor(facts: Mapping[str, Any]) -> tuple[PolicyOutcome, str] | None:
    if facts.get("verdict") == "FORBIDDEN" or facts.get("tier") == 0:
        return "deny", "FORBIDDEN can never be loosened"
    return None


def _rule_risky_floor(facts: Mapping[str, Any]) -> tuple[PolicyOutcome, str] | None:
    if facts.get("verdict") == "RISKY":
        return "require_approval", "RISKY commands always need a human"
    return None


PYTHON_RULES: tuple[tuple[str, PythonRule], ...] = (
    ("facts_complete", _rule_facts_complete),
    ("forbidden_floor", _rule_forbidden_floor),
    ("risky_floor", _rule_risky_floor),
)
"""Rule-based checks every evaluation runs, whatever Rego policies are loaded."""


class PolicyEngine:
    """Compiled preflight policies: evaluate facts to allow / warn / deny / require_approval.

    Args:
        policy_dirs: directories of user ``*.rego`` files (package ``netghost.preflight``).
        include_default: also load the policy shipped in the package.
        sources: extra (name, source) modules, e.g. from a test.

    Raises:
        PolicyError: a policy does not compile, uses a known-buggy construct, or a directory is empty.
    """

    def __init__(
        self,
        policy_dirs: Sequence[str | Path] = (),
        *,
        include_default: bool = True,
        sources: Sequence[PolicySource] = (),
    ) -> None:
        modules: list[PolicySource] = list(default_policy_sources()) if include_default else []
        for directory in policy_dirs:
            modules.extend(load_policy_dir(directory))
        modules.extend(sources)
        names = [n for n, _ in modules]
        if len(set(names)) != len(names):
            raise PolicyError(f"duplicate policy module names: {names}")
        for name, src in modules:
            lint_rego(name, src)
        self.sources: tuple[PolicySource, ...] = tuple(modules)
        self.policy_hash = sha256_tagged(
            canonical_json(
                {
                    "modules": [[n, sha256_tagged(s)] for n, s in modules],
                    "python_rules": [n for n, _ in PYTHON_RULES],
                }
            )
        )
        builder = Interpreter()
        try:
            for name, src in [_BASE_MODULE, *modules]:
                builder.add_module(name, src)
            self._bundle = builder.build(_QUERY, [_PACKAGE.replace(".", "/")])
        except RegoError as exc:
            first = str(exc).strip().splitlines()[:3]
            raise PolicyError(f"policy does not compile: {' '.join(first)}") from exc
        self._runner = Interpreter()
        self._lock = threading.Lock()

    def save_bundle(self, directory: str | Path) -> Path:
        """Write the compiled bundle (regopy JSON layout) plus a manifest with the policy hash.

        Building once (e.g. at packaging or deploy time) and loading with :meth:`from_bundle`
        skips parsing and compiling the Rego sources at start-up. rego-cpp 1.5.2's bundle
        save/load aborts the process when llvmlite (numba) is loaded in it too; the governance
        layer never imports numba (only the forensics engine, a separate process, may).

        Raises:
            PolicyError: the bundle cannot be written.
        """
        out = Path(directory)
        try:
            Interpreter().save_bundle(str(out), self._bundle)
        except RegoError as exc:
            detail = str(exc).strip()[:200]
            raise PolicyError(f"cannot save policy bundle to {out}: {detail}", path=out) from exc
        manifest = {"policy_hash": self.policy_hash, "modules": [n for n, _ in self.sources]}
        (out / _BUNDLE_MANIFEST).write_text(canonical_json(manifest) + "\n", encoding="utf-8")
        return out

    @classmethod
    def from_bundle(cls, directory: str | Path) -> PolicyEngine:
        """Load a bundle written by :meth:`save_bundle`; decisions carry its recorded policy hash.

        Raises:
            PolicyError: the directory is not a bundle written by :meth:`save_bundle`.
        """
        path = Path(directory)
        try:
            manifest = json.loads((path / _BUNDLE_MANIFEST).read_text(encoding="utf-8"))
            bundle = Interpreter().load_bundle(str(path))
        except (OSError, json.JSONDecodeError, RegoError) as exc:
            raise PolicyError(f"{path} is not a policy bundle: {exc}", path=path) from exc
        engine = cls.__new__(cls)
        engine.sources = ()
        engine.policy_hash = str(manifest["policy_hash"])
        engine._bundle = bundle
        engine._runner = Interpreter()
        engine._lock = threading.Lock()
        return engine

    def _rego_sets(self, facts: Mapping[str, Any]) -> dict[PolicyOutcome, list[str]]:
        with self._lock:
            try:
                self._runner.set_input(json.loads(canonical_json(dict(facts))))
                output = self._runner.query_bundle(self._bundle)
                text = str(output)  # read while `output` is alive (bug 4)
                if text == "undefined":
                    raise PolicyError("policy query is undefined: the preflight package did not evaluate")
                doc = json.loads(text)
            except RegoError as exc:
                raise PolicyError(f"policy evaluation failed: {str(exc).strip()[:200]}") from exc
        bindings = doc.get("bindings", {}) if isinstance(doc, dict) else {}
        result: dict[PolicyOutcome, list[str]] = {}
        for var, outcome in _SET_FOR.items():
            values = bindings.get(var, [])
            if not isinstance(values, list):
                raise PolicyError(f"policy set '{outcome}' is not a set of reasons: {values!r}")
            result[outcome] = sorted(str(v) for v in values)
        return result

    def evaluate(self, facts: Mapping[str, Any], *, now: datetime) -> PolicyEvaluation:
        """Decide the preflight outcome for ``facts``; the strictest rule wins.

        Args:
            facts: pre-computed plain-JSON facts (see :func:`command_facts`).
            now: the evaluation time (from the caller's injected clock).

        Raises:
            PolicyError: the policy failed to evaluate or returned a malformed result.
        """
        reasons: dict[PolicyOutcome, list[str]] = {o: [] for o in OUTCOME_ORDER}
        for outcome, texts in self._rego_sets(facts).items():
            reasons[outcome].extend(f"rego: {t}" for t in texts)
        for name, rule in PYTHON_RULES:
            hit = rule(facts)
            if hit is not None:
                reasons[hit[0]].append(f"rule {name}: {hit[1]}")
        decided = strictest(o for o in OUTCOME_ORDER if reasons[o])
        ordered = [r for o in reversed(OUTCOME_ORDER) for r in reasons[o]]
        return PolicyEvaluation(
            outcome=decided,
            reasons=ordered,
            policy_hash=self.policy_hash,
            facts_sha256=sha256_tagged(canonical_json(dict(facts))),
            evaluated_at=now,
        )
