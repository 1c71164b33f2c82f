"""The new resource documents use only field names azure-cli 2.91's own output schemas declare.

azure-cli's AAZ commands carry their output schema as code (``_schema_on_200``: each field an ``AAZ*Type``
with its ``serialized_name``). The test reads those schema files of the installed real CLI (CI installs
exactly 2.91 and exports ``NETGHOST_REAL_AZ``), collects every field name they declare, and holds the lab's
``lb show``, ``nat gateway show``, ``public-ip show``, ``service-endpoint policy show`` and ``vnet subnet show``
documents to that vocabulary (an invented or misspelt field fails). The firewall's commands come from the
azure-firewall extension, which 2.91 does not ship; they are checked in test_edge_reads against the shapes the
extension's source declares.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab


def _aaz_root() -> Path | None:
    az = os.environ.get("NETGHOST_REAL_AZ")
    if not az:
        return None
    found = sorted(Path(az).resolve().parent.parent.glob(
        "lib/python3*/site-packages/azure/cli/command_modules/network/aaz/latest/network"))
    return found[0] if found else None


ROOT = _aaz_root()
_FIELD = re.compile(r"\.(\w+) = AAZ\w+\((?:[^()]|\([^()]*\))*?\)", re.S)


def _schema_names(path: Path) -> set[str]:
    """Every output field name an AAZ command file declares (serialized names where they differ)."""
    names = set()
    for match in _FIELD.finditer(path.read_text(encoding="utf-8")):
        serialized = re.search(r'serialized_name="([^"]+)"', match.group(0))
        names.add(serialized.group(1) if serialized else match.group(1))
    return names


def _keys(doc: Any, acc: set[str]) -> set[str]:
    if isinstance(doc, dict):
        for key, value in doc.items():
            acc.add(key)
            _keys(value, acc)
    elif isinstance(doc, list):
        for value in doc:
            _keys(value, acc)
    return acc


CASES = [
    ("lb-probe-unhealthy", "network lb show -g shop-rg -n ilb-catalog", "lb/_show.py"),
    ("healthy-edge-ping-blocked", "network nat gateway show -g noe-booking-rg -n ng-noe-api", "nat/gateway/_show.py"),
    ("healthy-edge-ping-blocked", "network public-ip show -g noe-hub-rg -n afw-noe-pip", "public_ip/_show.py"),
    ("storage-endpoint-policy", "network service-endpoint policy show -g wus-ml-rg -n sep-ml-approved",
     "service_endpoint/policy/_show.py"),
    ("storage-endpoint-policy", "network vnet subnet show -g wus-ml-rg --vnet-name vnet-wus-ml -n training",
     "vnet/subnet/_show.py"),
]


@pytest.mark.skipif(ROOT is None, reason="the real azure-cli 2.91 is not installed (NETGHOST_REAL_AZ)")
@pytest.mark.parametrize(("world", "command", "schema"), CASES, ids=[c[2] for c in CASES])
def test_fields_are_the_real_clis(make_lab: Callable[..., Lab], world: str, command: str, schema: str) -> None:
    assert ROOT is not None
    result = make_lab(world).az(command)
    assert result.code == 0, result.err
    ours = _keys(json.loads(result.out), set()) - {"resourceGroup"}  # az core adds it beside every id
    declared = _schema_names(ROOT / schema) | {"id", "name", "type", "etag", "location"}
    assert ours - declared == set()
    assert len(ours & declared) > 8  # the comparison really read a schema
