"""Tier 2: classify an ``az`` argv from the verb table in ``rules/az.toml``.

Why the verb is taken from the parsed argv: the command group is the leading run of lower-case
words (``az network watcher packet-capture show-status``); options and values come after. The
verb (its last word) decides, after three guards: credential emitters are FORBIDDEN whatever
their verb looks like (``keys list`` is a "list"), a few read-looking groups are not harmless
(``az ssh``, ``test-connectivity``), and any value starting with ``@`` makes az read a file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from netghost.redact import credential_path

__all__ = ["AzDecision", "AzTable", "at_file_path", "classify_az", "command_group", "compile_az"]

# azure-cli matches command words case-insensitively (`az Account Get-Access-Token` is
# get-access-token), so the group is read case-folded.
_GROUP_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


@dataclass(frozen=True)
class AzDecision:
    """What the az table says about one argv."""

    verdict: Literal["SAFE", "RISKY", "FORBIDDEN"]
    reason: str
    rule: str
    advice: str = ""
    relaxable: bool = True


def _prefix_index(paths: tuple[tuple[str, ...], ...]) -> tuple[frozenset[tuple[str, ...]], tuple[int, ...]]:
    return frozenset(paths), tuple(sorted({len(p) for p in paths}))


@dataclass(frozen=True)
class _GroupRule:
    id: str
    justification: str
    advice: str
    verbs: frozenset[str]
    suffixes: tuple[tuple[str, ...], ...]
    groups: tuple[tuple[str, ...], ...]
    flags: tuple[str, ...]
    examples: tuple[str, ...]
    nouns: frozenset[str]
    noun_verbs: re.Pattern[str] | None
    verb_regex: re.Pattern[str] | None
    except_groups: tuple[tuple[str, ...], ...]
    flag_regex: re.Pattern[str] | None = None
    # Options of which one must ALSO be present (exact, or a long option's >= 4-char prefix).
    required: frozenset[str] = frozenset()
    # Derived lookup sets, so a match costs a few hash lookups (the az path is the hot path).
    flag_prefixes: frozenset[str] = frozenset()
    suffix_index: tuple[frozenset[tuple[str, ...]], tuple[int, ...]] = (frozenset(), ())
    group_index: tuple[frozenset[tuple[str, ...]], tuple[int, ...]] = (frozenset(), ())
    except_index: tuple[frozenset[tuple[str, ...]], tuple[int, ...]] = (frozenset(), ())

    def matches(self, g: tuple[str, ...], option_words: Sequence[str]) -> bool:
        """``g`` is the command group, ``option_words`` the name part of each option."""
        if self.except_groups and _has_prefix(g, self.except_index):
            return False
        if self.required and not any(w in self.required for w in option_words):
            return False
        if g and (g[-1] in self.verbs or (self.verb_regex is not None and self.verb_regex.search(g[-1]))):
            return True
        if len(g) >= 2 and g[-2] in self.nouns and (self.noun_verbs is None or self.noun_verbs.fullmatch(g[-1])):
            return True
        if self.suffixes:
            paths, lens = self.suffix_index
            if any(len(g) >= n and g[-n:] in paths for n in lens):
                return True
        if self.groups and _has_prefix(g, self.group_index):
            return True
        if self.flag_regex is not None and any(self.flag_regex.fullmatch(w) for w in option_words):
            return True
        # Long options match exactly or as an abbreviation (argparse accepts unique prefixes).
        return bool(self.flag_prefixes) and any(w in self.flag_prefixes for w in option_words)


def _has_prefix(g: tuple[str, ...], index: tuple[frozenset[tuple[str, ...]], tuple[int, ...]]) -> bool:
    paths, lens = index
    return any(len(g) >= n and g[:n] in paths for n in lens)


@dataclass(frozen=True)
class RuleSet:
    """Group rules in table order, with an index from the words they key on to the rules.

    A rule can only match through its verbs, nouns, suffixes, groups or flags (its except-groups
    and required flags only narrow it), so looking those words up gives every rule that could
    match; only the candidates are then tried, in table order, so the first match is the same as
    a scan of the whole table. The scan cost ~15 rule checks per az command (a third of the
    classifier's time on az commands); the index brings it to the one or two that can match.
    """

    rules: tuple[_GroupRule, ...]
    by_verb: Mapping[str, tuple[int, ...]]  # the last group word
    by_flag: Mapping[str, tuple[int, ...]]  # a long option or its >= 4-char prefix
    by_noun: Mapping[str, tuple[int, ...]]  # the word before the verb
    by_suffix: Mapping[tuple[str, ...], tuple[int, ...]]
    suffix_lens: tuple[int, ...]
    by_group: Mapping[tuple[str, ...], tuple[int, ...]]
    group_lens: tuple[int, ...]
    always: tuple[int, ...]  # rules keyed by a regex: always tried

    def first_match(self, g: tuple[str, ...], option_words: Sequence[str]) -> _GroupRule | None:
        """The first rule in table order that matches, or None."""
        cands: set[int] = set(self.always)
        if g:
            cands.update(self.by_verb.get(g[-1], ()))
            if len(g) >= 2:
                cands.update(self.by_noun.get(g[-2], ()))
            for n in self.suffix_lens:
                if len(g) >= n:
                    cands.update(self.by_suffix.get(g[-n:], ()))
            for n in self.group_lens:
                if len(g) >= n:
                    cands.update(self.by_group.get(g[:n], ()))
        for w in option_words:
            cands.update(self.by_flag.get(w, ()))
        for i in sorted(cands):
            if self.rules[i].matches(g, option_words):
                return self.rules[i]
        return None


def _index_rules(rules: tuple[_GroupRule, ...]) -> RuleSet:
    by_verb: dict[str, list[int]] = {}
    by_noun: dict[str, list[int]] = {}
    by_suffix: dict[tuple[str, ...], list[int]] = {}
    by_group: dict[tuple[str, ...], list[int]] = {}
    by_flag: dict[str, list[int]] = {}
    always: list[int] = []
    for i, r in enumerate(rules):
        for v in r.verbs:
            by_verb.setdefault(v, []).append(i)
        for n in r.nouns:
            by_noun.setdefault(n, []).append(i)
        for s in r.suffixes:
            by_suffix.setdefault(s, []).append(i)
        for p in r.groups:
            by_group.setdefault(p, []).append(i)
        for f in r.flag_prefixes:
            by_flag.setdefault(f, []).append(i)
        if r.verb_regex is not None or r.flag_regex is not None:
            always.append(i)

    def frozen(d: Mapping[Any, list[int]]) -> dict[Any, tuple[int, ...]]:
        return {k: tuple(v) for k, v in d.items()}

    return RuleSet(
        rules=rules,
        by_verb=frozen(by_verb),
        by_flag=frozen(by_flag),
        by_noun=frozen(by_noun),
        by_suffix=frozen(by_suffix),
        suffix_lens=tuple(sorted({len(s) for s in by_suffix})),
        by_group=frozen(by_group),
        group_lens=tuple(sorted({len(p) for p in by_group})),
        always=tuple(always),
    )


@dataclass(frozen=True)
class AzTable:
    """The compiled ``az.toml``."""

    safe: frozenset[str]
    safe_families: re.Pattern[str]
    sensitive: re.Pattern[str]
    mutating: frozenset[str]
    forbidden: RuleSet
    risky: RuleSet
    rest_hosts: frozenset[str]
    rest_safe_options: frozenset[str]
    examples: tuple[tuple[str, str], ...]  # (command, expected verdict)


def _rule(raw: Mapping[str, Any], kind: str) -> _GroupRule:
    rid = str(raw.get("id", ""))
    if not rid or not str(raw.get("justification", "")).strip():
        raise ValueError(f"az {kind} rule {rid or '?'}: id and justification are mandatory")
    if kind == "forbidden" and not str(raw.get("advice", "")).strip():
        raise ValueError(f"az forbidden rule {rid}: advice is mandatory")
    suffixes = tuple(tuple(x.split()) for x in raw.get("suffixes", ()))
    groups = tuple(tuple(x.split()) for x in raw.get("groups", ()))
    excepts = tuple(tuple(x.split()) for x in raw.get("except_groups", ()))
    flags = tuple(raw.get("flags", ()))
    required = tuple(raw.get("require_flags", ()))
    return _GroupRule(
        id=rid,
        justification=raw["justification"],
        advice=str(raw.get("advice", "")),
        verbs=frozenset(raw.get("verbs", ())),
        suffixes=suffixes,
        groups=groups,
        flags=flags,
        examples=tuple(raw.get("match", ())),
        nouns=frozenset(raw.get("nouns", ())),
        noun_verbs=re.compile(raw["noun_verbs"]) if raw.get("noun_verbs") else None,
        verb_regex=re.compile(raw["verb_regex"]) if raw.get("verb_regex") else None,
        except_groups=excepts,
        flag_regex=re.compile(raw["flag_regex"]) if raw.get("flag_regex") else None,
        flag_prefixes=frozenset(f[:n] for f in flags for n in range(4, len(f) + 1)),
        required=frozenset(f[:n] for f in required for n in range(min(4, len(f)), len(f) + 1)),
        suffix_index=_prefix_index(suffixes),
        group_index=_prefix_index(groups),
        except_index=_prefix_index(excepts),
    )


def compile_az(raw: Mapping[str, Any]) -> AzTable:
    """Compile ``az.toml``.

    Raises:
        ValueError: A rule lacks its id, justification or advice.
    """
    verbs = raw["verbs"]
    rest = raw["rest"]
    if not str(verbs.get("justification", "")).strip() or not str(rest.get("justification", "")).strip():
        raise ValueError("az verbs/rest: justification is mandatory")
    forbidden = tuple(_rule(r, "forbidden") for r in raw.get("forbidden", ()))
    risky = tuple(_rule(r, "risky") for r in raw.get("risky", ()))
    examples = [(c, "SAFE") for c in verbs.get("match_safe", ())]
    examples += [(c, "RISKY") for c in verbs.get("match_risky", ())]
    examples += [(c, "SAFE") for c in rest.get("match_safe", ())]
    examples += [(c, "RISKY") for c in rest.get("match_risky", ())]
    examples += [(c, "FORBIDDEN") for r in forbidden for c in r.examples]
    examples += [(c, "RISKY") for r in risky for c in r.examples]
    return AzTable(
        safe=frozenset(verbs["safe"]),
        safe_families=re.compile(verbs["safe_families"]),
        sensitive=re.compile(verbs["sensitive_word"]),
        mutating=frozenset(verbs["mutating_words"]),
        forbidden=_index_rules(forbidden),
        risky=_index_rules(risky),
        rest_hosts=frozenset(rest["hosts"]),
        rest_safe_options=frozenset(rest["safe_options"]),
        examples=tuple(examples),
    )


def command_group(args: Sequence[str]) -> list[str]:
    """The leading run of command words of ``az ARGS``, lower-cased (azure-cli folds their case).

    A ``--`` is skipped, not a stop: argparse drops it and still routes the following words to
    the subcommand parsers, so ``az -- account get-access-token`` runs get-access-token.
    """
    group: list[str] = []
    for a in args:
        if a == "--":
            continue
        if not _GROUP_WORD.fullmatch(a):
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
    if hazard is None and ("--help" in args or "-h" in args):
        return AzDecision("SAFE", f"`az {' '.join(group)} --help` only prints help", "az-help")
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
    verb = group[-1]
    mutating = [w for w in group if w in table.mutating]
    if mutating:
        return AzDecision("RISKY", f"`az {' '.join(group)}` changes Azure state ({mutating[0]})", "az-mutating-verb")
    if _verb_is_safe(table, verb):
        return AzDecision("SAFE", f"`az {' '.join(group)}`: `{verb}` is a read-only verb", "az-read-verb")
    return AzDecision("RISKY", f"`az {' '.join(group)}`: `{verb}` is not on the read-only verb list", "az-verb-not-read-only")


def _hazard(table: AzTable, group: list[str], args: Sequence[str]) -> AzDecision | None:
    """The guards that come before the verb: forbidden group rules, file reads through ``@``
    (azure-cli's rule, FORBIDDEN for credential files), risky group rules and credential-returning ARM paths (even ``--help`` does not lift them), or None."""
    g = tuple(group)
    words = [a.split("=", 1)[0] for a in args if a.startswith("-") and len(a) > 1]
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


def _arm_hazard(args: Sequence[str]) -> AzDecision | None:
    """`az resource show --ids .../accessProfiles/clusterAdmin`, `--resource-type
    Microsoft.Network/connections` or `--namespace N --resource-type T` name the same ARM GET as
    `az rest` on that path: the same per-type and per-operation decision applies to every resource
    id or type on any az command line, and `userData` anywhere asks ARM for a VM's user data."""
    for a in args:
        if "/" in a and not a.startswith(("http://", "https://")):
            decision = _arm_path_decision(a.split("=", 1)[-1] if a.startswith("--") else a, "az")
            if decision is not None:
                return decision
    typed = _typed_resource(args)
    if typed is not None:
        decision = _arm_path_decision(typed, "az")
        if decision is not None:
            return decision
    if any("userdata" in a.lower() or "userdata" in unquote(a).lower() for a in args if "serdata" in a.lower() or "%" in a):
        return AzDecision("RISKY", "az: `userData` makes ARM return the VM's user data (often secrets)", "az-arm-user-data", relaxable=False)
    return None


_TYPE_OPTIONS = ("--namespace", "--resource-type", "--parent")


def _typed_resource(args: Sequence[str]) -> str | None:
    """The ARM path that `--namespace N --parent P/p --resource-type T` names, or None."""
    if not any(a.startswith(("--names", "--resource-t", "--par")) for a in args):
        return None  # the hot path: no resource-type options at all
    values: dict[str, str] = {}
    for i, a in enumerate(args):
        name, eq, value = a.partition("=")
        opt = next((o for o in _TYPE_OPTIONS if len(name) >= 5 and o.startswith(name)), None)
        if opt is None:
            continue
        if not eq:
            value = args[i + 1] if i + 1 < len(args) else ""
        values[opt] = value
    rtype = values.get("--resource-type", "")
    ns = values.get("--namespace", "")
    if "/" in rtype and "." in rtype.split("/", 1)[0]:
        ns, rtype = rtype.split("/", 1)
    if not ns or not rtype:
        return None
    parent = values.get("--parent", "").strip("/")
    types = "/x/".join(rtype.split("/"))
    return f"/providers/{ns}/{parent + '/' if parent else ''}{types}/x"


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


# ARM operations whose response is a credential: AKS accessProfiles (kubeconfigs), list*Keys /
# list*Credential(s) / listSecrets / list*Sas / listCallbackUrl / regenerate*, web app config
# lists (appsettings, connection strings, publishing credentials). Matched per path segment,
# case-insensitively, after percent-decoding (ARM decodes it too).
_ARM_SECRET_SEGMENT = re.compile(
    r"(?:^|[/\\?&=])("
    # (op) operations that exist to return a credential: FORBIDDEN, like `keys list` ...
    r"(?P<op>accessprofiles?|list[a-z]*(keys?|credentials?|secrets?|sas|callbackurls?|connectionstrings?|tokens?|passwords?)|"
    r"regenerate[a-z]*|generate[a-z]*(sas|token|key)[a-z]*|get[a-z]*(keys?|secrets?|credentials?|tokens?)|"
    r"appsettings|connectionstrings|publishingcredentials|publishxml|sharedkeys?|readonlykeys|systemkeys|functionkeys|"
    r"hostkeys|masterkeys?|authorizations|authorizationkeys?|listconfigurations|listconnectioninfo)|"
    # ... nouns whose GET may return secret material or only its metadata (Key Vault secrets and
    # keys by ARM): RISKY.
    r"authsettings(v2)?|secrets?|(admin|user|monitoring)?credentials?|keys"
    r")(?=$|[/\\?&=])",
    re.I,
)


# Every alternative of _ARM_SECRET_SEGMENT contains one of these substrings.
_ARM_SECRET_HINTS = ("access", "list", "generat", "get", "settings", "connectionstr", "publish", "secret", "credential", "key", "authoriz")

# ARM resource types (namespace/type/child..., lower-case, as a prefix of the id's type chain)
# whose ordinary GET or list carries a secret in its properties: VPN connections (the IPsec
# sharedKey), ExpressRoute circuits (authorizations[].authorizationKey, peerings[].sharedKey) and
# their connections (authorizationKey), VPN server configurations (RADIUS secrets), Service
# Connector linkers (auth info). The operations that exist to return the secret are credential
# segments above (FORBIDDEN); these reads are diagnostics a human approves.
_SECRET_BEARING_TYPES = frozenset({
    ("microsoft.network", "connections"), ("microsoft.network", "expressroutecircuits"),
    ("microsoft.network", "expressroutegateways", "expressrouteconnections"), ("microsoft.network", "vpngateways", "vpnconnections"),
    ("microsoft.network", "virtualnetworkgateways", "connections"), ("microsoft.network", "vpnserverconfigurations"),
    ("microsoft.network", "expressrouteports", "authorizations"), ("microsoft.servicelinker", "linkers"),
    ("microsoft.network", "expressroutecrossconnections", "peerings"),
})  # fmt: skip
_SECRET_TYPE_NAMESPACES = frozenset(t[0] for t in _SECRET_BEARING_TYPES)


def _decoded(path: str) -> str:
    for _ in range(3):
        if "%" not in path:
            break
        path = unquote(path)
    return path


def _sensitive_arm_path(path: str) -> str | None:
    """Why an ARM path's GET would return credential material, or None (one regex pass over the
    path, whole segments only)."""
    p = _decoded(path)
    low = p.lower()
    if not any(h in low for h in _ARM_SECRET_HINTS):
        return None  # the hot path: a plain resource id (substring tests are far cheaper than the regex)
    m = _ARM_SECRET_SEGMENT.search(p)
    if m is not None:
        return f"the ARM path segment {m.group(1)!r} returns credentials (keys, kubeconfigs, secrets, SAS)"
    return None


def _credential_operation(path: str) -> bool:
    """True when a credential segment of ``path`` is an operation that exists to return it."""
    p = _decoded(path)
    return any(m.group("op") for m in _ARM_SECRET_SEGMENT.finditer(p))


def _secret_bearing_type(path: str) -> str | None:
    """The secret-bearing ARM type an id, list path or ``Namespace/type`` names, or None."""
    low = _decoded(path).lower()
    if not any(ns in low for ns in _SECRET_TYPE_NAMESPACES):
        return None  # the hot path
    segs = [s for s in low.split("?", 1)[0].split("/") if s]
    if "providers" in segs:
        i = len(segs) - 1 - segs[::-1].index("providers")
        segs = segs[i + 1 :]
    elif not segs or "." not in segs[0]:
        return None
    chain = (segs[0], *segs[1::2])
    for n in range(2, len(chain) + 1):
        if chain[:n] in _SECRET_BEARING_TYPES:
            return "/".join(chain[:n])
    return None


def _arm_path_decision(path: str, via: str) -> AzDecision | None:
    """FORBIDDEN for an operation that exists to return a credential (listKeys, sharedkey,
    authorizations ...), RISKY for a read of a secret-bearing resource type, else None."""
    why = _sensitive_arm_path(path)
    if why is not None and not _credential_operation(path):
        return AzDecision("RISKY", f"{via}: {why}", "az-arm-secret-path", relaxable=False)
    if why is not None:
        return AzDecision(
            "FORBIDDEN", f"{via}: {why}", "az-arm-credential-path",
            "Inspect the resource without its credentials (`az resource show --ids ID --query properties.provisioningState`).",
            relaxable=False,
        )  # fmt: skip
    rtype = _secret_bearing_type(path)
    if rtype is not None:
        return AzDecision(
            "RISKY", f"{via}: a {rtype} read carries secrets in its properties (shared keys, authorization keys, auth info)",
            "az-arm-secret-bearing-type", relaxable=False,
        )  # fmt: skip
    return None


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
    decision = _arm_path_decision(parts.path, "az rest")
    if decision is not None:
        return decision
    if "serdata" in url.lower() or ("%" in url and "userdata" in _decoded(url).lower()):
        return AzDecision("RISKY", "az rest: `$expand=userData` returns the VM's user data (often secrets)", "az-arm-user-data", relaxable=False)
    if url.startswith("/"):
        return AzDecision("SAFE", "az rest GET on an ARM path", "az-rest-get")
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" and host in table.rest_hosts and "@" not in parts.netloc:
        return AzDecision("SAFE", f"az rest GET to {host}", "az-rest-get")
    return AzDecision("RISKY", f"az rest to {host or url!r}: only GETs to the ARM endpoint run automatically", "az-rest")


def _rest_request(table: AzTable, args: Sequence[str]) -> tuple[str, str | None] | AzDecision:
    """(method, url) from the options of ``az rest``, or the RISKY decision for an option that is not
    allowed for an automatic GET (or lacks its value)."""
    method = "get"
    url: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if not name.startswith("-"):
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
