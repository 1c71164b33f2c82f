"""Network Watcher routes: the watchers, their diagnostic actions and the packet-capture lifecycle.

The diagnostics are POST actions on the regional watcher answered as long-running operations
(``ipFlowVerify``, ``nextHop``, ``connectivityCheck``, ``topology``, ``securityGroupView``); their bodies
name the VM by id, which the simulator's commands accept as ``--vm``. A packet capture is a PUT
(201 + ``Azure-AsyncOperation``, then the CLI GETs it: the simulator's ``create`` already waited, as
az does), ``queryStatus`` and ``stop`` are POST operations, ``DELETE`` is one too; the watcher's region
is the ``-l`` the simulator's verbs take.
"""

from __future__ import annotations

import json
from typing import Any

from netghost.errors import ArmFailure
from netghost.lab.arm import _shapes as shape
from netghost.lab.arm._rest import strip_resource_groups, to_rest
from netghost.lab.arm._routes import Call, Lro, Route, compile_template, listing

__all__ = ["ROUTES"]

_W = "Microsoft.Network/networkWatchers"


def _watchers(c: Call) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = c.sim.run(["network", "watcher", "list"])
    return docs


def _watcher_list(c: Call) -> Any:
    docs = [d for d in _watchers(c) if "rg" not in c.seg or d["resourceGroup"].lower() == c.rg.lower()]
    return listing(to_rest(docs, shape.WATCHER))


def _watcher(c: Call) -> dict[str, Any]:
    """The watcher the path names (404 as ARM words it when the region has none or it is unknown)."""
    for doc in _watchers(c):
        if doc["name"].lower() == c.seg["watcher"].lower() and doc["resourceGroup"].lower() == c.rg.lower():
            return doc
    raise ArmFailure(404, "ResourceNotFound",
                     f"The Resource '{_W}/{c.seg['watcher']}' under resource group '{c.rg}' was not found. "
                     "For more details please go to https://aka.ms/ARMResourceNotFoundFix")


def _watcher_get(c: Call) -> Any:
    return to_rest(_watcher(c), shape.WATCHER)


def _target_rg(resource_id: str) -> str:
    parts = resource_id.split("/")
    if len(parts) < 9 or parts[3].lower() != "resourcegroups":
        raise ArmFailure(400, "InvalidResourceId", f"Resource id '{resource_id}' is invalid.")
    return parts[4]


def _require(body: dict[str, Any], *keys: str) -> None:
    for key in keys:
        if body.get(key) in (None, ""):
            raise ArmFailure(400, "InvalidRequestFormat", f"Cannot parse the request: '{key}' is required.")


def _ip_flow(c: Call) -> Any:
    watcher = _watcher(c)
    body = c.json_body()
    _require(body, "targetResourceId", "direction", "protocol", "localIPAddress", "remoteIPAddress")
    target = str(body["targetResourceId"])
    argv = ["network", "watcher", "test-ip-flow", "-g", _target_rg(target), "--vm", target,
            "--direction", str(body["direction"]), "--protocol", str(body["protocol"]).upper(),
            "--local", f"{body['localIPAddress']}:{body.get('localPort') or '*'}",
            "--remote", f"{body['remoteIPAddress']}:{body.get('remotePort') or '*'}"]
    if body.get("targetNicResourceId"):
        argv += ["--nic", str(body["targetNicResourceId"])]
    return Lro(strip_resource_groups(c.sim.run(argv)), location=watcher["location"])


def _next_hop(c: Call) -> Any:
    watcher = _watcher(c)
    body = c.json_body()
    _require(body, "targetResourceId", "sourceIPAddress", "destinationIPAddress")
    target = str(body["targetResourceId"])
    argv = ["network", "watcher", "show-next-hop", "-g", _target_rg(target), "--vm", target,
            "--source-ip", str(body["sourceIPAddress"]), "--dest-ip", str(body["destinationIPAddress"])]
    if body.get("targetNicResourceId"):
        argv += ["--nic", str(body["targetNicResourceId"])]
    return Lro(strip_resource_groups(c.sim.run(argv)), location=watcher["location"])


def _connectivity(c: Call) -> Any:
    watcher = _watcher(c)
    body = c.json_body()
    source = body.get("source") or {}
    dest = body.get("destination") or {}
    if not source.get("resourceId"):
        raise ArmFailure(400, "InvalidRequestFormat", "Cannot parse the request: 'source.resourceId' is required.")
    target = str(source["resourceId"])
    argv = ["network", "watcher", "test-connectivity", "-g", _target_rg(target), "--source-resource", target]
    if dest.get("resourceId"):
        argv += ["--dest-resource", str(dest["resourceId"])]
    elif dest.get("address"):
        argv += ["--dest-address", str(dest["address"])]
    if dest.get("port") is not None:
        argv += ["--dest-port", str(dest["port"])]
    if body.get("protocol"):
        argv += ["--protocol", str(body["protocol"])]
    return Lro(strip_resource_groups(c.sim.run(argv)), location=watcher["location"])


def _topology(c: Call) -> Any:
    watcher = _watcher(c)
    body = c.json_body()
    argv = ["network", "watcher", "show-topology", "-l", watcher["location"]]
    if body.get("targetResourceGroupName"):
        argv += ["-g", str(body["targetResourceGroupName"])]
    if (body.get("targetVirtualNetwork") or {}).get("id"):
        argv += ["--vnet", str(body["targetVirtualNetwork"]["id"])]
    if (body.get("targetSubnet") or {}).get("id"):
        argv += ["--subnet", str(body["targetSubnet"]["id"])]
    return strip_resource_groups(c.sim.run(argv))


def _security_group_view(c: Call) -> Any:
    watcher = _watcher(c)
    body = c.json_body()
    _require(body, "targetResourceId")
    target = str(body["targetResourceId"])
    argv = ["network", "watcher", "show-security-group-view", "-g", _target_rg(target), "--vm", target]
    return Lro(to_rest(c.sim.run(argv), shape.SECURITY_GROUP_VIEW), location=watcher["location"])


# ---- packet captures ---------------------------------------------------------------------------
def _capture_args(c: Call) -> list[str]:
    return ["-l", _watcher(c)["location"], "-n", c.seg["capture"]]


def _capture_create(c: Call) -> Any:
    watcher = _watcher(c)
    props = c.json_body().get("properties") or {}
    target = str(props.get("target") or "")
    if not target:
        raise ArmFailure(400, "InvalidRequestFormat", "Cannot parse the request: 'target' is required.")
    argv = ["network", "watcher", "packet-capture", "create", "-g", _target_rg(target), "-n", c.seg["capture"]]
    if (props.get("targetType") or "AzureVM") == "AzureVMSS":
        argv += ["--target-type", "AzureVMSS", "--target", target]
        scope = props.get("scope") or {}
        if scope.get("include"):
            argv += ["--include", *[str(i) for i in scope["include"]]]
        if scope.get("exclude"):
            argv += ["--exclude", *[str(i) for i in scope["exclude"]]]
    else:
        argv += ["--vm", target]
    storage = props.get("storageLocation") or {}
    if storage.get("storageId"):
        argv += ["--storage-account", str(storage["storageId"])]
    if storage.get("storagePath"):
        argv += ["--storage-path", str(storage["storagePath"])]
    if storage.get("filePath"):
        argv += ["--file-path", str(storage["filePath"])]
    for key, flag in (("timeLimitInSeconds", "--time-limit"), ("totalBytesPerSession", "--capture-limit"),
                      ("bytesToCapturePerPacket", "--capture-size")):
        if props.get(key) is not None:
            argv += [flag, str(props[key])]
    if props.get("filters"):
        argv += ["--filters", json.dumps(props["filters"])]
    doc = c.sim.run(argv)
    initial = to_rest({**doc, "provisioningState": "Updating"}, shape.PACKET_CAPTURE)
    return Lro(None, status=201, initial=initial, location=watcher["location"])


def _capture_get(c: Call) -> Any:
    return to_rest(c.sim.run(["network", "watcher", "packet-capture", "show", *_capture_args(c)]), shape.PACKET_CAPTURE)


def _capture_list(c: Call) -> Any:
    docs = c.sim.run(["network", "watcher", "packet-capture", "list", "-l", _watcher(c)["location"]])
    return listing(to_rest(docs, shape.PACKET_CAPTURE))


def _capture_status(c: Call) -> Any:
    args = _capture_args(c)
    doc = c.sim.run(["network", "watcher", "packet-capture", "show-status", *args])
    return Lro(strip_resource_groups(doc), location=args[1])


def _capture_stop(c: Call) -> Any:
    args = _capture_args(c)
    c.sim.run(["network", "watcher", "packet-capture", "stop", *args])
    return Lro(None, location=args[1])


def _capture_delete(c: Call) -> Any:
    args = _capture_args(c)
    c.sim.run(["network", "watcher", "packet-capture", "delete", *args])
    return Lro(None, location=args[1])


def _r(method: str, template: str, action: str, handler: Any) -> Route:
    return Route(method, compile_template(template), action, handler)


_PC = f"RG/{_W}/{{watcher}}/packetCaptures"
ROUTES = [
    _r("GET", f"SUB/{_W}", f"{_W}/read", _watcher_list),
    _r("GET", f"RG/{_W}", f"{_W}/read", _watcher_list),
    _r("GET", f"RG/{_W}/{{watcher}}", f"{_W}/read", _watcher_get),
    _r("POST", f"RG/{_W}/{{watcher}}/ipFlowVerify", f"{_W}/ipFlowVerify/action", _ip_flow),
    _r("POST", f"RG/{_W}/{{watcher}}/nextHop", f"{_W}/nextHop/action", _next_hop),
    _r("POST", f"RG/{_W}/{{watcher}}/connectivityCheck", f"{_W}/connectivityCheck/action", _connectivity),
    _r("POST", f"RG/{_W}/{{watcher}}/topology", f"{_W}/topology/action", _topology),
    _r("POST", f"RG/{_W}/{{watcher}}/securityGroupView", f"{_W}/securityGroupView/action", _security_group_view),
    _r("GET", _PC, f"{_W}/packetCaptures/read", _capture_list),
    _r("PUT", f"{_PC}/{{capture}}", f"{_W}/packetCaptures/write", _capture_create),
    _r("GET", f"{_PC}/{{capture}}", f"{_W}/packetCaptures/read", _capture_get),
    _r("DELETE", f"{_PC}/{{capture}}", f"{_W}/packetCaptures/delete", _capture_delete),
    _r("POST", f"{_PC}/{{capture}}/queryStatus", f"{_W}/packetCaptures/queryStatus/action", _capture_status),
    _r("POST", f"{_PC}/{{capture}}/stop", f"{_W}/packetCaptures/stop/action", _capture_stop),
]
