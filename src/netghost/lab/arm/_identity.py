"""Who the real CLI is in the lab: a managed identity, and the subscription it sees.

``az login --identity`` on an Azure VM asks the Instance Metadata Service for a token
(``GET http://169.254.169.254/metadata/identity/oauth2/token``, header ``Metadata: true``); through the
lab's proxy that request reaches :func:`token`, which issues a JWT whose tenant and object id are the
world's identity's. Every later call asks again (az keeps managed-identity tokens in memory only). The
lab never checks a token's signature (there is none worth checking); a request without a bearer token
or key is refused as ARM refuses it. ``GET /subscriptions`` and ``/tenants`` answer the world's one
subscription; ``GET /subscriptions/{id}/providers/{namespace}`` answers the api-versions the lab serves
(``az resource show`` asks it first).
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from netghost.errors import ArmFailure
from netghost.lab.arm._http import HttpRequest, HttpResponse
from netghost.lab.world import World

__all__ = ["PROVIDER_TYPES", "locations", "provider", "subscription_doc", "token"]

_TOKEN_S = 3600
PROVIDER_TYPES: dict[str, tuple[str, ...]] = {
    "Microsoft.Compute": ("virtualMachines", "virtualMachines/extensions", "virtualMachineScaleSets",
                          "virtualMachineScaleSets/virtualMachines", "virtualMachineScaleSets/extensions", "disks"),
    "Microsoft.Network": ("networkInterfaces", "networkSecurityGroups", "virtualNetworks", "virtualNetworks/subnets",
                          "virtualNetworks/virtualNetworkPeerings", "routeTables", "privateDnsZones",
                          "privateDnsZones/virtualNetworkLinks", "privateEndpoints", "networkWatchers",
                          "networkWatchers/packetCaptures", "virtualNetworkGateways", "localNetworkGateways",
                          "connections", "publicIPAddresses"),
    "Microsoft.Storage": ("storageAccounts",),
    "Microsoft.ContainerService": ("managedClusters",),
}
"""The resource types lab ARM serves, by provider namespace."""
_API_VERSIONS = {"Microsoft.Compute": ["2025-04-01", "2024-11-01", "2024-07-01"],
                 "Microsoft.Network": ["2025-07-01", "2024-07-01", "2024-05-01", "2024-03-01"],
                 "Microsoft.Storage": ["2025-08-01", "2025-06-01", "2024-01-01"],
                 "Microsoft.ContainerService": ["2025-10-01", "2025-08-01", "2024-09-01"]}


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).rstrip(b"=").decode()


def token(world: World, req: HttpRequest, now: float | None = None) -> HttpResponse:
    """The managed-identity token endpoint of an Azure VM (IMDS), answering for the world's identity."""
    if req.header("metadata").lower() != "true":
        return HttpResponse(400, json.dumps({"error": "invalid_request",
                                             "error_description": "Required metadata header not specified"}).encode())
    resource = req.arg("resource") or "https://management.core.windows.net/"
    issued = int(now if now is not None else time.time())
    sub = world.spec.subscription
    claims = {"aud": resource, "iss": f"https://sts.windows.net/{sub.tenant_id}/", "iat": issued, "nbf": issued,
              "exp": issued + _TOKEN_S, "tid": sub.tenant_id, "oid": sub.object_id, "sub": sub.object_id,
              "appid": sub.object_id, "idtyp": "app", "xms_mirid": f"/subscriptions/{sub.id}/resourcegroups/lab/"
              "providers/Microsoft.Compute/virtualMachines/ghost-agent"}
    jwt = f"{_b64({'alg': 'RS256', 'typ': 'JWT'})}.{_b64(claims)}.bmV0Z2hvc3QtbGFi"
    body = {"access_token": jwt, "client_id": sub.object_id, "expires_in": str(_TOKEN_S),
            "expires_on": str(issued + _TOKEN_S), "ext_expires_in": str(_TOKEN_S), "not_before": str(issued),
            "resource": resource, "token_type": "Bearer"}
    return HttpResponse(200, json.dumps(body).encode())


def subscription_doc(world: World) -> dict[str, Any]:
    sub = world.spec.subscription
    return {"id": f"/subscriptions/{sub.id}", "authorizationSource": "RoleBased", "managedByTenants": [],
            "subscriptionId": sub.id, "tenantId": sub.tenant_id, "displayName": sub.name, "state": "Enabled",
            "subscriptionPolicies": {"locationPlacementId": "Public_2014-09-01", "quotaId": "PayAsYouGo_2014-09-01",
                                     "spendingLimit": "Off"}}


def locations(world: World) -> dict[str, Any]:
    """``GET /subscriptions/{id}/locations``: the regions the world uses (``-l "East US"`` is looked up here)."""
    names = sorted({g.location.lower() for g in world.spec.resource_groups} | {"eastus", "westus2"})
    return {"value": [{"id": f"/subscriptions/{world.sub_id}/locations/{n}", "name": n, "type": "Region",
                       "displayName": _display(n), "regionalDisplayName": f"({_geo(n)}) {_display(n)}",
                       "metadata": {"regionType": "Physical", "regionCategory": "Recommended"}} for n in names]}


def _display(name: str) -> str:
    out = ""
    for i, ch in enumerate(name):
        if ch.isdigit() and i and not name[i - 1].isdigit():
            out += " "
        out += ch
    for word in ("east", "west", "north", "south", "central"):
        out = out.replace(word, f" {word} ")
    return " ".join(part.capitalize() for part in out.split())


def _geo(name: str) -> str:
    return "US" if name.endswith("us") or "us" in name else "Europe" if "europe" in name else "Asia Pacific"


def provider(world: World, namespace: str) -> dict[str, Any]:
    """``GET /subscriptions/{id}/providers/{namespace}``: registered, with the types and api-versions served.

    Raises:
        ArmFailure: 404 InvalidResourceNamespace for a namespace the lab does not serve.
    """
    canonical = next((n for n in PROVIDER_TYPES if n.lower() == namespace.lower()), None)
    if canonical is None:
        raise ArmFailure(404, "InvalidResourceNamespace", f"The resource namespace '{namespace}' is invalid.")
    regions = sorted({g.location for g in world.spec.resource_groups})
    return {"id": f"/subscriptions/{world.sub_id}/providers/{canonical}", "namespace": canonical,
            "registrationState": "Registered", "registrationPolicy": "RegistrationRequired",
            "resourceTypes": [{"resourceType": t, "locations": [_display(r) for r in regions],
                               "apiVersions": _API_VERSIONS[canonical], "defaultApiVersion": _API_VERSIONS[canonical][0],
                               "capabilities": "None"} for t in PROVIDER_TYPES[canonical]]}
