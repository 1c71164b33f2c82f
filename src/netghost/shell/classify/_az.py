"""Tier 2: classify an ``az`` argv: the rule tables' floor, then the catalogue of what it calls.

Why the command is looked up rather than its verb read: ``show`` is not always harmless (``az acr
task show --with-secure-properties``, ``az acr webhook get-config``) and a prefix rule on a group
misses its siblings (``webapp auth`` is not ``webapp auth-classic``). The order of decisions:

1. ``[[forbidden]]`` rules of ``rules/az.toml`` (credential emitters by name, a floor kept from
   before the catalogue) and argument hazards (``@file`` reads, ARM paths naming credential
   operations or secret-bearing types) decide first;
2. ``az rest`` is resolved against the catalogue's ARM URL templates (``_armpath``);
3. ``[[risky]]`` rules (reads known to need a human, sessions, live probes);
4. the catalogue (``_azcat``, ``_azdecide``): a command it does not list is RISKY; one it lists is
   SAFE only when everything it may call with these options only reads and prints no secret;
   resource ids and types given to the generic resource commands are resolved to their templates;
5. the verb table's mutating words, and for hand-written commands its read-only verbs, stay a
   floor under the catalogue's SAFE.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple
from urllib.parse import urlsplit

from netghost.redact import credential_path
from netghost.shell.classify._armpath import ArmIndex, arm_floor_decision, decoded, typed_resource
from netghost.shell.classify._azcat import Catalogue, Entry, load_catalogue
from netghost.shell.classify._azdecide import CatalogueDecision, decide
from netghost.shell.classify._azrules import RuleSet, compile_rule, index_rules

__all__ = ["AzDecision", "AzTable", "at_file_path", "az_read_is_stable", "classify_az", "command_group", "compile_az"]

# azure-cli matches command words case-insensitively (`az Account Get-Access-Token` is
# get-access-token), so the group is read case-folded.
_GROUP_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


class AzDecision(NamedTuple):
    """What the az table says about one argv.

    A named tuple, not a frozen dataclass: every az command makes one or two, and a frozen dataclass's
    ``__init__`` (one ``object.__setattr__`` per field) cost three times as much on the classifier's path."""

    verdict: Literal["SAFE", "RISKY", "FORBIDDEN"]
    reason: str
    rule: str
    advice: str = ""
    relaxable: bool = True


@dataclass(frozen=True)
class AzTable:
    """The compiled ``az.toml`` with the catalogue it judges commands by."""

    safe: frozenset[str]
    safe_families: re.Pattern[str]
    sensitive: re.Pattern[str]
    mutating: frozenset[str]
    forbidden: RuleSet
    risky: RuleSet
    rest_hosts: frozenset[str]
    rest_safe_options: frozenset[str]
    examples: tuple[tuple[str, str], ...]  # (command, expected verdict)
    catalogue: Catalogue
    local_reads: Mapping[str, frozenset[str]]  # command -> options that make it more than a local read
    generic_reads: frozenset[str]
    arm_reads: ArmIndex  # ARM GETs azure-cli calls outside its command code (az.toml [catalogue] arm_reads)
    volatile_verbs: frozenset[str] = frozenset()
    volatile_groups: tuple[tuple[str, ...], ...] = ()
    memo: dict[tuple[str, object], bool] = field(default_factory=dict, compare=False, repr=False)
    """Answers that depend on this table and a command's words alone (is a read stable, is a command a
    generic read), kept with the table itself so no other table's answer can ever be taken for them."""


def compile_az(raw: Mapping[str, Any], catalogue: Catalogue | None = None) -> AzTable:
    """Compile ``az.toml`` (with the packaged catalogue unless one is given).

    Raises:
        ValueError: A rule lacks its id, justification or advice, or a local read is not a command.
    """
    verbs = raw["verbs"]
    rest = raw["rest"]
    cache = raw.get("cache", {})
    if cache and not str(cache.get("justification", "")).strip():
        raise ValueError("az cache: justification is mandatory")
    cat_raw = raw.get("catalogue", {})
    if not str(verbs.get("justification", "")).strip() or not str(rest.get("justification", "")).strip():
        raise ValueError("az verbs/rest: justification is mandatory")
    if cat_raw and not str(cat_raw.get("justification", "")).strip():
        raise ValueError("az catalogue: justification is mandatory")
    catalogue = catalogue if catalogue is not None else load_catalogue()
    local_reads = {str(n): frozenset(map(str, opts)) for n, opts in dict(cat_raw.get("local_reads", {})).items()}
    generic_reads = frozenset(map(str, cat_raw.get("generic_reads", ())))
    for label, names in (("local_reads", local_reads), ("generic_reads", generic_reads)):
        unknown = sorted(n for n in names if (e := catalogue.lookup(n.split())) is None or e.name != n)
        if unknown:
            raise ValueError(f"az catalogue {label} are not azure-cli {catalogue.version} commands: {unknown}")
    forbidden = tuple(compile_rule(r, "forbidden") for r in raw.get("forbidden", ()))
    risky = tuple(compile_rule(r, "risky") for r in raw.get("risky", ()))
    examples = [(c, "SAFE") for c in verbs.get("match_safe", ())]
    examples += [(c, "RISKY") for c in verbs.get("match_risky", ())]
    examples += [(c, "SAFE") for c in rest.get("match_safe", ())]
    examples += [(c, "RISKY") for c in rest.get("match_risky", ())]
    examples += [(c, "SAFE") for c in cat_raw.get("match_safe", ())]
    examples += [(c, "RISKY") for c in cat_raw.get("match_risky", ())]
    examples += [(c, "FORBIDDEN") for c in cat_raw.get("match_forbidden", ())]
    examples += [(c, "FORBIDDEN") for r in forbidden for c in r.examples]
    examples += [(c, "RISKY") for r in risky for c in r.examples]
    return AzTable(
        safe=frozenset(verbs["safe"]),
        safe_families=re.compile(verbs["safe_families"]),
        sensitive=re.compile(verbs["sensitive_word"]),
        mutating=frozenset(verbs["mutating_words"]),
        forbidden=index_rules(forbidden),
        risky=index_rules(risky),
        rest_hosts=frozenset(rest["hosts"]),
        rest_safe_options=frozenset(rest["safe_options"]),
        examples=tuple(examples),
        catalogue=catalogue,
        local_reads=local_reads,
        generic_reads=generic_reads,
        arm_reads=ArmIndex(list(enumerate(map(str, cat_raw.get("arm_reads", ()))))),
        volatile_verbs=frozenset(cache.get("volatile_verbs", ())),
        volatile_groups=tuple(tuple(g.split()) for g in cache.get("volatile_groups", ())),
    )


def az_read_is_stable(table: AzTable, args: Sequence[str]) -> bool:
    """May the answer of this SAFE az read be kept a short time (``[cache]`` of az.toml)? False for the reads
    whose answer is a moment's state the session waits on (a capture's status, waits, capture blobs)."""
    group = tuple(command_group(args))
    key = ("stable", group)
    stable = table.memo.get(key)
    if stable is None:
        stable = bool(group) and group[-1] not in table.volatile_verbs and not any(group[: len(v)] == v for v in table.volatile_groups)
        if len(table.memo) < 16384:
            table.memo[key] = stable
    return stable


def command_group(args: Sequence[str]) -> list[str]:
    """The leading run of command words of ``az ARGS``, lower-cased (azure-cli folds their case).

    A ``--`` is skipped, not a stop: argparse drops it and still routes the following words to
    the subcommand parsers, so ``az -- account get-access-token`` runs get-access-token.
    """
    group: list[str] = []
    fullmatch = _GROUP_WORD.fullmatch
    for a in args:
        if fullmatch(a) is None:
            if a == "--":  # (not a group word: it starts with no letter) checked only when the regex fails
                continue
            break
        group.append(a.lower())
    return group


def _verb_is_safe(table: AzTable, verb: str) -> bool:
    if verb in table.safe:
        return True
    if not table.safe_families.fullmatch(verb):
        return False
    return not any(table.sensitive.fullmatch(part) for part in verb.split("-"))


def classify_az(table: AzTable, args: Sequence[str]) -> AzDecision:
    """Classify ``az`` + ``args`` (argv without ``az``)."""
    group = command_group(args)
    hazard = _hazard(table, group, args)
    if hazard is not None and hazard.verdict == "FORBIDDEN":
        return hazard
    entry = table.catalogue.lookup(group) if group else None
    found = None
    if entry is not None:
        # the catalogue's FORBIDDEN classes come before --help and the RISKY floor
        found = decide(table.catalogue, entry, args[_after_words(args, entry.name) :], table.local_reads, table.generic_reads)
        if found.verdict == "FORBIDDEN":
            return AzDecision("FORBIDDEN", found.reason, found.rule, found.advice, relaxable=False)
    if hazard is None and ("--help" in args or "-h" in args):
        if group and table.catalogue.known_group(group[: len(entry.name.split())] if entry else group):
            return AzDecision("SAFE", f"`az {' '.join(group)} --help` only prints help", "az-help")
        if not group:
            return AzDecision("SAFE", "az help", "az-help")
    if group[:1] == ["rest"]:
        # A RISKY argument hazard (an @file read) must not hide a FORBIDDEN request.
        rest = _classify_rest(table, args[[a.lower() for a in args].index("rest") + 1 :])
        return rest if hazard is None or rest.verdict == "FORBIDDEN" else hazard
    if hazard is not None:
        return hazard
    if not group:
        if all(a in ("--version", "--help", "-h") for a in args):
            return AzDecision("SAFE", "az version/help output", "az-version")
        return AzDecision("RISKY", "no az command group was given", "az-no-group")
    if entry is None or found is None:
        return AzDecision(
            "RISKY", f"`az {' '.join(group)}` is not a command of azure-cli {table.catalogue.version} "
            "(an extension, a typo, or a newer command): nothing is known about what it calls", "az-not-in-catalogue",
        )  # fmt: skip
    return _catalogue_verdict(table, entry, found, group, args)


def _after_words(args: Sequence[str], name: str) -> int:
    """The index in ``args`` just after the command's words (``--`` between them skipped)."""
    need = len(name.split())
    i = 0
    while i < len(args) and need:
        if args[i] != "--":
            need -= 1
        i += 1
    return i


def _catalogue_verdict(table: AzTable, entry: Entry, found: CatalogueDecision, group: list[str], args: Sequence[str]) -> AzDecision:
    words = group[: len(entry.name.split())]
    mutating = [w for w in words if w in table.mutating]
    if mutating:
        return AzDecision("RISKY", f"`az {entry.name}` changes Azure state ({mutating[0]})", "az-mutating-verb")
    if found.verdict != "SAFE":
        return AzDecision(found.verdict, found.reason, found.rule, found.advice, found.relaxable)  # type: ignore[arg-type]
    generic = _generic_target(table, entry, args)
    if generic is not None:
        return generic
    if entry.kind == "custom" and found.rule != "az-catalogue-local-read" and not _verb_is_safe(table, words[-1]):
        return AzDecision(
            "RISKY", f"`az {entry.name}`: hand-written code, and `{words[-1]}` is not on the read-only verb list",
            "az-verb-not-read-only",
        )  # fmt: skip
    return AzDecision("SAFE", found.reason, found.rule)


def _generic_target(table: AzTable, entry: Entry, args: Sequence[str]) -> AzDecision | None:
    """For the generic resource commands (their template names no type: ``az resource show --ids``),
    every resource id or type on the line must resolve to a specific read whose response carries no
    secret; else RISKY."""
    cat = table.catalogue
    key = ("generic", entry.name)
    generic = table.memo.get(key)
    if generic is None:
        generic = entry.name in table.generic_reads or any(
            isinstance(e, int) and _is_generic_template(cat.ops[e].template) for e in entry.always
        )
        if len(table.memo) < 16384:
            table.memo[key] = generic
    if not generic:
        return None
    targets = [a.split("=", 1)[-1] for a in args if "/" in a and not a.startswith(("http://", "https://"))]
    typed = typed_resource(args)
    if typed is not None:
        targets.append(typed)
    paths = [t for t in targets if "providers" in t.lower()]
    if not paths and (entry.name in table.generic_reads or any(a.split("=", 1)[0] in ("--ids", "--id") for a in args)):
        return AzDecision("RISKY", f"`az {entry.name}`: no resource id or type on the line names what it reads", "az-arm-unknown-path", relaxable=False)
    for path in paths:
        found = _resolve(table, path, f"az {entry.name}")
        if found is not None:
            return found
    return None




def _is_generic_template(template: str) -> bool:
    low = template.lower()
    return "{*" in low or "/providers/{" in low


def _resolve(table: AzTable, path: str, via: str) -> AzDecision | None:
    """None when ``path`` is a specific, secret-free read of the catalogue (or one of az.toml's
    ``arm_reads``); else RISKY with why."""
    cat = table.catalogue
    match = cat.arm().match(path)
    if match is None or match.generic:
        extra = table.arm_reads.match(path)
        if extra is not None and not extra.generic:
            return None
        return AzDecision(
            "RISKY", f"{via}: no azure-cli {cat.version} operation reads {path!r} (an unknown path or resource type)",
            "az-arm-unknown-path", relaxable=False,
        )  # fmt: skip
    for op_id in match.ops:
        op = cat.ops[op_id]
        if op.secret in (2, 3):
            return AzDecision(
                "RISKY", f"{via}: {op.method} {op.template} returns {'secrets: ' + op.why if op.secret == 2 else 'an unchecked response'}",
                "az-arm-secret-response", relaxable=False,
            )  # fmt: skip
    return None


def _hazard(table: AzTable, group: list[str], args: Sequence[str]) -> AzDecision | None:
    """The guards that come before the catalogue: forbidden group rules, file reads through ``@``
    (azure-cli's rule, FORBIDDEN for credential files), risky group rules and credential-returning
    ARM paths (even ``--help`` does not lift them), or None."""
    g = tuple(group)
    words = [(a.partition("=")[0] if "=" in a else a) for a in args if a[:1] == "-" and a != "-"]
    rule = table.forbidden.first_match(g, words)
    if rule is not None:
        return AzDecision("FORBIDDEN", f"`az {' '.join(group)}` emits credentials: {rule.justification}", rule.id, rule.advice)
    at_file = _at_file_read(args)
    arm = _arm_hazard(args)
    for decision in (at_file, arm):
        if decision is not None and decision.verdict == "FORBIDDEN":
            return decision
    if at_file is not None:
        return at_file
    rule = table.risky.first_match(g, words)
    if rule is not None:
        return AzDecision(
            "RISKY", f"`az {' '.join(group)}`: {rule.justification}", rule.id, relaxable=rule.id not in _ARGUMENT_HAZARDS
        )  # fmt: skip
    return arm


# Risky rules triggered by what was appended to a command (a secret in argv, a flag asking for user
# data): an organisation's prefix rule naming the command must not relax them.
_ARGUMENT_HAZARDS = frozenset({"az-secret-in-argv", "az-vm-user-data"})


def _arm_decision(path: str, via: str) -> AzDecision | None:
    floor = arm_floor_decision(path)
    if floor is None:
        return None
    if floor.verdict == "FORBIDDEN":
        return AzDecision(
            "FORBIDDEN", f"{via}: {floor.reason}", floor.rule,
            "Inspect the resource without its credentials (`az resource show --ids ID --query properties.provisioningState`).",
            relaxable=False,
        )  # fmt: skip
    return AzDecision("RISKY", f"{via}: {floor.reason}", floor.rule, relaxable=False)


def _arm_hazard(args: Sequence[str]) -> AzDecision | None:
    """`az resource show --ids .../accessProfiles/clusterAdmin`, `--resource-type
    Microsoft.Network/connections` or `--namespace N --resource-type T` name the same ARM GET as
    `az rest` on that path: the floor's per-segment and per-type decision applies to every resource
    id or type on any az command line, and `userData` anywhere asks ARM for a VM's user data."""
    for a in args:
        if "/" in a and not a.startswith(("http://", "https://")):
            decision = _arm_decision(a.split("=", 1)[-1] if a[:2] == "--" else a, "az")
            if decision is not None:
                return decision
    typed = typed_resource(args)
    if typed is not None:
        decision = _arm_decision(typed, "az")
        if decision is not None:
            return decision
    line = "\n".join(args).lower()  # one lower-casing for the two cheap tests below, not one per argument
    if ("serdata" in line or "%" in line) and any(
        "userdata" in a.lower() or "userdata" in decoded(a).lower() for a in args if "serdata" in a.lower() or "%" in a
    ):
        return AzDecision("RISKY", "az: `userData` makes ARM return the VM's user data (often secrets)", "az-arm-user-data", relaxable=False)
    return None


def at_file_path(arg: str) -> str | None:
    """The file azure-cli reads for ``arg``, or None.

    azure-cli's ``_expand_file_prefixed_files`` (azure/cli/core/commands/__init__.py) runs over
    every argument before parsing: it splits the argument at its first ``=`` and, if the text after
    it (or the whole argument when there is no ``=``) starts with ``@`` and has more after it,
    replaces it with the file's contents (``~`` expanded, ``-`` is stdin). So ``@f``, ``--x=@f``,
    ``-s=@f`` and a value ``k=@f`` (``--query 'x=@f'``, ``--url-parameters 'x=@f'``) all read ``f``.
    """
    value = arg.split("=", 1)[1] if "=" in arg else arg
    return value[1:] if value.startswith("@") and len(value) > 1 else None


def _at_file_read(args: Sequence[str]) -> AzDecision | None:
    """RISKY for the first file az would read through ``@``; FORBIDDEN if any is a credential file."""
    first: AzDecision | None = None
    for a in args:
        path = at_file_path(a) if "@" in a else None
        if path is None:
            continue
        if credential_path(path) is not None:  # the credential ontology (netghost.redact), any spelling
            return AzDecision(
                "FORBIDDEN", f"argument {a!r} makes az read the credential file {path!r} into the request "
                "(its contents come back in the error message)", "az-at-credential-file",
                "Never pass credential files to az; the CLI authenticates itself.", relaxable=False,
            )  # fmt: skip
        if first is None:
            first = AzDecision("RISKY", f"argument {a!r} makes az read the local file {path!r} into the request", "az-at-file", relaxable=False)
    return first




def _classify_rest(table: AzTable, args: Sequence[str]) -> AzDecision:
    request = _rest_request(table, args)
    if isinstance(request, AzDecision):
        return request
    method, url = request
    if method != "get":
        return AzDecision("RISKY", f"az rest --method {method} can change Azure state", "az-rest")
    if url is None:
        return AzDecision("RISKY", "az rest without --url", "az-rest")
    try:
        parts = urlsplit(url)
    except ValueError:
        return AzDecision("RISKY", f"az rest: malformed URL {url!r}", "az-rest", relaxable=False)
    decision = _arm_decision(parts.path, "az rest")
    if decision is not None:
        return decision
    if "serdata" in url.lower() or ("%" in url and "userdata" in decoded(url).lower()):
        return AzDecision("RISKY", "az rest: `$expand=userData` returns the VM's user data (often secrets)", "az-arm-user-data", relaxable=False)
    host = (parts.hostname or "").lower()
    if not url.startswith("/") and not (parts.scheme == "https" and host in table.rest_hosts and "@" not in parts.netloc):
        return AzDecision("RISKY", f"az rest to {host or url!r}: only GETs to the ARM endpoint run automatically", "az-rest")
    unresolved = _resolve(table, parts.path, "az rest GET")
    if unresolved is not None:
        return unresolved
    return AzDecision("SAFE", f"az rest GET {parts.path}: a read of the azure-cli {table.catalogue.version} catalogue, no secret in its response", "az-rest-get")


def _rest_request(table: AzTable, args: Sequence[str]) -> tuple[str, str | None] | AzDecision:
    """(method, url) from the options of ``az rest``, or the RISKY decision for an option that is not
    allowed for an automatic GET (or lacks its value)."""
    method = "get"
    url: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if name[:1] != "-":
            return AzDecision("RISKY", f"az rest: unexpected argument {a!r}", "az-rest")
        if name not in table.rest_safe_options:
            return AzDecision("RISKY", f"az rest: option {name} is not allowed for an automatic GET", "az-rest")
        takes_value = name not in ("--only-show-errors", "--verbose", "--debug")
        if takes_value and not eq:
            if i + 1 >= len(args):
                return AzDecision("RISKY", f"az rest: {name} needs a value", "az-rest")
            value = args[i + 1]
            i += 1
        if name in ("--method", "-m"):
            method = value.lower()
        elif name in ("--url", "--uri", "-u"):
            url = value
        i += 1
    return method, url
