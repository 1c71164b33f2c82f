"""The rule tables of tier 2 (``rules/az.toml``): group rules compiled and indexed for lookup.

A rule keys on the command's words (its verb, the noun before it, leading groups, trailing suffixes)
and on its long options (exact or abbreviated, as argparse accepts unique prefixes). The index maps
each of those words to the rules that could match, so a lookup tries one or two rules instead of
scanning the table; candidates are tried in table order, so the first match is the table's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GroupRule", "RuleSet", "compile_rule", "index_rules"]


def _prefix_index(paths: tuple[tuple[str, ...], ...]) -> tuple[frozenset[tuple[str, ...]], tuple[int, ...]]:
    return frozenset(paths), tuple(sorted({len(p) for p in paths}))


@dataclass(frozen=True)
class GroupRule:
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

    rules: tuple[GroupRule, ...]
    by_verb: Mapping[str, tuple[int, ...]]  # the last group word
    by_flag: Mapping[str, tuple[int, ...]]  # a long option or its >= 4-char prefix
    by_noun: Mapping[str, tuple[int, ...]]  # the word before the verb
    by_suffix: Mapping[tuple[str, ...], tuple[int, ...]]
    suffix_lens: tuple[int, ...]
    by_group: Mapping[tuple[str, ...], tuple[int, ...]]
    group_lens: tuple[int, ...]
    always: tuple[int, ...]  # rules keyed by a regex: always tried
    _memo: dict[tuple[tuple[str, ...], tuple[str, ...]], GroupRule | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    def first_match(self, g: tuple[str, ...], option_words: Sequence[str]) -> GroupRule | None:
        """The first rule in table order that matches, or None.

        Memoised on (group, option names), up to 4,096 keys: the table never changes once loaded, the
        answer depends on nothing else, and the regex-keyed rules tried for every command cost ~20 us."""
        key = (g, tuple(option_words))
        if key in self._memo:
            return self._memo[key]
        found = self._first_match(g, key[1])
        if len(self._memo) < 4096:
            self._memo[key] = found
        return found

    def _first_match(self, g: tuple[str, ...], option_words: Sequence[str]) -> GroupRule | None:
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


def index_rules(rules: tuple[GroupRule, ...]) -> RuleSet:
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


def compile_rule(raw: Mapping[str, Any], kind: str) -> GroupRule:
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
    return GroupRule(
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
