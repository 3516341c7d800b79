"""A local OpenAI-compatible HTTP server for offline tests.

`OpenAICompatServer` listens on 127.0.0.1 (standard library only: a
`ThreadingHTTPServer` in a daemon thread) and answers the subset of the OpenAI
REST API that an agent framework exercises: chat completions (plain and
streamed as Server-Sent Events), model listing, image generation and
embeddings. Tests script the answers with `ServerReply` objects and inspect
what the client sent through `RecordedRequest` objects, so the real
LiteLLM / OpenAI SDK / HTTP path runs with no provider and no network.

Example:
    ```python
    with OpenAICompatServer() as server:
        server.enqueue(ServerReply.tool_calls([("search", {"q": "x"})]), ServerReply.text("done"))
        litellm.completion(model="openai/test-model", api_base=server.base_url,
                           api_key="sk-test", messages=[{"role": "user", "content": "hi"}])
        assert server.requests[0].headers["authorization"] == "<redacted>"
    ```
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import json
import re
import socket
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast

__all__ = ["OpenAICompatServer", "RecordedRequest", "ReplyHandler", "ServerReply"]

REDACTED = "<redacted>"
_SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key"})
# A valid 1x1 RGBA PNG (one semi-transparent blue pixel).
_TINY_PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA"
    "60e6kgAAAABJRU5ErkJggg=="
)
_EMBEDDING_DIMENSIONS = 8


@dataclass(frozen=True)
class ServerReply:
    """What the server answers to one ``/v1/chat/completions`` request.

    Build instances with the class methods (`text`, `tool_calls`, `json`, `error`,
    `context_length_exceeded`) rather than the constructor.

    Attributes:
        content: Assistant message text, or None.
        reasoning: Reasoning text, sent as ``reasoning_content`` (streamed as deltas).
        calls: Tool calls as ``(name, arguments)`` pairs; arguments is the exact text sent.
        usage: Explicit usage numbers; when None, rough counts are derived from text length.
        delay: Seconds to sleep before answering.
        finish_reason: Overrides the computed finish reason ("stop" / "tool_calls").
        status: HTTP status; anything but 200 makes this an error reply.
        error_body: The ``error`` object of an error reply.
        headers: Extra response headers (e.g. ``retry-after`` on a 429).
        images: Image URLs (or ``data:`` URLs) sent as the message's ``images``, the way
            OpenRouter returns images made by chat completions.
        refusal: A refusal, sent as the message's ``refusal`` (content null), the way
            OpenAI declines a request (streamed as ``refusal`` deltas).
        raw: A body sent verbatim with HTTP 200, whether or not the request streams (JSON
            encoded unless it is bytes): a provider's malformed reply (see `malformed`).
        stream_cut: Streamed answers only: the server sends this many events, then closes the
            connection without a finish reason or ``[DONE]`` (a stream cut midway).
    """

    content: str | None = None
    reasoning: str | None = None
    calls: tuple[tuple[str, str], ...] = ()
    usage: dict[str, int] | None = None
    delay: float = 0.0
    finish_reason: str | None = None
    status: int = 200
    error_body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    images: tuple[str, ...] = ()
    refusal: str | None = None
    raw: Any = None
    stream_cut: int | None = None

    @classmethod
    def text(
        cls,
        content: str,
        *,
        reasoning: str | None = None,
        usage: dict[str, int] | None = None,
        delay: float = 0.0,
        finish_reason: str | None = None,
    ) -> ServerReply:
        """A plain assistant message (finish_reason "stop" unless overridden, e.g. "length")."""
        return cls(
            content=content,
            reasoning=reasoning,
            usage=usage,
            delay=delay,
            finish_reason=finish_reason,
        )

    @classmethod
    def tool_calls(
        cls,
        calls: list[tuple[str, dict[str, Any] | str]],
        *,
        content: str | None = None,
        reasoning: str | None = None,
        usage: dict[str, int] | None = None,
        delay: float = 0.0,
    ) -> ServerReply:
        """An assistant message requesting tool calls (finish_reason "tool_calls").

        Args:
            calls: ``(tool_name, arguments)`` pairs. A dict is JSON-encoded; a string is
                sent verbatim, so tests can send malformed JSON. Ids ``call_<n>`` are
                assigned by the server, unique per server instance.
            content: Optional text alongside the calls.
            reasoning: Optional reasoning text.
            usage: Optional explicit usage numbers.
            delay: Seconds to sleep before answering.
        """
        encoded = tuple(
            (name, args if isinstance(args, str) else json.dumps(args)) for name, args in calls
        )
        return cls(content=content, reasoning=reasoning, calls=encoded, usage=usage, delay=delay)

    @classmethod
    def image(cls, *urls: str, content: str | None = None) -> ServerReply:
        """An assistant message carrying generated images (``message.images``)."""
        return cls(content=content, images=urls)

    @classmethod
    def json(cls, data: Any, **kw: Any) -> ServerReply:
        """A text reply whose content is ``json.dumps(data)``; ``kw`` is passed to `text`."""
        return cls.text(json.dumps(data), **kw)

    @classmethod
    def error(
        cls,
        status: int,
        message: str,
        *,
        type: str = "server_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> ServerReply:
        """An HTTP error with OpenAI's body ``{"error": {message, type, code, param}}``."""
        body = {"message": message, "type": type, "code": code, "param": param}
        return cls(status=status, error_body=body, headers=dict(headers or {}), delay=delay)

    @classmethod
    def context_length_exceeded(
        cls, *, max_tokens: int = 128000, requested: int = 131072
    ) -> ServerReply:
        """HTTP 400 with the body OpenAI sends when the prompt is too long."""
        message = (
            f"This model's maximum context length is {max_tokens} tokens. However, your "
            f"messages resulted in {requested} tokens. Please reduce the length of the messages."
        )
        return cls.error(
            400,
            message,
            type="invalid_request_error",
            code="context_length_exceeded",
            param="messages",
        )

    @classmethod
    def refused(cls, refusal: str) -> ServerReply:
        """The model declines: ``refusal`` set, no content (finish_reason "stop")."""
        return cls(refusal=refusal)

    @classmethod
    def malformed(cls, body: Any) -> ServerReply:
        """HTTP 200 with ``body`` as it is (``{"choices": []}``, ``b"{not json"``)."""
        return cls(raw=body)

    @property
    def is_error(self) -> bool:
        """Whether this reply is an HTTP error."""
        return self.status != 200


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request received by the server.

    Attributes:
        path: Request path without the query string (e.g. ``/v1/chat/completions``).
        method: HTTP method.
        body: The decoded JSON object (``{}`` for an empty or malformed body).
        headers: Headers with lower-cased names. Credential headers (``authorization``,
            ``api-key``, ``x-api-key``) keep their key but their value is ``"<redacted>"``.
    """

    path: str
    method: str
    body: dict[str, Any]
    headers: dict[str, str]


ReplyHandler = Callable[[RecordedRequest], ServerReply]


class _BadRequest(Exception):
    """The request body could not be used; answered with HTTP 400."""


class OpenAICompatServer:
    """A local OpenAI-compatible HTTP server for tests.

    Chat completion requests are answered from a FIFO queue of `ServerReply`
    objects; when it is empty, by the handler set with `set_handler`, else by
    ``default`` (a reply, or a callable returning one), else ``ServerReply.text("ok")``.
    A handler that raises makes the server answer HTTP 500. Every request is
    recorded (see `requests`). Only the loopback interface is meant to be used.

    Args:
        host: Interface to bind; keep the default loopback address.
        port: TCP port; 0 picks a free one.
        default: The reply (or a reply handler) used when the queue is empty.
        model_ids: Models listed by ``GET /v1/models`` (default ``["test-model"]``).
        generate_images: When False, ``POST /v1/images/generations`` answers with an empty
            ``data`` list (a model that makes images only through chat completions).
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        default: ServerReply | ReplyHandler | None = None,
        model_ids: list[str] | None = None,
        generate_images: bool = True,
    ) -> None:
        self._host = host
        self._port = port
        self._default = default
        self._handler: ReplyHandler | None = None
        self.model_ids = list(model_ids) if model_ids is not None else ["test-model"]
        self.generate_images = generate_images
        self._lock = threading.Lock()
        self._queue: deque[ServerReply] = deque()
        self._requests: list[RecordedRequest] = []
        self._call_ids = itertools.count(1)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> OpenAICompatServer:
        """Bind the socket and serve in a daemon thread. Idempotent; returns self."""
        if self._httpd is not None:
            return self
        httpd = _HTTPServer((self._host, self._port), _Handler)
        httpd.app = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"openai-compat-server:{httpd.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the socket and any open client connections. Idempotent."""
        httpd, thread = self._httpd, self._thread
        self._httpd = None
        self._thread = None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        httpd.close_connections()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> OpenAICompatServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> OpenAICompatServer:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound TCP port (raises RuntimeError before `start`)."""
        if self._httpd is None:
            raise RuntimeError("OpenAICompatServer is not started; call start() first")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, e.g. ``http://127.0.0.1:54321/v1``."""
        return f"http://{self._host}:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------------

    def enqueue(self, *replies: ServerReply) -> None:
        """Append replies to the FIFO used for chat completion requests. Thread-safe."""
        with self._lock:
            self._queue.extend(replies)

    def set_handler(self, handler: ReplyHandler | None) -> None:
        """Set (or remove with None) the callable that answers when the queue is empty."""
        with self._lock:
            self._handler = handler

    @property
    def pending(self) -> int:
        """How many queued replies have not been used yet."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def clear(self) -> None:
        """Forget recorded requests and drop queued replies (handler and default stay)."""
        with self._lock:
            self._requests.clear()
            self._queue.clear()

    # -- used by the request handler -------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_reply(self, request: RecordedRequest) -> ServerReply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            handler, default = self._handler, self._default
        if handler is not None:
            return handler(request)
        if isinstance(default, ServerReply):
            return default
        return default(request) if default is not None else ServerReply.text("ok")

    def _new_call_id(self) -> str:
        with self._lock:
            return f"call_{next(self._call_ids)}"


class _HTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer that knows its `OpenAICompatServer` and its open connections."""

    daemon_threads = True
    app: OpenAICompatServer

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: a client dropping its connection is not a test failure."""

    def close_connections(self) -> None:
        """Shut down idle keep-alive connections so their threads end."""
        with self.connections_lock:
            connections = list(self.connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    """Routes requests to the OpenAI-shaped endpoints."""

    protocol_version = "HTTP/1.1"
    server_version = "deskwork-openai-compat/1.0"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Suppress the default per-request logging to stderr."""

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    # -- dispatch --------------------------------------------------------------------------

    def _dispatch(self) -> None:
        try:
            self._route()
        except _BadRequest as exc:
            self._send_error(400, str(exc), "invalid_request_error")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # never let a handler bug kill the connection thread
            self.close_connection = True
            with contextlib.suppress(OSError):
                self._send_error(500, f"test server error: {exc!r}", "server_error")

    def _route(self) -> None:
        raw = self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        route = path.removeprefix("/v1")
        parsed = _parse_json(raw)
        request = RecordedRequest(
            path=path, method=self.command, body=parsed or {}, headers=self._headers()
        )
        self.server.app._record(request)
        if parsed is None:
            raise _BadRequest("We could not parse the JSON body of your request.")
        if self.command == "POST" and route == "/chat/completions":
            self._chat_completions(request)
        elif self.command == "GET" and route == "/models":
            self._send_json(200, _models_body(self.server.app.model_ids))
        elif self.command == "GET" and route.startswith("/models/"):
            self._model(route.removeprefix("/models/"))
        elif self.command == "POST" and route == "/images/generations":
            self._send_json(200, _images_body(request.body, self.server.app.generate_images))
        elif self.command == "POST" and route == "/embeddings":
            self._send_json(200, _embeddings_body(request.body))
        else:
            self._send_error(404, f"Unknown request URL: {self.command} {path}", "not_found")

    def _headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        for key, value in self.headers.items():
            name = key.lower()
            headers[name] = REDACTED if name in _SECRET_HEADERS else value
        return headers

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # skip trailers
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline()

    # -- endpoints -------------------------------------------------------------------------

    def _chat_completions(self, request: RecordedRequest) -> None:
        app = self.server.app
        reply = app._next_reply(request)
        if reply.delay > 0:
            time.sleep(reply.delay)
        if reply.raw is not None:
            self._send_json(200, reply.raw, reply.headers)
            return
        if reply.is_error:
            self._send_json(reply.status, {"error": reply.error_body}, reply.headers)
            return
        model = str(request.body.get("model") or "test-model")
        call_ids = [app._new_call_id() for _ in reply.calls]
        prompt_tokens = _rough_tokens(json.dumps(request.body.get("messages", [])))
        if request.body.get("stream") is True:
            options = request.body.get("stream_options") or {}
            include_usage = isinstance(options, dict) and options.get("include_usage") is True
            events = _stream_events(reply, model, call_ids, prompt_tokens, include_usage)
            if reply.stream_cut is not None:
                events = itertools.islice(events, reply.stream_cut)
            self._send_stream(events, reply.headers, done=reply.stream_cut is None)
        else:
            body = _completion_body(reply, model, call_ids, prompt_tokens)
            self._send_json(200, body, reply.headers)

    def _model(self, model_id: str) -> None:
        if model_id in self.server.app.model_ids:
            self._send_json(200, _model_entry(model_id))
        else:
            message = f"The model '{model_id}' does not exist"
            self._send_error(404, message, "invalid_request_error", "model_not_found")

    # -- responses -------------------------------------------------------------------------

    def _send_error(self, status: int, message: str, type_: str, code: str | None = None) -> None:
        body = {"error": {"message": message, "type": type_, "code": code, "param": None}}
        self._send_json(status, body)

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:  # say so, or the client may reuse the connection we drop
            self.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_stream(
        self, events: Iterator[dict[str, Any]], headers: dict[str, str], *, done: bool = True
    ) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        if done:
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()


# -- response bodies (pure functions) ----------------------------------------------------------


def _parse_json(raw: bytes) -> dict[str, Any] | None:
    """The JSON object in ``raw``: ``{}`` when empty, None when malformed or not an object."""
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError:  # includes UnicodeDecodeError
        return None
    return cast(dict[str, Any], data) if isinstance(data, dict) else None


def _rough_tokens(text: str) -> int:
    """About four characters per token, at least one."""
    return max(1, (len(text) + 3) // 4)


def _usage(reply: ServerReply, prompt_tokens: int) -> dict[str, Any]:
    if reply.usage is not None:
        usage: dict[str, Any] = dict(reply.usage)
        usage.setdefault("prompt_tokens", 0)
        usage.setdefault("completion_tokens", 0)
        usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        return usage
    produced = "".join(name + args for name, args in reply.calls)
    completion = _rough_tokens((reply.content or "") + (reply.reasoning or "") + produced)
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": prompt_tokens + completion,
    }
    if reply.reasoning:
        usage["completion_tokens_details"] = {"reasoning_tokens": _rough_tokens(reply.reasoning)}
    return usage


def _finish_reason(reply: ServerReply) -> str:
    if reply.finish_reason is not None:
        return reply.finish_reason
    return "tool_calls" if reply.calls else "stop"


def _completion_body(
    reply: ServerReply, model: str, call_ids: list[str], prompt_tokens: int
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.content,
        "refusal": reply.refusal,
    }
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    if reply.images:
        message["images"] = [
            {"type": "image_url", "image_url": {"url": url}, "index": index}
            for index, url in enumerate(reply.images)
        ]
    if reply.calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
            for call_id, (name, args) in zip(call_ids, reply.calls, strict=True)
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _finish_reason(reply),
            }
        ],
        "usage": _usage(reply, prompt_tokens),
    }


def _split_words(text: str) -> list[str]:
    """Split text into word-sized pieces that join back to ``text`` (at least 2 if possible)."""
    pieces: list[str] = re.findall(r"\S+\s*|\s+", text)
    if len(pieces) < 2 and len(text) >= 2:
        half = len(text) // 2
        pieces = [text[:half], text[half:]]
    return pieces


def _split_arguments(args: str) -> list[str]:
    """Split tool arguments into (up to) three pieces, at least two when ``len(args) >= 2``."""
    if len(args) < 2:
        return [args] if args else []
    size = max(1, -(-len(args) // 3))
    return [args[i : i + size] for i in range(0, len(args), size)]


def _delta_sequence(reply: ServerReply, call_ids: list[str]) -> Iterator[dict[str, Any]]:
    """The ``delta`` objects of a streamed answer, in OpenAI's order."""
    yield {"role": "assistant"}
    for piece in _split_words(reply.reasoning or ""):
        yield {"reasoning_content": piece}
    for piece in _split_words(reply.content or ""):
        yield {"content": piece}
    for piece in _split_words(reply.refusal or ""):
        yield {"refusal": piece}
    for index, (call_id, (name, args)) in enumerate(zip(call_ids, reply.calls, strict=True)):
        function = {"name": name, "arguments": ""}
        yield {
            "tool_calls": [
                {"index": index, "id": call_id, "type": "function", "function": function}
            ]
        }
        for piece in _split_arguments(args):
            yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}


def _stream_events(
    reply: ServerReply,
    model: str,
    call_ids: list[str],
    prompt_tokens: int,
    include_usage: bool,
) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed answer (without ``[DONE]``)."""
    base: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
    }
    extra: dict[str, Any] = {"usage": None} if include_usage else {}

    def chunk(delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {**base, "choices": [choice], **extra}

    for delta in _delta_sequence(reply, call_ids):
        yield chunk(delta, None)
    yield chunk({}, _finish_reason(reply))
    if include_usage:
        yield {**base, "choices": [], "usage": _usage(reply, prompt_tokens)}


def _model_entry(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": 0, "owned_by": "deskwork-testing"}


def _models_body(model_ids: list[str]) -> dict[str, Any]:
    return {"object": "list", "data": [_model_entry(model_id) for model_id in model_ids]}


def _images_body(body: dict[str, Any], generate: bool = True) -> dict[str, Any]:
    if not generate:
        return {"created": int(time.time()), "data": []}
    n = body.get("n")
    count = n if isinstance(n, int) else 1
    prompt = str(body.get("prompt", ""))
    item = {"b64_json": _TINY_PNG_B64, "revised_prompt": prompt}
    return {"created": int(time.time()), "data": [dict(item) for _ in range(max(1, count))]}


def _embedding(item: Any) -> list[float]:
    """A deterministic unit vector derived from a hash of ``item``."""
    digest = hashlib.sha256(json.dumps(item, sort_keys=True).encode()).digest()
    raw = [b / 127.5 - 1.0 for b in digest[:_EMBEDDING_DIMENSIONS]]
    norm = sum(x * x for x in raw) ** 0.5 or 1.0
    return [round(x / norm, 6) for x in raw]


def _embeddings_body(body: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's embeddings answer; one vector per input (a string, token list, or a list)."""
    given = body.get("input", "")
    is_single = isinstance(given, str) or (
        isinstance(given, list) and all(isinstance(x, int) for x in given) and given
    )
    inputs: list[Any] = [given] if is_single else list(given or [])
    base64_format = body.get("encoding_format") == "base64"
    data = []
    for index, item in enumerate(inputs):
        vector = _embedding(item)
        encoded: Any = vector
        if base64_format:
            encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    tokens = sum(_rough_tokens(json.dumps(item)) for item in inputs) if inputs else 0
    return {
        "object": "list",
        "data": data,
        "model": str(body.get("model") or "test-embedding"),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
