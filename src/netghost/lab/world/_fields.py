"""The base of every scenario model and the field checks the models share.

Kept at the bottom of :mod:`netghost.lab.world` so the resource models, the fault declarations
and the probe shims (which branch on "IP or name?") all use one definition.
"""

from __future__ import annotations

import ipaddress
import re

from pydantic import BaseModel, ConfigDict

__all__ = ["LabModel", "check_ip", "check_name", "check_network", "is_ip"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,79}$")


class LabModel(BaseModel):
    """Every scenario model forbids unknown fields: a typo must fail, not build another world."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # built on first use: faster shim start


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
