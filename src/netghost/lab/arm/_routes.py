"""The route table's vocabulary: a request matched to a route, and what a handler may answer.

A :class:`Route` is a method, a path template and the RBAC action the request needs
(``Microsoft.Network/networkInterfaces/read``); templates spell ARM paths with two prefixes
(``RG/`` for ``/subscriptions/{sub}/resourceGroups/{rg}/providers/``, ``SUB/`` for
``/subscriptions/{sub}/providers/``) and ``{name}`` for one path segment, matched without regard to
case as ARM does. A handler gets a :class:`Call` and returns a JSON value (200), an :class:`Lro` (a
long-running operation: 201/202 and the polling headers the CLI follows) or an
:class:`~netghost.lab.arm._http.HttpResponse`, or raises :class:`~netghost.lab.arm._rest.ArmFailure`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from netghost.errors import ArmFailure
from netghost.lab.arm._http import HttpRequest
from netghost.lab.arm._sim import Simulator

__all__ = ["Call", "Handler", "Lro", "Route", "compile_template", "listing"]


@dataclass
class Call:
    """One matched request: the request, the template's named segments, the simulator."""

    req: HttpRequest
    seg: dict[str, str]
    sim: Simulator

    @property
    def rg(self) -> str:
        return self.seg["rg"]

    def json_body(self) -> dict[str, Any]:
        """The request's JSON object body.

        Raises:
            ArmFailure: 400 InvalidRequestContent when it is not a JSON object.
        """
        try:
            data = json.loads(self.req.body or b"{}")
        except json.JSONDecodeError as exc:
            raise ArmFailure(400, "InvalidRequestContent", f"The request content was invalid: {exc}") from exc
        if not isinstance(data, dict):
            raise ArmFailure(400, "InvalidRequestContent", "The request content was invalid: not an object")
        return data

    @property
    def resource_id(self) -> str:
        """The ARM id the request addresses (its path, as sent)."""
        return self.req.path.rstrip("/")


@dataclass
class Lro:
    """A long-running operation whose outcome is already known.

    Attributes:
        result: the final body (served by the ``Location`` URL; None: 204 there).
        status: the initial status (202 for actions and deletes, 201 for a PUT that created).
        initial: the initial body (a PUT answers the resource as ``Updating``).
        location: the region in the operation URLs.
    """

    result: Any = None
    status: int = 202
    initial: Any = None
    location: str = "eastus"


Handler = Callable[[Call], Any]


@dataclass(frozen=True)
class Route:
    """``method`` + ``pattern`` (compiled from a template) -> ``handler``, needing ``action``."""

    method: str
    pattern: re.Pattern[str]
    action: str
    handler: Handler
    data_action: bool = field(default=False)


_PREFIXES = {"RG/": "/subscriptions/{sub}/resourceGroups/{rg}/providers/", "SUB/": "/subscriptions/{sub}/providers/"}


def compile_template(template: str) -> re.Pattern[str]:
    """``RG/Microsoft.Network/networkInterfaces/{nic}`` -> a case-insensitive full-path regex."""
    for short, long in _PREFIXES.items():
        if template.startswith(short):
            template = long + template[len(short):]
    parts = re.split(r"(\{\w+\})", template)
    regex = "".join(f"(?P<{p[1:-1]}>[^/]+)" if p.startswith("{") else re.escape(p) for p in parts)
    return re.compile(f"^{regex}/?$", re.I)


def listing(items: Any) -> dict[str, Any]:
    """ARM's list envelope (one page: the lab never pages)."""
    return {"value": list(items or [])}
