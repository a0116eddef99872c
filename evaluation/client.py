"""Asking an OpenAI-compatible chat endpoint many questions, cheaply and reproducibly.

- :class:`ChatRequest` is everything that decides an answer (model, messages, parameters); its
  :meth:`~ChatRequest.key` is the SHA-256 of that request as canonical JSON.
- :class:`ResponseCache` stores one JSON file per successful response under that key, written
  atomically as each answer arrives: a rerun sends zero requests and an interrupted run resumes
  with only the missing ones. Failures are never cached, so they are retried next time.
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
    "ChatClient", "ChatRequest", "ChatResult", "Prices", "ResponseCache", "Usage", "DEFAULT_PRICES",
]


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

    def key(self) -> str:
        """Cache key: a change in any message, parameter or the model is a different request.

        Memoised (image requests serialise megabytes); build a new request rather than mutating one.
        """
        cached = self.__dict__.get("_key")
        if cached is None:
            cached = self.__dict__["_key"] = hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()
        return cached


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

    def put(self, request: ChatRequest, content: str, usage: Usage) -> None:
        path = self._path(request.key())
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


class ChatClient:
    """Async chat client with a cache, bounded concurrency and retries; counts sent and cached."""

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None,
                 cache: ResponseCache | None = None, concurrency: int = 8, max_retries: int = 5,
                 timeout: float = 120.0, backoff_base: float = 0.5, backoff_max: float = 30.0,
                 prices: Prices | None = None, progress: bool = True, seed: int | None = None) -> None:
        self.base_url = base_url
        self.api_key = api_key or "not-needed"
        self.cache = cache
        self.concurrency = max(1, concurrency)
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.prices = prices or Prices()
        self.progress = progress
        self._jitter = random.Random(seed)
        self.sent = 0  # HTTP requests actually sent (retries included)
        self.cached = 0  # answers served from the cache
        self.failed = 0  # requests that failed for good
        self.usage = Usage()  # tokens of responses received in this session
        self.cached_usage = Usage()  # tokens recorded for cached responses (what they cost once)

    @property
    def cost(self) -> float:
        return self.usage.cost(self.prices)

    def _backoff(self, attempt: int, exc: Exception) -> float:
        """Full-jitter exponential backoff, but never shorter than the server's Retry-After."""
        ceiling = min(self.backoff_max, self.backoff_base * (2 ** attempt))
        delay = self._jitter.uniform(0, ceiling)
        hint = retry_after(exc)
        return max(delay, hint) if hint is not None else delay

    async def _send(self, client: Any, request: ChatRequest) -> ChatResult:
        from openai.types.chat import ChatCompletion

        key = request.key()
        last_error = ""
        for attempt in range(self.max_retries + 1):
            self.sent += 1
            try:
                # client.post (the SDK's documented raw route) instead of chat.completions.create:
                # same HTTP request, retries and errors, without ~4 ms of per-request parameter
                # transformation, which otherwise caps throughput at high concurrency.
                response = await client.post(
                    "/chat/completions", cast_to=ChatCompletion,
                    body={"model": request.model, "messages": request.messages, **request.params})
            except Exception as exc:  # noqa: BLE001 - every failure becomes a result, never a crash
                last_error = f"{type(exc).__name__}: {exc}"
                if is_retryable(exc) and attempt < self.max_retries:
                    await asyncio.sleep(self._backoff(attempt, exc))
                    continue
                return ChatResult(key, None, error=last_error, attempts=attempt + 1)
            choices = getattr(response, "choices", None) or []
            content = (choices[0].message.content if choices and choices[0].message else None) or ""
            raw_usage = getattr(response, "usage", None)
            usage = Usage(getattr(raw_usage, "prompt_tokens", 0) or 0, getattr(raw_usage, "completion_tokens", 0) or 0)
            self.usage.add(usage)
            if self.cache is not None:
                self.cache.put(request, content, usage)
            return ChatResult(key, content, usage, attempts=attempt + 1)
        return ChatResult(key, None, error=last_error, attempts=self.max_retries + 1)  # pragma: no cover

    def lookup(self, request: ChatRequest) -> ChatResult | None:
        if self.cache is None:
            return None
        hit = self.cache.get(request.key())
        if hit is None:
            return None
        usage = Usage(**hit.get("usage", {}))
        return ChatResult(request.key(), hit.get("content", ""), usage, cached=True)

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
        semaphore = asyncio.Semaphore(self.concurrency)
        # Identical requests inside one batch are sent once.
        first_of: dict[str, int] = {}
        duplicates: dict[int, int] = {}
        unique: list[int] = []
        for i in pending:
            key = requests[i].key()
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
            async with semaphore:
                results[i] = await self._send(client, requests[i])
            if results[i] is not None and results[i].content is None:
                self.failed += 1
            bar.update(1)

        try:
            await asyncio.gather(*(one(i) for i in unique))
        finally:
            bar.close()
            await client.close()
        for i, j in duplicates.items():
            source = results[j]
            assert source is not None
            results[i] = ChatResult(source.key, source.content, Usage(), cached=source.content is not None,
                                    error=source.error)
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
