"""Lenient answer parsing: turn a model's free-text reply into option letters.

Models answer in many shapes: ``B``, ``B.``, ``(b)``, ``选B``, ``答案：B``, ``**C. 生活日用品**``,
``{"reason": "…", "answer": "a"}`` (the WellPlay prompt), a fenced JSON block, ``"answer": "a,b"``
or ``选B和C`` for the two-suspect questions. The rules, tried in order (first hit wins):

1. a JSON object (or a Python-literal dict, as the WellPlay code accepted via ``eval``) anywhere
   in the reply with a key ``answer`` / ``答案`` / ``choice`` / ``option``; the last such object
   wins (models often restate their final answer);
2. a cue word followed by letters: ``答案``, ``选项``, ``选择``, ``选``, ``answer``, ``option``,
   ``choice`` (e.g. ``答案是：B``, ``The answer is C``, ``选择A和C``); the last cue wins;
3. a reply that starts with a letter used as an option label: ``B``, ``B.``, ``(B)``, ``B：…``;
4. standalone option letters anywhere (not part of a word): accepted only if exactly one distinct
   letter appears (or, for multi-answer questions, the distinct letters found).

Only letters of existing options count (``a``… up to ``n_options``). A reply from which nothing
can be read gives ``ParsedAnswer(None, ...)`` — scored wrong, never an exception.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

__all__ = ["ParsedAnswer", "parse_answer"]

LETTERS = "abcdefghij"
ANSWER_KEYS = ("answer", "答案", "choice", "option", "选项", "answers")

_FENCE = re.compile(r"```(?:json|python|plaintext)?\s*(.*?)```", re.S | re.I)
_LETTER_LIST = r"[A-Ja-j](?:\s*(?:[,，、/&+]|and|和|与|及|以及|或)?\s*[A-Ja-j](?![A-Za-z]))*"
_CUE = re.compile(
    r"(?:正确答案|最终答案|答案|选项|选择|我选|选|answer|option|choice)s?"
    r"\s*(?:是|为|应该是|应为|:|：|is|are|would be|should be|=)?\s*[:：]?\s*"
    r"[\"'“‘（(\[【*]*\s*(" + _LETTER_LIST + r")(?![A-Za-z])",
    re.I,
)
_LEADING = re.compile(r"^\s*[\"'“(（\[【*#]*\s*([A-Ja-j])\s*(?:[)）\]】.．、:：,，*\s]|$)")
_STANDALONE = re.compile(r"(?<![A-Za-z])([A-J])(?![A-Za-z])")


@dataclass(frozen=True)
class ParsedAnswer:
    """``letters``: sorted distinct lowercase letters, or None when the reply could not be read.

    ``raw``: the answer as the model wrote it, lowercased (the JSON ``answer`` value, or the
    matched letters joined by commas); the WellPlay-compatible scorer compares this string.
    """

    letters: str | None
    raw: str = ""
    rule: str = ""

    @property
    def ok(self) -> bool:
        return self.letters is not None


def _letters_in(text: str, n_options: int) -> list[str]:
    allowed = LETTERS[:n_options]
    found = [ch for ch in re.findall(r"(?<![A-Za-z])([A-Ja-j])(?![A-Za-z])", text)]
    out: list[str] = []
    for ch in found:
        low = ch.lower()
        if low in allowed and low not in out:
            out.append(low)
    return out


def _dict_candidates(text: str) -> list[dict]:
    """Every ``{…}`` in the text that parses as JSON or a Python literal, in order."""
    found: list[dict] = []
    for start in (m.start() for m in re.finditer(r"\{", text)):
        depth = 0
        for end in range(start, len(text)):
            if text[end] == "{":
                depth += 1
            elif text[end] == "}":
                depth -= 1
                if depth == 0:
                    chunk = text[start:end + 1]
                    value = None
                    try:
                        value = json.loads(chunk)
                    except json.JSONDecodeError:
                        try:
                            value = ast.literal_eval(chunk)
                        except (ValueError, SyntaxError, MemoryError, RecursionError):
                            value = None
                    if isinstance(value, dict):
                        found.append(value)
                    break
    return found


def _from_json(text: str, n_options: int) -> ParsedAnswer | None:
    for candidate in reversed(_dict_candidates(text)):
        lowered = {str(k).strip().lower(): v for k, v in candidate.items()}
        for key in ANSWER_KEYS:
            if key not in lowered:
                continue
            value = lowered[key]
            if isinstance(value, list):
                value = ",".join(str(v) for v in value)
            value = str(value).strip()
            raw = value.lower()
            if raw == "":
                return ParsedAnswer("", "", "json-empty")  # an explicit empty answer
            compact = re.fullmatch(r"[a-j]+", raw)
            letters = list(dict.fromkeys(raw)) if compact else _letters_in(value, n_options)
            letters = [ch for ch in letters if ch in LETTERS[:n_options]]
            if letters:
                return ParsedAnswer("".join(sorted(letters)), raw, "json")
    return None


def parse_answer(reply: str | None, n_options: int = 5, multi: bool = False) -> ParsedAnswer:
    """Read the chosen option letter(s) from a model reply; see the module docstring for rules."""
    if reply is None:
        return ParsedAnswer(None, "", "no-reply")
    text = reply.strip()
    if not text:
        return ParsedAnswer(None, "", "empty-reply")
    n_options = max(1, min(n_options, len(LETTERS)))
    allowed = LETTERS[:n_options]

    fenced = " ".join(_FENCE.findall(text))
    parsed = _from_json(fenced or text, n_options) or (_from_json(text, n_options) if fenced else None)
    if parsed is not None:
        return parsed

    cues = list(_CUE.finditer(text))
    for match in reversed(cues):
        letters = _letters_in(match.group(1), n_options)
        if letters:
            if not multi:
                letters = letters[:1] if len(letters) > 1 and "或" in match.group(1) else letters
            return ParsedAnswer("".join(sorted(letters)), ",".join(letters), "cue")

    lead = _LEADING.match(text)
    if lead and lead.group(1).lower() in allowed:
        # "B. 因为…" / "b" / "(C)"; a multi answer may continue "B、C" / "b,c"
        letters = [lead.group(1).lower()]
        if multi:
            head = re.match(r"^\s*[\"'“(（\[【*#]*\s*(" + _LETTER_LIST + r")", text)
            if head:
                letters = _letters_in(head.group(1), n_options) or letters
        return ParsedAnswer("".join(sorted(letters)), ",".join(letters), "leading")

    standalone = []
    for ch in _STANDALONE.findall(text):
        low = ch.lower()
        if low in allowed and low not in standalone:
            standalone.append(low)
    if len(standalone) == 1 or (multi and standalone):
        return ParsedAnswer("".join(sorted(standalone)), ",".join(standalone), "standalone")
    return ParsedAnswer(None, "", "unparseable")
