"""Lab ARM's dispatcher: which host plays what, authentication, RBAC, routes, long-running operations.

Hosts: ``management.azure.com`` (ARM), ``<account>.blob.core.windows.net`` for each storage account the
world holds (Blob), ``169.254.169.254`` (the VM's managed-identity endpoint). Every other host is one the
lab does not play: its ``CONNECT`` fails as an unresolvable name would (``azcliprod.blob.core.windows.net``,
which ``az login`` asks for the latest version, gets a quick 404 instead).

An ARM request needs a bearer token (401 ``AuthenticationFailed`` otherwise), names the world's
subscription (404 ``SubscriptionNotFound`` otherwise), passes the installed role's check (403
``AuthorizationFailed``) and is answered by its route; a GET of an id no route knows is answered as
``az resource show --ids`` would find it. Long-running operations answer 201/202 with
``Azure-AsyncOperation`` and ``Location`` URLs on ``.../providers/Microsoft.Network/locations/<region>/``;
their status is ``Succeeded`` at the first poll (the outcome was computed when the request came), so the
CLI never waits a polling interval.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from netghost.errors import ArmFailure, LabError
from netghost.lab.arm import _compute, _network, _storage, _watcher
from netghost.lab.arm._http import HttpRequest, HttpResponse
from netghost.lab.arm._identity import locations, provider, subscription_doc, token
from netghost.lab.arm._rbac import load_role
from netghost.lab.arm._rest import FLAT, to_rest
from netghost.lab.arm._routes import Call, Lro, Route
from netghost.lab.arm._sim import Simulator

__all__ = ["ArmRouter"]

ARM_HOST = "management.azure.com"
IMDS_HOST = "169.254.169.254"
_VERSION_CHECK_HOST = "azcliprod.blob.core.windows.net"
_BLOB = ".blob.core.windows.net"
_OPS_KEPT = 4096
_OP_PATH = re.compile(r"^/subscriptions/[^/]+/providers/microsoft\.network/locations/[^/]+/"
                      r"(?P<kind>operations|operationresults)/(?P<op>[^/]+)$", re.I)
_SUB_PATH = re.compile(r"^/subscriptions/(?P<sub>[^/]+)(?P<rest>/.*)?$", re.I)
ROUTES: Sequence[Route] = [*_compute.ROUTES, *_network.ROUTES, *_watcher.ROUTES, *_storage.ROUTES]
log = logging.getLogger("netghost.lab.arm")


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> HttpResponse:
    return HttpResponse(status, b"" if body is None else json.dumps(body).encode(),
                        {"x-ms-request-id": str(uuid.uuid4()), **(headers or {})})


def _error(failure: ArmFailure) -> HttpResponse:
    return _json(failure.status, {"error": {"code": failure.code, "message": failure.message}})


class ArmRouter:
    """Answers every request lab ARM receives, from one lab state."""

    def __init__(self, state_dir: Path, arm_dir: Path) -> None:
        self.sim = Simulator(state_dir)
        self.arm_dir = arm_dir
        self._ops: OrderedDict[str, Any] = OrderedDict()
        self._ops_lock = threading.Lock()

    def known_host(self, host: str) -> bool:
        """Does the lab play ``host`` (does its ``CONNECT`` succeed)?"""
        if host in (ARM_HOST, IMDS_HOST, _VERSION_CHECK_HOST):
            return True
        if host.endswith(_BLOB):
            account = host[: -len(_BLOB)]
            return any(a.name == account for a in self.sim.world().spec.storage_accounts)
        return False

    def __call__(self, req: HttpRequest) -> HttpResponse:
        try:
            if req.host == IMDS_HOST and req.path == "/metadata/identity/oauth2/token":
                return token(self.sim.world(), req)
            if req.host == _VERSION_CHECK_HOST:
                return HttpResponse(404, b"")
            if req.host.endswith(_BLOB):
                return self._blob(req, req.host[: -len(_BLOB)])
            if req.host == ARM_HOST:
                return self._arm(req)
            return _json(404, {"error": {"code": "NotFound", "message": f"the lab does not serve {req.host}"}})
        except ArmFailure as failure:
            return _error(failure)
        except LabError as exc:
            log.error("lab error on %s %s: %s", req.method, req.path, exc)
            return _json(500, {"error": {"code": "InternalServerError", "message": f"lab: {exc}"}})

    # ---- ARM ---------------------------------------------------------------------------------
    def _arm(self, req: HttpRequest) -> HttpResponse:
        if not req.header("authorization").lower().startswith("bearer "):
            return _json(401, {"error": {"code": "AuthenticationFailed",
                                         "message": "Authentication failed. The 'Authorization' header is missing."}})
        world = self.sim.world()
        path = re.sub("/+", "/", req.path).rstrip("/") or "/"
        if path.lower() == "/subscriptions" and req.method == "GET":
            return _json(200, {"value": [subscription_doc(world)], "count": {"type": "Total", "value": 1}})
        if path.lower() == "/tenants" and req.method == "GET":
            tid = world.spec.subscription.tenant_id
            return _json(200, {"value": [{"id": f"/tenants/{tid}", "tenantId": tid, "tenantCategory": "Home"}]})
        match = _SUB_PATH.match(path)
        if match is None:
            return _error(ArmFailure(404, "InvalidResourceType", f"The lab serves no {req.method} {path}"))
        if match["sub"].lower() != world.sub_id.lower():
            return _error(ArmFailure(404, "SubscriptionNotFound", f"The subscription '{match['sub']}' could not be found."))
        try:
            return self._subscription_request(req, path, match["rest"] or "")
        except ArmFailure as failure:
            return _error(failure)

    def _subscription_request(self, req: HttpRequest, path: str, rest: str) -> HttpResponse:
        world = self.sim.world()
        lower = rest.lower()
        if req.method == "GET" and not rest:
            return _json(200, subscription_doc(world))
        if req.method == "GET" and lower == "/locations":
            return _json(200, locations(world))
        op = _OP_PATH.match(path)
        if op is not None:
            return self._operation(op["kind"].lower(), op["op"])
        parts = rest.strip("/").split("/")
        if req.method == "GET" and len(parts) == 2 and parts[0].lower() == "providers":
            return _json(200, provider(world, parts[1]))
        if req.method == "GET" and len(parts) == 2 and parts[0].lower() == "resourcegroups":
            group = next((g for g in world.spec.resource_groups if g.name.lower() == parts[1].lower()), None)
            if group is None:
                raise ArmFailure(404, "ResourceGroupNotFound", f"Resource group '{parts[1]}' could not be found.")
            return _json(200, {"id": f"/subscriptions/{world.sub_id}/resourceGroups/{group.name}", "name": group.name,
                               "type": "Microsoft.Resources/resourceGroups", "location": group.location,
                               "properties": {"provisioningState": "Succeeded"}})
        for route in ROUTES:
            if route.method != req.method:
                continue
            found = route.pattern.match(path)
            if found is not None:
                self._authorize(route.action, path)
                result = route.handler(Call(req, {k: v for k, v in found.groupdict().items() if k != "sub"}, self.sim))
                return self._render(result)
        if req.method == "GET" and "/providers/" in lower:
            self._authorize(_read_action(path), path)
            return _json(200, to_rest(self.sim.run(["resource", "show", "--ids", path]), FLAT))
        raise ArmFailure(404 if req.method == "GET" else 405, "InvalidResourceType" if req.method == "GET" else
                         "MethodNotAllowed", f"The lab does not serve {req.method} {path}")

    def _authorize(self, action: str, scope: str, data: bool = False) -> None:
        role = load_role(self.arm_dir)
        if role is None or (role.allows_data(action) if data else role.allows(action)):
            return
        sub = self.sim.world().spec.subscription
        if data:
            raise ArmFailure(403, "AuthorizationPermissionMismatch",
                             "This request is not authorized to perform this operation using this permission.", "storage")
        raise ArmFailure(403, "AuthorizationFailed",
                         f"The client '{sub.user}' with object id '{sub.object_id}' does not have authorization to "
                         f"perform action '{action}' over scope '{scope}' or the scope is invalid. If access was "
                         "recently granted, please refresh your credentials.")

    # ---- long-running operations -------------------------------------------------------------
    def _render(self, result: Any) -> HttpResponse:
        if isinstance(result, HttpResponse):
            return result
        if not isinstance(result, Lro):
            return _json(200, result)
        op_id = str(uuid.uuid4())
        with self._ops_lock:
            self._ops[op_id] = result.result
            while len(self._ops) > _OPS_KEPT:
                self._ops.popitem(last=False)
        base = (f"https://{ARM_HOST}/subscriptions/{self.sim.world().sub_id}/providers/Microsoft.Network/locations/"
                f"{result.location}")
        headers = {"Azure-AsyncOperation": f"{base}/operations/{op_id}?api-version=2024-07-01",
                   "Location": f"{base}/operationResults/{op_id}?api-version=2024-07-01",
                   "Azure-AsyncNotification": "Enabled"}
        return _json(result.status, result.initial, headers)

    def _operation(self, kind: str, op_id: str) -> HttpResponse:
        with self._ops_lock:
            if op_id not in self._ops:
                raise ArmFailure(404, "NotFound", f"Operation {op_id} was not found.")
            result = self._ops[op_id]
        if kind == "operations":
            return _json(200, {"status": "Succeeded"})
        return _json(200, result) if result is not None else HttpResponse(204, b"")

    # ---- Blob ----------------------------------------------------------------------------------
    def _blob(self, req: HttpRequest, account: str) -> HttpResponse:
        auth = req.header("authorization")
        if not auth and "sig" not in req.query:
            return _storage.storage_error(req, ArmFailure(
                403 if req.method != "HEAD" else 404, "NoAuthenticationInformation",
                "Server failed to authenticate the request. Please refer to the information in the www-authenticate "
                "header.", "storage"))
        if auth.lower().startswith("bearer "):
            action, data = _data_action(req)
            try:
                self._authorize(action, f"/subscriptions/{self.sim.world().sub_id}/storageAccounts/{account}",
                                data=data)
            except ArmFailure as failure:
                return _storage.storage_error(req, failure)
        return _storage.serve_blob(self.sim, req, account)


def _read_action(path: str) -> str:
    """``Namespace/type[/childType]/read`` of an ARM id."""
    parts = path.strip("/").split("/")
    provider_at = next(i for i, p in enumerate(parts) if p.lower() == "providers")
    rest = parts[provider_at + 1:]
    return "/".join([rest[0], *rest[1::2]]) + "/read"


def _data_action(req: HttpRequest) -> tuple[str, bool]:
    """The permission a Blob request needs with a bearer token: (action, is a data action)."""
    base = "Microsoft.Storage/storageAccounts/blobServices/containers"
    blob = "/" in req.path.lstrip("/")
    if req.method == "DELETE":
        return f"{base}/blobs/delete", True
    if req.method == "PUT":
        return (f"{base}/blobs/write", True) if blob else (f"{base}/write", False)
    return f"{base}/blobs/read", True
