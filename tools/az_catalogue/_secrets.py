"""Which response leaves can carry a secret, and how a response is judged from its leaves.

Three sources, strongest first:

1. **The schema says so.** An AAZ field with ``flags={"secret": True}`` is the REST spec's
   ``x-ms-secret: true``. AutoRest documents that annotation as "this property must not exist in
   response" (equivalent to ``x-ms-mutability: ["create", "update"]``), and azure-cli's
   ``AAZCommand.deserialize_output`` drops such fields from what `az` prints unless the command asks
   for ``secret_hidden=False``. So a marked field is **hidden**: not printed by the command; only
   ``--debug`` (which logs raw response bodies through ``SafeNetworkTraceLoggingPolicy``) or
   ``az rest`` on the same URL would show it if a service broke that contract.
2. **The field is write-only.** A TypeSpec model field whose ``visibility`` lacks ``"read"`` is never
   in a response; a msrest field listed in ``WRITE_ONLY`` below was checked against the REST spec
   (``x-ms-secret``/``x-ms-mutability``) or the service documentation (e.g. a VM's ``adminPassword``
   and ``customData``, an extension's ``protectedSettings``): both are treated as absent.
3. **The name says so** (every other leaf): the documented vocabulary below, applied to the wire
   name's words (camelCase split), the words of its parent path, and the model that owns it. A hit
   is **shown**: the command prints it.

Only leaves that can hold text are judged (strings, bytes, free-form values); numbers, booleans,
enums and dates never carry a secret.
"""

from __future__ import annotations

import re
from functools import cache

from az_catalogue._schema import Leaf, model_fields, model_variants, models_of, resolve_type

__all__ = ["WRITE_ONLY", "context_of", "leaf_secret", "mark_hidden", "model_secret", "words"]

_TEXT_KINDS = {"str", "string", "bytearray", "bytes", "base64", "object", "any", "freeform", "{object}", "[object]", "?"}

# The last word of a property name that makes it a secret value.
_SECRET_LAST = {
    "password", "passwords", "passwd", "pwd", "passphrase", "secret", "secrets", "token", "tokens",
    "credential", "credentials", "cookie", "cookies", "key", "keys", "sas", "signature", "pfx", "pkcs12",
}  # fmt: skip
# Words before the last that make a "token"/"key"/"secret" a reference or a public value.
_NOT_SECRET_WORDS = {
    "public", "partition", "row", "sort", "hash", "continuation", "next", "skip", "sync", "page", "pagination",
    "cancellation", "change", "resume", "idempotency", "routing", "shard", "lookup", "foreign", "encryption",
    "customer", "managed", "cmk", "kek", "dek", "vault", "ssh", "signing", "verification", "rsa", "ecdsa",
    "identity", "resource", "dns", "dnssec", "etag", "request", "correlation", "access_policy", "tag", "label",
    "group", "index", "column", "unique", "primary_column", "object", "blob", "file", "path", "storage_sku",
}  # fmt: skip
# The last word of a property name that makes it a reference to a secret, not the secret.
_REFERENCE_LAST = {
    "name", "names", "id", "ids", "uri", "url", "urls", "uris", "version", "versions", "reference", "ref",
    "type", "types", "kind", "identifier", "path", "expiry", "expiration", "expires", "time", "date",
    "enabled", "count", "status", "state", "source", "length", "size", "policy", "policies", "provider",
    "thumbprint", "thumbprints", "hash", "format", "mode", "algorithm", "location", "endpoint", "prefix",
    "suffix", "label", "description", "setting", "settings", "info", "properties", "rotation", "vault",
    "store", "field", "fields", "permission", "permissions", "role", "scope", "scopes", "days", "hint",
    "issuer", "audience", "audiences", "lifetime", "duration", "interval", "required", "configured",
    "exists", "set", "data", "usage", "origin", "source_type", "start", "end", "at", "on", "created",
    "updated", "secured", "less", "based", "auth",
}  # fmt: skip
# Whole names that are secrets whatever the vocabulary above says.
_SECRET_NAMES = {
    "protectedsettings", "customdata", "customheaders", "privatekey", "authorization", "authorizationheader",
    "securevalue", "securestring", "connectionstring", "connectionstrings", "sharedaccesskey",
    "pfxblob", "kubeconfig", "kubeconfigs", "value_secure",
}  # fmt: skip
# Parents whose string children are the secret values (``keys[].value`` of a listKeys result).
_SECRET_PARENTS = {"keys", "secrets", "passwords", "credentials", "tokens", "connectionstrings", "accesskeys", "sharedkeys"}
# Owner models whose string fields are all secret values (``BatchAccountKeys.primary``).
_SECRET_OWNER = re.compile(r"(Keys|Secrets|Credentials|ConnectionStrings|Passwords|Tokens|SasTokens?|AccessKeys)(Result|Response|List|Contract)?$")

# Response fields a service never returns (write-only), as (context, wire name) in lower case: the
# context is the nearest enclosing field that is not ``properties`` (``osProfile.customData``,
# ``sslCertificates[].properties.password``), ``*`` for any. Checked against the REST specification or
# the service documentation; such a field is **hidden** (class 1), like an AAZ ``secret`` field: the
# command stays SAFE, ``--debug`` (raw response bodies in the log) does not. The AAZ ``secret`` flags
# of every command are added to this at generation (``mark_hidden``): the same spec field reached
# through an older SDK-based command is the same write-only field.
WRITE_ONLY: dict[tuple[str, str], str] = {
    ("osprofile", "customdata"): "VM/VMSS osProfile.customData: passed to the VM at provisioning; ARM does not return it "
    "(learn.microsoft.com/azure/virtual-machines/custom-data: unlike user data it cannot be retrieved)",
    ("osprofile", "adminpassword"): "osProfile.adminPassword: x-ms-secret in the Compute spec (AAZ marks it secret)",
    ("*", "protectedsettings"): "a VM/VMSS extension's protectedSettings: encrypted for the VM, never returned by GET "
    "(Compute spec VirtualMachineExtensionProperties; AutoRest x-ms-secret semantics)",
    ("sslcertificates", "password"): "Application Gateway sslCertificates[].password: 'only applicable in PUT request' (Network spec)",
    ("sslcertificates", "data"): "Application Gateway sslCertificates[].data: 'only applicable in PUT request' (Network spec)",
}  # fmt: skip

# Parents whose string children are permission or action names, never values (Key Vault access
# policies' ``permissions.secrets: ["get", "list"]``, RBAC ``actions``).
_NAME_LIST_PARENTS = {"permissions", "actions", "notactions", "dataactions", "notdataactions"}


def mark_hidden(context: str, name: str, why: str) -> None:
    """Add a field the REST spec marks ``x-ms-secret`` (read from an AAZ schema) to ``WRITE_ONLY``."""
    WRITE_ONLY.setdefault((context.lower(), name.lower()), why)
    model_secret.cache_clear()


def context_of(names: list[str]) -> str:
    """The nearest enclosing field name that is not ``properties`` (lower case), or ``""``."""
    for p in reversed(names[:-1]):
        if p.lower() != "properties":
            return p.lower()
    return ""


def _write_only(names: list[str]) -> str | None:
    name = names[-1].lower()
    return WRITE_ONLY.get((context_of(names), name)) or WRITE_ONLY.get(("*", name))


_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z]|[0-9]|$)|[A-Z]?[a-z]+|[0-9]+")


def words(name: str) -> list[str]:
    """``primaryMasterKey`` -> ``[primary, master, key]``; digits dropped (``key1`` -> ``[key]``)."""
    return [w.lower() for w in _WORD.findall(name.replace("-", "_")) if not w.isdigit()]


def _name_secret(name: str, parent: str, owner: str) -> str | None:
    """Why the leaf ``name`` (under ``parent``, in model ``owner``) names a secret value, or None."""
    low = name.lower().replace("_", "").replace("-", "")
    if parent.lower() in _NAME_LIST_PARENTS:
        return None
    if low in _SECRET_NAMES:
        return f"`{name}` is a secret by name"
    ws = words(name)
    if not ws:
        return None
    last = ws[-1]
    if "sas" in ws[:-1] and last in ("uri", "url", "urls", "uris"):
        return f"`{name}` is a SAS URL (it carries its signature)"
    if len(ws) >= 2 and ws[-2:] == ["connection", "string"] or ws[-2:] == ["connection", "strings"]:
        return f"`{name}` is a connection string"
    if last in _SECRET_LAST and not (set(ws[:-1]) & _NOT_SECRET_WORDS):
        if low in ("key", "keys", "token") and parent.lower() not in _SECRET_PARENTS:
            return None  # a bare `key` is a name-value pair's name (tags, labels, headers)
        return f"`{name}` names a secret value ({last})"
    if last in ("value", "values", "primary", "secondary") and parent.lower().replace("_", "") in _SECRET_PARENTS:
        return f"`{parent}[].{name}` is a secret value"
    if last in ("primary", "secondary", "value") and _SECRET_OWNER.search(owner or ""):
        return f"`{owner}.{name}` is a secret value"
    return None


def leaf_secret(leaf: Leaf) -> tuple[str, str] | None:
    """(``hidden`` | ``shown``, why) for a leaf that can carry a secret, else None."""
    if leaf.write_only:
        return None
    names = [p for p in leaf.path if p not in ("[]", "{}")]
    if not names:
        return None
    name = names[-1]
    parent = names[-2] if len(names) > 1 else ""
    if leaf.marked:
        return "hidden", f"`{'.'.join(names)}` is marked secret (x-ms-secret): az omits it from its output"
    write_only = _write_only(names)
    if write_only is not None:
        return "hidden", f"`{'.'.join(names)}` is write-only: {write_only}"
    if leaf.kind not in _TEXT_KINDS and not leaf.kind.startswith("{") and leaf.kind not in ("dict", "list"):
        return None
    why = _name_secret(name, parent, leaf.owner)
    if why is None and leaf.path and leaf.path[-1] == "{}" and name.lower() in _SECRET_PARENTS:
        why = f"`{name}` maps names to secret values"
    return ("shown", why) if why else None


_IN_PROGRESS: set[tuple[type, str]] = set()


@cache
def model_secret(model: type, parent: str = "") -> str | None:
    """Why a response deserialised to ``model`` can print a secret (the first secret field found,
    through nested models, lists, dictionaries and polymorphic variants), or None.

    Memoised per (model, the name of the field holding it): the vocabulary looks at a field's name,
    its parent's name and its model, so a shared sub-model is judged once per parent name (walking
    every path through azure-cli's largest models would take hours).
    """
    key = (model, parent)
    if key in _IN_PROGRESS:
        return None  # a cycle: the path that entered it is still being judged
    _IN_PROGRESS.add(key)
    try:
        models = models_of(model)
        for wire, ftype, write_only in model_fields(model):
            if write_only:
                continue
            found = _type_secret(ftype, (parent, *wire), model.__name__, models, 0)
            if found:
                return found
        for variant in model_variants(model):
            found = model_secret(variant, parent)
            if found:
                return found
        return None
    finally:
        _IN_PROGRESS.discard(key)


def _type_secret(t: object, path: tuple[str, ...], owner: str, models: dict[str, type], depth: int) -> str | None:
    if depth > 6:
        return None
    kind, inner = resolve_type(t, models)
    names = [p for p in path if p and p not in ("[]", "{}")]
    if kind == "model":
        return model_secret(inner, names[-1] if names else "")
    if kind == "union":
        return next((f for f in (_type_secret(a, path, owner, models, depth + 1) for a in inner) if f), None)
    if kind in ("list", "dict"):
        found = _type_secret(inner, (*path, "[]" if kind == "list" else "{}"), owner, models, depth + 1)
        if found is None and kind == "dict" and names and names[-1].lower() in _SECRET_PARENTS:
            return f"`{names[-1]}` maps names to secret values"
        return found
    hit = leaf_secret(Leaf(tuple(p for p in path if p), owner, str(inner), False))
    return hit[1] if hit is not None and hit[0] == "shown" else None
