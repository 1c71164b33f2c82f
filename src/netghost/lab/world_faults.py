"""Shared pieces of the scenario schema: the base model, field checks, and the two fault models.

:class:`NetworkFault` is the one fault a world's traffic suffers (config- or data-plane);
:class:`CloudFaultSpec` is a failure of the Azure API itself (see :mod:`netghost.lab.faults`).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CLOUD_FAULT_KINDS",
    "NETWORK_FAULT_TYPES",
    "CloudFaultSpec",
    "LabModel",
    "NetworkFault",
    "check_ip",
    "check_name",
    "check_network",
    "is_ip",
]

NetworkFaultType = Literal[
    "nsg-deny",
    "udr-dead-appliance",
    "service-down",
    "dns-nxdomain",
    "dns-private-zone-not-linked",
    "pmtu-blackhole",
    "path-packet-loss",
    "middlebox-rst",
    "peering-disconnected",
]
# The tuple (argparse choices, membership checks) is derived so the two lists cannot drift apart.
NETWORK_FAULT_TYPES: tuple[str, ...] = get_args(NetworkFaultType)

CloudFaultKind = Literal[
    "extension-missing",
    "no-network-watcher",
    "container-missing",
    "storage-auth-failure",
    "capture-error",
    "poll-transient",
    "blob-late",
    "download-failure",
    "capture-name-conflict",
    "capture-quota",
]
CLOUD_FAULT_KINDS: tuple[str, ...] = get_args(CloudFaultKind)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,79}$")


class LabModel(BaseModel):
    """Every scenario model forbids unknown fields: a typo must fail, not build another world."""

    model_config = ConfigDict(extra="forbid")


def check_name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(f"{value!r} is not a valid Azure resource name (1-80 of [A-Za-z0-9_.-])")
    return value


def check_network(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a CIDR prefix: {exc}") from exc
    return value


def is_ip(value: str) -> bool:
    """The yes/no form of :func:`check_ip`, for code that branches on "IP or name?" instead of rejecting."""
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True


def check_ip(value: str) -> str:
    try:
        ipaddress.IPv4Address(value)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an IPv4 address") from exc
    return value


class NetworkFault(LabModel):
    """The one injected network fault; ``flow`` names the traffic it breaks.

    ``params`` carry data-plane parameters config cannot show: ``path_mtu``, ``at`` and
    ``icmp_filtered`` (pmtu-blackhole); ``loss_rate``, ``between`` and ``at`` (path-packet-loss);
    ``injector_ip`` and ``idle_timeout_s`` (middlebox-rst).
    """

    type: NetworkFaultType
    flow: str
    params: dict[str, float | int | str | list[str]] = Field(default_factory=dict)


class CloudFaultSpec(LabModel):
    """A failure of the cloud API itself (not of the network), see :mod:`netghost.lab.faults`."""

    kind: CloudFaultKind
    vm: str | None = None
    region: str | None = None
    count: int = Field(default=1, ge=1, description="poll-transient / download-failure: failures before success")
    delay_s: float = Field(default=20.0, ge=0, description="blob-late: lab seconds after Stop before the blob shows")
    limit: int = Field(default=1, ge=0, description="capture-quota: concurrent captures allowed per region")
    error: str | None = Field(default=None, description="capture-error: packetCaptureError value")
    account: str | None = Field(default=None, description="storage faults: the account (default: all)")
    container: str | None = Field(default=None, description="container-missing: the container removed")
    message: str | None = Field(default=None, description="override the lab's default error text")
