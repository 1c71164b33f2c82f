"""From what the simulator prints to what ARM sends: REST bodies and ARM errors.

The simulator's documents are az's *output*: the CLI took ARM's JSON, moved each resource's
``properties`` up a level (AAZ's client flattening, or the SDK models' ``properties.x`` attribute
maps), added ``resourceGroup`` to every object with an ARM ``id`` (``azure.cli.core.commands.transform``),
and renamed the few properties that collide with envelope names (an extension's ``properties.type``
prints as ``typePropertiesType``). :func:`to_rest` undoes exactly that, guided by a :class:`Shape` per
resource type, so lab ARM serves the simulator's own answers (one model, not two) and the real CLI, by
flattening them again, must print what the simulator prints: the differential test checks it.

:func:`arm_failure` turns the simulator's error text back into the status, code and message ARM sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from netghost.errors import ArmFailure

__all__ = ["ENVELOPE", "FLAT", "Shape", "arm_failure", "strip_resource_groups", "to_rest"]

ENVELOPE = frozenset({"id", "name", "type", "etag", "location", "tags", "sku", "kind", "zones", "identity", "plan",
                      "extendedLocation", "managedBy", "systemData"})
"""Top-level keys of an ARM resource; everything else lives under ``properties``."""


@dataclass(frozen=True)
class Shape:
    """How one resource type sits in ARM's JSON.

    Attributes:
        envelope: keys kept beside ``properties``.
        children: dotted paths (below ``properties``) of sub-resources that have their own
            ``properties`` (``securityRules``), each with its shape; a path names a list or an object.
        renames: flattened key -> its key inside ``properties`` (``typePropertiesType`` -> ``type``), or in
            the document itself when it is ``flat``.
        flat: the document has no ``properties`` of its own (results of POST actions, references); its
            ``children`` paths are then taken from the document's top.
    """

    envelope: frozenset[str] = ENVELOPE
    children: Mapping[str, Shape] = field(default_factory=dict)
    renames: Mapping[str, str] = field(default_factory=dict)
    flat: bool = False


FLAT = Shape(flat=True)


def _rg_of(resource_id: Any) -> str | None:
    """The group az's output transform derives from an id (``parts[4]`` when ``parts[3]`` is resourceGroups)."""
    if not isinstance(resource_id, str) or not resource_id:
        return None
    parts = resource_id.split("/")
    if len(parts) > 4 and parts[3].lower() == "resourcegroups":
        return parts[4]
    return None


def strip_resource_groups(value: Any) -> Any:
    """A deep copy without the ``resourceGroup`` keys az's output transform adds next to an ``id``."""
    if isinstance(value, list):
        return [strip_resource_groups(v) for v in value]
    if isinstance(value, dict):
        derived = _rg_of(value.get("id"))
        return {k: strip_resource_groups(v) for k, v in value.items()
                if not (k == "resourceGroup" and derived is not None and v == derived)}
    return value


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    return value


def to_rest(doc: Any, shape: Shape) -> Any:
    """The ARM JSON of a resource (or a list of them) that az prints as ``doc``.

    Null fields are left out, as ARM leaves out what is not set (the SDK-shaped commands print their
    models' every attribute, set or not: the nulls come back on the CLI's side).
    """
    if isinstance(doc, list):
        return [to_rest(d, shape) for d in doc]
    if not isinstance(doc, dict):
        return doc
    doc = _drop_nulls(strip_resource_groups(doc))
    if shape.flat:  # no envelope of its own (an action's result), but it may hold resources that have one
        doc = {shape.renames.get(k, k): v for k, v in doc.items()}
        for path, child in shape.children.items():
            _apply_child(doc, path.split("."), child)
        return doc
    top: dict[str, Any] = {}
    props: dict[str, Any] = {}
    for key, value in doc.items():
        if key in shape.envelope:
            top[key] = value
        else:
            props[shape.renames.get(key, key)] = value
    for path, child in shape.children.items():
        _apply_child(props, path.split("."), child)
    if props:
        top["properties"] = props
    return top


def _apply_child(node: Any, path: list[str], child: Shape) -> None:
    if not isinstance(node, dict) or path[0] not in node:
        return
    if len(path) > 1:
        value = node[path[0]]
        for item in value if isinstance(value, list) else [value]:
            _apply_child(item, path[1:], child)
        return
    node[path[0]] = to_rest(node[path[0]], child)


_ARM_FORM = re.compile(r"^ERROR: \((?P<code>[^)]+)\) (?P<message>.*?)(?:\nCode: .*)?$", re.S)
_STORAGE_FORM = re.compile(r"^ERROR: (?P<message>.*?)\nRequestId:.*\nErrorCode:(?P<code>\S+)\s*$", re.S)
_NOT_FOUND = {"ResourceNotFound", "ResourceGroupNotFound", "NotFound", "ParentResourceNotFound",
              "SubscriptionNotFound"}
_STATUS = {"AuthorizationFailed": 403, "LinkedAuthorizationFailed": 403, "InternalServerError": 500,
           "PacketCaptureSessionAlreadyExists": 409, "PacketCaptureQuotaExceeded": 409, "Conflict": 409,
           "InvalidRequestFormat": 400, "InvalidResourceType": 404}
_STORAGE_STATUS = {"BlobNotFound": 404, "ContainerNotFound": 404, "ResourceNotFound": 404, "InternalError": 500,
                   "KeyBasedAuthenticationNotPermitted": 403, "AuthorizationPermissionMismatch": 403,
                   "AuthorizationFailure": 403, "ContainerAlreadyExists": 409}
_RBAC_BLOCK = "You do not have the required permissions needed to perform this operation."


def arm_failure(exit_code: int, stderr: str) -> ArmFailure:
    """What ARM (or Blob) answered for a simulated failure printed as ``stderr`` with ``exit_code``.

    The three forms of ``netghost.lab.az._errors`` map back: ``(Code) Message`` to an ARM error whose status
    follows the code (404 for the not-found family, which is what makes az exit 3); the storage form to
    Blob's XML error; the RBAC block to Blob's ``AuthorizationPermissionMismatch``. Anything else is an error
    the real CLI makes up itself (usage, "network watcher is not enabled ..."): ``kind="client"``.
    """
    text = "".join(line + "\n" for line in stderr.splitlines() if not line.startswith("WARNING:")).strip()
    text = text[text.find("ERROR:"):] if "ERROR:" in text else text
    if _RBAC_BLOCK in text:
        return ArmFailure(403, "AuthorizationPermissionMismatch",
                          "This request is not authorized to perform this operation using this permission.",
                          "storage")
    match = _STORAGE_FORM.match(text)
    if match:
        code = match["code"]
        return ArmFailure(_STORAGE_STATUS.get(code, 404 if exit_code == 3 else 400), code, match["message"], "storage")
    match = _ARM_FORM.match(text)
    if match:
        code, message = match["code"], match["message"].strip()
        status = 404 if code in _NOT_FOUND or exit_code == 3 else _STATUS.get(code, 400)
        return ArmFailure(status, code, message)
    message = text.removeprefix("ERROR:").strip()
    return ArmFailure(404 if exit_code == 3 else 400, "BadRequest", message, "client")
