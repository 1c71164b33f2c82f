"""What a hand-written azure-cli command function calls: a small abstract interpreter over its AST.

Why an interpreter and not a name list: a custom command (``acr_task_show(cmd, client, ...)``)
reaches the service through its ``client`` (an operations object its client factory built), through
client factories it calls itself (``_compute_client_factory(cli_ctx).virtual_machines.get``),
through generated AAZ commands it instantiates (``VMShow(cli_ctx=...)(command_args=...)``), through
helper functions, and through hand-written SDK clients (``BlobClient.exists`` ->
``self._client.blob.get_properties``). The interpreter follows those edges and records every
generated SDK method or AAZ operation it reaches, every local side effect (processes, files,
browsers, raw requests) and every call it could not resolve whose name says it changes something.

Values are tracked loosely: a concrete object (a module, a function, a class, the CLI context, a
client a factory built), an instance of a known class, or unknown. Client factories are *called*
(the generator's profile hands out a credential that cannot fetch a token, so nothing is sent).
Effects found under ``if <parameter>:`` in the command function itself are recorded as conditional
on that parameter: that is how ``--with-secure-properties`` is seen to switch ``tasks.get`` to
``tasks.get_details``.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import re
import textwrap
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from az_catalogue._aaz import aaz_class_ops
from az_catalogue._rest import sdk_ops
from az_catalogue._source import node_of
from az_catalogue._tables import CODE_EXTENSION_TYPES

__all__ = ["Effects", "analyse_function", "cmd_binding", "factory_result"]

_MAX_DEPTH = 7
_UNKNOWN = object()

# Names of calls on an unknown receiver that change state (an SDK verb), kept as "unresolved writes".
_MUTATING_NAME = re.compile(
    r"^(begin_\w+|create\w*|delete\w*|update\w*|put\w*|post\w*|patch\w*|purge\w*|regenerate\w*|reset\w*|restart\w*|"
    r"start\w*|stop\w*|deallocate\w*|generalize|redeploy|reimage\w*|set_\w+|add_\w+|remove_\w+|upload\w*|"
    r"send\w*|invoke\w*|run_\w+|execute\w*|import_\w+|export_\w+|swap\w*|restore\w*|rotate\w*|renew\w*|grant\w*|"
    r"revoke\w*|approve\w*|reject\w*|failover\w*|move\w*|copy\w*|acquire\w*|break_\w+|download\w*)$"
)
_READ_NAME = re.compile(r"^(get\w*|list\w*|show\w*|exists|check\w*|query\w*|read\w*|head\w*)$")

# Local side effects: module-level functions that run programs, write files, open a browser or
# send a request the catalogue cannot see into.
_LOCAL_EFFECTS: dict[tuple[str, str], str] = {
    **{("subprocess", n): "process" for n in ("run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput")},
    **{("os", n): "process" for n in ("system", "popen", "execv", "execvp", "execve", "spawnv", "spawnvp", "startfile", "fork")},
    **{("os", n): "file-write" for n in ("remove", "unlink", "rename", "replace", "makedirs", "mkdir", "rmdir", "chmod", "symlink")},
    **{("shutil", n): "file-write" for n in ("copy", "copy2", "copyfile", "copytree", "move", "rmtree", "unpack_archive")},
    ("webbrowser", "open"): "browser", ("webbrowser", "open_new_tab"): "browser",
    ("azure.cli.core.util", "open_page_in_browser"): "browser",
    ("azure.cli.core.util", "send_raw_request"): "raw-request",
    ("requests", "get"): "raw-request", ("requests", "post"): "raw-request", ("requests", "put"): "raw-request",
    ("requests", "request"): "raw-request", ("urllib.request", "urlopen"): "raw-request",
    ("socket", "socket"): "socket", ("socket", "create_connection"): "socket",
    ("azure.cli.core.util", "in_cloud_console"): "",
    **{("azure.cli.core.cloud", n): "config-write" for n in ("add_cloud", "update_cloud", "remove_cloud", "switch_active_cloud")},
}  # fmt: skip
# Methods of concrete objects with local effects: the CLI configuration (``az config set``).
_LOCAL_METHOD_EFFECTS: dict[tuple[str, str], str] = {
    ("knack.config", "CLIConfig.set_value"): "config-write",
    ("knack.config", "CLIConfig.remove_option"): "config-write",
    ("knack.config", "CLIConfig.set"): "config-write",
}
_EFFECT_MODULE_PREFIXES = {"paramiko": "remote-shell", "websocket": "socket", "pexpect": "process"}


@dataclass
class Effects:
    """What a command function does, each item with the parameters that guard it (empty: always)."""

    ops: dict[tuple[str, str, str], set[frozenset[str]]] = field(default_factory=dict)  # (method, template, response id)
    responses: dict[str, Any] = field(default_factory=dict)  # response id -> model / AAZ leaves
    local: dict[str, set[frozenset[str]]] = field(default_factory=dict)
    unresolved: dict[str, set[frozenset[str]]] = field(default_factory=dict)

    def add_op(self, method: str, template: str, response_id: str, response: Any, cond: frozenset[str]) -> None:
        self.ops.setdefault((method, template, response_id), set()).add(cond)
        self.responses.setdefault(response_id, response)

    def add_local(self, kind: str, cond: frozenset[str]) -> None:
        self.local.setdefault(kind, set()).add(cond)

    def add_unresolved(self, name: str, cond: frozenset[str]) -> None:
        self.unresolved.setdefault(name, set()).add(cond)

    def merge(self, other: Effects, cond: frozenset[str]) -> None:
        """Add ``other``'s effects, each also guarded by ``cond``."""
        for key, conds in other.ops.items():
            self.ops.setdefault(key, set()).update(c | cond for c in conds)
        for k, v in other.responses.items():
            self.responses.setdefault(k, v)
        for k, conds in other.local.items():
            self.local.setdefault(k, set()).update(c | cond for c in conds)
        for k, conds in other.unresolved.items():
            self.unresolved.setdefault(k, set()).update(c | cond for c in conds)


@dataclass(frozen=True)
class _Inst:
    cls: type


@dataclass(frozen=True)
class _Bound:
    owner: Any  # _Inst or a concrete object
    func: Any


def _tree(fn: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    node = node_of(fn)
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _analysable(fn: Any) -> bool:
    module = getattr(fn, "__module__", "") or ""
    if module.startswith("azure.cli.core"):
        return False
    return module.startswith(("azure.cli.command_modules", "azure.")) and inspect.isfunction(fn)


# Functions without side effects that return a class, module or client type: called for real.
_PURE = {("azure.cli.core.profiles", "get_sdk"), ("azure.cli.core.aaz.utils", "import_aaz_by_profile"),
         ("azure.cli.core.aaz", "import_aaz_by_profile")}  # fmt: skip


def _analysable_factory(fn: Any) -> bool:
    return (getattr(fn, "__module__", "") or "").startswith("azure.cli.command_modules")


def _is_factory(fn: Any) -> bool:
    name = getattr(fn, "__name__", "")
    module = getattr(fn, "__module__", "") or ""
    if module == "azure.cli.core.commands.client_factory" and name in ("get_mgmt_service_client", "get_data_service_client"):
        return True
    return module.startswith("azure.cli.command_modules") and bool(
        re.match(r"^(_?cf_|.*client_factory|.*_client$|get_.*client|.*_client_for|.*clients?_factory)", name)
    )


class _Interp:
    """One analysis of one command: shared caches, effects collected into ``effects``."""

    def __init__(self, cli: Any) -> None:
        self.cli = cli
        self.effects = Effects()
        self.factory_cache: dict[tuple[Any, ...], Any] = {}
        self.active: set[Any] = set()
        self.truncated = False

    # ------------------------------------------------------------------ values

    def call_factory(self, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        real_args = [a for a in args]
        key = (fn, tuple(id(a) for a in real_args), tuple(sorted(kwargs)))
        if key in self.factory_cache:
            return self.factory_cache[key]
        try:
            value = fn(*real_args, **kwargs)
        except Exception:  # noqa: BLE001 - a factory that needs real arguments stays unknown
            value = _UNKNOWN
        self.factory_cache[key] = value
        return value

    def concrete(self, v: Any) -> Any:
        """A concrete Python value usable as a factory argument (unknown -> None)."""
        if v is _UNKNOWN or isinstance(v, (_Inst, _Bound)):
            return None
        return v

    def record_method(self, owner: Any, fn: Any, cond: frozenset[str], depth: int) -> None:
        """A method of an SDK object was called or referenced."""
        fn = getattr(fn, "__func__", fn)
        if not inspect.isfunction(fn):
            return
        ops = sdk_ops(fn)
        if ops:
            for op in ops:
                rid = _response_id(op.response)
                self.effects.add_op(op.method, op.template, rid, op.response, cond)
            return
        if _analysable(fn):
            self.run(fn, {"self": owner} if _first_param(fn) == "self" else {}, cond, depth + 1)

    def record_aaz(self, cls: type, cond: frozenset[str]) -> None:
        for op in aaz_class_ops(cls):
            rid = "aaz:" + op.origin
            self.effects.add_op(op.method, op.template, rid, op.leaves, cond)

    # ------------------------------------------------------------------ analysis

    def run(self, fn: Any, bindings: dict[str, Any], cond: frozenset[str], depth: int, top: bool = False) -> Any:
        """Interpret ``fn`` with some parameters bound; returns the value of its return statements.

        A function other than the command's own is interpreted once per kind of arguments and its
        summary (effects, return value) reused, with the caller's guard added to its effects; a
        summary cut short by the depth limit or a recursion is not kept.
        """
        if depth > _MAX_DEPTH or fn in self.active:
            self.truncated = True
            return _UNKNOWN
        tree = _tree(fn)
        if tree is None:
            return _UNKNOWN
        params = {a.arg for a in tree.args.args + tree.args.kwonlyargs}
        if top:
            self.active.add(fn)
            try:
                frame = _Frame(self, fn, dict(bindings), depth, True, params)
                frame.block(tree.body, cond)
                return frame.returned
            finally:
                self.active.discard(fn)
        key = (fn, tuple(sorted((k, _sig(v)) for k, v in bindings.items())))
        summary = _SUMMARIES.get(key)
        if summary is None:
            outer, outer_cut = self.effects, self.truncated
            self.effects, self.truncated = Effects(), False
            self.active.add(fn)
            try:
                frame = _Frame(self, fn, dict(bindings), depth, False, params)
                frame.block(tree.body, frozenset())
                summary = (self.effects, frame.returned)
            finally:
                self.active.discard(fn)
                cut = self.truncated
                self.effects, self.truncated = outer, outer_cut or cut
            if not cut:
                _SUMMARIES[key] = summary
        self.effects.merge(summary[0], cond)
        return summary[1]


_SUMMARIES: dict[tuple[Any, ...], tuple[Effects, Any]] = {}


def _first_param(fn: Any) -> str | None:
    tree = _tree(fn)
    return tree.args.args[0].arg if tree is not None and tree.args.args else None


def _sig(v: Any) -> str:
    if v is _UNKNOWN:
        return "?"
    if isinstance(v, _Inst):
        return f"I:{v.cls.__module__}.{v.cls.__qualname__}"
    if isinstance(v, _Bound):
        return f"B:{_sig(v.owner)}.{getattr(v.func, '__qualname__', '?')}"
    if inspect.isclass(v) or inspect.isfunction(v) or inspect.ismodule(v):
        return f"O:{getattr(v, '__module__', '')}.{getattr(v, '__qualname__', getattr(v, '__name__', '?'))}"
    if isinstance(v, (str, int, float, bool, type(None))):
        return "C:" + repr(v)[:40]
    return f"T:{type(v).__module__}.{type(v).__qualname__}"


def _response_id(resp: Any) -> str:
    if resp is None:
        return "none"
    if isinstance(resp, type):
        return f"{resp.__module__}.{resp.__qualname__}"
    return "expr:" + str(resp)


class _Frame:
    """The interpretation of one function body."""

    def __init__(self, interp: _Interp, fn: Any, env: dict[str, Any], depth: int, top: bool, params: set[str]) -> None:
        self.i = interp
        self.fn = fn
        self.env = env
        self.depth = depth
        self.top = top
        self.params = params
        self.returned: Any = _UNKNOWN
        self.globals = getattr(fn, "__globals__", {})
        self.collections: dict[str, frozenset[str]] = {}

    # ---------------------------------------------------------- statements

    def block(self, stmts: list[ast.stmt], cond: frozenset[str]) -> None:
        for s in stmts:
            self.stmt(s, cond)

    def stmt(self, s: ast.stmt, cond: frozenset[str]) -> None:
        if isinstance(s, ast.If):
            self.expr(s.test, cond)
            guard = self.guard(s.test) if self.top else frozenset()
            self.block(s.body, cond | guard)
            self.block(s.orelse, cond)
            return
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            self.imports(s)
            return
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # a nested function: its body runs if it is called; analyse it in place (conservative)
            self.block(s.body, cond)
            return
        if isinstance(s, ast.Assign):
            v = self.expr(s.value, cond)
            for t in s.targets:
                self.bind(t, v)
            self.note_param_collection(s)
            return
        if isinstance(s, ast.AnnAssign) and s.value is not None:
            self.bind(s.target, self.expr(s.value, cond))
            return
        if isinstance(s, ast.Return) and s.value is not None:
            v = self.expr(s.value, cond)
            if self.returned is _UNKNOWN:
                self.returned = v
            return
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                v = self.expr(item.context_expr, cond)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, v)
            self.block(s.body, cond)
            return
        if isinstance(s, (ast.For, ast.AsyncFor)):
            self.expr(s.iter, cond)
            self.bind(s.target, _UNKNOWN)
            self.block(s.body, cond)
            self.block(s.orelse, cond)
            return
        for child in ast.iter_child_nodes(s):
            if isinstance(child, ast.stmt):
                self.stmt(child, cond)
            elif isinstance(child, ast.expr):
                self.expr(child, cond)
            elif isinstance(child, ast.excepthandler):
                self.block(child.body, cond)

    def note_param_collection(self, s: ast.Assign) -> None:
        """``on_demand = {protocol, host, path}``: a local collection of parameters, so that a test on
        it (``if on_demand.difference({None}):``) guards by any of them."""
        if not self.top or len(s.targets) != 1 or not isinstance(s.targets[0], ast.Name):
            return
        v = s.value
        if isinstance(v, (ast.Set, ast.List, ast.Tuple)) and v.elts and all(
            isinstance(e, ast.Name) and e.id in self.params for e in v.elts
        ):
            self.collections[s.targets[0].id] = frozenset(e.id for e in v.elts)  # type: ignore[union-attr]

    def guard(self, test: ast.expr) -> frozenset[str]:
        """Parameters whose truthiness a test checks (``if p``, ``if p is not None``, ``if p and q``,
        ``if any_of.difference({None})`` on a local collection of parameters)."""
        names: set[str] = set()
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and isinstance(test.func.value, ast.Name):
            found = self.collections.get(test.func.value.id)
            if found is not None and test.func.attr in ("difference", "__sub__"):
                return found  # the set of given parameters is not empty: one of them was given
        if isinstance(test, ast.Name) and test.id in self.params:
            names.add(test.id)
        elif isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for v in test.values:
                names |= self.guard(v)
        elif isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id in self.params:
            if not (len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) and getattr(test.comparators[0], "value", 0) is None):
                names.add(test.left.id)
        elif isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name) and test.args[0].id in self.params:
            names.add(test.args[0].id)  # has_value(p), bool(p)
        return frozenset(names)

    def imports(self, s: ast.Import | ast.ImportFrom) -> None:
        if isinstance(s, ast.Import):
            for a in s.names:
                try:
                    mod = importlib.import_module(a.name)
                except Exception:  # noqa: BLE001
                    continue
                self.env[a.asname or a.name.split(".")[0]] = mod if a.asname else importlib.import_module(a.name.split(".")[0])
            return
        base = s.module or ""
        if s.level:
            pkg = (self.fn.__module__ or "").split(".")
            base = ".".join(pkg[: len(pkg) - s.level] + ([s.module] if s.module else []))
        try:
            mod = importlib.import_module(base)
        except Exception:  # noqa: BLE001
            return
        for a in s.names:
            value = getattr(mod, a.name, _UNKNOWN)
            if value is _UNKNOWN:
                try:
                    value = importlib.import_module(f"{base}.{a.name}")
                except Exception:  # noqa: BLE001
                    value = _UNKNOWN
            self.env[a.asname or a.name] = value

    def bind(self, target: ast.expr, v: Any) -> None:
        if isinstance(target, ast.Name):
            old = self.env.get(target.id, _UNKNOWN)
            # flow-insensitive: the first known value of a name wins (a later `x = None` does not erase it)
            if old is _UNKNOWN or old is None:
                self.env[target.id] = v
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self.bind(t, _UNKNOWN)

    # ---------------------------------------------------------- expressions

    def lookup(self, name: str) -> Any:
        if name in self.env:
            return self.env[name]
        if name in self.globals:
            return self.globals[name]
        return getattr(builtins, name, _UNKNOWN)

    def expr(self, e: ast.expr | None, cond: frozenset[str]) -> Any:
        if e is None:
            return _UNKNOWN
        if isinstance(e, ast.Constant):
            self.note_extension(e.value, cond)
            return e.value
        if isinstance(e, ast.Name):
            value = self.lookup(e.id)
            self.note_extension(value, cond)
            return value
        if isinstance(e, ast.Attribute):
            return self.attribute(self.expr(e.value, cond), e.attr, cond)
        if isinstance(e, ast.Call):
            return self.call(e, cond)
        if isinstance(e, ast.IfExp):
            self.expr(e.test, cond)
            a = self.expr(e.body, cond | (self.guard(e.test) if self.top else frozenset()))
            b = self.expr(e.orelse, cond)
            return a if a is not _UNKNOWN else b
        if isinstance(e, ast.BoolOp):
            vals = [self.expr(v, cond) for v in e.values]
            return next((v for v in vals if v is not _UNKNOWN and v is not None), _UNKNOWN)
        if isinstance(e, ast.BinOp):
            left, right = self.expr(e.left, cond), self.expr(e.right, cond)
            if isinstance(e.op, ast.Add) and isinstance(left, str) and isinstance(right, str):
                return left + right  # `operation_name + '_slot'`
            return _UNKNOWN
        if isinstance(e, ast.Lambda):
            self.expr(e.body, cond)
            return _UNKNOWN
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                self.expr(child, cond)
            elif isinstance(child, ast.comprehension):
                self.expr(child.iter, cond)
                for c in child.ifs:
                    self.expr(c, cond)
        return _UNKNOWN

    def note_extension(self, value: Any, cond: frozenset[str]) -> None:
        """A string naming a code-running or access VM extension (``'VMAccessForLinux'``): the
        command installs that extension (``vm user update`` does, through VMAccess)."""
        if isinstance(value, str) and len(value) < 40 and value.lower() in CODE_EXTENSION_TYPES:
            self.i.effects.add_local("extension:" + value.lower(), cond)

    def attribute(self, owner: Any, name: str, cond: frozenset[str]) -> Any:
        if owner is _UNKNOWN:
            return _UNKNOWN
        if isinstance(owner, _Inst):
            cls_attr = inspect.getattr_static(owner.cls, name, _UNKNOWN)
            if cls_attr is _UNKNOWN:
                return self.instance_attr(owner.cls, name, cond)
            if isinstance(cls_attr, property):
                return _UNKNOWN
            func = getattr(cls_attr, "__func__", cls_attr)
            if inspect.isfunction(func):
                bound = _Bound(owner, func)
                self.reference(bound, cond)
                return bound
            return cls_attr
        try:
            value = getattr(owner, name)
        except Exception:  # noqa: BLE001
            return _UNKNOWN
        if inspect.ismethod(value) and not inspect.isclass(owner) and not inspect.ismodule(owner):
            bound = _Bound(owner, value.__func__)
            self.reference(bound, cond)
            return bound
        return value

    def reference(self, bound: _Bound, cond: frozenset[str]) -> None:
        """A generated SDK method referenced (called now or passed to sdk_no_wait / a poller)."""
        func = bound.func
        if sdk_ops(func):
            self.i.record_method(bound.owner, func, cond, self.depth)

    def instance_attr(self, cls: type, name: str, cond: frozenset[str]) -> Any:
        """``self.<name>`` of an instance: the value its ``__init__`` (any class in the MRO) assigns."""
        for klass in cls.__mro__:
            init = vars(klass).get("__init__")
            tree = _tree(init) if init is not None and inspect.isfunction(init) else None
            if tree is None:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Attribute) and t.attr == name and isinstance(t.value, ast.Name) and t.value.id == "self"
                    for t in node.targets
                ):
                    sub = _Frame(self.i, init, {"self": _Inst(cls)}, self.depth + 1, False, set())
                    for stmt in tree.body:
                        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                            sub.imports(stmt)
                    return sub.expr(node.value, cond)
        return _UNKNOWN

    def call(self, e: ast.Call, cond: frozenset[str]) -> Any:
        func = self.expr(e.func, cond)
        args = [self.expr(a.value if isinstance(a, ast.Starred) else a, cond) for a in e.args]
        kwargs = {k.arg: self.expr(k.value, cond) for k in e.keywords if k.arg}
        for k in e.keywords:
            if not k.arg:
                self.expr(k.value, cond)
        attr_name = e.func.attr if isinstance(e.func, ast.Attribute) else getattr(e.func, "id", "")
        if func is _UNKNOWN:
            client_like = isinstance(e.func, ast.Attribute) and _client_like(e.func.value)
            if attr_name.startswith("begin_") or (client_like and _MUTATING_NAME.match(attr_name)):
                self.i.effects.add_unresolved(attr_name, cond)
            elif client_like and _READ_NAME.match(attr_name):
                self.i.effects.add_unresolved("read:" + attr_name, cond)
            return _UNKNOWN
        # callables passed as arguments (sdk_no_wait(no_wait, client.begin_x, ...)) were recorded
        # when referenced; a local function passed along is analysed as if called
        for a in args:
            if inspect.isfunction(a) and _analysable(a):
                self.i.run(a, {}, cond, self.depth + 1)
        if isinstance(func, _Bound):
            effect = _LOCAL_METHOD_EFFECTS.get((getattr(func.func, "__module__", ""), getattr(func.func, "__qualname__", "")))
            if effect:
                self.i.effects.add_local(effect, cond)
                return _UNKNOWN
            if sdk_ops(func.func):
                return _UNKNOWN  # recorded by reference
            if _analysable(func.func):
                params = _params(func.func)
                bindings = {"self": func.owner} if params[:1] == ["self"] else {}
                bindings.update(_bind_args(params[1:] if bindings else params, args, kwargs))
                return self.i.run(func.func, bindings, cond, self.depth + 1)
            return _UNKNOWN
        if inspect.isclass(func):
            return self.construct(func, args, kwargs, cond)
        if inspect.ismodule(func):
            return _UNKNOWN
        if func is getattr and len(args) >= 2 and isinstance(args[1], str):
            return self.attribute(args[0], args[1], cond)  # getattr(client.web_apps, operation_name)
        module = getattr(func, "__module__", "") or ""
        name = getattr(func, "__name__", "")
        effect = _LOCAL_EFFECTS.get((module, name))
        if effect is None and module.split(".")[0] in _EFFECT_MODULE_PREFIXES:
            effect = _EFFECT_MODULE_PREFIXES[module.split(".")[0]]
        if name == "open" and func is builtins.open:
            mode = args[1] if len(args) > 1 else kwargs.get("mode", "r")
            effect = "file-write" if isinstance(mode, str) and any(c in mode for c in "wax+") else ""
        if effect is not None:
            if effect:
                self.i.effects.add_local(effect, cond)
            return _UNKNOWN
        if (module, name) in _PURE or name == "import_aaz_by_profile" or _is_factory(func):
            value = self.i.call_factory(func, [self.i.concrete(a) for a in args], {k: self.i.concrete(v) for k, v in kwargs.items()})
            if value is _UNKNOWN and inspect.isfunction(func) and _analysable_factory(func):
                # a factory that needs real arguments (a storage account name): read what it returns
                return self.i.run(func, _bind_args(_params(func), args, kwargs), cond, self.depth + 1)
            return value
        if inspect.isfunction(func) and _analysable(func):
            params = _params(func)
            return self.i.run(func, _bind_args(params, args, kwargs), cond, self.depth + 1)
        if inspect.ismethod(func) and _analysable(func.__func__):
            return self.i.run(func.__func__, {}, cond, self.depth + 1)
        return _UNKNOWN

    def construct(self, cls: type, args: list[Any], kwargs: dict[str, Any], cond: frozenset[str]) -> Any:
        from azure.cli.core.aaz import AAZCommand

        if issubclass(cls, AAZCommand):
            self.i.record_aaz(cls, cond)
            return _Inst(cls)
        module = cls.__module__ or ""
        if module.startswith("azure.") and not module.startswith(("azure.core", "azure.cli.core")):
            init = vars(cls).get("__init__")
            if init is not None and inspect.isfunction(init) and _analysable(init):
                params = _params(init)
                self.i.run(init, {"self": _Inst(cls), **_bind_args(params[1:], args, kwargs)}, cond, self.depth + 1)
        return _Inst(cls)


def _client_like(node: ast.expr) -> bool:
    """A receiver whose name says it is a service client (``client``, ``x_client``, ``ops``)."""
    text = ast.unparse(node).lower()
    return "client" in text or text.endswith(("_ops", "operations"))


def _params(fn: Any) -> list[str]:
    tree = _tree(fn)
    return [a.arg for a in tree.args.args] if tree is not None else []


def _bind_args(params: list[str], args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    out = dict(zip(params, args, strict=False))
    out.update({k: v for k, v in kwargs.items() if k in params})
    return out


def analyse_function(cli: Any, fn: Any, bindings: dict[str, Any]) -> Effects:
    """Everything ``fn`` (a command's handler function) may call, with its guard parameters."""
    interp = _Interp(cli)
    interp.run(fn, bindings, frozenset(), 0, top=True)
    return interp.effects


def factory_result(cli: Any, factory: Any) -> Any:
    """What a command's client factory returns: called for real, else read by the interpreter
    (data-plane factories need an account name: their return expression still names the client class)."""
    try:
        return factory(cli, {})
    except Exception:  # noqa: BLE001
        pass
    if not inspect.isfunction(factory):
        return None
    interp = _Interp(cli)
    params = _params(factory)
    value = interp.run(factory, {params[0]: cli} if params else {}, frozenset(), 0, top=False)
    return None if value is _UNKNOWN else value


def cmd_binding(cli: Any) -> Any:
    """The value a command function receives as ``cmd``: something with ``cli_ctx``."""

    class _Cmd:
        cli_ctx = cli

        def get_models(self, *_: Any, **__: Any) -> Any:
            return None

    return _Cmd()
