"""Storage: the ``Microsoft.Storage`` accounts on ARM (list, show, ``listKeys``) and each account's Blob
service on ``<account>.blob.core.windows.net``.

The Blob service answers as Azure Storage does, which is not ARM's way: XML listings and errors,
properties in response headers (``ETag``, ``Last-Modified``, ``x-ms-blob-type`` ...), ranged GETs
(206 with ``Content-Range``: the SDK's first download request asks for the first 32 MiB). The
credential tells the mode, as on the real service: a bearer token is ``--auth-mode login`` (data-plane
RBAC), a ``SharedKey`` signature is key mode (the account's shared-key setting). Signatures are not
verified: the key is the one ``listKeys`` answered, and the lab trusts its only client.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any
from xml.sax.saxutils import escape

from netghost.errors import ArmFailure
from netghost.lab.arm import _shapes as shape
from netghost.lab.arm._http import HttpRequest, HttpResponse
from netghost.lab.arm._rest import to_rest
from netghost.lab.arm._routes import Call, Route, compile_template, listing
from netghost.lab.arm._sim import Simulator

__all__ = ["ROUTES", "account_keys", "serve_blob"]

_SA = "Microsoft.Storage/storageAccounts"
_VERSION = "2026-02-06"


def account_keys(account: str) -> list[dict[str, Any]]:
    """The account's two keys, stable for the account's name (never a real credential)."""
    return [{"creationTime": "2026-01-15T09:00:00.0000000Z", "keyName": name, "permissions": "FULL",
             "value": base64.b64encode(hashlib.sha512(f"netghost-lab:{account}:{name}".encode()).digest()).decode()}
            for name in ("key1", "key2")]


def _account_list(c: Call) -> Any:
    argv = ["storage", "account", "list", *(["-g", c.seg["rg"]] if "rg" in c.seg else [])]
    return listing(to_rest(c.sim.run(argv), shape.STORAGE_ACCOUNT))


def _account_get(c: Call) -> Any:
    return to_rest(c.sim.run(["storage", "account", "show", "-g", c.rg, "-n", c.seg["account"]]), shape.STORAGE_ACCOUNT)


def _list_keys(c: Call) -> Any:
    c.sim.run(["storage", "account", "show", "-g", c.rg, "-n", c.seg["account"]])  # 404 as ARM for a missing one
    return {"keys": account_keys(c.seg["account"])}


def _r(method: str, template: str, action: str, handler: Any) -> Route:
    return Route(method, compile_template(template), action, handler)


ROUTES = [
    _r("GET", f"SUB/{_SA}", f"{_SA}/read", _account_list),
    _r("GET", f"RG/{_SA}", f"{_SA}/read", _account_list),
    _r("GET", f"RG/{_SA}/{{account}}", f"{_SA}/read", _account_get),
    _r("POST", f"RG/{_SA}/{{account}}/listKeys", f"{_SA}/listkeys/action", _list_keys),
]


# ---- the Blob service ----------------------------------------------------------------------------
def _http_date(iso: str | None) -> str:
    moment = datetime.fromisoformat(iso) if iso else datetime.now(UTC)
    return format_datetime(moment.astimezone(UTC), usegmt=True)


def _common(req: HttpRequest) -> dict[str, str]:
    return {"x-ms-version": req.header("x-ms-version") or _VERSION, "Date": format_datetime(datetime.now(UTC), usegmt=True),
            "x-ms-request-id": hashlib.sha256(repr(req.headers).encode()).hexdigest()[:32],
            "Server": "Windows-Azure-Blob/1.0 Microsoft-HTTPAPI/2.0"}


def storage_error(req: HttpRequest, failure: ArmFailure) -> HttpResponse:
    """Azure Storage's XML error (and ``x-ms-error-code``, which is all a HEAD carries)."""
    headers = {**_common(req), "Content-Type": "application/xml", "x-ms-error-code": failure.code}
    body = (f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{escape(failure.code)}</Code><Message>'
            f"{escape(failure.message)}\nRequestId:{headers['x-ms-request-id']}\nTime:{datetime.now(UTC):%Y-%m-%dT%H:%M:%S.0000000Z}"
            "</Message></Error>").encode()
    status = failure.status if failure.kind == "storage" else (404 if failure.status == 404 else 400)
    return HttpResponse(status, b"" if req.method == "HEAD" else body, headers)


def _mode(req: HttpRequest) -> str:
    return "key" if req.header("authorization").startswith("SharedKey") else "login"


def _blob_headers(req: HttpRequest, doc: dict[str, Any]) -> dict[str, str]:
    props = doc.get("properties") or {}
    settings = props.get("contentSettings") or {}
    headers = {**_common(req), "Content-Type": settings.get("contentType") or "application/octet-stream",
               "ETag": str(props.get("etag") or '"0x0"'), "Last-Modified": _http_date(props.get("lastModified")),
               "x-ms-creation-time": _http_date(props.get("creationTime")), "x-ms-blob-type": props.get("blobType") or "BlockBlob",
               "x-ms-lease-state": "available", "x-ms-lease-status": "unlocked", "x-ms-server-encrypted": "true",
               "Accept-Ranges": "bytes"}
    if settings.get("contentMd5"):
        headers["Content-MD5"] = str(settings["contentMd5"])
    return headers


def _blob_argv(verb: str, account: str, container: str, blob: str) -> list[str]:
    return ["storage", "blob", verb, "--account-name", account, "-c", container, "-n", blob]


def _get_blob(sim: Simulator, req: HttpRequest, account: str, container: str, blob: str) -> HttpResponse:
    mode = _mode(req)
    doc = sim.run(_blob_argv("show", account, container, blob), auth_mode=mode)
    headers = _blob_headers(req, doc)
    size = int((doc.get("properties") or {}).get("contentLength") or 0)
    if req.method == "HEAD":
        return HttpResponse(200, b"", headers, content_length=size)
    body = sim.raw(_blob_argv("download", account, container, blob), auth_mode=mode)
    wanted = req.header("x-ms-range") or req.header("range")
    if wanted.startswith("bytes="):
        first, _, last = wanted[6:].partition("-")
        start = int(first or 0)
        end = min(int(last) if last else len(body) - 1, len(body) - 1)
        if start >= len(body):
            raise ArmFailure(416, "InvalidRange", "The range specified is invalid for the current size of the resource.",
                             "storage")
        headers["Content-Range"] = f"bytes {start}-{end}/{len(body)}"
        return HttpResponse(206, body[start:end + 1], headers)
    return HttpResponse(200, body, headers)


def _list_xml(account: str, container: str, prefix: str, docs: list[dict[str, Any]]) -> bytes:
    items = []
    for doc in docs:
        props = doc.get("properties") or {}
        items.append(
            f"<Blob><Name>{escape(doc['name'])}</Name><Properties>"
            f"<Creation-Time>{_http_date(props.get('creationTime'))}</Creation-Time>"
            f"<Last-Modified>{_http_date(props.get('lastModified'))}</Last-Modified>"
            f"<Etag>{escape(str(props.get('etag') or ''))}</Etag>"
            f"<Content-Length>{int(props.get('contentLength') or 0)}</Content-Length>"
            "<Content-Type>application/octet-stream</Content-Type><Content-Encoding /><Content-Language />"
            "<Content-CRC64 /><Content-MD5 /><Cache-Control /><Content-Disposition />"
            f"<BlobType>{props.get('blobType') or 'BlockBlob'}</BlobType><LeaseStatus>unlocked</LeaseStatus>"
            "<LeaseState>available</LeaseState><ServerEncrypted>true</ServerEncrypted></Properties>"
            "<OrMetadata /></Blob>")
    return (f'<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint='
            f'"https://{account}.blob.core.windows.net/" ContainerName="{escape(container)}">'
            f"<Prefix>{escape(prefix)}</Prefix><Blobs>{''.join(items)}</Blobs><NextMarker /></EnumerationResults>").encode()


def serve_blob(sim: Simulator, req: HttpRequest, account: str) -> HttpResponse:
    """One Blob-service request to ``account`` (already known to exist in the world)."""
    container, _, blob = req.path.lstrip("/").partition("/")
    mode = _mode(req)
    try:
        if blob:
            if req.method in ("GET", "HEAD"):
                return _get_blob(sim, req, account, container, blob)
            if req.method == "DELETE":
                sim.run(_blob_argv("delete", account, container, blob), auth_mode=mode)
                return HttpResponse(202, b"", {**_common(req), "x-ms-delete-type-permanent": "true"})
        elif req.arg("restype") == "container" and req.arg("comp") == "list":
            prefix = req.arg("prefix") or ""
            argv = ["storage", "blob", "list", "--account-name", account, "-c", container, "--num-results", "*",
                    *(["--prefix", prefix] if prefix else [])]
            docs = sim.run(argv, auth_mode=mode)
            return HttpResponse(200, _list_xml(account, container, prefix, docs),
                                {**_common(req), "Content-Type": "application/xml"})
        elif req.arg("restype") == "container" and req.method in ("GET", "HEAD"):
            exists = sim.run(["storage", "container", "exists", "--account-name", account, "-n", container],
                             auth_mode=mode)
            if not exists or not exists.get("exists"):
                raise ArmFailure(404, "ContainerNotFound", "The specified container does not exist.", "storage")
            headers = {**_common(req), "ETag": '"0x8DC5F0A1B2C3D4E"', "Last-Modified": _http_date(None),
                       "x-ms-lease-state": "available", "x-ms-lease-status": "unlocked",
                       "x-ms-has-immutability-policy": "false", "x-ms-has-legal-hold": "false"}
            return HttpResponse(200, b"", headers)
        elif req.arg("restype") == "container" and req.method == "PUT":
            created = sim.run(["storage", "container", "create", "--account-name", account, "-n", container],
                              auth_mode=mode)
            if not (created or {}).get("created"):
                raise ArmFailure(409, "ContainerAlreadyExists", "The specified container already exists.", "storage")
            return HttpResponse(201, b"", {**_common(req), "ETag": '"0x8DC5F0A1B2C3D4E"'})
    except ArmFailure as failure:
        return storage_error(req, failure)
    return storage_error(req, ArmFailure(400, "UnsupportedHttpVerb" if blob else "InvalidQueryParameterValue",
                                         "The lab's Blob service does not serve this request.", "storage"))
