"""Strict answer parsing: one well-defined rule set; anything else is *unparseable*, never guessed.

A reply is read as option letters by the first rule that applies:

1. **JSON answer field** — a ``{…}`` object (JSON, or a Python literal as the WellPlay prompt's
   replies often are; fenced code blocks included) with the exact key ``answer`` whose value is
   letters: ``"b"``, ``"B"``, ``"a,c"``, ``"a c"``, ``"ac"`` or a list of single letters. If several
   such objects disagree the reply is unparseable. ``""`` is an explicit empty answer (wrong).
2. **The reply is only option letters** (markdown, quotes, brackets and final punctuation aside):
   ``B``, ``(c)``, ``**D**``, ``B.``; for "pick two" questions a list ``A, C`` / ``A和C`` / ``A`` and
   ``C`` on two lines.
3. **An option label opening the reply**, followed by ``.`` ``)`` ``:`` ``、`` and the option's
   text: ``C. 被毒药毒死的``, ``(B) he was stabbed``. A bare capital starting a sentence
   ("A man killed him…") has no such mark and is not an answer.

Only letters of existing options count; a single-choice reply naming two letters is unparseable.
Other keys (``Answer``, ``答案``, ``choice``), cue phrases ("the answer is C") and letters in prose
are not read: ``strict`` scoring counts them as unparseable, and the ``repository`` mode has its
own extraction (:mod:`evaluation.repository`).
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

__all__ = ["ParsedAnswer", "json_objects", "parse_answer"]

LETTERS = "abcdefghij"

_FENCE = re.compile(r"```(?:json|python|plaintext)?\s*(.*?)```", re.S | re.I)
_SEPARATOR = r"(?:\s*(?:[,，、/&+;；]|\band\b|和|与|及|或)\s*|\s+)"
_ONLY_LETTERS = re.compile(r"[\s\"'“”‘’(（\[【*#_`]*([A-Ja-j](?:" + _SEPARATOR + r"[A-Ja-j])*)"
                           r"[\s\"'“”‘’)）\]】*_`.。!！]*", re.I)
_LABEL = re.compile(r"\s*[\"'“(（\[【*#]*\s*([A-Ja-j])\s*[)）\]】]?\s*[.．:：、)）]\s*\S")


@dataclass(frozen=True)
class ParsedAnswer:
    """``letters``: sorted distinct lowercase letters; ``None`` when the reply could not be read."""

    letters: str | None
    rule: str = ""

    @property
    def ok(self) -> bool:
        return self.letters is not None


def json_objects(text: str) -> list[dict]:
    """Every balanced ``{…}`` in the text that parses as JSON or a Python literal, in order."""
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
                    try:
                        value = json.loads(chunk)
                    except json.JSONDecodeError:
                        try:
                            value = ast.literal_eval(chunk)
                        except Exception:  # noqa: BLE001 - any literal that does not evaluate
                            value = None
                    if isinstance(value, dict):
                        found.append(value)
                    break
    return found


def _letters(value: object, allowed: str) -> str | None:
    """Letters of a JSON answer value, or None when it is anything but letters."""
    if isinstance(value, list):
        if not all(isinstance(v, str) and len(v.strip()) == 1 for v in value):
            return None
        value = ",".join(v.strip() for v in value)
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text == "":
        return ""
    if re.fullmatch(r"[a-j]+", text):
        letters = list(text)
    elif re.fullmatch(r"[a-j](?:" + _SEPARATOR + r"[a-j])*", text):
        letters = re.findall(r"[a-j]", text)
    else:
        return None
    if any(ch not in allowed for ch in letters):
        return None
    return "".join(sorted(set(letters)))


def _from_json(text: str, allowed: str) -> ParsedAnswer | None:
    answers = {_letters(d["answer"], allowed) for d in json_objects(text) if "answer" in d}
    if not answers:
        return None
    if len(answers) > 1 or None in answers:
        return ParsedAnswer(None, "json-ambiguous")
    return ParsedAnswer(answers.pop(), "json")


def parse_answer(reply: str | None, n_options: int = 5, multi: bool = False) -> ParsedAnswer:
    """Read the chosen option letter(s) from a reply; see the module docstring for the rules."""
    if reply is None:
        return ParsedAnswer(None, "no-reply")
    text = reply.strip()
    if not text:
        return ParsedAnswer(None, "empty-reply")
    allowed = LETTERS[:max(1, min(n_options, len(LETTERS)))]
    fenced = " ".join(_FENCE.findall(text))
    parsed = _from_json(fenced or text, allowed)
    if parsed is not None:
        return parsed
    only = _ONLY_LETTERS.fullmatch(text)
    label = None if only else _LABEL.match(text)
    if only:
        letters = [ch.lower() for ch in re.findall(r"[A-Ja-j]", only.group(1))]
        rule = "letters"
    elif label:
        letters, rule = [label.group(1).lower()], "label"
    else:
        return ParsedAnswer(None, "unparseable")
    if any(ch not in allowed for ch in letters) or (not multi and len(set(letters)) > 1):
        return ParsedAnswer(None, "unparseable")
    return ParsedAnswer("".join(sorted(set(letters))), rule)
