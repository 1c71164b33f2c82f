"""Lab ARM without the azure-cli: REST shapes, ARM's errors and long-running operations, the Blob service,
the token endpoint, role enforcement, and the TLS proxy a client really connects through."""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from netghost.errors import LabError
from netghost.lab import init_state
from netghost.lab.arm import ArmRouter, LabArm, RoleDefinition, install_role
from netghost.lab.arm._http import HttpRequest, HttpResponse
from netghost.lab.arm._rest import Shape, arm_failure, strip_resource_groups, to_rest
from netghost.lab.az import run_az
from netghost.lab.state import LabState

SUB = "00000000-0000-0000-0000-000000000000"
RG = f"/subscriptions/{SUB}/resourceGroups/prod-rg/providers"
WATCHER = f"/subscriptions/{SUB}/resourceGroups/NetworkWatcherRG/providers/Microsoft.Network/networkWatchers/NetworkWatcher_eastus"
BEARER = {"authorization": "Bearer x.y.z"}


@pytest.fixture
def lab(tmp_path: Path) -> tuple[LabState, ArmRouter]:
    state = init_state(tmp_path / "lab", "nsg-deny", scale=0.0, lab_start=1795770000.0)
    return state, ArmRouter(state.root, state.root / "arm")


def call(router: ArmRouter, method: str, path: str, body: Any = None, *, host: str = "management.azure.com",
         headers: dict[str, str] | None = None, **query: str) -> HttpResponse:
    raw = json.dumps(body).encode() if isinstance(body, (dict, list)) else (body or b"")
    return router(HttpRequest(method, host, path, {k: [v] for k, v in query.items()}, {**BEARER, **(headers or {})},
                              raw, path))


def body(response: HttpResponse) -> Any:
    return json.loads(response.body)


def sim(state: LabState, *argv: str) -> Any:
    code, out, err = run_az([*argv, "-o", "json"], {"NETGHOST_LAB_STATE": str(state.root)})
    assert code == 0, err
    return json.loads(out)


# ---- shapes and errors ----------------------------------------------------------------------------
def test_to_rest_moves_properties_down_and_takes_back_what_az_added() -> None:
    printed = {"id": f"{RG}/Microsoft.Network/networkSecurityGroups/nsg", "name": "nsg", "location": "eastus",
               "resourceGroup": "prod-rg", "provisioningState": "Succeeded", "etag": None,
               "securityRules": [{"id": f"{RG}/Microsoft.Network/networkSecurityGroups/nsg/securityRules/r",
                                  "name": "r", "resourceGroup": "prod-rg", "priority": 100, "access": "Deny"}],
               "subnets": [{"id": f"{RG}/Microsoft.Network/virtualNetworks/v/subnets/s", "resourceGroup": "prod-rg"}],
               "remote": {"id": "/subscriptions/x/resourceGroups/other/p", "resourceGroup": "kept-its-own"}}
    rest = to_rest(printed, Shape(children={"securityRules": Shape()}))
    assert set(rest) == {"id", "name", "location", "properties"}  # the null etag is not sent
    props = rest["properties"]
    assert props["securityRules"] == [{"id": printed["securityRules"][0]["id"], "name": "r",
                                       "properties": {"priority": 100, "access": "Deny"}}]
    assert props["subnets"] == [{"id": printed["subnets"][0]["id"]}]
    assert props["remote"]["resourceGroup"] == "kept-its-own"  # not the one az would derive: ARM sent it
    assert strip_resource_groups([{"id": "/subscriptions/s/resourceGroups/g/x", "resourceGroup": "g"}]) == \
        [{"id": "/subscriptions/s/resourceGroups/g/x"}]


@pytest.mark.parametrize(("code", "stderr", "want"), [
    (3, "ERROR: (ResourceNotFound) The Resource 'x' was not found.\nCode: ResourceNotFound\nMessage: m\n",
     (404, "ResourceNotFound", "arm")),
    (1, "ERROR: (AuthorizationFailed) no.\nCode: AuthorizationFailed\nMessage: no.\n", (403, "AuthorizationFailed", "arm")),
    (1, "ERROR: (PacketCaptureQuotaExceeded) full\nCode: PacketCaptureQuotaExceeded\nMessage: full\n",
     (409, "PacketCaptureQuotaExceeded", "arm")),
    (3, "ERROR: The specified blob does not exist.\nRequestId:1\nTime:t\nErrorCode:BlobNotFound\n",
     (404, "BlobNotFound", "storage")),
    (1, "ERROR: \nYou do not have the required permissions needed to perform this operation.\n...",
     (403, "AuthorizationPermissionMismatch", "storage")),
    (1, "WARNING: key mode\nERROR: network watcher is not enabled for region westus3.\n", (400, "BadRequest", "client")),
])
def test_the_simulators_three_error_forms_map_back_to_what_azure_sent(code: int, stderr: str,
                                                                      want: tuple[int, str, str]) -> None:
    failure = arm_failure(code, stderr)
    assert (failure.status, failure.code, failure.kind) == want


# ---- ARM ------------------------------------------------------------------------------------------
def test_arm_needs_a_bearer_token_and_the_worlds_subscription(lab: tuple[LabState, ArmRouter]) -> None:
    _state, router = lab
    vm = f"{RG}/Microsoft.Compute/virtualMachines/web-vm-01"
    assert call(router, "GET", vm, headers={"authorization": ""}).status == 401
    other = call(router, "GET", vm.replace(SUB, "11111111-1111-1111-1111-111111111111"))
    assert (other.status, body(other)["error"]["code"]) == (404, "SubscriptionNotFound")
    subs = body(call(router, "GET", "/subscriptions"))["value"]
    assert [s["subscriptionId"] for s in subs] == [SUB]


def test_a_vm_is_the_simulators_vm_in_rest_shape(lab: tuple[LabState, ArmRouter]) -> None:
    state, router = lab
    got = call(router, "GET", f"{RG}/Microsoft.Compute/virtualMachines/web-vm-01", **{"$expand": "instanceView"})
    doc = body(got)
    printed = sim(state, "vm", "get-instance-view", "-g", "prod-rg", "-n", "web-vm-01")
    assert got.status == 200 and doc["id"] == printed["id"] and "resourceGroup" not in doc
    assert doc["properties"]["hardwareProfile"]["vmSize"] == printed["hardwareProfile"]["vmSize"]
    assert doc["properties"]["instanceView"]["statuses"][1]["code"] == "PowerState/running"
    nic = doc["properties"]["networkProfile"]["networkInterfaces"][0]
    assert set(nic) <= {"id", "properties"}
    missing = call(router, "GET", f"{RG}/Microsoft.Compute/virtualMachines/nope")
    assert missing.status == 404 and body(missing)["error"]["code"] == "ResourceNotFound"
    assert "nope" in body(missing)["error"]["message"]


def test_post_actions_are_long_running_operations_answered_at_the_first_poll(lab: tuple[LabState, ArmRouter]) -> None:
    state, router = lab
    started = call(router, "POST", f"{WATCHER}/ipFlowVerify", {
        "targetResourceId": f"{RG}/Microsoft.Compute/virtualMachines/redis-primary", "direction": "Inbound",
        "protocol": "TCP", "localIPAddress": "10.1.2.4", "localPort": "6379", "remoteIPAddress": "10.1.1.4",
        "remotePort": "*"})
    assert started.status == 202 and started.body == b""
    status_url, result_url = started.headers["Azure-AsyncOperation"], started.headers["Location"]
    path = status_url.split("management.azure.com")[1].split("?")[0]
    assert body(call(router, "GET", path)) == {"status": "Succeeded"}
    result = body(call(router, "GET", result_url.split("management.azure.com")[1].split("?")[0]))
    assert result == sim(state, "network", "watcher", "test-ip-flow", "-g", "prod-rg", "--vm", "redis-primary",
                         "--direction", "Inbound", "--protocol", "TCP", "--local", "10.1.2.4:6379",
                         "--remote", "10.1.1.4:*")
    assert result["access"] == "Deny"


def test_the_packet_capture_lifecycle_changes_the_same_lab_state(lab: tuple[LabState, ArmRouter]) -> None:
    state, router = lab
    url = f"{WATCHER}/packetCaptures/ghost_rest"
    capture = {"properties": {
        "target": f"{RG}/Microsoft.Compute/virtualMachines/web-vm-01", "timeLimitInSeconds": 60,
        "storageLocation": {"storageId": f"{RG}/Microsoft.Storage/storageAccounts/forensicssa",
                            "storagePath": "https://forensicssa.blob.core.windows.net/captures/ghost_rest.cap"}}}
    created = call(router, "PUT", url, capture)
    assert created.status == 201 and body(created)["properties"]["provisioningState"] == "Updating"
    assert "Azure-AsyncOperation" in created.headers
    assert list(state.captures()) == ["eastus/ghost_rest"]
    assert body(call(router, "GET", url))["properties"]["provisioningState"] == "Succeeded"
    status = call(router, "POST", f"{url}/queryStatus")
    result = body(call(router, "GET", status.headers["Location"].split("management.azure.com")[1].split("?")[0]))
    assert result["packetCaptureStatus"] == "Running"
    again = call(router, "PUT", url, capture)
    assert (again.status, body(again)["error"]["code"]) == (409, "PacketCaptureSessionAlreadyExists")
    assert call(router, "DELETE", url).status == 202
    assert state.captures() == {}
    assert call(router, "GET", url).status == 404


def test_an_installed_role_is_enforced_on_every_request(lab: tuple[LabState, ArmRouter]) -> None:
    state, router = lab
    install_role(state.root / "arm", {"Name": "reader", "Actions": ["*/read"], "NotActions": [],
                                      "DataActions": ["Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read"]})
    assert call(router, "GET", f"{RG}/Microsoft.Compute/virtualMachines/web-vm-01").status == 200
    refused = call(router, "PUT", f"{WATCHER}/packetCaptures/x", {"properties": {"target": "t"}})
    error = body(refused)["error"]
    assert (refused.status, error["code"]) == (403, "AuthorizationFailed")
    assert "Microsoft.Network/networkWatchers/packetCaptures/write" in error["message"] and "ghost-sp" in error["message"]
    deleted = call(router, "DELETE", "/captures/x.cap", host="forensicssa.blob.core.windows.net")
    assert (deleted.status, deleted.headers["x-ms-error-code"]) == (403, "AuthorizationPermissionMismatch")
    install_role(state.root / "arm", None)
    assert call(router, "PUT", f"{WATCHER}/packetCaptures/x", {"properties": {"target": "t"}}).status != 403


def test_the_shipped_role_parses_and_grants_no_credential_reads() -> None:
    from .differential import SHIPPED_ROLE

    role = RoleDefinition.from_json(json.loads(SHIPPED_ROLE.read_text()))
    assert role.allows("Microsoft.Network/networkWatchers/packetCaptures/write")
    assert not role.allows("Microsoft.Storage/storageAccounts/listkeys/action")
    assert not role.allows("Microsoft.Network/connections/sharedKey/read")
    assert role.allows_data("Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read")


def test_role_definitions_read_both_azure_forms_and_match_as_azure_does() -> None:
    cli_form = RoleDefinition.from_json({"Name": "r", "Actions": ["Microsoft.Network/*/read"],
                                         "NotActions": ["Microsoft.Network/connections/sharedKey/read"]})
    assert cli_form.allows("microsoft.network/networkWatchers/read")
    assert not cli_form.allows("Microsoft.Network/connections/sharedKey/read")
    assert not cli_form.allows("Microsoft.Compute/virtualMachines/read") and not cli_form.allows_data("x")
    arm_form = RoleDefinition.from_json({"properties": {"roleName": "r2", "permissions": [
        {"actions": [], "dataActions": ["Microsoft.Storage/*/blobs/read"], "notDataActions": []}]}})
    assert arm_form.name == "r2" and arm_form.allows_data("Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read")
    with pytest.raises(LabError):
        RoleDefinition.from_json({"Name": "nothing"})
    with pytest.raises(LabError):
        RoleDefinition.from_json({"Actions": "*"})


# ---- Blob and the token endpoint --------------------------------------------------------------------
def test_the_blob_service_serves_the_labs_blobs(lab: tuple[LabState, ArmRouter]) -> None:
    state, router = lab
    host = "forensicssa.blob.core.windows.net"
    payload = b"\xd4\xc3\xb2\xa1" + bytes(range(200))
    now = state.clock().now()
    state.put_blob("forensicssa", "captures", "ghost_a.cap", payload, created=now, available_at=now)
    head = call(router, "HEAD", "/captures/ghost_a.cap", host=host)
    assert (head.status, head.content_length, head.headers["x-ms-blob-type"]) == (200, len(payload), "BlockBlob")
    part = call(router, "GET", "/captures/ghost_a.cap", host=host, headers={"x-ms-range": "bytes=0-9"})
    assert (part.status, part.body, part.headers["Content-Range"]) == (206, payload[:10], f"bytes 0-9/{len(payload)}")
    listed = call(router, "GET", "/captures", host=host, restype="container", comp="list", prefix="ghost_")
    assert b"<Name>ghost_a.cap</Name>" in listed.body and listed.headers["Content-Type"] == "application/xml"
    missing = call(router, "GET", "/nocontainer", host=host, restype="container")
    assert (missing.status, missing.headers["x-ms-error-code"]) == (404, "ContainerNotFound")
    assert b"<Code>ContainerNotFound</Code>" in missing.body
    assert call(router, "DELETE", "/captures/ghost_a.cap", host=host).status == 202
    assert call(router, "HEAD", "/captures/ghost_a.cap", host=host).headers["x-ms-error-code"] == "BlobNotFound"
    assert router.known_host(host) and not router.known_host("nosuchaccount.blob.core.windows.net")


def test_shared_key_mode_follows_the_accounts_setting(lab: tuple[LabState, ArmRouter]) -> None:
    state, router = lab
    from netghost.lab import CloudFaultSpec

    key = body(call(router, "POST", f"{RG}/Microsoft.Storage/storageAccounts/forensicssa/listKeys"))["keys"]
    assert [k["keyName"] for k in key] == ["key1", "key2"]
    signed = {"authorization": "SharedKey forensicssa:c2ln"}
    host = "forensicssa.blob.core.windows.net"
    assert call(router, "GET", "/captures", host=host, headers=signed, restype="container").status == 200
    state.inject_fault(CloudFaultSpec(kind="storage-auth-failure", account="forensicssa", auth_mode="key"))
    refused = call(router, "GET", "/captures", host=host, headers=signed, restype="container")
    assert (refused.status, refused.headers["x-ms-error-code"]) == (403, "KeyBasedAuthenticationNotPermitted")


def test_the_managed_identity_endpoint_issues_tokens_for_the_worlds_identity(lab: tuple[LabState, ArmRouter]) -> None:
    state, router = lab
    token_path = "/metadata/identity/oauth2/token"
    refused = call(router, "GET", token_path, host="169.254.169.254", headers={"authorization": ""},
                   resource="https://storage.azure.com")
    assert refused.status == 400
    issued = body(call(router, "GET", token_path, host="169.254.169.254", headers={"metadata": "true"},
                       resource="https://storage.azure.com"))
    claims = json.loads(base64.urlsafe_b64decode(issued["access_token"].split(".")[1] + "=="))
    sub = state.world().spec.subscription
    assert (claims["aud"], claims["tid"], claims["oid"]) == ("https://storage.azure.com", sub.tenant_id, sub.object_id)
    assert issued["token_type"] == "Bearer" and int(issued["expires_in"]) > 0


# ---- the TLS proxy ----------------------------------------------------------------------------------
@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[tuple[LabState, LabArm, list[int]]]:
    state = init_state(tmp_path / "lab", "nsg-deny")
    served: list[int] = []
    arm = LabArm(state.root, on_request=lambda: served.append(1))
    yield state, arm, served
    arm.close()


def _tunnel(port: int, host: str) -> tuple[int, socket.socket]:
    raw = socket.create_connection(("127.0.0.1", port), timeout=20)
    raw.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += raw.recv(1024)
    return int(head.split()[1]), raw


def test_a_client_reaches_arm_through_the_proxy_over_tls_it_verifies(
        endpoint: tuple[LabState, LabArm, list[int]]) -> None:
    _state, arm, served = endpoint
    settings = arm.settings()
    context = ssl.create_default_context(cafile=settings["ca_bundle"])  # the lab's CA only: hostname checked
    status, raw = _tunnel(settings["port"], "management.azure.com")
    assert status == 200
    conn = http.client.HTTPSConnection("management.azure.com", context=context)
    conn.sock = context.wrap_socket(raw, server_hostname="management.azure.com")
    conn.request("GET", "/subscriptions?api-version=2022-12-01", headers={"Authorization": "Bearer t"})
    answer = conn.getresponse()
    assert answer.status == 200 and json.loads(answer.read())["value"][0]["subscriptionId"] == SUB
    conn.request("GET", "/tenants?api-version=2022-12-01", headers={"Authorization": "Bearer t"})  # keep-alive
    assert conn.getresponse().status == 200
    conn.close()
    assert len(served) == 2  # each request told the resident lab it is in use (its idle clock restarts)
    status, blob = _tunnel(settings["port"], "forensicssa.blob.core.windows.net")
    assert status == 200
    context.wrap_socket(blob, server_hostname="forensicssa.blob.core.windows.net").close()  # the wildcard name
    unknown, other = _tunnel(settings["port"], "example.com")
    other.close()
    assert unknown == 502  # never forwarded: a host the lab does not play cannot be reached
    access = (Path(settings["arm_dir"]) / "access.log").read_text()
    assert "GET management.azure.com/subscriptions -> 200" in access and "CONNECT example.com -> 502" in access
    assert "Bearer" not in access
