"""Asking an OpenAI-compatible chat endpoint many questions, cheaply and reproducibly.

- :class:`ChatRequest` is everything that decides an answer (model, messages, parameters); its
  :meth:`~ChatRequest.key` is the SHA-256 of that request as canonical JSON.
- :class:`ResponseCache` stores one JSON file per successful response under that key (which also
  names the endpoint, so two servers never share answers), written atomically as each answer
  arrives: a rerun sends zero requests and an interrupted run resumes with only the missing ones.
  Failures, empty replies and broken 200 responses (non-JSON body, ``choices: []``) are never
  cached, so they are retried next time.
- Every failure carries a reason (:data:`FAILURE_REASONS`); 401/403 stops the whole run at once
  (:class:`EndpointAuthError`): every further request would fail the same way.
- :class:`ChatClient` sends requests with the async ``openai`` SDK under a semaphore (bounded
  concurrency), retrying 429 / 5xx / timeouts / connection errors with exponential backoff and
  full jitter (a server's ``Retry-After`` is honoured when longer), and adds up token usage and a
  cost estimate from configurable per-million-token prices.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import os
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

__all__ = [
    "ChatClient", "ChatRequest", "ChatResult", "EndpointAuthError", "FAILURE_REASONS", "Prices", "ResponseCache",
    "Usage", "DEFAULT_PRICES", "classify_failure",
]

#: why a request ended without an answer
FAILURE_REASONS = {
    "context": "the prompt is longer than the server's context window (HTTP 400 naming the context/tokens)",
    "auth": "the endpoint refused the key (HTTP 401/403)",
    "server": "HTTP error, connection error, or a broken/empty 200 response",
    "timeout": "no reply within --timeout seconds of sending",
    "images": "the server refused requests with images twice; no further image is sent (use --text-only)",
}
IMAGE_REFUSALS_TO_STOP = 2  # image requests refused (HTTP 4xx/5xx) before images are given up


def has_images(request: ChatRequest) -> bool:
    return any(isinstance(m.get("content"), list) and any(p.get("type") == "image_url" for p in m["content"])
               for m in request.messages)
_CONTEXT_WORDS = ("context", "token", "too long", "exceeds", "maximum", "n_ctx")


class EndpointAuthError(RuntimeError):
    """The endpoint answered 401/403: the run stops at once instead of failing every request."""


class BrokenResponseError(RuntimeError):
    """An HTTP 200 whose body is not a usable chat completion (no JSON, ``choices: []``, no content)."""


def classify_failure(exc: Exception) -> str:
    """``context`` / ``auth`` / ``timeout`` / ``server`` for an exception from the SDK."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code in (401, 403):
            return "auth"
        text = str(exc).lower()
        if exc.status_code in (400, 413) and any(word in text for word in _CONTEXT_WORDS):
            return "context"
    return "server"


def endpoint_id(base_url: str | None) -> str:
    """The endpoint as part of the cache key: the SDK's default when no --base-url is given."""
    return (base_url or "https://api.openai.com/v1").rstrip("/")


@dataclass(frozen=True)
class Prices:
    """USD per million tokens."""

    input: float = 0.0
    output: float = 0.0


# Indicative list prices (USD / 1M tokens); override with --price-in/--price-out for anything else.
DEFAULT_PRICES: dict[str, Prices] = {
    "gpt-4o": Prices(2.5, 10.0),
    "gpt-4o-mini": Prices(0.15, 0.6),
    "gpt-4.1": Prices(2.0, 8.0),
    "gpt-4.1-mini": Prices(0.4, 1.6),
    "gpt-4.1-nano": Prices(0.1, 0.4),
}


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)  # temperature, seed, max_tokens, …

    def canonical(self) -> str:
        return json.dumps({"model": self.model, "messages": self.messages, "params": self.params},
                          ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    def key(self, endpoint: str = "") -> str:
        """Cache key: a change of endpoint, model, any message or parameter is a different request.

        Memoised per endpoint (image requests serialise megabytes); build a new request rather
        than mutating one.
        """
        memo = self.__dict__.setdefault("_keys", {})
        if endpoint not in memo:
            text = (endpoint + "\n" if endpoint else "") + self.canonical()
            memo[endpoint] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return memo[endpoint]


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens

    def cost(self, prices: Prices) -> float:
        return (self.prompt_tokens * prices.input + self.completion_tokens * prices.output) / 1_000_000


@dataclass
class ChatResult:
    key: str
    content: str | None  # None when the request failed for good
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    error: str = ""
    attempts: int = 0
    failure: str = ""  # a FAILURE_REASONS key when content is None


class ResponseCache:
    """One file per response: ``<dir>/<key[:2]>/<key>.json`` holding content, usage and the request."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None  # a torn file from a crash: treat as missing, it will be rewritten

    def put(self, key: str, request: ChatRequest, content: str, usage: Usage) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "content": content,
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens},
            "model": request.model,
            "params": request.params,
            "created": time.time(),
        }
        tmp = path.with_suffix(f".{os.getpid()}.{random.getrandbits(32):08x}.tmp")
        tmp.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)  # atomic: a killed run never leaves a half-written entry


RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


def retry_after(exc: Exception) -> float | None:
    """The wait (seconds) an API error's response asks for: ``retry-after-ms``, else ``retry-after``."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            return None
    value = headers.get("retry-after")
    try:
        return float(value) if value else None
    except ValueError:
        return None


def is_retryable(exc: Exception) -> bool:
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


class AdaptiveLimit:
    """Requests in flight, adapting to a server that queues (additive increase, multiplicative decrease).

    The limit starts at 1 (slow start: nothing is known about the server yet). A reply near the
    fastest latency seen so far raises it by one, up to the configured maximum; a reply slower
    than ``slow_factor`` × the fastest (the server is queueing our requests), or a timeout, halves
    it (at least 1). So ``--concurrency 8`` against a one-request-at-a-time server keeps one or two
    requests in flight instead of timing out queued requests and re-sending them, while a server
    that computes in parallel soon gets all eight.
    """

    def __init__(self, maximum: int, slow_factor: float = 3.0, min_latency_floor: float = 0.05) -> None:
        self.maximum = max(1, maximum)
        self.limit = 1
        self.slow_factor = slow_factor
        self.floor = min_latency_floor
        self.fastest: float | None = None
        self.in_flight = 0
        self.highest_limit = self.limit
        self._cond = asyncio.Condition()

    async def __aenter__(self) -> AdaptiveLimit:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    def observe(self, latency: float | None) -> None:
        """Record one reply's latency (None = timed out)."""
        if latency is not None:
            self.fastest = latency if self.fastest is None else min(self.fastest, latency)
        baseline = max(self.fastest or 0.0, self.floor)
        if latency is None or latency > self.slow_factor * baseline:
            self.limit = max(1, self.limit // 2)
        elif latency <= 1.5 * baseline and self.limit < self.maximum:
            self.limit += 1
        self.highest_limit = max(self.highest_limit, self.limit)


class ChatClient:
    """Async chat client with a cache, adaptive bounded concurrency and retries; counts sent and cached.

    ``timeout`` runs from the moment a request is sent (requests waiting for a free slot are not
    on the clock). ``refresh_failed`` re-sends cached entries that hold an empty reply (written by
    versions that cached broken responses).
    """

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None,
                 cache: ResponseCache | None = None, concurrency: int = 8, max_retries: int = 5,
                 timeout: float = 120.0, backoff_base: float = 0.5, backoff_max: float = 30.0,
                 prices: Prices | None = None, progress: bool = True, seed: int | None = None,
                 refresh_failed: bool = False) -> None:
        self.base_url = base_url
        self.endpoint = endpoint_id(base_url)
        self.api_key = api_key or "not-needed"
        self.cache = cache
        self.concurrency = max(1, concurrency)
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.prices = prices or Prices()
        self.progress = progress
        self.refresh_failed = refresh_failed
        self._jitter = random.Random(seed)
        self.sent = 0  # HTTP requests actually sent (retries included)
        self.cached = 0  # answers served from the cache
        self.failed = 0  # requests that failed for good
        self.failed_by_reason: dict[str, int] = {}
        self.usage = Usage()  # tokens of responses received in this session
        self.cached_usage = Usage()  # tokens recorded for cached responses (what they cost once)
        self.limiter: AdaptiveLimit | None = None
        self.image_refusals = 0  # image requests answered with an HTTP error; at 2 no image is sent again
        self._images_ok = False  # an image request has succeeded: images need no probing any more
        self._image_probe: asyncio.Lock | None = None  # made per run: a lock belongs to one event loop

    def key(self, request: ChatRequest) -> str:
        return request.key(self.endpoint)

    @property
    def cost(self) -> float:
        return self.usage.cost(self.prices)

    def _backoff(self, attempt: int, exc: Exception) -> float:
        """Full-jitter exponential backoff, but never shorter than the server's Retry-After."""
        ceiling = min(self.backoff_max, self.backoff_base * (2 ** attempt))
        delay = self._jitter.uniform(0, ceiling)
        hint = retry_after(exc)
        return max(delay, hint) if hint is not None else delay

    async def _post(self, client: Any, request: ChatRequest) -> tuple[str, Usage]:
        """One HTTP request; a reply without usable content raises :class:`BrokenResponseError`."""
        from openai.types.chat import ChatCompletion

        # client.post (the SDK's documented raw route) instead of chat.completions.create: same
        # HTTP request and errors, without ~4 ms of per-request parameter transformation.
        response = await client.post("/chat/completions", cast_to=ChatCompletion,
                                     body={"model": request.model, "messages": request.messages, **request.params})
        if not isinstance(response, ChatCompletion):
            raise BrokenResponseError("the server answered HTTP 200 with a body that is not a chat completion")
        if not response.choices:
            raise BrokenResponseError("the server answered HTTP 200 with no choices")
        message = response.choices[0].message
        content = message.content if message else None
        if not content or not content.strip():
            raise BrokenResponseError("the server answered HTTP 200 with an empty reply")
        raw_usage = response.usage
        usage = Usage(getattr(raw_usage, "prompt_tokens", 0) or 0, getattr(raw_usage, "completion_tokens", 0) or 0)
        return content, usage

    async def _send(self, client: Any, request: ChatRequest) -> ChatResult:
        """Until an image request has succeeded, image requests go one at a time (with their retries), so
        a server that refuses images sees at most :data:`IMAGE_REFUSALS_TO_STOP` of them."""
        images = has_images(request)
        if images and not self._images_ok:
            self._image_probe = self._image_probe or asyncio.Lock()
            async with self._image_probe:
                return await self._attempts(client, request, images)
        return await self._attempts(client, request, images)

    async def _attempts(self, client: Any, request: ChatRequest, images: bool) -> ChatResult:
        import openai

        key = self.key(request)
        last_error, reason = "", "server"
        for attempt in range(self.max_retries + 1):
            if images and self.image_refusals >= IMAGE_REFUSALS_TO_STOP:
                return ChatResult(key, None, error="not sent: the server refused images twice", attempts=attempt,
                                  failure="images")
            limiter = self.limiter or AdaptiveLimit(self.concurrency)
            async with limiter:
                self.sent += 1
                started = time.monotonic()
                try:
                    content, usage = await self._post(client, request)
                except Exception as exc:  # noqa: BLE001 - every failure becomes a result, never a crash
                    reason = "server" if isinstance(exc, (BrokenResponseError, openai.APIResponseValidationError)) \
                        else classify_failure(exc)
                    if reason == "timeout":  # a quick error says nothing about queueing: only timeouts count
                        limiter.observe(None)
                    error = exc
                else:
                    limiter.observe(time.monotonic() - started)
                    self._images_ok = self._images_ok or images
                    self.usage.add(usage)
                    if self.cache is not None:
                        self.cache.put(key, request, content, usage)
                    return ChatResult(key, content, usage, attempts=attempt + 1)
            last_error = f"{type(error).__name__}: {error}"
            if images and isinstance(error, openai.APIStatusError) and reason == "server" \
                    and error.status_code not in (408, 409, 425, 429):  # busy is not a refusal
                self.image_refusals += 1
            if reason == "auth":
                raise EndpointAuthError(
                    f"the endpoint {self.endpoint} refused the request ({last_error}); check the API key "
                    "(--api-key-env) and the model name — the run was stopped")
            broken = isinstance(error, (BrokenResponseError, ValueError))  # ValueError: a 200 body that is not JSON
            retryable = reason != "context" and (broken or is_retryable(error))
            if retryable and attempt < self.max_retries:
                await asyncio.sleep(self._backoff(attempt, error))
                continue
            return ChatResult(key, None, error=last_error, attempts=attempt + 1, failure=reason)
        return ChatResult(key, None, error=last_error, attempts=self.max_retries + 1, failure=reason)  # pragma: no cover

    def lookup(self, request: ChatRequest) -> ChatResult | None:
        if self.cache is None:
            return None
        key = self.key(request)
        hit = self.cache.get(key)
        if hit is None:
            return None
        content = hit.get("content")
        if not isinstance(content, str) or (self.refresh_failed and not content.strip()):
            return None
        usage = Usage(**hit.get("usage", {}))
        return ChatResult(key, content, usage, cached=True)

    async def run(self, requests: Sequence[ChatRequest], desc: str = "requests") -> list[ChatResult]:
        """Answer every request (cache first), in the order given."""
        results: list[ChatResult | None] = [None] * len(requests)
        pending: list[int] = []
        for i, request in enumerate(requests):
            hit = self.lookup(request)
            if hit is not None:
                self.cached += 1
                self.cached_usage.add(hit.usage)
                results[i] = hit
            else:
                pending.append(i)
        if pending:
            results = await self._run_pending(requests, pending, results, desc)
        return [r for r in results if r is not None]

    async def _run_pending(self, requests: Sequence[ChatRequest], pending: Iterable[int],
                           results: list[ChatResult | None], desc: str) -> list[ChatResult | None]:
        pending = list(pending)
        self.limiter = AdaptiveLimit(self.concurrency)
        self._image_probe = asyncio.Lock()
        # Identical requests inside one batch are sent once.
        first_of: dict[str, int] = {}
        duplicates: dict[int, int] = {}
        unique: list[int] = []
        for i in pending:
            key = self.key(requests[i])
            if key in first_of:
                duplicates[i] = first_of[key]
            else:
                first_of[key] = i
                unique.append(i)
        import openai  # imported here: 2+ s of import time that offline baselines never need

        client = openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                                    timeout=self.timeout)
        bar = tqdm(total=len(unique), desc=desc, unit="req", disable=not self.progress, leave=False)

        async def one(i: int) -> None:
            result = results[i] = await self._send(client, requests[i])
            if result.content is None:
                self.failed += 1
                self.failed_by_reason[result.failure] = self.failed_by_reason.get(result.failure, 0) + 1
            bar.update(1)

        tasks = [asyncio.ensure_future(one(i)) for i in unique]
        try:
            await asyncio.gather(*tasks)
        except EndpointAuthError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            bar.close()
            await client.close()
        for i, j in duplicates.items():
            source = results[j]
            assert source is not None
            results[i] = ChatResult(source.key, source.content, Usage(), cached=source.content is not None,
                                    error=source.error, failure=source.failure)
            if source.content is not None:
                self.cached += 1
        return results

    def run_sync(self, requests: Sequence[ChatRequest], desc: str = "requests") -> list[ChatResult]:
        return run_blocking(self.run(requests, desc))

    def stats(self) -> dict[str, Any]:
        return {
            "sent": self.sent,
            "cached": self.cached,
            "failed": self.failed,
            "failed_by_reason": dict(sorted(self.failed_by_reason.items())),
            "highest_concurrency_reached": self.limiter.highest_limit if self.limiter else 0,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "cost_usd": round(self.cost, 6),
            "cached_prompt_tokens": self.cached_usage.prompt_tokens,
            "cached_completion_tokens": self.cached_usage.completion_tokens,
            "cost_usd_if_uncached": round(self.cost + self.cached_usage.cost(self.prices), 6),
            "prices_per_million": {"input": self.prices.input, "output": self.prices.output},
        }


def run_blocking(coro: Any) -> Any:
    """Run a coroutine to completion from synchronous code.

    ``asyncio.run`` refuses to start when the calling thread already has a running event loop
    (Jupyter notebooks, Playwright's sync API, an ASGI worker); then the coroutine runs on a
    fresh loop in a worker thread instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
