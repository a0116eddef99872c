"""The WellPlay repository's answer extraction and matching, reproduced rule by rule.

Source: ``alickzhu/PLAYER`` — ``utils/json_tools.py`` (``json_format``, ``repair_json``) and
``Game_Framework.Game.evaluate`` / ``save_evaluate_history`` / ``save_all_evaluate``
(``shared/formats/wellplay.md`` §7). Scoring mode ``repository`` (alias ``compatible``) uses only
this module, so its figures can be put next to the papers' tables.

Extraction (``json_format``):

1. strip the reply and remove **every** ``\\n`` (so raw newlines inside JSON strings are repaired,
   and ``"a\\nb"`` becomes ``"ab"``; ``\\r`` stays);
2. evaluate it as a Python expression; the repository calls ``eval`` — here
   :func:`ast.literal_eval`, which accepts the same literals (dicts, strings, numbers, ``True``/
   ``None``) without running code. This is the one deliberate difference: a reply that only
   evaluates through names or calls (``dict(answer='a')``) is not credited;
3. if that fails, ``repair_json``: for every ``{`` from the **last** to the first, take the text
   from there to the end and try ``json.loads`` on its prefixes from the longest to the shortest;
   when that text holds no ``}`` at all, a ``}`` is appended to every prefix (truncated replies
   such as ``{"answer": "b"`` are repaired). The first success wins — so in
   ``{"A": [{"B": 2}]}`` the inner ``{"B": 2}`` is found first;
4. nothing parses: ``{}``.

Matching (``Game.evaluate``): the extracted value must support ``value["answer"].lower()`` — a dict
with the exact key ``answer`` holding a string (``Answer``, ``答案``, lists, numbers fail), else
the row is wrong. Then, lowercased and not stripped: single choice (type ``a``) is right iff the
*answer is a substring of the truth* (the empty answer is right — a repository bug kept here);
"pick two" (type ``b``) is right iff the *truth is a substring of the answer*. A missing truth is
wrong.

Aggregation (``save_evaluate_history`` + ``save_all_evaluate``) is in
:func:`evaluation.scoring.aggregate`: per file (one game × one run) the weighted score Σ weight of
right rows / Σ weight (10/5/2) and the plain accuracy of each category; then the mean over files.
"""
from __future__ import annotations

import ast
import json
from typing import Any

__all__ = ["json_format", "repair_json", "repository_answer", "is_right_repository"]


def repair_json(extract: str) -> Any:
    """``utils/json_tools.repair_json``: the first JSON object found from the last ``{`` backwards."""
    starts = [i for i, ch in enumerate(extract) if ch == "{"]
    for pos in reversed(starts):
        data = extract[pos:]
        close_missing = "}" not in data
        for end in range(len(data), 0, -1):
            candidate = data[:end]
            if close_missing:
                candidate += "}"
            elif not candidate.rstrip().endswith("}"):
                continue  # cannot parse as an object: skipping it changes nothing but the running time
            try:
                return json.loads(candidate)
            except (json.JSONDecodeError, RecursionError):
                continue
    return None


def json_format(reply: str) -> Any:
    """``utils/json_tools.json_format`` (``eval`` replaced by ``ast.literal_eval``, see module doc)."""
    text = reply.strip().replace("\n", "")
    try:
        return ast.literal_eval(text)
    except Exception:  # noqa: BLE001 - the repository catches everything here (bare except)
        repaired = repair_json(text)
        return {} if repaired is None else repaired


def repository_answer(reply: str | None) -> str | None:
    """The lowercased ``answer`` string the repository would compare, or None (scored wrong)."""
    if reply is None:
        return None
    value = json_format(reply)
    if not isinstance(value, dict):
        return None
    answer = value.get("answer")
    return answer.lower() if isinstance(answer, str) else None


def is_right_repository(answer: str | None, truth: str | None, multi: bool) -> bool:
    """``Game.evaluate``'s comparison of an extracted answer with the truth (quirks kept)."""
    if answer is None or not isinstance(truth, str) or not truth:
        return False
    truth = truth.lower()
    return truth in answer if multi else answer in truth
