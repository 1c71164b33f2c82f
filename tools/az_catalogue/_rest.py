"""The REST operation behind one method of an SDK operations class (track 2, msrest or TypeSpec).

Why the source is read: a generated operations method builds its request with a module-level
``build_<group>_<op>_request`` function whose body holds the literal URL template
(``_url = kwargs.pop("template_url", "/subscriptions/...")`` or ``_url = "/subscriptions/..."``) and
the literal method (``HttpRequest(method="GET", ...)``); it names its response model in
``self._deserialize("Model", ...)`` (msrest) or ``_deserialize(_models.Model, ...)`` (TypeSpec).
Long-running methods (``begin_x``) reach the builder through ``self._x_initial``; pagers through a
nested ``prepare_request``. Both are followed.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from dataclasses import dataclass
from functools import cache
from typing import Any

from az_catalogue._source import node_of

__all__ = ["SdkOp", "is_sdk_method", "sdk_ops"]


@dataclass(frozen=True)
class SdkOp:
    """One request an SDK method may send, and the model its response deserialises to."""

    method: str
    template: str
    response: Any  # a model class, a msrest type string, or None
    origin: str


def is_sdk_method(fn: Any) -> bool:
    """True for a method of a generated operations class or data-plane client of an Azure SDK."""
    module = getattr(fn, "__module__", "") or ""
    if module.startswith("azure.cli."):
        # azure-cli vendors a few SDKs inside its command modules: generated code builds requests
        return _has_builder_calls(fn)
    return module.startswith("azure.") and not module.startswith(("azure.core", "azure.mgmt.core"))


def _tree_of(fn: Any) -> ast.AST | None:
    return node_of(fn)


def _has_builder_calls(fn: Any) -> bool:
    tree = _tree_of(fn)
    return tree is not None and any(
        isinstance(n, ast.Name) and n.id.startswith("build_") and n.id.endswith("_request") for n in ast.walk(tree)
    )


@cache
def _builder(module_name: str, name: str) -> tuple[str, str] | None:
    """(METHOD, template) of a request builder function, from its source."""
    module = sys.modules.get(module_name)
    fn = getattr(module, name, None) if module else None
    tree = _tree_of(fn) if fn is not None else None
    if tree is None:
        return None
    template = method = None
    multi: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("_url", "url") for t in node.targets):
            v = node.value
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                template = template or v.value
            elif isinstance(v, ast.Call) and len(v.args) == 2 and isinstance(v.args[1], ast.Constant):
                template = template or str(v.args[1].value)  # kwargs.pop("template_url", "...")
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in ("_url", "url"):
            v = node.value
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                template = template or v.value
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "HttpRequest":
            for kw in node.keywords:
                if kw.arg == "method" and isinstance(kw.value, ast.Constant):
                    method = str(kw.value.value).upper()
        if isinstance(node, ast.Dict):  # path_format_arguments = {"scope": _SERIALIZER.url(..., skip_quote=True)}
            for k, v in zip(node.keys, node.values, strict=False):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Call):
                    if any(kw.arg == "skip_quote" and getattr(kw.value, "value", False) for kw in v.keywords):
                        multi.add(str(k.value))
    if template is None or method is None:
        return None
    for name_ in multi:
        template = template.replace("{" + name_ + "}", "{*" + name_ + "}")
    return method, template


def _response_of(tree: ast.AST, module: Any) -> list[Any]:
    """The response models named in ``_deserialize`` calls of a method body."""
    out: list[Any] = []
    ns = vars(module) if module else {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if fname != "_deserialize" or not node.args:
            continue
        if len(node.args) > 1 and "headers" in ast.unparse(node.args[1]):
            continue  # a response header, not the body
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            out.append(_msrest_model(module, arg.value))
        else:
            try:
                out.append(eval(compile(ast.Expression(arg), "<type>", "eval"), dict(ns)))  # noqa: S307
            except Exception:  # noqa: BLE001
                out.append("?")
    return out


def _msrest_model(module: Any, name: str) -> Any:
    models = getattr(module, "_models", None) or getattr(module, "models", None)
    if models is None:
        pkg = sys.modules.get(module.__name__.rsplit(".", 2)[0] + ".models") if module else None
        models = pkg
    found = getattr(models, name, None) if models is not None else None
    return found if found is not None else name


_VERBS = frozenset({"get", "put", "post", "delete", "patch", "head"})


def _skip_quote_keys(tree: ast.AST) -> set[str]:
    """Path parameters serialised with ``skip_quote=True`` (they may span several segments)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=False):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Call):
                    if any(kw.arg == "skip_quote" and getattr(kw.value, "value", False) for kw in v.keywords):
                        out.add(str(k.value))
    return out


def _code_names(code: Any) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            names |= _code_names(c)
    return names


def _looks_generated(fn: Any) -> bool:
    """Cheap test on the compiled code: a generated method names a request builder, its URL
    ``metadata`` or an ``_x_initial`` helper."""
    try:
        code = inspect.unwrap(fn).__code__
    except (AttributeError, ValueError):
        return False
    return any(
        (n.startswith("build_") and n.endswith("_request")) or n == "metadata" or n.endswith("_initial")
        for n in _code_names(code)
    )


@cache
def sdk_ops(fn: Any) -> tuple[SdkOp, ...]:
    """Every request ``fn`` (an SDK method) may send, following ``self._x`` helpers of its class."""
    if not _looks_generated(fn):
        return ()
    owner_mod = sys.modules.get(getattr(fn, "__module__", ""))
    qual = getattr(fn, "__qualname__", "")
    owner_cls = getattr(owner_mod, qual.split(".")[0], None) if "." in qual else None
    seen: set[Any] = set()
    builders: list[tuple[str, str]] = []
    responses: list[Any] = []

    def visit(f: Any, depth: int) -> None:
        if f in seen or depth > 4:
            return
        seen.add(f)
        tree = _tree_of(f)
        if tree is None:
            return
        mod = sys.modules.get(getattr(f, "__module__", ""))
        responses.extend(_response_of(tree, mod))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id.startswith("build_") and node.id.endswith("_request"):
                builders.append((getattr(f, "__module__", ""), node.id))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" and owner_cls is not None:
                target = getattr(owner_cls, node.attr, None)
                target = getattr(target, "__func__", target)
                if inspect.isfunction(target) and node.attr.startswith("_") and not node.attr.startswith("__"):
                    visit(target, depth + 1)

    visit(fn, 0)
    ops: list[SdkOp] = []
    meta_seen = False
    for f in seen if not builders else ():  # older generated code: `url = self.get.metadata['url']`, `self._client.get(url, ...)`
        meta = getattr(f, "metadata", None)
        tree = _tree_of(f)
        if not isinstance(meta, dict) or "url" not in meta or tree is None:
            continue
        template = str(meta["url"])
        for name_ in _skip_quote_keys(tree):
            template = template.replace("{" + name_ + "}", "{*" + name_ + "}")
        verbs = {
            n.func.attr.upper() for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _VERBS
            and isinstance(n.func.value, ast.Attribute) and n.func.value.attr == "_client"
        }  # fmt: skip
        for verb in sorted(verbs):
            ops.append(SdkOp(verb, template, next((r for r in responses if r is not None), None), f"{f.__module__}.{f.__qualname__}"))
        meta_seen = True
    if meta_seen and not ops:
        ops.append(SdkOp("?", "?", None, f"{fn.__module__}.{qual}"))
    response = next((r for r in responses if r is not None), None)
    for module_name, name in dict.fromkeys(builders):
        found = _builder(module_name, name)
        origin = f"{module_name}.{name}"
        if found is None:
            ops.append(SdkOp("?", "?", None, origin))
        else:
            ops.append(SdkOp(found[0], found[1], response, origin))
    return tuple(ops)
