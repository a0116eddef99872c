"""A scriptable OpenAI-compatible chat-completions server for tests and benchmarks.

Stdlib only (``ThreadingHTTPServer`` on 127.0.0.1, port 0, in a daemon thread), so tests exercise
the real HTTP path of the ``openai`` SDK without touching the internet. It answers
``POST /v1/chat/completions`` and ``GET /v1/models``.

What a reply is, decided per request, in this order:

1. the next entry of the queue filled by :meth:`OpenAITestServer.enqueue` (one entry per request);
2. otherwise ``responder(request_json, n)`` (``n`` = 1-based request number), which returns a
   ``str`` (the assistant content) or a :class:`Reply`;
3. otherwise the fixed ``reply`` text (default ``"A"``).

A :class:`Reply` can be normal text, an HTTP error (429 with ``Retry-After``, 500, …), a body that
is not JSON, ``choices: []``, or a slow reply; ``latency`` delays every reply.

Server-wide behaviours of small real servers (:meth:`OpenAITestServer.like_llama_cpp` turns on the
ones of llama.cpp's ``llama-server``):

- ``context_size``: a prompt estimated above it gets HTTP 400 "the request exceeds the available
  context size"; ``/v1/models`` then reports it as ``meta.n_ctx_train`` (llama.cpp) and
  ``max_model_len`` (vLLM);
- ``serial``: one request is computed at a time, the others wait (``max_in_flight`` still counts
  the requests received, ``max_computing`` the ones computed at once);
- ``reject_json_schema``: ``response_format: {"type": "json_schema"}`` gets HTTP 500 naming it;
- ``api_key``: a request without ``Authorization: Bearer <api_key>`` gets HTTP 401. The server counts requests, keeps
their bodies and records the maximum number handled at once (``max_in_flight``)::

    with OpenAITestServer(reply="B", latency=0.2) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        ...
        assert server.count == 10 and server.max_in_flight <= 4
"""
from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from casebook.text import cjk_count

__all__ = ["OpenAITestServer", "Reply", "completion_body"]


@dataclass
class Reply:
    """One scripted answer; build it with the class methods."""

    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # extra seconds before answering (on top of the server latency)
    raw_body: bytes | None = None  # sent verbatim instead of a chat.completion JSON
    usage: dict[str, int] | None = None

    @classmethod
    def text(cls, content: str, *, delay: float = 0.0, usage: dict[str, int] | None = None) -> Reply:
        return cls(content=content, delay=delay, usage=usage)

    @classmethod
    def error(cls, status: int = 500, message: str = "scripted failure", retry_after: float | None = None) -> Reply:
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        body = json.dumps({"error": {"message": message, "type": "server_error", "code": status}}).encode()
        return cls(status=status, headers=headers, raw_body=body)

    @classmethod
    def rate_limited(cls, retry_after: float = 0.05) -> Reply:
        return cls.error(429, "rate limited", retry_after=retry_after)

    @classmethod
    def malformed(cls) -> Reply:
        """HTTP 200 whose body is not JSON (a broken proxy or provider)."""
        return cls(raw_body=b'{"id": "chatcmpl-broken", "choices": [ {"message": ')

    @classmethod
    def slow(cls, seconds: float, content: str = "A") -> Reply:
        return cls(content=content, delay=seconds)

    @classmethod
    def no_choices(cls) -> Reply:
        """HTTP 200 with a well-formed completion that has ``choices: []``."""
        body = {"id": "chatcmpl-empty", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
        return cls(raw_body=json.dumps(body).encode())


Responder = Callable[[dict[str, Any], int], "str | Reply"]


def estimate_tokens(text: str) -> int:
    """Rough token count for the fake ``usage`` block (1 per CJK char, 0.75 words per token)."""
    cjk = cjk_count(text)
    words = len(text.split())
    return cjk + int(words / 0.75) + 1


def _message_text(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "\n".join(parts)


def completion_body(content: str, model: str, request: dict[str, Any] | None = None,
                    usage: dict[str, int] | None = None) -> dict[str, Any]:
    """The minimal ``chat.completion`` object the SDK accepts, with a plausible ``usage``."""
    if usage is None:
        prompt = estimate_tokens(_message_text((request or {}).get("messages", [])))
        completion = estimate_tokens(content)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return {
        "id": f"chatcmpl-test-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": usage,
    }


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog of 5 drops connections at concurrency 32
    daemon_threads = True


class OpenAITestServer:
    """Start with ``with OpenAITestServer(...) as server`` (or :meth:`start` / :meth:`stop`)."""

    def __init__(self, reply: str = "A", responder: Responder | None = None, latency: float = 0.0,
                 fail_after: int | None = None, fail_status: int = 500, port: int = 0,
                 context_size: int | None = None, serial: bool = False, reject_json_schema: bool = False,
                 api_key: str | None = None, advertise_context: bool = True) -> None:
        self.reply = reply
        #: 0 = a free port; give an earlier server's port to restart "the same endpoint"
        self.requested_port = port
        self.context_size = context_size
        self.serial = serial
        self.reject_json_schema = reject_json_schema
        self.api_key = api_key
        self.advertise_context = advertise_context  # False: /v1/models says nothing about the context
        self.computing = 0
        self.max_computing = 0
        self._compute_lock = threading.Lock()
        self.responder = responder
        self.latency = latency
        #: after this many requests every further request fails with ``fail_status`` (a dying endpoint)
        self.fail_after = fail_after
        self.fail_status = fail_status
        self.requests: list[dict[str, Any]] = []
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: deque[str | Reply] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def like_llama_cpp(cls, context_size: int = 2048, **kwargs: Any) -> OpenAITestServer:
        """llama.cpp's server: one slot (serial), a small context, HTTP 500 on ``json_schema``."""
        return cls(context_size=context_size, serial=True, reject_json_schema=True, **kwargs)

    # -- scripting -----------------------------------------------------------------------
    def enqueue(self, *replies: str | Reply) -> None:
        """Serve these replies, one per request, before falling back to responder / reply."""
        with self._lock:
            self._queue.extend(replies)

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.count = 0
            self.max_in_flight = 0
            self.max_computing = 0

    # -- lifecycle -----------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAITestServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: the SDK reuses connections
            disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stall)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                return

            def handle(self) -> None:
                with contextlib.suppress(ConnectionResetError, BrokenPipeError):  # a client that gave up
                    super().handle()

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                if self.path.rstrip("/").endswith("/models"):
                    entry: dict[str, Any] = {"id": "test-model", "object": "model", "created": 0, "owned_by": "casebook"}
                    if server.context_size and server.advertise_context:
                        entry["meta"] = {"n_ctx_train": server.context_size}
                        entry["max_model_len"] = server.context_size
                    self._send(200, json.dumps({"object": "list", "data": [entry]}).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                try:
                    request = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, b'{"error": {"message": "request body is not JSON"}}')
                    return
                if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    self._send(401, b'{"error": {"message": "Invalid API Key", "type": "authentication_error"}}')
                    return
                server._handle(self, request)

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up (timeout)
                    self.wfile.write(body)

        self._httpd = _Server(("127.0.0.1", self.requested_port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="openai-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling ----------------------------------------------------------------
    def _refusal(self, request: dict[str, Any]) -> Reply | None:
        """What a small real server refuses before computing anything."""
        if self.reject_json_schema and (request.get("response_format") or {}).get("type") == "json_schema":
            return Reply.error(500, "Unsupported response_format type: json_schema")
        if self.context_size is not None:
            tokens = estimate_tokens(_message_text(request.get("messages", [])))
            if tokens > self.context_size:
                return Reply.error(400, f"the request exceeds the available context size ({tokens} tokens > "
                                        f"n_ctx {self.context_size}), try increasing it")
        return None

    def _choose(self, request: dict[str, Any], n: int) -> Reply:
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        with self._lock:
            queued = self._queue.popleft() if self._queue else None
        if queued is None and self.fail_after is not None and n > self.fail_after:
            queued = Reply.error(self.fail_status, "endpoint down (fail_after)")
        if queued is None:
            queued = self.responder(request, n) if self.responder else self.reply
        return Reply.text(queued) if isinstance(queued, str) else queued

    def _handle(self, handler: Any, request: dict[str, Any]) -> None:
        with self._lock:
            self.count += 1
            n = self.count
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            reply = self._choose(request, n)
            with self._compute_lock if self.serial else contextlib.nullcontext():
                with self._lock:
                    self.computing += 1
                    self.max_computing = max(self.max_computing, self.computing)
                wait = self.latency + reply.delay
                if wait > 0:
                    time.sleep(wait)
                with self._lock:
                    self.computing -= 1
            if reply.raw_body is not None:
                body = reply.raw_body
            else:
                body = json.dumps(completion_body(reply.content, request.get("model", "test-model"), request,
                                                  reply.usage), ensure_ascii=False).encode()
        finally:
            with self._lock:
                self.in_flight -= 1
        handler._send(reply.status, body, reply.headers)


def main(argv: list[str] | None = None) -> int:
    """``python -m casebook.openai_test_server --latency 0.2``: serve until interrupted.

    Prints the base URL on the first line of stdout (for benchmarks and manual runs).
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="Scriptable OpenAI-compatible test server on 127.0.0.1")
    parser.add_argument("--reply", default='{"answer": "a"}', help="assistant content of every reply")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    args = parser.parse_args(argv)
    server = OpenAITestServer(reply=args.reply, latency=args.latency).start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
