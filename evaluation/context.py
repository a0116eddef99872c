"""Fitting prompts to the server's context window.

- **Context size**: ``--max-context`` when given; otherwise what the server says in ``/v1/models``
  for the model (llama.cpp: ``meta.n_ctx_train``; vLLM: ``max_model_len``; others:
  ``context_length`` / ``context_window`` / ``n_ctx``); otherwise unknown (no trimming beyond
  ``--token-budget``).
- **Token count**: ``tiktoken`` when it is installed and the model is an OpenAI model (``gpt-*``,
  ``o1``/``o3``/``o4``…) and its encoding loads; otherwise a *conservative* estimate that assumes a
  tokenizer without Chinese merges — 2 tokens per CJK character (real small-model tokenizers use
  ~1.75; the 1-per-character count used for ``--token-budget`` undercounts by ~75 %), 4/3 per other
  word, 1 per other symbol.
- **Budget rule**: prompt tokens + ``--max-tokens`` (the reply) + a margin of 5 % + 64 tokens (chat
  template) must fit the context. A prompt over it is rebuilt with the script context scaled down
  by the overflow ratio (up to 4 tries; the question, options and instruction are never cut), and
  the row carries a note ``context trimmed: N → M tokens (limit L)``.
"""
from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

from casebook.text import CJK

__all__ = ["conservative_count", "fit_to_context", "prompt_limit", "token_counter"]

# CJK ideographs plus CJK and full-width punctuation: each is about two tokens.
_CJK = re.compile(f"[\\u3000-\\u303f{CJK}\\uff00-\\uffef]")
_WORD = re.compile(r"[A-Za-z0-9]+")
_OPENAI_MODEL = re.compile(r"^(?:gpt-|o\d|chatgpt-|text-)", re.I)


def conservative_count(text: str) -> int:
    """2 per CJK character (and full-width punctuation), 4/3 per Latin word or number, 1 per other symbol."""
    cjk = len(_CJK.findall(text))
    words = _WORD.findall(text)
    rest = _CJK.sub("", _WORD.sub("", text))
    symbols = sum(1 for ch in rest if not ch.isspace())
    return 2 * cjk + math.ceil(len(words) * 4 / 3) + symbols


@functools.lru_cache(maxsize=8)
def token_counter(model: str) -> tuple[Callable[[str], int], str]:
    """(count function, its name): tiktoken for OpenAI models when available, else the estimate."""
    if _OPENAI_MODEL.match(model or ""):
        try:
            import tiktoken

            try:
                encoding = tiktoken.encoding_for_model(model)
            except KeyError:
                encoding = tiktoken.get_encoding("o200k_base")
            return (lambda text: len(encoding.encode(text, disallowed_special=()))), f"tiktoken:{encoding.name}"
        except Exception:  # noqa: BLE001 - not installed, or the encoding file cannot be fetched offline
            pass
    return conservative_count, "conservative estimate (2 per CJK character)"


def _message_text(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "\n".join(parts)


def prompt_limit(max_context: int, max_tokens: int) -> int:
    """Prompt tokens allowed: the context minus the reply minus a margin (5 % + 64)."""
    return max(0, int(max_context - max(0, max_tokens) - (0.05 * max_context + 64)))


def fit_to_context(build: Callable[[int], list[dict[str, Any]]], budget: int, limit: int | None,
                   count: Callable[[str], int]) -> tuple[list[dict[str, Any]], str]:
    """Messages from ``build(context_budget)`` that fit ``limit`` prompt tokens, and a note when trimmed."""
    messages = build(budget)
    if limit is None:
        return messages, ""
    first = used = count(_message_text(messages))
    tries = 0
    while used > limit and budget > 0 and tries < 4:
        budget = max(0, int(budget * limit / used) - 32)
        messages = build(budget)
        used = count(_message_text(messages))
        tries += 1
    if first <= limit:
        return messages, ""
    if used > limit:
        return messages, f"context trimmed: {first} → {used} tokens, still over the limit {limit}"
    return messages, f"context trimmed: {first} → {used} tokens (limit {limit})"
