"""Stage 2 of every synthesis step, read: a model's reply text → a JSON value, repaired where safe.

Small models often stop mid-object (``max_tokens``) or leave a trailing comma. Both are repaired
here only in ways that cannot invent content: a trailing comma is dropped, and a reply that was
cut off loses its unfinished last element before the open brackets are closed. Anything else is
left to fail, so that the stage reports the reply instead of guessing.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from casebook.llm import parse_json_reply

_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


@dataclass
class Parsed:
    value: Any
    repairs: list[str] = field(default_factory=list)


def _open_frames(text: str) -> list[tuple[str, int, list[int]]]:
    """The brackets still open at the end: (bracket, offset, offsets of the commas directly inside it)."""
    frames: list[tuple[str, int, list[int]]] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            frames.append((ch, i, []))
        elif ch in "}]":
            if frames:
                frames.pop()
        elif ch == "," and frames:
            frames[-1][2].append(i)
    return frames


def _close(prefix: str) -> str:
    return prefix + "".join("}" if b == "{" else "]" for b, _, _ in reversed(_open_frames(prefix)))


def repair_truncated(text: str) -> str | None:
    """A cut-off JSON text with its unfinished element dropped and its brackets closed; or None.

    The unfinished element of the innermost open list is dropped whole (never half an object);
    with no open list, the unfinished member of the innermost object is.
    """
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    body = text[start:]
    frames = _open_frames(body)
    if not frames:
        return None  # balanced: not a truncation
    lists = [f for f in frames if f[0] == "["]
    if lists:
        _, opened, commas = lists[-1]
        cut = commas[-1] if commas else opened + 1
    else:
        commas = next((f[2] for f in reversed(frames) if f[2]), [])
        if not commas:
            return None
        cut = commas[-1]
    candidate = _close(body[:cut])
    try:
        json.loads(candidate)
    except json.JSONDecodeError:
        return None
    return candidate


def parse_reply(text: str) -> Parsed:
    """The JSON value in ``text`` and the repairs it needed; ValueError when no safe repair works.

    A cut-off reply is repaired before looking for JSON embedded in prose: otherwise an inner
    list of the unfinished object would be taken for the answer.
    """
    cleaned = _TRAILING_COMMA.sub(r"\1", text or "")
    repairs = ["dropped a trailing comma"] if cleaned != (text or "") else []
    start = min((i for i in (cleaned.find("{"), cleaned.find("[")) if i >= 0), default=-1)
    if start >= 0 and _open_frames(cleaned[start:]):
        repaired = repair_truncated(cleaned)
        if repaired is not None:
            return Parsed(json.loads(repaired), [*repairs, "the reply was cut off: dropped its unfinished last "
                                                           "element and closed the open brackets"])
    return Parsed(parse_json_reply(cleaned), repairs)
