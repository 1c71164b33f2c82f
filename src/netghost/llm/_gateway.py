"""The LLM gateway (CabinCrew §8): every Gemini call in the product passes :meth:`LlmGateway.generate`.

One call = redact everything outgoing, send it through the real SDK, retry 429/5xx with backoff, and
append one record to the audit WAL, success or not. The record holds no prompt text, only what an
auditor needs to match a call to a conversation: the model, token counts, latency, the SHA-256 of the
exact request body that went on the wire (captured by an HTTP request hook, so it is the SDK's bytes,
not our re-serialisation), how many secrets of which kinds were redacted, attempts and outcome.

The answer is hostile input too. An HTTP response hook keeps the exact bytes that came back (their size
is bounded: :data:`MAX_RESPONSE_BYTES`), so when the SDK cannot parse an answer the gateway reads it
itself (``_reply``: a non-JSON or wrongly typed answer is a named failure or a repaired response, never
an exception from inside the SDK), and every answer is judged before it is returned: a blocked prompt,
no candidate, a finish reason other than STOP or an empty answer raise :class:`~netghost.errors.LlmError`
with its ``failure`` class, after one immediate retry where a new sample may well succeed. The record
names the class, the finish reason and the answer's size and hash.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from netghost.errors import LlmError
from netghost.governance import InjectionScreen, WalWriter, canonical_json, injection_screen, sha256_tagged
from netghost.llm._outgoing import Redactor, Tally, redact_config, redact_contents
from netghost.llm._retry import backoff_delay, is_retryable, retry_hint
from netghost.llm._screening import ScreenReport, screen_contents
from netghost.llm._settings import ClientFactory, default_client_factory
from netghost.redact import clean_text, redact

if TYPE_CHECKING:
    from google.genai import Client, types

    from netghost.llm._reply import Repair, ReplyProblem

__all__ = ["MAX_RESPONSE_BYTES", "RECORD_KIND", "LlmGateway"]

RECORD_KIND = "llm_call"
"""The ``kind`` of the gateway's WAL records (one per call)."""
TIMEOUT_MS = 60_000
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""The largest answer the gateway reads (8 MiB). Gemini's largest (65,536 output tokens) is well under
1 MiB of JSON; a bigger answer is a broken or hostile server, refused as ``response_too_large``."""
_MAX_ERROR_CHARS = 300
_MAX_REPAIRS_KEPT = 20


@dataclass
class _Answer:
    """What the response hook saw of one HTTP answer."""

    status: int
    content_type: str | None
    body: bytes


class _TooLarge(Exception):
    """Raised by the response hook: the answer is bigger than the gateway reads."""


class _Unusable(Exception):
    """An answer the gateway read itself and found unusable (``problem`` says why)."""

    def __init__(self, problem: ReplyProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class _Status(Exception):
    """An HTTP error answer the SDK could not turn into its own error (a body that is not its error JSON)."""

    def __init__(self, answer: _Answer) -> None:
        super().__init__(f"HTTP {answer.status}")
        self.answer = answer


def one_line(text: str, limit: int = _MAX_ERROR_CHARS) -> str:
    """Server- or model-supplied text fit for an error message: one line, cleaned, redacted, bounded."""
    return redact(clean_text(" ".join(str(text).split()), limit=limit)).text


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The SDK's HTTP library errors (httpx2 in google-genai 3.x, httpx before) and OS-level ones."""
    import importlib  # noqa: PLC0415

    found: list[type[BaseException]] = [OSError]
    for name in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(name).HTTPError)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


class _Call:
    """What one :meth:`LlmGateway.generate` learns on its way, turned into the WAL record at the end."""

    def __init__(self, model: str, purpose: str | None, tally: Tally) -> None:
        self.model = model
        self.purpose = purpose
        self.tally = tally
        self.attempts = 0
        self.waits: list[float] = []
        self.body: bytes | None = None
        self.fallback_body: Callable[[], str] = str
        """Our canonical JSON of the request, for the record when no wire bytes were seen (built only then)."""
        self.screen: ScreenReport | None = None
        self.answer: _Answer | None = None
        self.repairs: list[Repair] = []
        self.problem: ReplyProblem | None = None

    def record(self, *, latency_ms: int, response: types.GenerateContentResponse | None, status: int | None,
               error: str | None, failure: str | None = None) -> dict[str, Any]:
        usage = response.usage_metadata if response is not None else None
        usage = usage if usage is not None and all(
            isinstance(v, int | None) for v in (usage.prompt_token_count, usage.candidates_token_count,
                                                 usage.total_token_count)) else None
        body = self.body if self.body is not None else self.fallback_body().encode()
        answer = self.answer
        problem = self.problem
        version = response.model_version if response is not None else None
        return {
            "v": 1,
            "kind": RECORD_KIND,
            "purpose": self.purpose,
            "model": self.model,
            "model_version": clean_text(version, limit=120) if isinstance(version, str) else None,
            "prompt_tokens": usage.prompt_token_count if usage else None,
            "candidates_tokens": usage.candidates_token_count if usage else None,
            "total_tokens": usage.total_token_count if usage else None,
            "latency_ms": latency_ms,
            "request_sha256": sha256_tagged(body),
            "request_bytes": len(body),
            "request_hashed": "wire" if self.body is not None else "canonical",
            "redactions": {"count": self.tally.count, "kinds": sorted(self.tally.kinds)},
            "attempts": self.attempts,
            "retry_waits_s": self.waits,
            "outcome": "ok" if error is None else "error",
            "status": status,
            "error": error,
            "failure": failure,
            "finish_reason": problem.finish_reason if problem is not None else None,
            "block_reason": problem.block_reason if problem is not None else None,
            "response_bytes": len(answer.body) if answer is not None else None,
            "response_sha256": sha256_tagged(answer.body) if answer is not None else None,
            "repairs": [r.record() for r in self.repairs[:_MAX_REPAIRS_KEPT]],
            "repairs_total": len(self.repairs),
            "screen": self.screen.record() if self.screen is not None else None,
        }


class LlmGateway:
    """The one way the product talks to a model: redaction, bounded retry, one WAL record per call.

    Args:
        audit: the WAL the records go to: an open :class:`~netghost.governance.WalWriter` (the caller owns
            it), a path (the gateway opens and owns a writer; :meth:`close` closes it), or ``None`` for a
            caller that keeps no audit trail (the forensics narrative without an audit directory).
        redactor: the shared redactor (``netghost.redact.redact``), applied to every outgoing string.
        client_factory: builds the SDK client from the gateway's HTTP options (default: from ``environ``).
        environ: where the default factory reads credentials and base URLs (default: the process's own).
        sleeper: waits between retries (tests pass a recorder and never sleep).
        clock: a monotonic clock in seconds, for latency.
        max_retries: retries after the first attempt (so at most ``max_retries + 1`` requests).
        backoff_initial_s: the first wait; each later one doubles.
        backoff_max_s: no single wait is longer, a server hint included.
        timeout_ms: the HTTP timeout of one request.
        screen: the injection screen applied to every function response going out (the shipped one,
            loaded on the first call that carries a function response, when None).
        warn: shows a console warning when the screen flags a text for the first time (stderr by default).
        reply_retries: immediate retries of an answer that came but cannot be used and may well succeed
            on a new sample (an empty answer, finish reason MALFORMED_FUNCTION_CALL); counted in ``attempts``.
        max_response_bytes: the largest answer read (:data:`MAX_RESPONSE_BYTES`).
    """

    def __init__(self, *, audit: WalWriter | str | os.PathLike[str] | None, redactor: Redactor = redact,
                 client_factory: ClientFactory | None = None, environ: Mapping[str, str] | None = None,
                 sleeper: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 max_retries: int = 3, backoff_initial_s: float = 1.0, backoff_max_s: float = 30.0,
                 timeout_ms: int = TIMEOUT_MS, screen: InjectionScreen | None = None,
                 warn: Callable[[str], None] | None = None, reply_retries: int = 1,
                 max_response_bytes: int = MAX_RESPONSE_BYTES) -> None:
        if max_retries < 0 or reply_retries < 0:
            raise ValueError("max_retries and reply_retries must be >= 0")
        self.wal: WalWriter | None
        if audit is None or isinstance(audit, WalWriter):
            self.wal, self._owns_wal = audit, False
        else:
            self.wal, self._owns_wal = WalWriter(Path(audit)), True
        self._redactor = redactor
        self._factory = client_factory or default_client_factory(environ)
        self._owns_client = client_factory is None  # a caller's factory may hand out a client it shares
        self._sleeper = sleeper
        self._clock = clock
        self.max_retries = max_retries
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self.timeout_ms = timeout_ms
        self._client: Client | None = None
        self._local = threading.local()
        self._screen = screen
        self._warn = warn or _stderr_warning
        self._warned: set[str] = set()
        self.reply_retries = reply_retries
        self.max_response_bytes = max_response_bytes

    def _capture(self, request: Any) -> None:
        """HTTP request hook: keep the exact bytes of the body this thread's call is sending."""
        call = getattr(self._local, "call", None)
        if call is not None:
            call.body = bytes(request.content)

    def _answered(self, response: Any) -> None:
        """HTTP response hook: keep the exact bytes that came back, refusing an answer too big to read."""
        call = getattr(self._local, "call", None)
        if call is None:
            return
        content_type = response.headers.get("content-type")
        announced = str(response.headers.get("content-length") or "")
        if announced.isdigit() and int(announced) > self.max_response_bytes:
            call.answer = _Answer(response.status_code, content_type, b"")
            response.close()
            raise _TooLarge(f"the answer announces {int(announced):,} bytes")
        body = bytes(response.read())
        call.answer = _Answer(response.status_code, content_type, body)
        if len(body) > self.max_response_bytes:
            raise _TooLarge(f"the answer is {len(body):,} bytes")

    def _sdk(self) -> Client:
        if self._client is None:
            from google.genai import types  # noqa: PLC0415  the SDK loads only when a call is made

            options = types.HttpOptions(timeout=self.timeout_ms, client_args={
                "event_hooks": {"request": [self._capture], "response": [self._answered]}})
            self._client = self._factory(options)
        return self._client

    def generate(self, model: str, contents: Any, config: Any = None, *,
                 purpose: str | None = None) -> types.GenerateContentResponse:
        """Send one ``generateContent`` call, redacted, retried and audited.

        Args:
            model: the model name (see :func:`~netghost.llm.model_default`).
            contents: what the SDK accepts: a string, Parts, Contents or a list of them (the caller's
                objects are not modified; redacted copies are sent).
            config: a ``GenerateContentConfig`` (or its dict); its system instruction is redacted too.
            purpose: a label for the audit record (``"agent_turn"``, ``"forensics_narrative"``).

        Returns:
            The SDK's response.

        Raises:
            LlmError: the call failed for good: a 4xx other than 429, no answer, the last retry failed, or
                the answer cannot be used (``failure`` names the class: ``malformed_response``, ``blocked``,
                ``finish_reason`` ...). One WAL record is written either way.
            TypeError: ``contents`` holds something the gateway cannot redact (an image, a file).
        """
        tally = Tally(self._redactor)
        sent_contents = redact_contents(contents, tally)
        sent_config = redact_config(config, tally)
        call = _Call(model, purpose, tally)
        call.screen = self._screen_outgoing(sent_contents)
        call.fallback_body = lambda: canonical_json({
            "model": model, "contents": [c.model_dump(mode="json", exclude_none=True) for c in sent_contents],
            "config": sent_config.model_dump(mode="json", exclude_none=True) if sent_config else None})
        started = self._clock()
        self._local.call = call
        try:
            response = self._send(call, sent_contents, sent_config)
        except LlmError as exc:
            self._audit(call.record(latency_ms=self._elapsed(started), response=None, status=exc.status,
                                    error=str(exc), failure=exc.failure))
            raise
        except BaseException as exc:  # a bug of ours, or Ctrl-C: still one record, then the exception goes on
            failure = "interrupted" if isinstance(exc, KeyboardInterrupt) else "internal_error"
            self._audit(call.record(latency_ms=self._elapsed(started), response=None,
                                    status=call.answer.status if call.answer else None,
                                    error=one_line(f"{type(exc).__name__}: {exc}"), failure=failure))
            raise
        finally:
            self._local.call = None
        self._audit(call.record(latency_ms=self._elapsed(started), response=response,
                                status=call.answer.status if call.answer else 200, error=None))
        return response

    def _screen_outgoing(self, contents: list[types.Content]) -> ScreenReport | None:
        """Mark untrusted tool outputs (see ``_screening``); warn once per newly flagged text."""
        if not any(p.function_response is not None for c in contents for p in c.parts or []):
            return None
        if self._screen is None:
            self._screen = injection_screen()
        report = screen_contents(contents, self._screen, self._warned.__contains__)
        for item in report.flagged:
            fresh = [d for d in item["text_sha256"] if d in report.new_flags and d not in self._warned]
            if not fresh:
                continue
            self._warned.update(fresh)
            score = "unknown (screen unavailable)" if item["score"] is None else f"{item['score']:.2f}"
            self._warn(f"{item['tool']} output reads like instructions to the model (injection score {score}, "
                       f"fields {', '.join(item['fields'])}); it is sent marked untrusted")
        return report

    def _send(self, call: _Call, contents: list[types.Content],
              config: types.GenerateContentConfig | None) -> types.GenerateContentResponse:
        from google.genai import errors  # noqa: PLC0415

        from netghost.llm._reply import judge  # noqa: PLC0415  loads the SDK's types

        transport = _transport_errors()
        try:
            client = self._sdk()
        except ValueError as exc:  # the SDK refuses to build a client without credentials
            raise LlmError(f"cannot build the Gemini client: {one_line(str(exc))}", model=call.model, status=None,
                           attempts=0, failure="no_client") from exc
        config = _one_request_per_attempt(config)
        reply_retries = self.reply_retries
        while True:
            call.attempts += 1
            call.answer, call.repairs, call.problem = None, [], None
            try:
                response = self._request(client, call, contents, config)
            except errors.APIError as exc:
                self._wait_or_raise(call, exc, status=exc.code, word=exc.status, message=exc.message,
                                    details=exc.details, headers=getattr(exc.response, "headers", None))
                continue
            except _Status as exc:
                self._wait_or_raise(call, exc, status=exc.answer.status,
                                    message=exc.answer.body[:4096].decode("utf-8", "replace"))
                continue
            except _TooLarge as exc:
                raise LlmError(f"{call.model}: {exc}, more than the {self.max_response_bytes:,} the gateway reads",
                               model=call.model, status=call.answer.status if call.answer else None,
                               attempts=call.attempts, failure="response_too_large") from exc
            except _Unusable as exc:
                raise LlmError(one_line(f"{call.model}: {exc.problem.message}"), model=call.model, status=200,
                               attempts=call.attempts, failure=exc.problem.failure) from exc
            except transport as exc:
                raise LlmError(f"{call.model}: no answer from the model API ({type(exc).__name__}: {one_line(str(exc))})",
                               model=call.model, status=None, attempts=call.attempts, failure="transport") from exc
            problem = judge(response, call.repairs)
            if problem is None:
                return response
            call.problem = problem
            if problem.retry and reply_retries > 0:
                reply_retries -= 1
                continue
            raise LlmError(one_line(f"{call.model}: {problem.message}"), model=call.model, status=200,
                           attempts=call.attempts, failure=problem.failure)

    def _request(self, client: Client, call: _Call, contents: list[types.Content],
                 config: types.GenerateContentConfig | None) -> types.GenerateContentResponse:
        """One request through the SDK; an answer the SDK cannot parse is read by the gateway itself."""
        from google.genai import errors  # noqa: PLC0415

        from netghost.llm._reply import RepairedResponse, read_reply  # noqa: PLC0415

        passed: tuple[type[BaseException], ...] = (errors.APIError, _TooLarge, _Unusable, *_transport_errors())
        try:
            with warnings.catch_warnings():  # the SDK warns about values it does not know: the judge decides
                warnings.simplefilter("ignore")
                response = client.models.generate_content(model=call.model, contents=contents, config=config)
            answer = call.answer
            if answer is not None and answer.body.strip() and not answer.body.lstrip().startswith(b"{"):
                # the SDK reads a JSON array or string as an empty answer; it is not one
                read = read_reply(answer.body, answer.content_type)
                if not isinstance(read, RepairedResponse):
                    raise _Unusable(read)
            return response
        except passed:
            raise
        except Exception as exc:
            # The SDK failed on an answer that came (its JSON, its models, its error mapping): the answer is
            # hostile input, read here. No answer at all means the request itself failed: not a reply problem.
            answer = call.answer
            if answer is None:
                raise
            if answer.status != 200:
                raise _Status(answer) from exc
            read = read_reply(answer.body, answer.content_type)
            if not isinstance(read, RepairedResponse):
                raise _Unusable(read) from exc
            call.repairs = read.repairs
            return read

    def _wait_or_raise(self, call: _Call, exc: BaseException, *, status: int | None, word: str | None = None,
                       message: str | None = None, details: Any = None,
                       headers: Mapping[str, str] | None = None) -> None:
        """An HTTP error answer: wait before the next attempt when it is worth one, else raise."""
        if not is_retryable(status) or call.attempts > self.max_retries:
            why = "not retried" if not is_retryable(status) else f"gave up after {call.attempts} attempts"
            text = one_line(f"{call.model}: {status} {word or ''}: {message or ''}".replace("  ", " "))
            raise LlmError(f"{text} ({why})", model=call.model, status=status, attempts=call.attempts,
                           failure="api_error") from exc
        hint = retry_hint(details, headers)
        wait = backoff_delay(call.attempts, initial_s=self.backoff_initial_s, max_s=self.backoff_max_s, hint=hint)
        call.waits.append(wait)
        self._sleeper(wait)

    def _elapsed(self, started: float) -> int:
        return round((self._clock() - started) * 1000)

    def _audit(self, record: dict[str, Any]) -> None:
        if self.wal is not None:
            self.wal.append(record)

    def close(self) -> None:
        """Close the WAL when the gateway opened it, and the SDK client when the gateway built it."""
        if self._client is not None and self._owns_client:
            self._client.close()
        self._client = None
        if self._owns_wal and self.wal is not None:
            self.wal.close()

    def __enter__(self) -> LlmGateway:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _one_request_per_attempt(config: types.GenerateContentConfig | None) -> types.GenerateContentConfig | None:
    """The config with the SDK's automatic continuation off: left on, an answer carrying a continuation
    token makes the SDK send another request by itself, as long as the server keeps answering so: requests
    the gateway would neither count, nor bound, nor audit."""
    from google.genai import types  # noqa: PLC0415

    if config is None:
        return types.GenerateContentConfig(automatic_continuation=False)
    return config.model_copy(update={"automatic_continuation": False})


def _stderr_warning(text: str) -> None:
    sys.stderr.write(f"[WARNING] {text}\n")
