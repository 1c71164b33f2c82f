"""The REST operations of an AAZ command (azure-cli's generated commands, ``azure.cli.core.aaz``).

Why AAZ is exact: an ``AAZCommand`` class nests one ``AAZHttpOperation`` class per request it can
send; each has a literal URL template (``self.client.format_url("/subscriptions/...")``), a literal
``method`` and, for a response, a schema built by ``_build_schema_on_<status>`` classmethods from
typed fields. The code generator (aaz-dev-tools) copies the REST spec's ``x-ms-secret`` into
``flags={"secret": True}`` on those fields, and ``AAZCommand.deserialize_output`` drops flagged
fields from what `az` prints unless a command passes ``secret_hidden=False``.
"""

from __future__ import annotations

import inspect
from functools import cache
from typing import Any

from az_catalogue._schema import Leaf, walk_aaz
from az_catalogue._secrets import leaf_secret

__all__ = ["AazOp", "aaz_class_ops", "aaz_shows_secrets"]


class AazOp:
    """One HTTP operation of an AAZ command: method, URL template, response leaves."""

    def __init__(self, method: str, template: str, leaves: tuple[Leaf, ...], origin: str) -> None:
        self.method = method
        self.template = template
        self.leaves = leaves
        self.origin = origin


def _http_operation_base() -> type:
    from azure.cli.core.aaz import AAZHttpOperation

    return AAZHttpOperation


class _Anything:
    """Stands for the operation's context while its ``url``/``method``/``url_parameters`` properties
    are evaluated: every attribute and call returns another stand-in."""

    def __getattr__(self, name: str) -> _Anything:
        return _Anything()

    def __call__(self, *args: Any, **kwargs: Any) -> _Anything:
        return _Anything()

    def __str__(self) -> str:
        return "x"


class _FakeOp:
    """``self`` for an AAZ operation's properties: records ``serialize_url_param`` calls."""

    def __init__(self) -> None:
        self.ctx = _Anything()
        self.multi: set[str] = set()
        self.client = self

    def format_url(self, template: str, **_: Any) -> str:
        return template

    def serialize_url_param(self, name: str, value: Any, required: bool = True, skip_quote: bool = False, **_: Any) -> dict[str, str]:
        if skip_quote:
            self.multi.add(name)
        return {name: "x"}

    def serialize_query_param(self, name: str, *_: Any, **__: Any) -> dict[str, str]:
        return {name: "x"}

    def serialize_header_param(self, name: str, *_: Any, **__: Any) -> dict[str, str]:
        return {name: "x"}


def _op_url_and_method(op_cls: type, base: type) -> tuple[str, str] | None:
    """The operation's method and URL template, by evaluating its properties on a stand-in ``self``
    (they only format literals); ``{*name}`` marks a parameter serialised with ``skip_quote=True``
    (it may span several path segments, like ``{resourceUri}``)."""
    fake = _FakeOp()
    try:
        method = str(op_cls.method.fget(fake)).upper()  # type: ignore[attr-defined]
        params = op_cls.url_parameters.fget(fake)  # type: ignore[attr-defined]
        fake.url_parameters = params  # type: ignore[attr-defined]
        template = str(op_cls.url.fget(fake))  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - reported as an unknown operation
        return None
    for name in fake.multi:
        template = template.replace("{" + name + "}", "{*" + name + "}")
    return method, template


def _response_leaves(op_cls: type) -> tuple[Leaf, ...]:
    """The response leaves that can carry a secret (``_secrets.leaf_secret``), from every
    ``_build_schema_on_<status>`` of the operation."""
    leaves: list[Leaf] = []
    for name in dir(op_cls):
        if not name.startswith("_build_schema_on_"):
            continue
        try:
            schema = getattr(op_cls, name)()
        except Exception:  # noqa: BLE001 - a schema that cannot be built is reported as unknown
            leaves.append(Leaf(("?",), "?", "unknown", False))
            continue
        leaves.extend(leaf for leaf in walk_aaz(schema) if leaf_secret(leaf) is not None)
    return tuple(leaves)


@cache
def aaz_class_ops(cls: type) -> tuple[AazOp, ...]:
    """Every HTTP operation nested in ``cls`` or the AAZ classes it derives from."""
    base = _http_operation_base()
    ops: list[AazOp] = []
    seen: set[str] = set()
    for klass in inspect.getmro(cls):
        for attr, value in vars(klass).items():
            # a subclass's operation class of the same name replaces its base's (VMShow.VirtualMachinesGet)
            if not (isinstance(value, type) and issubclass(value, base)) or attr in seen:
                continue
            seen.add(attr)
            um = _op_url_and_method(value, base)
            if um is None:
                ops.append(AazOp("?", "?", (), f"{value.__module__}.{value.__qualname__}"))
                continue
            ops.append(AazOp(um[0], um[1], _response_leaves(value), f"{value.__module__}.{value.__qualname__}"))
    return tuple(ops)


@cache
def aaz_shows_secrets(cls: type) -> bool:
    """True when the command prints secret-flagged fields: its ``_output`` passes
    ``secret_hidden=False`` to ``deserialize_output`` (read from the compiled code's constants)."""
    for klass in inspect.getmro(cls):
        fn = vars(klass).get("_output")
        if fn is None:
            continue
        consts = fn.__code__.co_consts
        kw = any(isinstance(c, tuple) and "secret_hidden" in c for c in consts)
        return kw and False in consts
    return False
