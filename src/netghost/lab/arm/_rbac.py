"""Role-based access control for lab ARM: a role definition's permissions checked on every request.

A role is Azure's own JSON, either the ``az role definition create`` form (``Actions``,
``NotActions``, ``DataActions``, ``NotDataActions`` at the top) or ARM's roleDefinition resource
(``properties.permissions[]`` with camel-cased lists); several permission blocks add up. An action is
granted when some ``actions`` pattern matches it and no ``notActions`` pattern does (data actions the
same with the data lists); patterns match whole action strings, without regard to case, ``*`` standing
for any run of characters (``Microsoft.Network/*/read``), as Azure evaluates them.

Enforcement is pluggable: lab ARM asks :func:`load_role` for the role installed in the lab state
(``<state>/arm/role.json``, :func:`install_role`; re-read when the file changes) and checks each route's
action against it; without a file every action is granted, and the world's own ``denied_*`` settings
(which the simulator enforces) still apply. A refused control-plane action is ARM's 403
``AuthorizationFailed``; a refused data action is Blob's 403 ``AuthorizationPermissionMismatch``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from netghost.errors import LabError

__all__ = ["ROLE_FILE", "RoleDefinition", "install_role", "load_role"]

ROLE_FILE = "role.json"


@cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(part) for part in text.split("*")) + "$", re.I)


def _matches(patterns: Iterable[str], action: str) -> bool:
    return any(_pattern(p).match(action) for p in patterns)


@dataclass(frozen=True)
class RoleDefinition:
    """The permissions of one role (all its permission blocks merged)."""

    name: str
    actions: tuple[str, ...] = ()
    not_actions: tuple[str, ...] = ()
    data_actions: tuple[str, ...] = ()
    not_data_actions: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RoleDefinition:
        """Read Azure's role JSON (CLI form or ARM resource form).

        Raises:
            LabError: the document holds no permissions, or a list is not a list of strings.
        """
        props = data.get("properties") if isinstance(data.get("properties"), Mapping) else data
        assert isinstance(props, Mapping)
        blocks: list[Mapping[str, Any]] = [p for p in props.get("permissions") or [] if isinstance(p, Mapping)]
        if not blocks:
            blocks = [props]
        lists: dict[str, list[str]] = {"actions": [], "notActions": [], "dataActions": [], "notDataActions": []}
        for block in blocks:
            for key in lists:
                value = block.get(key, block.get(key[0].upper() + key[1:], []))
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise LabError(f"role definition: {key} must be a list of action strings")
                lists[key] += value
        if not any(lists.values()):
            raise LabError("role definition grants nothing: no Actions or DataActions")
        name = str(props.get("roleName") or data.get("Name") or data.get("name") or "custom role")
        return cls(name, tuple(lists["actions"]), tuple(lists["notActions"]), tuple(lists["dataActions"]),
                   tuple(lists["notDataActions"]))

    def allows(self, action: str) -> bool:
        """Is the control-plane ``action`` granted?"""
        return _matches(self.actions, action) and not _matches(self.not_actions, action)

    def allows_data(self, action: str) -> bool:
        """Is the data-plane ``action`` granted?"""
        return _matches(self.data_actions, action) and not _matches(self.not_data_actions, action)


_CACHE: dict[Path, tuple[int, RoleDefinition | None]] = {}


def install_role(arm_dir: Path, role: Mapping[str, Any] | None) -> None:
    """Enforce ``role`` on every later request to this lab's ARM (None: grant everything again).

    Raises:
        LabError: the role does not parse.
    """
    path = arm_dir / ROLE_FILE
    if role is None:
        path.unlink(missing_ok=True)
        return
    RoleDefinition.from_json(role)  # refuse a bad role before it is installed
    arm_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(role, indent=1), encoding="utf-8")
    tmp.replace(path)


def load_role(arm_dir: Path) -> RoleDefinition | None:
    """The role installed for this lab's ARM, or None (re-read when the file changed).

    Raises:
        LabError: the installed file does not parse.
    """
    path = arm_dir / ROLE_FILE
    try:
        stamp = path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LabError(f"role definition {path} does not parse: {exc}", path=path) from exc
    if not isinstance(data, Mapping):
        raise LabError(f"role definition {path} is not a JSON object", path=path)
    role = RoleDefinition.from_json(data)
    _CACHE[path] = (stamp, role)
    return role
