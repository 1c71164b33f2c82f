"""ARM paths on an az command line (``az rest --url``, ``--ids``, ``--resource-type``): what they name.

Two judgements, the second built from the catalogue of azure-cli's own operations:

1. **Segments that exist to return a credential** (``listKeys``, ``accessProfiles``, ``sharedkey``,
   ``authorizations`` ...) make the request FORBIDDEN wherever they appear, and a few resource types
   whose ordinary GET carries a secret (VPN connections' ``sharedKey`` ...) make it RISKY. This is
   the floor: it holds for paths the catalogue does not know.
2. **Template resolution** (:class:`ArmIndex`): the path is matched, segment by segment, against the
   URL templates of every operation azure-cli calls (``/subscriptions/{}/.../networkWatchers/{}``);
   the most specific match (most literal segments) decides. A path no template matches, or that
   only the generic resource templates match (``/providers/{namespace}/{type}/{name}``, whose
   response is any resource's properties), is unknown; a match whose response carries a secret is
   RISKY. Matching is dictionary lookups in a trie built once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

__all__ = [
    "ArmIndex",
    "ArmMatch",
    "arm_floor_decision",
    "arm_segments",
    "decoded",
    "typed_resource",
]


def decoded(path: str) -> str:
    """``path`` percent-decoded up to three times (ARM decodes it too)."""
    for _ in range(3):
        if "%" not in path:
            break
        path = unquote(path)
    return path


def arm_segments(path: str) -> tuple[str, ...]:
    """The lower-case path segments of an ARM path or URL path (query dropped, decoded)."""
    p = decoded(path).split("?", 1)[0].split("#", 1)[0]
    return tuple(s for s in p.lower().replace("\\", "/").split("/") if s)


# ---------------------------------------------------------------- the floor (known credential segments)

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
    r"hostkeys|masterkeys?|authorizations|authorizationkeys?|listconfigurations|listconnectioninfo|listvalue|"
    r"retrievebootdiagnosticsdata|getcallbackconfig|getfullurl|getpolicypropertieswithsecrets)|"
    # ... nouns whose GET may return secret material or only its metadata (Key Vault secrets and
    # keys by ARM): RISKY.
    r"authsettings(v2)?|secrets?|(admin|user|monitoring)?credentials?|keys"
    r")(?=$|[/\\?&=])",
    re.I,
)
# Every alternative of _ARM_SECRET_SEGMENT contains one of these substrings.
_ARM_SECRET_HINTS = ("access", "list", "generat", "get", "settings", "connectionstr", "publish", "secret", "credential",
                     "key", "authoriz", "retrieve", "value")  # fmt: skip

# ARM resource types (namespace/type/child..., lower-case, as a prefix of the id's type chain)
# whose ordinary GET or list carries a secret in its properties: VPN connections (the IPsec
# sharedKey), ExpressRoute circuits (authorizations[].authorizationKey, peerings[].sharedKey) and
# their connections (authorizationKey), VPN server configurations (RADIUS secrets), Service
# Connector linkers (auth info). The catalogue marks these fields secret (hidden by az), but a raw
# read through `az rest` prints them if the service returns them: a human approves.
_SECRET_BEARING_TYPES = frozenset({
    ("microsoft.network", "connections"), ("microsoft.network", "expressroutecircuits"),
    ("microsoft.network", "expressroutegateways", "expressrouteconnections"), ("microsoft.network", "vpngateways", "vpnconnections"),
    ("microsoft.network", "virtualnetworkgateways", "connections"), ("microsoft.network", "vpnserverconfigurations"),
    ("microsoft.network", "expressrouteports", "authorizations"), ("microsoft.servicelinker", "linkers"),
    ("microsoft.network", "expressroutecrossconnections", "peerings"),
})  # fmt: skip
_SECRET_TYPE_NAMESPACES = frozenset(t[0] for t in _SECRET_BEARING_TYPES)


@dataclass(frozen=True)
class ArmFloor:
    """The floor's answer for a path: FORBIDDEN (a credential operation) or RISKY, with why."""

    verdict: str
    rule: str
    reason: str


def _secret_bearing_type(low: str) -> str | None:
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


@lru_cache(maxsize=4096)
def arm_floor_decision(path: str) -> ArmFloor | None:
    """FORBIDDEN for a path naming an operation that exists to return a credential, RISKY for a
    secret-bearing segment or resource type, else None. Memoised on the exact path (pure; an
    investigation names the same resource ids in many commands)."""
    p = decoded(path)
    low = p.lower()
    if any(h in low for h in _ARM_SECRET_HINTS):
        found = list(_ARM_SECRET_SEGMENT.finditer(p))
        if found:
            why = f"the ARM path segment {found[0].group(1)!r} returns credentials (keys, kubeconfigs, secrets, SAS)"
            if any(m.group("op") for m in found):
                return ArmFloor("FORBIDDEN", "az-arm-credential-path", why)
            return ArmFloor("RISKY", "az-arm-secret-path", why)
    rtype = _secret_bearing_type(low)
    if rtype is not None:
        return ArmFloor(
            "RISKY", "az-arm-secret-bearing-type",
            f"a {rtype} read carries secrets in its properties (shared keys, authorization keys, auth info)",
        )  # fmt: skip
    return None


_TYPE_OPTIONS = ("--namespace", "--resource-type", "--parent")


def typed_resource(args: Sequence[str]) -> str | None:
    """The ARM path that `--namespace N --parent P/p --resource-type T` names, or None."""
    line = "\n".join(args)
    if ("--names" not in line and "--resource-t" not in line and "--par" not in line) or not any(
        a.startswith(("--names", "--resource-t", "--par")) for a in args
    ):
        return None  # the hot path: no resource-type options at all (one substring test rules most lines out)
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
    return f"/subscriptions/x/resourceGroups/x/providers/{ns}/{parent + '/' if parent else ''}{types}/x"


# ---------------------------------------------------------------- template resolution

_ONE = "{}"
_MANY = "{*}"
_END = ""


@dataclass(frozen=True)
class ArmMatch:
    """The most specific operation templates matching a path: their ids and whether only generic
    templates (any resource type) matched."""

    ops: tuple[int, ...]
    generic: bool


def _is_generic(segments: Sequence[str]) -> bool:
    """A template that names no resource type: a multi-segment parameter, or a parameter right after
    ``providers`` (``/providers/{resourceProviderNamespace}/...``)."""
    if _MANY in segments:
        return True
    return any(segments[i] == "providers" and segments[i + 1] == _ONE for i in range(len(segments) - 1))


class ArmIndex:
    """A trie over the normalised segments of ARM operation templates (GET and HEAD only)."""

    def __init__(self, templates: Sequence[tuple[int, str]]) -> None:
        self.root: dict[str, object] = {}
        self._memo: dict[str, ArmMatch | None] = {}
        for op_id, template in templates:
            segs = tuple(
                _MANY if s.startswith("{*") else _ONE if s.startswith("{") else s.lower() for s in template.split("/") if s
            )
            node = self.root
            for s in segs:
                node = node.setdefault(s, {})  # type: ignore[assignment]
            ends = node.setdefault(_END, [])
            assert isinstance(ends, list)
            ends.append((op_id, sum(1 for s in segs if s not in (_ONE, _MANY)), _is_generic(segs)))

    def match(self, path: str) -> ArmMatch | None:
        """The best match for ``path`` (an ARM path, query ignored), or None when nothing matches.

        Memoised per path, up to 4,096 paths: the trie never changes once built, an investigation names
        the same resource ids again and again, and the walk costs tens of microseconds for a deep id."""
        if path in self._memo:
            return self._memo[path]
        found = self._match(path)
        if len(self._memo) < 4096:
            self._memo[path] = found
        return found

    def _match(self, path: str) -> ArmMatch | None:
        segs = arm_segments(path)
        if not segs or len(segs) > 40:
            return None
        found: list[tuple[int, int, bool]] = []
        self._walk(self.root, segs, 0, found, [0])
        if not found:
            return None
        specific = [f for f in found if not f[2]]
        pool = specific or found
        best = max(score for _, score, _ in pool)
        return ArmMatch(tuple(sorted({op for op, score, _ in pool if score == best})), generic=not specific)

    def _walk(self, node: dict[str, object], segs: tuple[str, ...], i: int, found: list[tuple[int, int, bool]], budget: list[int]) -> None:
        budget[0] += 1
        if budget[0] > 2000:  # a pathological path: stop (the caller treats a partial answer as unknown)
            return
        if i == len(segs):
            found.extend(node.get(_END, ()))  # type: ignore[arg-type]
            return
        lit = node.get(segs[i])
        if lit is not None:
            self._walk(lit, segs, i + 1, found, budget)  # type: ignore[arg-type]
        one = node.get(_ONE)
        if one is not None:
            self._walk(one, segs, i + 1, found, budget)  # type: ignore[arg-type]
        many = node.get(_MANY)
        if isinstance(many, dict):
            # `{*x}` spans one or more segments: resume only where the template can go on (a literal
            # child equal to the next segment, a parameter child, or the end)
            loose = _ONE in many or _MANY in many
            for j in range(i + 1, len(segs) + 1):
                if j == len(segs) or loose or segs[j] in many:
                    self._walk(many, segs, j, found, budget)
