"""One az argv + its catalogue entry -> a verdict, by what the command calls.

SAFE is earned: every operation the command may call with these options is read-only, none can
return a secret that az prints, no option asks for secret material, and its code has no local side
effect and nothing the analysis could not follow. Anything else is RISKY, and these classes, read
from the entry's operations and options rather than from command names, are FORBIDDEN:

* **credential actions**: a POST whose last segment exists to return a credential (``listKeys``,
  ``listCredentials``, ``getCallbackConfig`` ...), or any non-read-only POST whose response prints
  a secret (ARM returns secrets only from POST actions);
* **remote code on a VM or scale set**: a command that calls ``.../runCommand`` (POST) or writes
  ``.../runCommands/{}`` (any script, inline or from a URL);
* **VM access planting**: a command that writes a VM/VMSS extension and whose code names the
  VMAccess extension (``vm user update``, ``vm user reset-ssh`` ...), or any extension writer whose
  argv names a code-running extension type (CustomScript, RunCommand, VMAccess, DSC) or passes a
  ``commandToExecute``/``script``/``fileUris`` setting;
* **credential planting by generic update**: a command that writes a VM/VMSS itself with an argument
  that sets its administrator password, SSH public keys, custom data or protected settings;
* **cloud redirection**: a command that writes the CLI configuration and is given a cloud endpoint
  option (``az cloud register/update --endpoint-resource-manager ...``), or that writes a
  configuration key that changes where az sends tokens or loads code from (``extension.index_url``,
  ``cloud.name``, ``core.instance_discovery``, service endpoints, account credentials ...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from netghost.shell.classify._azcat import Catalogue, Effect, Entry, Op, normalised

__all__ = ["CatalogueDecision", "decide"]


@dataclass(frozen=True)
class CatalogueDecision:
    """The catalogue's verdict for one argv (``relaxable``: an organisation prefix rule may lift it)."""

    verdict: str
    rule: str
    reason: str
    advice: str = ""
    relaxable: bool = True


_CREDENTIAL_ACTION = re.compile(
    r"^(list[a-z]*(keys?|credentials?|secrets?|sas|callbackurls?|connectionstrings?|tokens?|passwords?|passphrases?)|"
    r"regenerate[a-z]*|generate[a-z]*(sas|token|key|credentials?)[a-z]*|get[a-z]*(keys?|secrets?|credentials?|tokens?)|"
    r"readonlykeys|sharedkeys?|listvalue|retrievebootdiagnosticsdata|getvpnprofilepackageurl|vpndeviceconfigurationscript|"
    r"getcallbackconfig|getpolicypropertieswithsecrets|getencryptionkey|getfullurl|listchannelwithkeys)$"
)
_VM = r"/providers/microsoft\.compute/(virtualmachines|virtualmachinescalesets)/\{\}(/virtualmachines/\{\})?"
_RUN_COMMAND = re.compile(_VM + r"/(runcommand|runcommands/\{\})$")
_EXTENSION = re.compile(_VM + r"/extensions/\{\}$")
_VM_ITSELF = re.compile(_VM + r"$")
_ACCESS_EXTENSIONS = frozenset({"vmaccessforlinux", "vmaccessagent", "enablevmaccess", "vmaccess"})
_CODE_EXTENSIONS = frozenset({
    "customscript", "customscriptextension", "customscriptforlinux", "runcommandlinux", "runcommandwindows",
    "runcommandhandlerlinux", "runcommandhandlerwindows", "vmaccessforlinux", "vmaccessagent", "enablevmaccess",
    "vmaccess", "dsc", "dscforlinux",
})  # fmt: skip
_CODE_SETTING = re.compile(r"(?i)command_?to_?execute|\"script\"|'script'|\bscript\s*[:=]|file_?uris|\bcommands?\s*[:=]")
_PLANTING = re.compile(r"(?i)admin_?password|public_?keys|ssh[_.-]?keys?|ssh_?public|custom_?data|protected_?settings|linux_?configuration\.ssh")
_WRITES = ("PUT", "PATCH", "POST", "DELETE")

# Configuration keys that change where az sends tokens or data, or where it loads code from: the
# extension section (index URL, directories, dynamic install), the active cloud, MSAL instance
# discovery and token cache, per-service endpoints, audiences and stored account credentials.
_REDIRECT_KEY = re.compile(
    r"^(extension\.[a-z_]+|cloud\.[a-z_]+|core\.(instance_discovery|use_msal_http_cache|encrypt_token_cache|enable_broker\w*|login_experience_v2)|"
    r"[a-z_]+\.(endpoint|[a-z_]*_endpoint|[a-z_]*url|audience_resource|account|access_key|key|storage_key|storage_account|"
    r"connection_string|[a-z_]*connection_string|sas_token|auth_mode)|logging\.log_dir|defaults\.[a-z_]*connection_string)$"
)


def _forbidden(rule: str, reason: str, advice: str) -> CatalogueDecision:
    return CatalogueDecision("FORBIDDEN", rule, reason, advice, relaxable=False)


def _tokens(args: Sequence[str]) -> list[str]:
    """Every argument and every ``=``-separated part of it, lower case."""
    out: list[str] = []
    for a in args:
        low = a.lower()
        out.append(low)
        if "=" in low:
            out.extend(p for p in low.split("=") if p)
    return out


def _config_keys(args: Sequence[str]) -> list[str]:
    """The ``section.key`` names an ``az config set`` style argv writes (``k=v`` or a bare key)."""
    keys = []
    for a in args:
        if a[:1] == "-":
            continue
        key = a.split("=", 1)[0].strip().lower()
        if "." in key:
            keys.append(key)
    return keys


def _op_class(entry: Entry, op: Op) -> CatalogueDecision | None:
    """The FORBIDDEN class one operation puts a command in (a credential action, remote code).

    Memoised per (command name, operation): the answer reads nothing else, and both are a fixed set."""
    key = (entry.name, op)
    if key in _OP_CLASS_MEMO:
        return _OP_CLASS_MEMO[key]
    found = _op_class_of(entry, op)
    if len(_OP_CLASS_MEMO) < _MEMO_MAX:
        _OP_CLASS_MEMO[key] = found
    return found


_OP_CLASS_MEMO: dict[tuple[str, Op], CatalogueDecision | None] = {}


def _op_class_of(entry: Entry, op: Op) -> CatalogueDecision | None:
    norm = normalised(op.template)
    last = norm.rstrip("/").rsplit("/", 1)[-1]
    if op.method == "POST" and not op.read_only and (_CREDENTIAL_ACTION.match(last) or op.secret == 2):
        return _forbidden(
            "az-catalogue-credential-action",
            f"`az {entry.name}` calls {op.method} {op.template}, an action that returns credentials"
            + (f" ({op.why})" if op.why else ""),
            "Inspect the resource without its credentials (its `show`); credentials are never needed for diagnosis.",
        )  # fmt: skip
    if op.method in _WRITES and _RUN_COMMAND.search(norm):
        return _forbidden(
            "az-remote-code", f"`az {entry.name}` runs a script on a VM or scale set ({op.method} {op.template})",
            "Ask the VM's owner to run diagnostics on the machine; the agent never runs code on VMs.",
        )  # fmt: skip
    return None


def _extension_class(entry: Entry, args: Sequence[str]) -> CatalogueDecision | None:
    """A command that writes a VM/VMSS extension: FORBIDDEN for access and code-running extensions."""
    if entry.extensions & _ACCESS_EXTENSIONS:
        return _forbidden(
            "az-vm-access", f"`az {entry.name}` installs the VMAccess extension: it resets users, passwords or SSH keys on the VM",
            "Credential changes on VMs are the owner's decision; report the finding instead.",
        )  # fmt: skip
    named = sorted({t for t in _tokens(args) if t in _CODE_EXTENSIONS})
    if named or any(_CODE_SETTING.search(a) for a in args):
        what = f"the {named[0]} extension" if named else "an extension setting that runs a command"
        return _forbidden(
            "az-code-extension", f"`az {entry.name}` installs {what} on a VM or scale set: remote code execution",
            "Ask the VM's owner to run it; the agent never runs code on VMs.",
        )  # fmt: skip
    return None


def _config_class(cat: Catalogue, entry: Entry, effects: list[Effect], present: set[str], args: Sequence[str]) -> CatalogueDecision | None:
    """A command that writes the CLI's clouds or configuration toward other endpoints or code."""
    endpoint = sorted(o for o in present if o.startswith(("--endpoint-", "--suffix-", "--cloud-config")))
    if endpoint and any(isinstance(e, str) and e.startswith(("local:config-write", "local:file-write")) for e in effects):
        return _forbidden(
            "az-cloud-endpoint", f"`az {entry.name} {endpoint[0]}` points the CLI at other endpoints: its next token would go there",
            "Never change the CLI's clouds; the user configures them.",
        )  # fmt: skip
    if "local:config-write" in effects:
        keys = [k for k in _config_keys(args) if k in cat.config_keys or _REDIRECT_KEY.match(k)]
        bad = [k for k in keys if _REDIRECT_KEY.match(k)]
        if bad:
            return _forbidden(
                "az-config-redirect", f"`az {entry.name} {bad[0]}` changes where az sends its tokens or data, or where it loads code from",
                "Never change the CLI's configuration; the user configures it.",
            )  # fmt: skip
    return None


def _classes(cat: Catalogue, entry: Entry, effects: list[Effect], present: set[str], args: Sequence[str]) -> CatalogueDecision | None:
    """The FORBIDDEN classes, from the operations and options of this argv."""
    found, writes_extension, writes_vm, _ = _ops_summary(cat, entry, effects)
    if found is not None:
        return found
    if writes_extension:
        found = _extension_class(entry, args)
        if found is not None:
            return found
    if writes_vm and any(_PLANTING.search(a) for a in args if a[:2] != "--" or "=" in a):
        return _forbidden(
            "az-credential-planting", f"`az {entry.name}` writes a VM's administrator password, SSH keys, custom data or protected settings",
            "Credential changes on VMs are the owner's decision; report the finding instead.",
        )  # fmt: skip
    return _config_class(cat, entry, effects, present, args)


def _uses(args: Sequence[str], options: frozenset[str]) -> str | None:
    """The first of ``options`` that ``args`` use, as argparse reads them (a long option by any prefix
    of three or more characters, ``--opt=value``; compared in lower case)."""
    for a in args:
        if a[:1] != "-":
            continue
        name = a.split("=", 1)[0].lower()
        for o in options:
            if name == o or (o[:2] == "--" and len(name) >= 3 and o.startswith(name)):
                return o
    return None


def _ops_verdict(name: str, ops: list[tuple[int, Op]], conditional: set[Effect], present: set[str]) -> CatalogueDecision | None:
    """RISKY for an operation that writes, prints a secret, or returns what could not be checked."""
    for e, op in ops:
        if not op.read_only:
            return CatalogueDecision(
                "RISKY", "az-catalogue-write", f"{name} calls {op.method} {op.template}, which can change Azure state",
                relaxable=e not in conditional,
            )  # fmt: skip
    for e, op in ops:
        if op.secret == 2:
            return CatalogueDecision(
                "RISKY", "az-catalogue-secret", f"{name} prints a response that carries secrets: {op.why} ({op.method} {op.template})",
                relaxable=e not in conditional,
            )  # fmt: skip
        if op.secret == 3:
            return CatalogueDecision(
                "RISKY", "az-catalogue-opaque", f"{name}: what {op.method} {op.template} returns could not be checked ({op.why})",
                relaxable=e not in conditional,
            )  # fmt: skip
    if "--debug" in present and any(op.secret == 1 for _, op in ops):
        return CatalogueDecision(
            "RISKY", "az-catalogue-debug-secret",
            f"{name} --debug logs raw responses, including fields az otherwise omits as secret", relaxable=False,
        )  # fmt: skip
    return None


def _effects_verdict(name: str, effects: list[Effect], conditional: set[Effect]) -> CatalogueDecision | None:
    """RISKY for a local side effect or a call the analysis could not follow."""
    for e in effects:
        if isinstance(e, str) and e.startswith("local:"):
            return CatalogueDecision("RISKY", "az-catalogue-local", f"{name} has a local side effect ({e[6:]})", relaxable=e not in conditional)
    for e in effects:
        if isinstance(e, str) and e.startswith("unresolved:"):
            return CatalogueDecision(
                "RISKY", "az-catalogue-unresolved", f"{name}: the catalogue could not follow what it calls ({e[11:]})",
                relaxable=e not in conditional,
            )  # fmt: skip
    return None


def decide(
    cat: Catalogue, entry: Entry, args: Sequence[str], local_reads: Mapping[str, frozenset[str]],
    generic_reads: frozenset[str] = frozenset(),
) -> CatalogueDecision:
    """The catalogue's verdict for ``az <entry.name> ...args``.

    ``local_reads`` maps commands that only read the CLI's local state to the options that make them
    do more; ``generic_reads`` are commands whose operation is the resource their arguments name (the
    caller resolves those, so here they count as reads).
    """
    present = entry.present(args)
    key = (id(cat), id(local_reads), id(generic_reads), entry.name, frozenset(present))
    memo = _MEMO.get(key)
    if memo is not None:
        return memo
    effects = entry.effects(present)
    found = _decide(cat, entry, args, present, effects, local_reads=local_reads, generic_reads=generic_reads)
    if entry.name not in local_reads and not _ops_summary(cat, entry, effects)[3] and len(_MEMO) < _MEMO_MAX:
        _MEMO[key] = found  # the verdict depends on nothing but the options present
    return found


# Verdicts of commands whose decision depends only on which watched options are present (most reads):
# classifying is on the hot path, and these are a bounded set (catalogue commands x option subsets).
_MEMO: dict[tuple[int, int, int, str, frozenset[str]], CatalogueDecision] = {}
_MEMO_MAX = 16384


def _ops_summary(cat: Catalogue, entry: Entry, effects: list[Effect]) -> tuple[CatalogueDecision | None, bool, bool, bool]:
    """(the first operation's FORBIDDEN class, whether the command writes a VM/VMSS extension, whether it
    writes a VM or scale set itself, whether the FORBIDDEN classes look at argument values: it writes one
    of those or the CLI's configuration).

    All four read the entry's operations and nothing of the argv: memoised on the entry per set of
    effects (a few per command), so a command that writes a VM no longer hashes each operation and runs
    the template regexes again on every call."""
    key = tuple(effects)
    hit: tuple[CatalogueDecision | None, bool, bool, bool] | None = entry.memo.get(key)
    if hit is not None:
        return hit
    first: CatalogueDecision | None = None
    writes_extension = writes_vm = False
    for e in effects:
        if not isinstance(e, int):
            continue
        op = cat.ops[e]
        if first is None:
            first = _op_class(entry, op)
        if op.method in ("PUT", "PATCH"):
            norm = normalised(op.template)
            writes_extension = writes_extension or bool(_EXTENSION.search(norm))
            writes_vm = writes_vm or bool(_VM_ITSELF.search(norm))
    hit = (first, writes_extension, writes_vm, "local:config-write" in effects or writes_extension or writes_vm)
    if len(entry.memo) < _ENTRY_MEMO_MAX:
        entry.memo[key] = hit
    return hit


_ENTRY_MEMO_MAX = 256


def _decide(
    cat: Catalogue, entry: Entry, args: Sequence[str], present: set[str], effects: list[Effect], *,
    local_reads: Mapping[str, frozenset[str]], generic_reads: frozenset[str],
) -> CatalogueDecision:
    forbidden = _classes(cat, entry, effects, present, args)
    if forbidden is not None:
        return forbidden
    name = f"`az {entry.name}`"
    reveal = sorted(present & entry.reveal)
    if reveal:
        return CatalogueDecision("RISKY", "az-catalogue-reveal", f"{name} {reveal[0]} asks for secret material", relaxable=False)
    conditional = set(effects[len(entry.always) :])
    ops = [(e, cat.ops[e]) for e in effects if isinstance(e, int)]
    found = _ops_verdict(name, ops, conditional, present) or _effects_verdict(name, effects, conditional)
    if found is not None:
        return found
    if ops:
        return CatalogueDecision("SAFE", "az-catalogue-read", f"{name} only reads (azure-cli {cat.version} catalogue), and no response it prints carries a secret")
    if entry.name in generic_reads:
        return CatalogueDecision("SAFE", "az-catalogue-generic-read", f"{name} reads the resource its arguments name")
    if entry.name not in local_reads:
        return CatalogueDecision("RISKY", "az-catalogue-no-operation", f"{name}: the catalogue found no REST operation it calls")
    more = _uses(args, local_reads[entry.name])
    if more is not None:
        return CatalogueDecision("RISKY", "az-catalogue-local-more", f"{name} {more} does more than read the CLI's local state")
    return CatalogueDecision("SAFE", "az-catalogue-local-read", f"{name} only reads the CLI's local state")
