"""The one client for OpenAI-compatible chat endpoints, used by generation, evaluation, synthesis and playlogs.

Why one module: every caller needs the same policy, and two copies drifted apart. Transport
errors (429, 408/409, 5xx, timeouts, lost connections) are retried by the openai SDK itself
(``max_retries``, exponential backoff with jitter, ``Retry-After`` honoured); the only retry
written here is :class:`ReplyTries`, for a reply that arrived but cannot be used (not JSON, the
wrong shape, an empty or broken HTTP 200), which the SDK cannot know about.

Two faces over that policy:

- :class:`LLMClient` — synchronous, one structured answer per call (:meth:`LLMClient.chat_reply`),
  with the structured-output ladder ``json_schema`` → ``json_object`` (carrying the schema, which
  llama.cpp's server enforces) → none, one rung down whenever the server names the format in a
  refusal (llama.cpp answers 500 to ``json_schema``); :meth:`LLMClient.map` for bounded batches
  on threads. Configured from Django settings (:meth:`LLMSettings.from_settings`); a keyless
  local server (``OPENAI_BASE_URL`` alone) counts as configured.
- :class:`ChatClient` — asynchronous, for evaluation runs of thousands of requests: a response
  cache (:class:`ResponseCache`, one atomically written file per answer), adaptive bounded
  concurrency (:class:`AdaptiveLimit`), failure reasons, usage and cost accounting.

Both count every HTTP request on the wire (retries included) through one httpx event hook, so
``attempts`` and ``sent`` stay exact although the SDK does the retrying. The SDK is imported at
the first request (``casebook.lazy``), never at start-up.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import logging
import os
import random
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from casebook.lazy import lazy_module

openai = lazy_module("openai")  # imported at the first request, not at start-up

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

#: request header naming the logical call an HTTP request belongs to (so SDK retries are counted per call)
CALL_HEADER = "x-casebook-call"


# --------------------------------------------------------------------------------------------
# Errors, replies, settings


class LLMError(Exception):
    """The endpoint could not give a usable answer; the message says why, for a person.

    ``reply`` keeps the last raw reply text when there was one (so a caller can show it), and
    ``usage`` the tokens the failed tries still cost.
    """

    def __init__(self, message: str, reply: str = "", usage: dict[str, int] | None = None) -> None:
        super().__init__(message)
        self.reply = reply
        self.usage = usage or {}


class EndpointAuthError(RuntimeError):
    """The endpoint answered 401/403: a batch stops at once instead of failing every request."""


class BrokenResponseError(ValueError):
    """An HTTP 200 whose body is not a usable chat completion (no JSON, ``choices: []``, no content)."""


@dataclass
class JSONReply:
    """A parsed reply with what provenance needs: the raw text, token usage, how many tries."""

    value: Any
    text: str
    usage: dict[str, int]
    attempts: int
    errors: list[str]


@dataclass(frozen=True)
class LLMSettings:
    api_key: str = ""
    base_url: str = ""
    model: str = "gpt-4o-mini"
    timeout: float = 60.0  # seconds per HTTP request
    attempts: int = 4  # tries per call: HTTP retries by the SDK and unusable replies alike (1 = no retry)
    concurrency: int = 4  # requests in flight at once in :meth:`LLMClient.map`
    temperature: float = 0.7
    max_tokens: int = 1024  # reply limit (0 = none sent)
    response_format: str = "json_schema"  # first rung of RESPONSE_FORMATS to try

    @classmethod
    def from_settings(cls, **overrides: Any) -> LLMSettings:
        """The endpoint configured in Django settings (environment), with explicit overrides."""
        from django.conf import settings

        base = cls(
            api_key=getattr(settings, "OPENAI_API_KEY", "") or "",
            base_url=getattr(settings, "OPENAI_BASE_URL", "") or "",
            model=getattr(settings, "CASEBOOK_LLM_MODEL", "") or cls.model,
            # optional tuning knobs (not in settings.py by default)
            timeout=float(getattr(settings, "CASEBOOK_LLM_TIMEOUT", cls.timeout)),
            attempts=int(getattr(settings, "CASEBOOK_LLM_ATTEMPTS", cls.attempts)),
            concurrency=int(getattr(settings, "CASEBOOK_LLM_CONCURRENCY", cls.concurrency)),
            max_tokens=int(getattr(settings, "CASEBOOK_LLM_MAX_TOKENS", cls.max_tokens)),
            response_format=str(getattr(settings, "CASEBOOK_LLM_RESPONSE_FORMAT", cls.response_format) or "json_schema"),
        )
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})

    @property
    def configured(self) -> bool:
        """A key, or a base URL of a (possibly keyless) local server."""
        return bool(self.api_key or self.base_url)

    def describe(self) -> str:
        return f"{self.model} at {self.base_url or 'api.openai.com'}"


# --------------------------------------------------------------------------------------------
# Parsing and the one retry helper


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def parse_json_reply(text: str) -> Any:
    """The JSON value in a model reply: the whole text, a ```json fence, or the first {...}/[...] in it.

    Raises ValueError with a short excerpt when nothing parses.
    """
    text = (text or "").strip()
    if not text:
        raise ValueError("the reply is empty")
    candidates = [text]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    # A JSON object or array embedded in prose: the first opening bracket that starts a valid value.
    decoder = json.JSONDecoder()
    starts = [i for i, ch in enumerate(text) if ch in "{["]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text[start:])
            if isinstance(value, (dict, list)):
                return value
        except json.JSONDecodeError:
            continue
    excerpt = text[:120].replace("\n", " ")
    raise ValueError(f"the reply is not valid JSON: {excerpt!r}")


class ReplyTries:
    """Tries of one call whose reply may arrive unusable; the only retry loop outside the SDK.

    ``for attempt in tries:`` yields 1..limit; the body calls :meth:`unusable` with the reason
    when a reply cannot be used (and ``continue``s). Replies come back at once from a working
    server, so there is no waiting between tries. Token usage of every try is summed, so a call
    that gives up still reports what it cost.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.errors: list[str] = []
        self.usage: dict[str, int] = {"prompt_tokens": 0, "completion_tokens": 0}
        self.last_text = ""

    def __iter__(self) -> Iterator[int]:
        return iter(range(1, self.limit + 1))

    def add_usage(self, counts: dict[str, int]) -> None:
        for key, value in counts.items():
            self.usage[key] = self.usage.get(key, 0) + value

    def unusable(self, reason: str, text: str = "") -> None:
        self.errors.append(reason)
        self.last_text = text or self.last_text
        if len(self.errors) < self.limit:
            log.info("unusable reply (%s); asking again (%d/%d)", reason, len(self.errors) + 1, self.limit)

    @property
    def last_error(self) -> str:
        return self.errors[-1] if self.errors else ""


def _plural(n: int) -> str:
    return f"{n} attempt{'s' if n != 1 else ''}"


def _transient(exc: Exception) -> bool:
    """What the SDK retries by itself: connection errors and timeouts, 408, 409, 429 and 5xx."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def describe_error(exc: Exception) -> str:
    """An SDK error in words an annotator can read."""
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.RateLimitError):
        return "rate limited (HTTP 429)"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code} from the endpoint"
    if isinstance(exc, openai.APIConnectionError):
        return "could not connect to the endpoint"
    return str(exc) or exc.__class__.__name__


class SendCounter:
    """Counts HTTP requests on the wire, per logical call (the ``x-casebook-call`` header) and in total.

    Installed as an httpx event hook, it sees the SDK's retries too, which the SDK reports nowhere
    a caller can read on success.
    """

    def __init__(self) -> None:
        self.total = 0
        self.by_call: Counter[str] = Counter()
        self._lock = threading.Lock()

    def hook(self, request: Any) -> None:
        with self._lock:
            self.total += 1
            self.by_call[request.headers.get(CALL_HEADER, "")] += 1

    async def ahook(self, request: Any) -> None:
        self.hook(request)

    def pop(self, call: str) -> int:
        with self._lock:
            return self.by_call.pop(call, 0)


_CONTEXT_FIELDS = ("max_model_len", "context_length", "context_window", "n_ctx", "max_context_length")


def server_context_size(base_url: str | None, api_key: str | None, model: str, timeout: float = 10.0) -> int | None:
    """The context window the server reports for ``model`` in ``/v1/models`` (None when it says nothing)."""
    try:
        client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=0)
        entries = [m.model_dump() for m in client.models.list()]
    except Exception:  # noqa: BLE001 - a server without /v1/models: the size is simply unknown
        return None
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
        for value in [entry.get(f) for f in _CONTEXT_FIELDS] + [meta.get("n_ctx"), meta.get("n_ctx_train")]:
            if isinstance(value, int) and value > 0:
                return value
    return None


# --------------------------------------------------------------------------------------------
# The synchronous client (generation, synthesis, playlogs)


#: structured-output rungs, tried in this order; "none" = no response_format, JSON asked in the prompt
RESPONSE_FORMATS = ("json_schema", "json_object", "none")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format", "grammar")


class LLMClient:
    """Chat completions that return parsed JSON; thread-safe for :meth:`map`.

    A rung of the format ladder not yet seen to work is sent once without SDK retries, so that a
    server refusing it (llama.cpp: HTTP 500) is recognised at the first answer, not after the
    SDK's backoff; any other transient failure of that probe is sent again with the remaining retries.
    """

    def __init__(self, settings: LLMSettings | None = None) -> None:
        self.settings = settings or LLMSettings.from_settings()
        if not self.settings.configured:
            raise LLMError("no LLM endpoint is configured (set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server)")
        if self.settings.response_format not in RESPONSE_FORMATS:
            raise LLMError(f"CASEBOOK_LLM_RESPONSE_FORMAT must be one of {', '.join(RESPONSE_FORMATS)} "
                           f"(got {self.settings.response_format!r})")
        self._sends = SendCounter()
        self._client = openai.OpenAI(
            api_key=self.settings.api_key or "not-needed",  # keyless local servers ignore it
            base_url=self.settings.base_url or None,
            timeout=self.settings.timeout,
            max_retries=max(0, self.settings.attempts - 1),
            http_client=openai.DefaultHttpxClient(event_hooks={"request": [self._sends.hook]}),
        )
        self._format = RESPONSE_FORMATS.index(self.settings.response_format)  # moves down, never up
        self._confirmed: set[int] = set()  # rungs that have answered once
        self._lock = threading.Lock()

    @property
    def response_format(self) -> str:
        """The structured-output rung in use (after any fallback)."""
        return RESPONSE_FORMATS[self._format]

    @property
    def model(self) -> str:
        return self.settings.model

    def _format_kwargs(self, level: int, schema: dict[str, Any] | None, name: str) -> dict[str, Any]:
        if schema is None or RESPONSE_FORMATS[level] == "none":
            return {}
        if RESPONSE_FORMATS[level] == "json_object":
            # llama.cpp's server reads a "schema" here and constrains the reply to it; servers that
            # ignore it still get JSON, and one that refuses it steps down to the next rung.
            return {"response_format": {"type": "json_object", "schema": schema}}
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": name, "schema": schema, "strict": True}}}

    def _step_down(self, level: int, exc: Exception) -> int:
        with self._lock:
            self._format = max(self._format, level + 1)
        log.info("the endpoint refused response_format (%s); trying %s", getattr(exc, "status_code", "?"),
                 RESPONSE_FORMATS[level + 1])
        return level + 1

    def _complete(self, messages: list[dict[str, str]], schema: dict[str, Any] | None, name: str,
                  max_tokens: int | None, call: str) -> tuple[str, dict[str, int]]:
        """One reply's text and token counts; transport errors (after the SDK's retries) propagate."""
        base: dict[str, Any] = {"model": self.settings.model, "messages": messages,
                                "temperature": self.settings.temperature, "extra_headers": {CALL_HEADER: call}}
        limit = max_tokens or self.settings.max_tokens
        if limit and limit > 0:
            base["max_tokens"] = limit
        level, retries, probed = self._format, max(0, self.settings.attempts - 1), False
        while True:
            fmt = self._format_kwargs(level, schema, name)
            probe = bool(fmt) and level not in self._confirmed and not probed
            client = self._client.with_options(max_retries=0) if probe else self._client.with_options(max_retries=retries)
            try:
                completion = client.chat.completions.create(**base, **fmt)
            except (json.JSONDecodeError, openai.APIResponseValidationError) as exc:  # HTTP 200, body not JSON
                raise BrokenResponseError("the endpoint's response body is not valid JSON (a broken server or proxy?)") \
                    from exc
            except openai.APIStatusError as exc:
                text = str(exc).lower()
                if fmt and exc.status_code >= 400 and any(w in text for w in _FORMAT_WORDS):
                    level = self._step_down(level, exc)
                    continue
                if probe and _transient(exc) and retries > 0:
                    probed, retries = True, retries - 1
                    continue
                raise
            except openai.APIConnectionError:
                if probe and retries > 0:
                    probed, retries = True, retries - 1
                    continue
                raise
            if fmt:
                self._confirmed.add(level)
            break
        choices = getattr(completion, "choices", None) or []
        if not choices or choices[0].message is None:
            raise BrokenResponseError("the reply has no message")
        message = choices[0].message
        if getattr(message, "refusal", None):
            raise LLMError(f"the model refused: {message.refusal}")
        usage = getattr(completion, "usage", None)
        counts = {key: int(getattr(usage, key, 0) or 0) for key in ("prompt_tokens", "completion_tokens")} if usage else {}
        return message.content or "", counts

    def chat_json(self, messages: list[dict[str, str]], schema: dict[str, Any] | None = None,
                  name: str = "answer") -> Any:
        """Send ``messages`` and return the parsed JSON reply."""
        return self.chat_reply(messages, schema, name).value

    def chat_reply(self, messages: list[dict[str, str]], schema: dict[str, Any] | None = None,
                   name: str = "answer", *, parse: Callable[[str], Any] = parse_json_reply,
                   max_tokens: int | None = None) -> JSONReply:
        """Like :meth:`chat_json`, keeping the raw text and the token usage of every try.

        ``parse`` turns the reply text into the value (raising ValueError when it cannot); an
        unusable reply is asked again (:class:`ReplyTries`), and the last one travels in the error.
        Transport failures have already been retried by the SDK when they arrive here.
        """
        tries = ReplyTries(self.settings.attempts)
        call = uuid.uuid4().hex
        try:
            for _ in tries:
                try:
                    text, counts = self._complete(messages, schema, name, max_tokens, call)
                except BrokenResponseError as exc:
                    tries.unusable(str(exc))
                    continue
                tries.add_usage(counts)
                try:
                    value = parse(text)
                except ValueError as exc:  # unusable content: the model may do better next time
                    tries.unusable(str(exc), text)
                    continue
                return JSONReply(value, text, tries.usage, self._sends.by_call[call], tries.errors)
        except openai.APIStatusError as exc:
            if _transient(exc):
                raise LLMError(f"{describe_error(exc)} (gave up after {_plural(self._sends.by_call[call])})",
                               reply=tries.last_text, usage=tries.usage) from exc
            raise LLMError(f"{describe_error(exc)}: {getattr(exc, 'message', exc)}", reply=tries.last_text,
                           usage=tries.usage) from exc
        except openai.APIError as exc:  # connection lost or timed out, after the SDK's retries
            raise LLMError(f"{describe_error(exc)} (gave up after {_plural(self._sends.by_call[call])})",
                           reply=tries.last_text, usage=tries.usage) from exc
        finally:
            self._sends.pop(call)
        raise LLMError(f"{tries.last_error} (gave up after {_plural(tries.limit)})", reply=tries.last_text,
                       usage=tries.usage)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[tuple[T, R | None, Exception | None]]:
        """Run ``fn`` over ``items`` with at most ``concurrency`` in flight; yield as each finishes.

        Yields ``(item, result, error)``; the caller writes each result when it arrives, so a failure
        later in the batch loses nothing written before it.
        """
        with ThreadPoolExecutor(max_workers=max(1, self.settings.concurrency)) as pool:
            futures: dict[Future, T] = {pool.submit(fn, item): item for item in items}
            for future in as_completed(futures):
                item = futures[future]
                try:
                    yield item, future.result(), None
                except Exception as exc:  # noqa: BLE001 - reported per item by the caller
                    yield item, None, exc


# --------------------------------------------------------------------------------------------
# The asynchronous, cached batch client (evaluation)


#: why a request ended without an answer
FAILURE_REASONS = {
    "context": "the prompt is longer than the server's context window (HTTP 400 naming the context/tokens)",
    "auth": "the endpoint refused the key (HTTP 401/403)",
    "server": "HTTP error, connection error, or a broken/empty 200 response",
    "timeout": "no reply within --timeout seconds of sending",
    "images": "the server refused requests with images twice; no further image is sent (use --text-only)",
}
IMAGE_REFUSALS_TO_STOP = 2  # image requests refused (HTTP 4xx/5xx) before images are given up
_CONTEXT_WORDS = ("context", "token", "too long", "exceeds", "maximum", "n_ctx")
_BUSY = (408, 409, 425, 429)  # "try later", never a refusal of images


def has_images(request: ChatRequest) -> bool:
    return any(isinstance(m.get("content"), list) and any(p.get("type") == "image_url" for p in m["content"])
               for m in request.messages)


def classify_failure(exc: Exception) -> str:
    """``context`` / ``auth`` / ``timeout`` / ``server`` for an exception from the SDK."""
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
    """The endpoint as part of the cache key: the SDK's default when no base URL is given."""
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
    attempts: int = 0  # HTTP requests sent for it, the SDK's retries included
    failure: str = ""  # a FAILURE_REASONS key when content is None


class ResponseCache:
    """One file per response: ``<dir>/<key[:2]>/<key>.json`` holding content, usage and the request.

    Written atomically as each answer arrives, so a rerun sends nothing and an interrupted run
    resumes with only the missing requests; failures and broken replies are never stored.
    """

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
    """Async chat client with a cache and adaptive bounded concurrency; counts sent and cached.

    ``max_retries`` goes to the SDK (transport errors) and bounds the re-asks of broken 200
    replies (:class:`ReplyTries`). ``timeout`` runs from the moment a request is sent (requests
    waiting for a free slot are not on the clock). ``refresh_failed`` re-sends cached entries that
    hold an empty reply (written by versions that cached broken responses).
    """

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None,
                 cache: ResponseCache | None = None, concurrency: int = 8, max_retries: int = 5,
                 timeout: float = 120.0, prices: Prices | None = None, progress: bool = True,
                 refresh_failed: bool = False) -> None:
        self.base_url = base_url
        self.endpoint = endpoint_id(base_url)
        self.api_key = api_key or "not-needed"
        self.cache = cache
        self.concurrency = max(1, concurrency)
        self.max_retries = max(0, max_retries)
        self.timeout = timeout
        self.prices = prices or Prices()
        self.progress = progress
        self.refresh_failed = refresh_failed
        self._sends = SendCounter()
        self.cached = 0  # answers served from the cache
        self.failed = 0  # requests that failed for good
        self.failed_by_reason: dict[str, int] = {}
        self.usage = Usage()  # tokens of responses received in this session
        self.cached_usage = Usage()  # tokens recorded for cached responses (what they cost once)
        self.limiter: AdaptiveLimit | None = None
        self.image_refusals = 0  # image requests answered with an HTTP error; at 2 no image is sent again
        self._images_ok = False  # an image request has succeeded: images need no probing any more
        self._image_probe: asyncio.Lock | None = None  # made per run: a lock belongs to one event loop

    @property
    def sent(self) -> int:
        """HTTP requests actually sent (the SDK's retries included)."""
        return self._sends.total

    def key(self, request: ChatRequest) -> str:
        return request.key(self.endpoint)

    @property
    def cost(self) -> float:
        return self.usage.cost(self.prices)

    async def _post(self, client: Any, request: ChatRequest, call: str, max_retries: int) -> tuple[str, Usage]:
        """One reply (the SDK retrying transport errors); a reply without usable content raises
        :class:`BrokenResponseError`."""
        from openai.types.chat import ChatCompletion

        # client.post (the SDK's documented raw route) instead of chat.completions.create: same
        # HTTP request, errors and retries, without ~4 ms of per-request parameter transformation.
        try:
            response = await client.post(
                "/chat/completions", cast_to=ChatCompletion,
                body={"model": request.model, "messages": request.messages, **request.params},
                options={"headers": {CALL_HEADER: call}, "max_retries": max_retries})
        except (json.JSONDecodeError, openai.APIResponseValidationError) as exc:
            raise BrokenResponseError("the server answered HTTP 200 with a body that is not JSON") from exc
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
        """Until an image request has succeeded, image requests go one at a time, each with at most
        :data:`IMAGE_REFUSALS_TO_STOP` sends, so a server that refuses images sees that many of them."""
        images = has_images(request)
        if images and not self._images_ok:
            self._image_probe = self._image_probe or asyncio.Lock()
            async with self._image_probe:
                return await self._attempts(client, request, images)
        return await self._attempts(client, request, images)

    async def _attempts(self, client: Any, request: ChatRequest, images: bool) -> ChatResult:
        key = self.key(request)
        call = uuid.uuid4().hex
        probing = images and not self._images_ok
        retries = min(self.max_retries, IMAGE_REFUSALS_TO_STOP - 1) if probing else self.max_retries
        tries = ReplyTries(self.max_retries + 1)
        reason = "server"
        try:
            for _ in tries:
                if images and self.image_refusals >= IMAGE_REFUSALS_TO_STOP:
                    return ChatResult(key, None, error="not sent: the server refused images twice",
                                      attempts=self._sends.by_call[call], failure="images")
                limiter = self.limiter or AdaptiveLimit(self.concurrency)
                async with limiter:
                    started = time.monotonic()
                    try:
                        content, usage = await self._post(client, request, call, retries)
                    except BrokenResponseError as exc:
                        tries.unusable(f"{type(exc).__name__}: {exc}")
                        continue
                    except Exception as exc:  # noqa: BLE001 - every failure becomes a result, never a crash
                        reason = classify_failure(exc)
                        if reason == "timeout":  # a quick error says nothing about queueing: only timeouts count
                            limiter.observe(None)
                        return self._failed(key, call, exc, reason, images)
                    limiter.observe(time.monotonic() - started)
                self._images_ok = self._images_ok or images
                self.usage.add(usage)
                if self.cache is not None:
                    self.cache.put(key, request, content, usage)
                return ChatResult(key, content, usage, attempts=self._sends.by_call[call])
            return ChatResult(key, None, error=tries.last_error, attempts=self._sends.by_call[call], failure=reason)
        finally:
            self._sends.pop(call)

    def _failed(self, key: str, call: str, error: Exception, reason: str, images: bool) -> ChatResult:
        """The result of a request the SDK gave up on; 401/403 stops the whole run."""
        message = f"{type(error).__name__}: {error}"
        sends = self._sends.by_call[call]
        if images and isinstance(error, openai.APIStatusError) and reason == "server" \
                and error.status_code not in _BUSY:
            self.image_refusals += sends  # every send of it was refused
            if self.image_refusals >= IMAGE_REFUSALS_TO_STOP:
                return ChatResult(key, None, error=f"the server refused images twice ({message})", attempts=sends,
                                  failure="images")
        if reason == "auth":
            raise EndpointAuthError(
                f"the endpoint {self.endpoint} refused the request ({message}); check the API key "
                "(--api-key-env) and the model name — the run was stopped")
        return ChatResult(key, None, error=message, attempts=sends, failure=reason)

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
        from tqdm import tqdm

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
        client = openai.AsyncOpenAI(
            base_url=self.base_url, api_key=self.api_key, max_retries=self.max_retries, timeout=self.timeout,
            http_client=openai.DefaultAsyncHttpxClient(event_hooks={"request": [self._sends.ahook]}))
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
