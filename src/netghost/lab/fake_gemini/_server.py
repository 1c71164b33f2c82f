"""The fake Gemini API: a loopback HTTP server answering generateContent from a script of turns.

Why a server and not a patched SDK: the tests then run the real google-genai client end to end
(request building, JSON wire format, error mapping), and every byte that would have left the machine
is recorded for a test to grep. It fails loudly: a request it cannot answer (the script ran out, a
malformed body, a wrong API version) gets HTTP 400/404 with a message naming the problem, and the
message is kept in :attr:`FakeGemini.failures`.
"""

from __future__ import annotations

import json
import math
import re
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from netghost.lab.fake_gemini._raw import RawReply, as_raw
from netghost.lab.fake_gemini._turns import FakeTurn, as_turn, error_body, response_body

__all__ = ["FakeGemini", "Responder", "ScriptItem", "as_item"]

Responder = Callable[[dict[str, Any]], "FakeTurn | RawReply | Mapping[str, Any] | None"]
"""Answers one request body with a turn or a raw reply; ``None`` means it has no answer (the script ran out)."""
ScriptItem = FakeTurn | RawReply | Mapping[str, Any] | Responder


def as_item(raw: FakeTurn | RawReply | Mapping[str, Any]) -> FakeTurn | RawReply:
    """A scripted answer from itself or a script dict: ``{"raw": {...}}`` is a :class:`RawReply`
    (see :func:`~netghost.lab.fake_gemini._raw.as_raw`), any other dict a turn (see :func:`as_turn`).

    Raises:
        ValueError: a malformed script item.
    """
    if isinstance(raw, RawReply):
        return raw
    if isinstance(raw, Mapping) and "raw" in raw:
        if set(raw) != {"raw"} or not isinstance(raw["raw"], Mapping):
            raise ValueError("a raw reply is {'raw': {...}} and nothing else")
        return as_raw(raw["raw"])
    return as_turn(raw)

_PATH = re.compile(
    r"^/(?P<version>v1(?:alpha|beta\d*)?)/(?:projects/[^/]+/locations/[^/]+/)?(?:publishers/google/)?"
    r"models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$"
)


_NO_BODY = frozenset({204, 304})


class _BadRequest(Exception):
    """A request the fake refuses: carries the HTTP status and the message sent back."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _check_tools(body: Mapping[str, Any]) -> None:
    for tool in body.get("tools") or []:
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            if not decl.get("name"):
                raise _BadRequest(400, f"function declaration without a name: {decl!r}")
            schemas = [k for k in ("parameters", "parametersJsonSchema", "parameters_json_schema") if k in decl]
            if len(schemas) > 1:
                raise _BadRequest(400, f"function {decl['name']!r}: {' and '.join(schemas)} are mutually exclusive")


def _check_body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise _BadRequest(400, f"request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise _BadRequest(400, "request body is not a JSON object")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _BadRequest(400, "request has no contents")
    for i, content in enumerate(contents):
        if not isinstance(content, dict) or not isinstance(content.get("parts"), list) or not content["parts"]:
            raise _BadRequest(400, f"contents[{i}] has no parts")
        if content.get("role") not in (None, "user", "model", "function"):
            raise _BadRequest(400, f"contents[{i}].role {content.get('role')!r} is not user or model")
    _check_tools(body)
    return body


class FakeGemini:
    """A local Gemini API on 127.0.0.1 answering ``generateContent`` (and its SSE stream) from a script.

    ``turns`` is either a sequence (each item a :class:`FakeTurn`, a script dict, or a callable taking
    the request body and returning one) consumed one per request, or one callable asked for every
    request. Point the SDK at it with ``genai.Client(api_key="x",
    http_options=types.HttpOptions(base_url=fake.base_url))`` or ``GOOGLE_GEMINI_BASE_URL``.

    Attributes:
        base_url: ``http://127.0.0.1:<port>``.
        requests: every JSON body received, in order (a body that was not JSON is kept as its text).
        raw: the exact bytes of each request body, in the same order (to check a hash of what was sent).
        paths: the request paths, in the same order.
        headers: the request headers, in the same order.
        failures: messages of the requests the fake refused (script exhausted, malformed request).
    """

    def __init__(self, turns: Sequence[ScriptItem] | Responder, *, api_version: str | None = "v1",
                 model_version: str = "fake-gemini", host: str = "127.0.0.1", port: int = 0) -> None:
        if callable(turns):
            self._responder: Responder | None = turns
            self._script: list[ScriptItem] = []
        else:
            self._responder = None
            self._script = [t if callable(t) else as_item(t) for t in turns]  # bad scripts fail here
        self.api_version = api_version
        self.model_version = model_version
        self.requests: list[Any] = []
        self.raw: list[bytes] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.failures: list[str] = []
        self.served = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self.base_url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fake-gemini",
                                        daemon=True)
        self._thread.start()

    @property
    def remaining(self) -> int:
        """Scripted turns not yet served (0 for a callable responder)."""
        return len(self._script) - self.served if self._responder is None else 0

    def _next_turn(self, body: dict[str, Any], number: int) -> FakeTurn | RawReply:
        item: ScriptItem | None = self._responder
        if item is None:
            with self._lock:
                index = self.served
                if index < len(self._script):
                    self.served += 1
                    item = self._script[index]
        raw = item(body) if callable(item) else item
        if raw is None:
            raise _BadRequest(400, f"fake-gemini: the script is exhausted: request #{number} has no scripted turn "
                                   f"({len(self._script)} scripted)")
        try:
            return as_item(raw)
        except ValueError as exc:
            raise _BadRequest(400, f"fake-gemini: request #{number}: bad scripted turn: {exc}") from None

    def answer(self, path: str, raw: bytes, headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes]:
        """Record one request and compute ``(status, headers, body)``: the whole protocol, without sockets."""
        with self._lock:
            try:
                self.requests.append(json.loads(raw))
            except ValueError:
                self.requests.append(raw.decode("utf-8", "replace"))
            self.raw.append(raw)
            self.paths.append(path)
            self.headers.append(dict(headers))
            number = len(self.requests)
        try:
            return self._answer(path, raw, number)
        except _BadRequest as exc:
            with self._lock:
                self.failures.append(str(exc))
            return _json_reply(exc.status, error_body(exc.status, str(exc)))

    def _answer(self, path: str, raw: bytes, number: int) -> tuple[int, dict[str, str], bytes]:
        url = urlsplit(path)
        match = _PATH.match(url.path)
        if match is None:
            raise _BadRequest(404, f"fake-gemini: no such method: POST {url.path}")
        if self.api_version is not None and match["version"] != self.api_version:
            raise _BadRequest(404, f"fake-gemini: API version {match['version']} requested, this fake serves "
                                   f"{self.api_version}")
        stream = match["method"] == "streamGenerateContent"
        if stream and parse_qs(url.query).get("alt") != ["sse"]:
            raise _BadRequest(400, "fake-gemini: streamGenerateContent is served as SSE only (?alt=sse)")
        body = _check_body(raw)
        turn = self._next_turn(body, number)
        if isinstance(turn, RawReply):
            return _raw_reply(turn)
        if turn.error is not None:
            message = turn.message or f"fake-gemini: scripted {turn.error} error"
            status, head, out = _json_reply(turn.error, error_body(turn.error, message, turn.retry_after))
            if turn.retry_after is not None:
                head["Retry-After"] = str(math.ceil(turn.retry_after))
            return status, head, out
        replies = response_body(turn, request_chars=len(raw), model_version=self.model_version,
                                response_id=f"fake-{number}", stream=stream)
        if not stream:
            return _json_reply(200, replies[0])
        data = b"".join(b"data: " + json.dumps(r).encode() + b"\r\n\r\n" for r in replies)
        return 200, {"Content-Type": "text/event-stream"}, data

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # headers and body go out in two writes: without this, Nagle's algorithm holds the second
                # until the client's delayed ACK (~40 ms per request on loopback)
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, head, out = fake.answer(self.path, raw, dict(self.headers.items()))
                if status in _NO_BODY:  # HTTP/1.1 has no body here: bytes sent anyway would be read as the
                    out = b""  # next answer's status line on this kept-alive connection
                    head = {k: v for k, v in head.items() if k not in ("Content-Length", "Transfer-Encoding")}
                self.send_response(status)
                for name, value in head.items():
                    self.send_header(name, value)
                chunked = head.get("Transfer-Encoding") == "chunked"
                if "Content-Length" not in head and not chunked and status not in _NO_BODY:
                    self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                try:
                    self._write(out, chunked=chunked)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a refused answer): fine
                    self.close_connection = True
                    return
                if int(head.get("Content-Length", len(out))) != len(out):
                    self.close_connection = True  # a body cut short: the client sees the connection end

            def _write(self, out: bytes, *, chunked: bool) -> None:
                if not chunked:
                    self.wfile.write(out)
                    return
                step = max(1, len(out) // 3)
                for at in range(0, len(out), step):
                    piece = out[at : at + step]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the recorded requests are the log."""

        return Handler

    def close(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def __enter__(self) -> FakeGemini:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _raw_reply(reply: RawReply) -> tuple[int, dict[str, str], bytes]:
    head = dict(reply.headers)
    if reply.content_type is not None:
        head["Content-Type"] = reply.content_type
    if reply.chunked:
        head["Transfer-Encoding"] = "chunked"
        return reply.status, head, reply.body
    if reply.truncate_at is not None:
        head["Content-Length"] = str(len(reply.body))
        return reply.status, head, reply.body[: reply.truncate_at]
    return reply.status, head, reply.body


def _json_reply(status: int, body: Mapping[str, Any]) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode()
