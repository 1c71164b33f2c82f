"""Classify one command line into SAFE / RISKY / FORBIDDEN (tiers 0-3 of ARCHITECTURE.md).

Pipeline: parse (tree-sitter-bash, one simple command only) -> Tier 0 rules (FORBIDDEN) ->
wrappers unwrapped for Tier 0 -> Tier 2 ``az`` verb table -> Tier 1 per-binary option allowlists
-> Tier 3 named dangers -> anything else RISKY. An organisation policy, when given, may then
tighten anything or relax a RISKY command to SAFE, but never loosen FORBIDDEN.

Why the verdict is a pure function of the argv (plus structural facts): quoting, whitespace and
escaping that leave the argv unchanged can then never lower the verdict; only extra structure
(unquoted globs, a quoted command word) can raise it. The Hypothesis test checks exactly that.
All tables are compiled and their match/not_match examples verified once, at import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal, NamedTuple

from netghost.errors import PolicyError
from netghost.governance import command_risk_stage
from netghost.redact import PathContext, argv_secrets, credential_word
from netghost.shell.classify._az import az_read_is_stable, classify_az, command_group
from netghost.shell.classify._egress import EGRESS_CHECKS
from netghost.shell.classify._local import (
    POST_CHECKS,
    check_forensics_outputs,
    check_ip,
    check_python,
    is_forensics_call,
)
from netghost.shell.classify._openssl import check_openssl
from netghost.shell.classify._options import parse_options
from netghost.shell.classify._parse import MAX_COMMAND_CHARS, ParseRejection, parse_command
from netghost.shell.classify._policy import OrgPolicy
from netghost.shell.classify._scope import EgressScope
from netghost.shell.classify._tables import Tables, load_tables
from netghost.shell.classify._tier0 import Tier0Rule, basename, match_tier0

__all__ = ["ArgvOutcome", "Classification", "Context", "Verdict", "classify", "classify_argv", "verdict_rank"]

Verdict = Literal["SAFE", "RISKY", "FORBIDDEN"]
ErrorKind = Literal["forbidden_command", "not_a_single_command", "parse_error"]
_RANK: dict[str, int] = {"SAFE": 0, "RISKY": 1, "FORBIDDEN": 2}
_COMMAND_WORD = re.compile(r"[A-Za-z0-9._/+-]+")
_PYTHON = re.compile(r"python[0-9.]*")
_MAX_UNWRAP = 4
_MAX_WRAPPER_CANDIDATES = 16
_NUMBER = re.compile(r"[0-9][0-9.]*[smhdkKMG%]?")


@dataclass(frozen=True)
class Classification:
    """The classifier's answer for one command (contract: /tmp/api_contracts.md).

    Attributes:
        verdict: SAFE runs without asking, RISKY asks a human, FORBIDDEN never runs.
        tier: 0 FORBIDDEN, 1 always-safe diagnostics, 2 Azure verbs, 3 dangerous/unknown.
        reason: One line a human (and the AI) can act on; for FORBIDDEN it says what to do instead.
        argv: The parsed argv (empty if it did not parse).
        environment: "azure" when argv[0] == "az", else "local".
        error: FORBIDDEN only: forbidden_command | not_a_single_command | parse_error.
        policy_hash: The organisation policy's hash when one was applied.
        policy_rule: The organisation rule that decided, if any.
    """

    verdict: Verdict
    tier: int
    reason: str
    argv: tuple[str, ...]
    environment: Literal["local", "azure"]
    error: str | None = None
    policy_hash: str | None = None
    policy_rule: str | None = None
    cacheable: bool = False
    """A SAFE ``az`` read by the catalogue's read rule (not a policy's relaxation) whose answer is stable for a short time (not a
    capture's status, a wait ...: ``[cache]`` of az.toml): the shell may serve it again from its read cache."""


class ArgvOutcome(NamedTuple):
    """The built-in verdict for one argv, before any organisation policy.

    ``rule`` names the table entry that decided; ``relaxable`` is False when the RISKY verdict
    comes from a hazard in the arguments (a denied option or value of an allowlisted binary, a
    file read via @, a secret in argv, an unquoted glob, a hazard inside a wrapper or behind a
    path) that an organisation's SAFE prefix rule must not wave through: a prefix names a
    command, not whatever is appended after it. Only "unknown program / verb" and named-risky
    verdicts (tier 3 binaries, az verbs) stay relaxable.

    A named tuple, not a frozen dataclass: one is made per argv classified (and per word a wrapper may
    run), and a frozen dataclass's ``__init__`` (one ``object.__setattr__`` per field) cost three times as
    much on the classifier's path.
    """

    verdict: Verdict
    tier: int
    reason: str
    rule: str
    relaxable: bool = True
    error: ErrorKind | None = None


@dataclass(frozen=True)
class Context:
    """What a verdict depends on besides the command: where probes may go and where paths point.

    Attributes:
        scope: the session's egress scope (private address space and Azure endpoints by default).
        local: the shell's working directory, home and credential-naming variables (None: unknown, so the
            credential ontology tries every spelling and the engine's outputs must be relative paths).
    """

    scope: EgressScope = field(default_factory=EgressScope)
    local: PathContext | None = None


_TABLES: Tables = load_tables()
_DEFAULT = Context()


def classify(
    command: str, policy: OrgPolicy | None = None, *, scope: EgressScope | None = None, local: PathContext | None = None
) -> Classification:
    """Classify one command line.

    Args:
        command: The exact string the AI asked to run.
        policy: An organisation policy from ``load_org_policy``; it may tighten any verdict or
            relax a RISKY one to SAFE, never loosen FORBIDDEN.
        scope: Where network probes may go automatically (default: the private address space,
            single-label and private-zone names, Azure's public endpoints in data-free shapes).
        local: The shell's working directory, home and environment (``netghost.redact.credential_context``),
            so relative paths and ``~`` are resolved as the program will resolve them.

    Returns:
        The classification; a pure function of (command, policy, scope, local); never raises.
    """
    ctx = _DEFAULT if scope is None and local is None else Context(scope or _DEFAULT.scope, local)
    if len(command) > MAX_COMMAND_CHARS:
        # Refused before parsing, and kept out of the cache (huge keys would pin memory).
        base, relaxable = _second_opinion(*_classify_uncached(command, ctx))
    else:
        base, relaxable = _classify_checked(command, ctx)
    if policy is None:
        return base
    # An organisation policy records its own hash and rule; the learned stage's verdict and reason stay.
    return _apply_policy(replace(base, policy_hash=None, policy_rule=None), relaxable, policy)


@lru_cache(maxsize=8192)
def _classify_builtin(command: str, ctx: Context = _DEFAULT) -> tuple[Classification, bool]:
    return _classify_uncached(command, ctx)


@lru_cache(maxsize=8192)
def _classify_checked(command: str, ctx: Context = _DEFAULT) -> tuple[Classification, bool]:
    """The tiers' verdict with the learned second opinion. Cached per (command, context): the stage is
    loaded once per process and is a pure function of the argv, so a cached answer is the answer."""
    return _second_opinion(*_classify_builtin(command, ctx))


def _second_opinion(base: Classification, relaxable: bool) -> tuple[Classification, bool]:
    """The command risk model (governance's ONNX stage) on what the tiers called SAFE: it may only
    turn SAFE into RISKY (a human decides), never lower a verdict. Its decision, allow or not, is
    recorded as the audit record's policy hash (the model's SHA-256) and rule. A tightened verdict
    is not relaxable: an organisation's prefix rule names a command, not the unusual arguments."""
    if base.verdict != "SAFE":
        return base, relaxable
    decision = command_risk_stage().decide(base.argv)
    checked = replace(base, policy_hash=decision.policy_hash, policy_rule=decision.rule)
    if decision.outcome == "allow":
        return checked, relaxable
    return replace(checked, verdict="RISKY", reason=decision.reason), False


def _classify_uncached(command: str, ctx: Context = _DEFAULT) -> tuple[Classification, bool]:
    parsed = parse_command(command)
    if isinstance(parsed, ParseRejection):
        return Classification("FORBIDDEN", 0, parsed.reason, (), "local", parsed.error), False
    out = classify_argv(parsed.argv, unquoted_special=parsed.unquoted_special, ctx=ctx)
    env: Literal["local", "azure"] = "azure" if parsed.argv[0] == "az" else "local"
    cacheable = out.verdict == "SAFE" and out.rule == "az-catalogue-read" and parsed.argv[0] == "az" and \
        az_read_is_stable(_TABLES.az, parsed.argv[1:])
    return Classification(out.verdict, out.tier, out.reason, parsed.argv, env, out.error,
                          cacheable=cacheable), out.relaxable


def _secret_values(argv: tuple[str, ...], out: ArgvOutcome) -> ArgvOutcome:
    """Values, not names: a credential anywhere in argv (a SAS ``sig=``, a JWT, a key, a connection
    string, an Authorization value, a token query parameter) makes the command at least RISKY, and no
    organisation rule relaxes that. Checked only where it can change the answer (SAFE, relaxable RISKY)."""
    if out.verdict == "FORBIDDEN" or (out.verdict == "RISKY" and not out.relaxable):
        return out
    found = argv_secrets(argv)
    if not found:
        return out
    first = found[0]
    return ArgvOutcome(
        "RISKY", 3 if out.tier == 1 else out.tier,
        f"argument {first.index} carries a secret value ({first.kind}); a command that sends or stores a "
        "credential the model typed never runs unasked (the value is masked on screen and in the audit)",
        "secret-value-in-argv", relaxable=False,
    )  # fmt: skip


def classify_argv(argv: tuple[str, ...], *, unquoted_special: bool = False, ctx: Context = _DEFAULT) -> ArgvOutcome:
    """Classify an already-parsed argv (also used to unwrap wrappers such as ``env`` or ``nice``)."""
    out = _secret_values(argv, _classify_argv(argv, 0, ctx))
    if out.verdict == "SAFE" and unquoted_special:
        return ArgvOutcome(
            "RISKY",
            3 if out.tier == 1 else out.tier,
            "An argument has an unquoted brace, tilde or backslash that a shell would interpret; "
            "quote it (single quotes) if it is meant literally.",
            "unquoted-special",
            relaxable=False,
        )
    return out


def _forbidden(reason: str, rule: str) -> ArgvOutcome:
    return ArgvOutcome("FORBIDDEN", 0, reason, rule, relaxable=False, error="forbidden_command")


def _tier0_reason(rule: Tier0Rule, argv: tuple[str, ...], ctx: Context) -> str:
    """The FORBIDDEN reason; for the credential rule, which word names which store."""
    detail = ""
    found = credential_word(argv[1:], ctx.local) if rule.credential_operand else None
    if found is not None:
        word, hit = found
        detail = f" `{word}` names {hit.path} ({hit.entry}: {hit.why})"
    return f"FORBIDDEN ({rule.id}):{detail} {rule.justification} Instead: {rule.advice}"


def _classify_argv(argv: tuple[str, ...], depth: int, ctx: Context = _DEFAULT) -> ArgvOutcome:
    t = _TABLES
    rule0 = match_tier0(t.tier0, argv, ctx.local)
    if rule0 is not None:
        return _forbidden(_tier0_reason(rule0, argv, ctx), rule0.id)
    name = basename(argv[0])
    args = argv[1:]
    if name != name.lower():
        # A case-insensitive file system (macOS, a mounted share) runs `PRINTENV` as printenv and `AZ` as
        # az: the folded spelling's FORBIDDEN stands (the name as typed is an unknown program, RISKY, below).
        folded = _classify_argv((argv[0].lower(), *args), depth + 1, ctx)
        if folded.verdict == "FORBIDDEN":
            return folded
    if name == "az":
        return _classify_az_argv(argv)
    if name in t.wrappers:
        return _unwrap(name, argv, depth, ctx)
    if name == "ip" and "exec" in args:
        # `ip netns exec NS CMD`, `ip vrf exec VRF CMD`, `ip -all netns exec CMD` run CMD.
        return _unwrap(name, ("ip", *args[args.index("exec") + 1 :]), depth, ctx)
    if _PYTHON.fullmatch(name) and args[:2] == ("-m", "azure.cli"):
        # `python -m azure.cli` is az under another name: its credential emitters stay FORBIDDEN.
        inner = _classify_argv(("az", *args[2:]), depth + 1, ctx)
        if inner.verdict == "FORBIDDEN":
            return inner
        return ArgvOutcome("RISKY", 3, "Call the Azure CLI as `az`, not through python -m azure.cli.", "path-command")
    if "/" in argv[0]:
        # A path to an allowlisted binary gets the bare name's argument checks too: an
        # organisation rule naming `/usr/bin/curl` must not wave `-T /secret` through.
        hazard = name in t.tier1 and _classify_argv((name, *args), depth + 1, ctx).verdict != "SAFE"
        return ArgvOutcome(
            "RISKY", 3, f"`{argv[0]}` is a path; only bare allowlisted program names run automatically.", "path-command",
            relaxable=not hazard,
        )  # fmt: skip
    return _classify_program(name, args, ctx)


def _classify_az_argv(argv: tuple[str, ...]) -> ArgvOutcome:
    """Tier 2: ``az`` (by any path) through the verb table; only the bare name runs automatically."""
    az = classify_az(_TABLES.az, argv[1:])
    if az.verdict == "FORBIDDEN":
        return _forbidden(f"FORBIDDEN ({az.rule}): {az.reason} Instead: {az.advice}", az.rule)
    if argv[0] != "az":
        return ArgvOutcome("RISKY", 2, "Call az by its bare name `az`, not through a path.", "path-command")
    return ArgvOutcome(az.verdict, 2, az.reason, az.rule, az.relaxable)


def _classify_program(name: str, args: tuple[str, ...], ctx: Context = _DEFAULT) -> ArgvOutcome:
    """A bare program name that is neither az nor a wrapper: tier 1 with argument checks, else RISKY."""
    t = _TABLES
    problem: str | None
    spec = t.tier1.get(name)
    if spec is not None:
        parsed = parse_options(spec, args)
        problem = parsed.problem
        post = POST_CHECKS.get(name)
        if problem is None and post is not None:
            problem = post(parsed)
        egress = EGRESS_CHECKS.get(name)
        if problem is None and egress is not None:
            problem = egress(parsed, ctx.scope)
        if problem is None and name == "pcap-forensics":
            problem = check_forensics_outputs(parsed, ctx.local.cwd if ctx.local else None)
    elif name == "ip":
        problem = check_ip(args)
    elif name == "openssl" and args[:1] == ("s_client",):
        problem = check_openssl(args, ctx.scope)
    elif _PYTHON.fullmatch(name):
        problem = check_python(args, t.tier1["pcap-forensics"], ctx.local.cwd if ctx.local else None)
        if problem is not None and not is_forensics_call(args):
            # Another script is an unknown program (relaxable by name), not an argument hazard.
            return ArgvOutcome("RISKY", 3, f"`{name}`: {problem}; a human must approve it.", "python-not-forensics")
    else:
        danger = t.tier3_reasons.get(name)
        if danger is not None:
            return ArgvOutcome("RISKY", 3, f"`{name}` {danger}; a human must approve it.", "tier3-" + name)
        return ArgvOutcome("RISKY", 3, f"`{name}` is not on the read-only allowlist; a human must approve it.", "unknown-command")
    if problem is None:
        return ArgvOutcome("SAFE", 1, f"`{name}` is a read-only diagnostic with allowlisted arguments.", "tier1-" + name)
    # An argument hazard (a denied option, a file read, a blocked URL) is never relaxable: an
    # organisation's prefix rule names a command, not whatever is appended after the prefix.
    return ArgvOutcome("RISKY", 3, f"`{name}`: {problem}; a human must approve it.", "tier1-argcheck-" + name, relaxable=False)


def _unwrap(name: str, argv: tuple[str, ...], depth: int, ctx: Context = _DEFAULT) -> ArgvOutcome:
    """A wrapper runs another program: FORBIDDEN if any inner command would be, else RISKY.

    Every word that could be the wrapped program (option values cannot be told apart without
    each wrapper's grammar) is classified with the rest of the argv. Where the scan gives up (too
    deep a nest, too many candidates) nothing is known about what runs: FORBIDDEN, never RISKY.
    """
    if depth >= _MAX_UNWRAP:
        return _forbidden(f"`{name}` nests wrappers more than {_MAX_UNWRAP} deep; what finally runs cannot be checked.", "wrapper-too-deep")
    hazard = False
    seen = 0
    for i in range(1, len(argv)):
        word = argv[i]
        if word in (".", "..") or _NUMBER.fullmatch(word):
            # Directory operands (`find . -name x`) and numbers (durations, counts, CPU masks)
            # name no program a wrapper could exec (`.` is the shell builtin `source`).
            continue
        if _COMMAND_WORD.fullmatch(word) and not word.startswith("-") and "=" not in word:
            inner = _classify_argv(argv[i:], depth + 1, ctx)
            if inner.verdict == "FORBIDDEN":
                return inner._replace(reason=f"`{name}` wraps a forbidden command. {inner.reason}")
            hazard = hazard or not inner.relaxable
            seen += 1
            # Bounded work: a nested wrapper already scanned everything after it. Scanning every
            # word at every level was O(n^depth): `nice nice ... ls` (40 words) took 1.7 s.
            if basename(word) in _TABLES.wrappers:
                break
            if seen >= _MAX_WRAPPER_CANDIDATES:
                return _forbidden(
                    f"`{name}` wraps a command with too many program-like words to check each one; "
                    "send the inner command without the wrapper.",
                    "wrapper-scan-limit",
                )
    # An organisation rule naming the wrapper must not relax an argument hazard of what it wraps.
    return ArgvOutcome(
        "RISKY", 3, f"`{name}` runs another program; a human must approve it.", "wrapper-" + name, relaxable=not hazard
    )


def _policy_argv(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The argv an organisation rule is matched against: az command words case-folded, as
    azure-cli reads them (a rule forbidding `az vm delete` also catches `az VM Delete`)."""
    if not argv or argv[0] != "az":
        return argv
    n = len(command_group(argv[1:]))
    words: list[str] = []
    for w in argv[1:]:
        folded = n > 0 and w != "--"
        words.append(w.lower() if folded else w)
        n -= folded
    return ("az", *words)


def _apply_policy(base: Classification, relaxable: bool, policy: OrgPolicy) -> Classification:
    hit = policy.decide(_policy_argv(base.argv)) if base.argv else None
    with_hash = replace(base, policy_hash=policy.hash)
    if hit is None:
        return with_hash
    if base.verdict == "FORBIDDEN":
        return replace(with_hash, policy_rule=hit.id if hit.decision == "FORBIDDEN" else None)
    if hit.decision == "FORBIDDEN":
        return replace(
            with_hash, verdict="FORBIDDEN", tier=0, error="forbidden_command", policy_rule=hit.id,
            reason=f"FORBIDDEN by organisation policy ({hit.id}): {hit.justification}",
        )  # fmt: skip
    if hit.decision == "RISKY":
        reason = base.reason if base.verdict == "RISKY" else f"Organisation policy ({hit.id}) requires approval: {hit.justification}"
        return replace(with_hash, verdict="RISKY", reason=reason, policy_rule=hit.id)
    if base.verdict == "RISKY" and relaxable:
        tier = 2 if base.environment == "azure" else 1
        return replace(
            with_hash, verdict="SAFE", tier=tier, policy_rule=hit.id,
            reason=f"Allowed by organisation policy ({hit.id}): {hit.justification}",
        )  # fmt: skip
    if base.verdict == "RISKY":
        return replace(with_hash, reason=f"{base.reason} (organisation rule {hit.id} cannot relax this hazard)")
    return replace(with_hash, policy_rule=hit.id)


def verdict_rank(verdict: str) -> int:
    """SAFE < RISKY < FORBIDDEN, for 'strictest wins' comparisons."""
    return _RANK[verdict]


def _tiers(command: str) -> Verdict:
    """The tiers' verdict alone: the tables' examples test the tables, not the learned stage."""
    return _classify_builtin(command)[0].verdict


def _verify_builtin_examples() -> None:
    """Every rule's match/not_match examples must hold, or the tables are wrong (PolicyError)."""
    failures: list[str] = []
    for r0 in _TABLES.tier0.rules:
        for cmd in r0.match:
            p = parse_command(cmd)
            got = None if isinstance(p, ParseRejection) else _classify_argv(p.argv, 0).rule
            if got != r0.id:
                failures.append(f"tier0 {r0.id}: {cmd!r} decided by {got}")
        for cmd in r0.not_match:
            p = parse_command(cmd)
            if not isinstance(p, ParseRejection) and _classify_argv(p.argv, 0).rule == r0.id:
                failures.append(f"tier0 {r0.id}: not_match {cmd!r} matched")
    for name, spec in _TABLES.tier1.items():
        failures += [f"tier1 {name}: {c!r} not SAFE" for c in spec.match if _tiers(c) != "SAFE"]
        failures += [f"tier1 {name}: not_match {c!r} is SAFE" for c in spec.not_match if _tiers(c) == "SAFE"]
    for cmd, want in _TABLES.az.examples:
        got = _tiers(cmd)
        if got != want:
            failures.append(f"az: {cmd!r} is {got}, expected {want}")
    if failures:
        raise PolicyError("built-in rule examples fail: " + "; ".join(failures))


_verify_builtin_examples()
