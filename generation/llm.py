"""A small, robust JSON-answering client over any OpenAI-compatible chat-completions endpoint.

Why not call the SDK directly everywhere: every caller needs the same things — structured output
with a fallback ladder for servers that refuse it (``json_schema`` → ``json_object`` → plain
JSON in the text, one step down whenever a 4xx/5xx error names the format: llama.cpp's server
answers 500 to ``json_schema``; ``CASEBOOK_LLM_RESPONSE_FORMAT`` starts lower), a reply limit
(``max_tokens``, so a small model cannot ramble past the timeout),
lenient parsing of JSON from plain text (code fences, prose around the object), retries with
exponential backoff on 429 / 5xx / timeouts / unparseable replies, and bounded concurrency for
batches. Errors reach the caller as :class:`LLMError` with a message an annotator can read.

The endpoint comes from settings (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``CASEBOOK_LLM_MODEL``);
a local server without a key (``OPENAI_BASE_URL`` alone) is accepted. The SDK's own retries are
switched off so that the policy here is the only one.
"""
from __future__ import annotations

import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from casebook.lazy import lazy_module
from evaluation.client import retry_after

openai = lazy_module("openai")  # imported at the first request, not at start-up

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


class LLMError(Exception):
    """The endpoint could not give a usable answer; the message says why, for a person.

    ``reply`` keeps the last raw reply text when there was one (so a caller can show it), and
    ``usage`` the tokens the failed tries still cost.
    """

    def __init__(self, message: str, reply: str = "", usage: dict[str, int] | None = None) -> None:
        super().__init__(message)
        self.reply = reply
        self.usage = usage or {}


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
    timeout: float = 60.0  # seconds per request
    attempts: int = 4  # tries per request (1 = no retry)
    backoff: float = 0.5  # first wait; doubles each retry, with jitter
    max_backoff: float = 20.0
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
            backoff=float(getattr(settings, "CASEBOOK_LLM_BACKOFF", cls.backoff)),
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
# Parsing


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


# --------------------------------------------------------------------------------------------
# Client


#: structured-output rungs, tried in this order; "none" = no response_format, JSON asked in the prompt
RESPONSE_FORMATS = ("json_schema", "json_object", "none")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format", "grammar")

def _retryable() -> tuple[type[Exception], ...]:
    return (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError)


def _describe_error(exc: Exception) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.RateLimitError):
        return "rate limited (HTTP 429)"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code} from the endpoint"
    if isinstance(exc, openai.APIConnectionError):
        return "could not connect to the endpoint"
    return str(exc) or exc.__class__.__name__


class LLMClient:
    """Chat completions that return parsed JSON, with retries; thread-safe for :meth:`map`."""

    def __init__(self, settings: LLMSettings | None = None, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings or LLMSettings.from_settings()
        if not self.settings.configured:
            raise LLMError("no LLM endpoint is configured (set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server)")
        if self.settings.response_format not in RESPONSE_FORMATS:
            raise LLMError(f"CASEBOOK_LLM_RESPONSE_FORMAT must be one of {', '.join(RESPONSE_FORMATS)} "
                           f"(got {self.settings.response_format!r})")
        self._client = openai.OpenAI(
            api_key=self.settings.api_key or "not-needed",  # keyless local servers ignore it
            base_url=self.settings.base_url or None,
            timeout=self.settings.timeout,
            max_retries=0,
        )
        self._sleep = sleep
        self._format = RESPONSE_FORMATS.index(self.settings.response_format)  # moves down, never up
        self._lock = threading.Lock()

    @property
    def response_format(self) -> str:
        """The structured-output rung in use (after any fallback)."""
        return RESPONSE_FORMATS[self._format]

    def _format_kwargs(self, level: int, schema: dict[str, Any] | None, name: str) -> dict[str, Any]:
        if schema is None or RESPONSE_FORMATS[level] == "none":
            return {}
        if RESPONSE_FORMATS[level] == "json_object":
            # llama.cpp's server reads a "schema" here and constrains the reply to it; servers that
            # ignore it still get JSON, and one that refuses it steps down to the next rung.
            return {"response_format": {"type": "json_object", "schema": schema}}
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": name, "schema": schema, "strict": True}}}

    @property
    def model(self) -> str:
        return self.settings.model

    def _request(self, messages: list[dict[str, str]], schema: dict[str, Any] | None, name: str,
                 max_tokens: int | None = None) -> tuple[str, dict[str, int]]:
        base: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": self.settings.temperature,
        }
        limit = max_tokens or self.settings.max_tokens
        if limit and limit > 0:
            base["max_tokens"] = limit
        level = self._format
        while True:
            kwargs = {**base, **self._format_kwargs(level, schema, name)}
            try:
                completion = self._client.chat.completions.create(**kwargs)
                break
            except json.JSONDecodeError as exc:  # HTTP 200 whose body is not JSON
                raise ValueError("the endpoint's response body is not valid JSON (a broken server or proxy?)") from exc
            except openai.APIStatusError as exc:
                # A server refusing the structured-output format (400 from most, 500 from llama.cpp)
                # names it: step down one rung for this and every later request.
                text = str(exc).lower()
                if "response_format" in kwargs and exc.status_code >= 400 and any(w in text for w in _FORMAT_WORDS):
                    level += 1
                    with self._lock:
                        self._format = max(self._format, level)
                    log.info("the endpoint refused response_format (%s); trying %s", exc.status_code,
                             RESPONSE_FORMATS[level])
                    continue
                raise
        choices = getattr(completion, "choices", None) or []
        if not choices or choices[0].message is None:
            raise ValueError("the reply has no message")
        message = choices[0].message
        if getattr(message, "refusal", None):
            raise LLMError(f"the model refused: {message.refusal}")
        usage = getattr(completion, "usage", None)
        counts = {key: int(getattr(usage, key, 0) or 0) for key in ("prompt_tokens", "completion_tokens")} if usage else {}
        return message.content or "", counts

    def chat_json(self, messages: list[dict[str, str]], schema: dict[str, Any] | None = None,
                  name: str = "answer") -> Any:
        """Send ``messages`` and return the parsed JSON reply, retrying what is worth retrying."""
        return self.chat_reply(messages, schema, name).value

    def chat_reply(self, messages: list[dict[str, str]], schema: dict[str, Any] | None = None,
                   name: str = "answer", *, parse: Callable[[str], Any] = parse_json_reply,
                   max_tokens: int | None = None) -> JSONReply:
        """Like :meth:`chat_json`, keeping the raw text and the token usage of every try.

        ``parse`` turns the reply text into the value (raising ValueError when it cannot); an
        unparseable reply is retried like a transport error, and the last one travels in the error.
        """
        last, last_text = "", ""
        errors: list[str] = []
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        attempts = max(1, self.settings.attempts)
        for attempt in range(1, attempts + 1):
            wait: float | None = None
            try:
                text, counts = self._request(messages, schema, name, max_tokens)
                for key, value in counts.items():
                    usage[key] = usage.get(key, 0) + value
                last_text = text
                return JSONReply(parse(text), text, usage, attempt, errors)
            except _retryable() as exc:
                last = _describe_error(exc)
                wait = retry_after(exc)
            except ValueError as exc:  # unparseable content: the model may do better next time
                last = str(exc)
            except openai.APIStatusError as exc:  # 400/401/403/404: retrying will not help
                raise LLMError(f"{_describe_error(exc)}: {getattr(exc, 'message', exc)}") from exc
            except openai.APIError as exc:  # e.g. a 200 whose body is not JSON (broken proxy)
                last = f"unusable response from the endpoint ({exc.__class__.__name__})"
            errors.append(last)
            if attempt == attempts:
                break
            delay = min(self.settings.max_backoff, self.settings.backoff * 2 ** (attempt - 1))
            delay = delay * (0.5 + random.random() / 2)
            if wait is not None:
                delay = min(self.settings.max_backoff, max(delay, wait))
            log.info("LLM attempt %d/%d failed (%s); retrying in %.2fs", attempt, attempts, last, delay)
            self._sleep(delay)
        raise LLMError(f"{last} (gave up after {attempts} attempt{'s' if attempts > 1 else ''})", reply=last_text,
                       usage=usage)

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
