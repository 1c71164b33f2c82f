"""Lab ARM's wire: one loopback HTTP proxy that terminates every tunnel itself, over the lab's TLS.

The real azure-cli reaches Azure through ``HTTPS_PROXY``: for each host it sends ``CONNECT host:443``
and then speaks TLS inside the tunnel. This server answers the ``CONNECT`` itself and plays the host:
it completes the TLS handshake with the lab's certificate (which ``REQUESTS_CA_BUNDLE`` makes the client
trust) and serves the HTTP/1.1 requests that follow, keep-alive included. A plain proxied request
(``GET http://169.254.169.254/metadata/identity/oauth2/token``, the managed-identity endpoint an Azure
VM has) is served the same way. Nothing is ever forwarded: a host the lab does not play gets
``502 Bad Gateway`` on ``CONNECT``, which the client sees as a host it cannot reach.

Every request is one :class:`HttpRequest` handed to the router; its :class:`HttpResponse` is written
back with a ``Content-Length``. A line per request (method, host, path, status; never a header or a
body) goes to the access log the lab ARM keeps.
"""

from __future__ import annotations

import contextlib
import http.server
import logging
import socketserver
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from netghost.lab.arm._certs import LabCertificates

__all__ = ["HttpRequest", "HttpResponse", "LabHttpServer", "Router"]

_MAX_BODY = 64 * 1024 * 1024
log = logging.getLogger("netghost.lab.arm")


@dataclass
class HttpRequest:
    """One request as the lab host sees it (``path`` unquoted, ``query`` parsed)."""

    method: str
    host: str
    path: str
    query: dict[str, list[str]]
    headers: Mapping[str, str]
    body: bytes = b""
    raw_path: str = ""

    def header(self, name: str) -> str:
        return self.headers.get(name) or ""

    def arg(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


@dataclass
class HttpResponse:
    """What the lab host answers."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_length: int | None = None
    """For HEAD: the length of the entity the GET would return."""


Router = Callable[[HttpRequest], HttpResponse]


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    router: Router
    tls: ssl.SSLContext
    known_host: Callable[[str], bool]
    access: logging.Logger


class _Handler(http.server.BaseHTTPRequestHandler):
    """A request on the proxy connection (``CONNECT``, or a plain proxied URL), or inside a tunnel."""

    protocol_version = "HTTP/1.1"
    server: _Server
    tunnel_host: str | None = None

    def log_message(self, format: str, *args: Any) -> None:
        return  # the access log is written per request in _serve

    def do_CONNECT(self) -> None:
        host = self.path.rsplit(":", 1)[0].lower()
        if self.tunnel_host is not None or not self.server.known_host(host):
            self.server.access.info("CONNECT %s -> 502", host)
            self.send_response(502, "Bad Gateway")
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.close_connection = True
            return
        self.send_response(200, "Connection Established")
        self.end_headers()
        self.wfile.flush()
        try:
            tls = self.server.tls.wrap_socket(self.connection, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            self.server.access.info("CONNECT %s: TLS failed: %s", host, exc)
            self.close_connection = True
            return
        handler = type("_Tunnel", (_Handler,), {"tunnel_host": host})
        try:
            handler(tls, self.client_address, self.server)
        except (ssl.SSLError, OSError, ConnectionError) as exc:
            self.server.access.info("tunnel %s closed: %s", host, exc)
        finally:
            with contextlib.suppress(OSError):
                tls.close()
        self.close_connection = True

    def _serve(self) -> None:
        if self.tunnel_host is not None:
            host, target = self.tunnel_host, self.path
        else:  # a plain proxied request carries the absolute URL
            parts = urlsplit(self.path)
            host = (parts.hostname or self.headers.get("Host", "").split(":")[0]).lower()
            target = parts.path + (f"?{parts.query}" if parts.query else "") if parts.scheme else self.path
        split = urlsplit(target)
        try:
            body = self._read_body()
        except ValueError as exc:
            self._send(HttpResponse(400, str(exc).encode()), host, target)
            return
        request = HttpRequest(self.command, host, unquote(split.path), parse_qs(split.query, keep_blank_values=True),
                              {k.lower(): v for k, v in self.headers.items()}, body, split.path)
        try:
            response = self.server.router(request)
        except Exception:  # a lab bug is a 500 for this request, never a dead server
            log.exception("router failed on %s %s%s", self.command, host, target)
            response = HttpResponse(500, b'{"error":{"code":"InternalServerError","message":"lab ARM failed"}}',
                                    {"Content-Type": "application/json"})
        self._send(response, host, target)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            total = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                total += size
                if total > _MAX_BODY:
                    raise ValueError("request body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_BODY:
            raise ValueError("request body too large")
        return self.rfile.read(length) if length else b""

    def _send(self, response: HttpResponse, host: str, target: str) -> None:
        self.server.access.info("%s %s%s -> %d", self.command, host, target.split("?", maxsplit=1)[0], response.status)
        self.send_response(response.status)
        headers = {"Content-Type": "application/json; charset=utf-8", **response.headers}
        for name, value in headers.items():
            self.send_header(name, value)
        length = response.content_length if response.content_length is not None else len(response.body)
        self.send_header("Content-Length", str(length if self.command == "HEAD" else len(response.body)))
        self.end_headers()
        if self.command != "HEAD" and response.body:
            self.wfile.write(response.body)
        self.wfile.flush()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _serve


class LabHttpServer:
    """The loopback proxy and lab hosts on ``127.0.0.1:port`` (an ephemeral port unless given).

    Args:
        router: answers every request.
        certs: the lab's certificates (the server presents ``leaf`` with ``key``).
        known_host: which host names the lab plays (others: 502 on CONNECT).
        access: where the one-line-per-request access log goes.
    """

    def __init__(self, router: Router, certs: LabCertificates, known_host: Callable[[str], bool],
                 access: logging.Logger, port: int = 0) -> None:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.minimum_version = ssl.TLSVersion.TLSv1_2
        tls.load_cert_chain(certs.leaf, certs.key)
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.router = router
        self._server.tls = tls
        self._server.known_host = known_host
        self._server.access = access
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="lab-arm-http", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5.0)
