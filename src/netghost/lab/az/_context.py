"""What every simulated command shares: the invocation context and the command registry.

A command module declares ``COMMANDS``: a list of :class:`Command` (spec, handler and optional
table transformer). A handler takes ``(ctx, args)`` and returns the result object az would print
(``None`` prints nothing) or raises :class:`~netghost.errors.AzError`.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from netghost.lab.az._args import CommandSpec, ParsedArgs
from netghost.lab.az._errors import AzError, arm_error, not_found
from netghost.lab.clock import LabClock, format_azure_time
from netghost.lab.state import LabState
from netghost.lab.world import Vm, World

__all__ = ["AzContext", "Command", "Handler", "find_vm", "id_parts", "int_arg", "ipv4_arg", "require_rg"]


@dataclass
class AzContext:
    """One ``az`` invocation: the lab state (locked), its world, the clock, the environment."""

    state: LabState
    world: World
    clock: LabClock
    env: Mapping[str, str]
    warnings: list[str] = field(default_factory=list)
    cwd: str = ""
    """The caller's working directory: a resident lab serves callers elsewhere ("" is this process's)."""
    umask: int | None = None
    """The caller's umask for files a command creates (None: this process's)."""

    def now(self) -> float:
        return self.clock.now()

    def now_text(self) -> str:
        return format_azure_time(self.now())

    def write_file(self, path: str, body: bytes) -> None:
        """Write ``body`` where the caller's az would: ``path`` relative to the caller's directory; a new
        file gets ``0o666 & ~umask`` (the caller's umask), an existing one keeps its mode, as
        ``open(path, "wb")`` in the caller's process would.

        Raises:
            OSError: the file cannot be written.
        """
        target = os.path.join(self.cwd, path) if self.cwd else path
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            created = True
        except FileExistsError:
            fd = os.open(target, os.O_WRONLY | os.O_TRUNC)
            created = False
        with os.fdopen(fd, "wb") as handle:
            if created and self.umask is not None:
                os.fchmod(fd, 0o666 & ~self.umask)
            handle.write(body)

    def warn(self, text: str) -> None:
        """A ``WARNING:`` block on stderr (suppressed by ``--only-show-errors``)."""
        self.warnings.append(text)

    def check_action(self, action: str, scope: str) -> None:
        """Raise AuthorizationFailed when the world's identity lacks ``action``."""
        sub = self.world.spec.subscription
        if action in sub.denied_actions or any(scope.endswith(s) for s in sub.denied_scopes):
            raise authorization_failed(self.world, action, scope)


Handler = Callable[[AzContext, ParsedArgs], Any]


@dataclass(frozen=True)
class Command:
    spec: CommandSpec
    handler: Handler
    table: Callable[[Any], list[dict[str, Any]]] | None = None


def authorization_failed(world: World, action: str, scope: str) -> AzError:
    sub = world.spec.subscription
    return arm_error(
        "AuthorizationFailed",
        f"The client '{sub.user}' with object id '{sub.object_id}' does not have authorization to perform "
        f"action '{action}' over scope '{scope}' or the scope is invalid. If access was recently granted, "
        "please refresh your credentials.",
    )


def id_parts(resource_id: str, min_parts: int = 9) -> list[str]:
    """Split an ARM id (``/subscriptions/S/resourceGroups/RG/providers/NS/TYPE/NAME...``).

    Raises:
        AzError: exit 2, as az's ``--ids`` validation does, when the id is not of that form.
    """
    parts = resource_id.rstrip("/").split("/")
    if (len(parts) < min_parts or parts[1].lower() != "subscriptions" or parts[3].lower() != "resourcegroups"
            or parts[5].lower() != "providers"):
        raise AzError(2, f"ERROR: invalid resource ID: {resource_id}\n")
    return parts


def ipv4_arg(value: str, flag: str) -> str:
    """Validate an IPv4 argument (the service rejects anything else with a 400)."""
    try:
        ipaddress.IPv4Address(value)
    except ValueError as exc:
        raise arm_error("InvalidRequestFormat", f"Cannot parse the request: {flag} '{value}' is not a valid IPv4 "
                        "address.", 1) from exc
    return value


def int_arg(value: str, flag: str, low: int = 0, high: int = 65535) -> int:
    """An integer argument in ``[low, high]``, else az's usage error (exit 2)."""
    try:
        number = int(value)
    except ValueError as exc:
        raise AzError(2, f"ERROR: argument {flag}: invalid int value: '{value}'\n") from exc
    if not low <= number <= high:
        raise AzError(2, f"ERROR: argument {flag}: {value} is not in the range {low}..{high}\n")
    return number


def require_rg(ctx: AzContext, rg: str, action: str = "", scope: str = "") -> None:
    """The resource-group checks ARM makes before it looks for the resource itself."""
    if rg.lower() in (g.lower() for g in ctx.world.spec.subscription.denied_resource_groups):
        raise authorization_failed(ctx.world, action, scope)
    if not ctx.world.has_rg(rg):
        raise arm_error("ResourceGroupNotFound", f"Resource group '{rg}' could not be found.")


def find_vm(ctx: AzContext, rg: str | None, name_or_id: str) -> Vm:
    """Resolve ``--vm NAME -g RG`` or a full VM id as az does (404 when missing).

    Raises:
        AzError: ResourceGroupNotFound / ResourceNotFound (exit 3) or AuthorizationFailed (exit 1).
    """
    if name_or_id.startswith("/subscriptions/"):
        parts = id_parts(name_or_id)  # a malformed id is az's "invalid resource ID" (exit 2)
        # az takes the id's top-level name: a scale-set instance's id names the scale set
        # (azure.mgmt.core's parse_resource_id), and no virtualMachines resource has that name
        rg, name = parts[4], parts[8]
    else:
        name = name_or_id
    if rg is None:
        raise AzError(2, "ERROR: usage error: --resource-group is required when --vm is a name, not an ID\n")
    scope = ctx.world.rid(rg, "Microsoft.Compute/virtualMachines", name)
    require_rg(ctx, rg, "Microsoft.Compute/virtualMachines/read", scope)
    vm = ctx.world.vm(name)
    # a uniform scale set's instances are not virtualMachines resources: `vm show` cannot see them
    if vm is None or (vm.scale_set is not None and not ctx.world.is_flexible_instance(vm)) \
            or vm.resource_group.lower() != rg.lower():
        raise not_found(f"Microsoft.Compute/virtualMachines/{name}", rg)
    return vm
