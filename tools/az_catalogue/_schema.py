"""Walk a response schema down to its leaves, for the three model families azure-cli 2.91 uses.

* AAZ schemas (``AAZObjectType`` ...): fields carry their wire name and ``flags`` (``secret``).
* msrest models (``_attribute_map``: wire key and type string, ``_subtype_map`` for polymorphism).
* TypeSpec models (``rest_field(name=..., visibility=[...])``, ``__mapping__`` for polymorphism);
  a field whose visibility lacks ``"read"`` is never in a response.

A leaf is a scalar the response may hold (a string, bytes, a free-form value), with the wire path
that reaches it (``properties``, ``osProfile``, ``adminPassword``; ``[]`` for a list element and
``{}`` for a dictionary value).
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Leaf", "model_fields", "model_variants", "models_of", "resolve_type", "walk_aaz"]

_MAX_DEPTH = 14


@dataclass(frozen=True)
class Leaf:
    """A scalar in a response: its wire path, the model that holds it, its kind, and whether the
    source marks it secret (AAZ ``secret`` flag) or write-only (TypeSpec visibility without read)."""

    path: tuple[str, ...]
    owner: str
    kind: str
    marked: bool
    write_only: bool = False


# ---------------------------------------------------------------- AAZ


def walk_aaz(schema: Any) -> Iterator[Leaf]:
    """Leaves of an AAZ response schema (object fields, list/dict elements, discriminated variants)."""
    from azure.cli.core.aaz import AAZDictType, AAZListType, AAZObjectType

    seen: set[int] = set()

    def walk(node: Any, path: tuple[str, ...], owner: str, depth: int) -> Iterator[Leaf]:
        if node is None or depth > _MAX_DEPTH:
            return
        flags = getattr(node, "_flags", {}) or {}
        if isinstance(node, AAZObjectType):
            if id(node) in seen:
                return
            seen.add(id(node))
            for name, field in node._fields.items():
                wire = field._serialized_name or name
                yield from walk(field, (*path, wire), owner, depth + 1)
            for variant in node._discriminators.values():
                yield from walk(variant, path, owner, depth + 1)
            seen.discard(id(node))
            return
        if isinstance(node, AAZListType):
            yield from walk(node._element, (*path, "[]"), owner, depth + 1)
            return
        if isinstance(node, AAZDictType):
            yield from walk(node._element, (*path, "{}"), owner, depth + 1)
            return
        kind = type(node).__name__.removeprefix("AAZ").removesuffix("Type").lower()
        yield Leaf(path, owner, kind, bool(flags.get("secret")))

    yield from walk(schema, (), "aaz", 0)


# ---------------------------------------------------------------- SDK models

_SCALARS_MSREST = {"str", "bytearray", "object", "base64", "unix-time", "iso-8601", "rfc-1123", "date", "time",
                   "duration", "int", "long", "float", "bool", "decimal", "number", "{object}", "[object]"}  # fmt: skip


def models_of(cls: type) -> dict[str, type]:
    """The model classes a msrest model's type strings can name (its models package)."""
    module = sys.modules.get(cls.__module__)
    pkg_name = cls.__module__.rsplit(".", 1)[0] if cls.__module__.endswith(("_models", "_models_py3")) else cls.__module__
    pkg = sys.modules.get(pkg_name) or module
    out: dict[str, type] = {}
    for mod in (module, pkg):
        if mod is not None:
            out.update({k: v for k, v in vars(mod).items() if isinstance(v, type)})
    return out


def model_fields(model: type) -> Iterator[tuple[tuple[str, ...], Any, bool]]:
    """(wire path, type, write-only) for each field of a msrest or TypeSpec model; a msrest type is a
    type string (``"[Model]"``), a TypeSpec one a typing annotation."""
    if hasattr(model, "_attribute_map"):
        for spec in getattr(model, "_attribute_map", {}).values():
            key = spec.get("key", "")
            wire = tuple(p.replace("\0", ".") for p in key.replace("\\.", "\0").split(".")) if key else ("?",)
            yield wire, spec.get("type", "str"), False
        return
    hints = _tsp_hints(model)
    for klass in reversed(model.__mro__):
        for attr, rf in vars(klass).items():
            if attr.startswith("_") or not hasattr(rf, "_visibility"):
                continue
            visibility = rf._visibility
            yield (rf._rest_name_input or attr,), hints.get(attr, str), visibility is not None and "read" not in visibility


def model_variants(model: type) -> list[type]:
    """The polymorphic subtypes a response of ``model`` may be (msrest ``_subtype_map``, TypeSpec
    ``__mapping__``)."""
    out: list[type] = []
    models = models_of(model)
    for mapping in (getattr(model, "_subtype_map", None) or {}).values():
        out.extend(models[n] for n in mapping.values() if n in models)
    out.extend(v for v in (getattr(model, "__mapping__", None) or {}).values() if isinstance(v, type) and v is not model)
    return out


def resolve_type(t: Any, models: dict[str, type]) -> tuple[str, Any]:
    """One step of a field type: ("model", cls) | ("list", element) | ("dict", value) | ("scalar", kind)."""
    if isinstance(t, str):
        if t.startswith("[") and t.endswith("]"):
            return "list", t[1:-1]
        if t.startswith("{") and t.endswith("}"):
            return "dict", t[1:-1]
        if t in _SCALARS_MSREST:
            return "scalar", t
        model = models.get(t)
        if model is not None and hasattr(model, "_attribute_map"):
            return "model", model
        return "scalar", "enum" if model is not None else ("str" if t[:1].isupper() else t)
    if isinstance(t, type) and (hasattr(t, "_attribute_map") or _is_tsp_model(t)):
        return "model", t
    origin = typing.get_origin(t)
    args = typing.get_args(t)
    if origin is typing.Union or (origin is not None and origin.__class__.__name__ == "UnionType"):
        inner = [a for a in args if a is not type(None)]
        return resolve_type(inner[0], models) if len(inner) == 1 else ("union", inner)
    if origin in (list, tuple, set, frozenset):
        return "list", args[0] if args else str
    if origin is dict or (origin is not None and "Mapping" in str(origin)):
        return "dict", args[1] if len(args) > 1 else str
    if origin is typing.Literal:
        return "scalar", "enum"
    if isinstance(t, type) and issubclass(t, (bool, int, float)):
        return "scalar", "num"
    if isinstance(t, type) and issubclass(t, __import__("enum").Enum):
        return "scalar", "enum"
    return "scalar", getattr(t, "__name__", "str").lower()


def _is_tsp_model(t: type) -> bool:
    return any(k for k, v in vars(t).items() if hasattr(v, "_visibility") and hasattr(v, "_rest_name_input"))


def _tsp_hints(model: type) -> dict[str, Any]:
    """Evaluate a TypeSpec model's annotations (``Optional["_models.X"]``) in its module."""
    module = sys.modules.get(model.__module__)
    ns: dict[str, Any] = dict(vars(module)) if module else {}
    pkg = sys.modules.get(model.__module__.rsplit(".", 1)[0])
    if pkg is not None:
        ns.setdefault("_models", pkg)
    out: dict[str, Any] = {}
    for klass in reversed(model.__mro__):
        for attr, ann in getattr(klass, "__annotations__", {}).items():
            if isinstance(ann, str):
                try:
                    ann = eval(ann, ns)  # noqa: S307 - the annotation text of an installed SDK model
                except Exception:  # noqa: BLE001
                    ann = str
            out[attr] = _resolve_forward(ann, ns)
    return out


def _resolve_forward(t: Any, ns: dict[str, Any]) -> Any:
    if isinstance(t, (typing.ForwardRef, str)):  # list["_models.X"] keeps a plain string
        try:
            return _resolve_forward(eval(t.__forward_arg__ if isinstance(t, typing.ForwardRef) else t, ns), ns)  # noqa: S307
        except Exception:  # noqa: BLE001
            return str
    args = typing.get_args(t)
    if not args:
        return t
    resolved = tuple(_resolve_forward(a, ns) for a in args)
    origin = typing.get_origin(t)
    if origin is typing.Union:
        return typing.Union[resolved]  # noqa: UP007
    if origin in (list, dict, tuple, set):
        return origin[resolved]  # type: ignore[index]
    return t
