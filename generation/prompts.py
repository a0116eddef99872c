"""Prompts for LLM distractors: what the model sees and the JSON shape it must answer in.

A request is a plain :class:`DistractorRequest` (no ORM objects), built in the job's thread and
sent from worker threads. The prompt gives the stem, the correct answer, the kind and sub-type,
the game's language, the options already present, the answer *type* expected (a person, a place,
a time, a method, a motive, a relationship) and a context excerpt (the perspective character's
script near the words of the question, and the question's evidence quotes). It asks for N wrong
options of the same type and about the same length as the correct one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from casebook.text import CJK, CJK_RE, has_cjk

from .offline import SLOT_DESCRIPTIONS, answer_slot

CONTEXT_BUDGET = 1800  # characters of script/evidence shown to the model


@dataclass
class DistractorRequest:
    stem: str
    answer: str  # the correct option's text (several joined with " / ")
    n: int
    kind: str = ""
    sub_type: str = ""
    language: str = "zh"
    existing: list[str] = field(default_factory=list)  # options already on the question
    context: list[str] = field(default_factory=list)  # script excerpts and evidence quotes
    names: list[str] = field(default_factory=list)  # the game's characters (for person slots)
    perspective: str = ""
    question_id: int | None = None

    @property
    def slot(self) -> str:
        return answer_slot(self.kind, self.sub_type, self.stem, self.answer, self.names)


def distractor_schema(n: int) -> dict[str, Any]:
    """JSON schema of the reply (strict structured output: every key required, nothing else)."""
    return {
        "type": "object",
        "properties": {
            "distractors": {
                "type": "array",
                "items": {"type": "string"},
                "description": f"exactly {n} wrong options",
            }
        },
        "required": ["distractors"],
        "additionalProperties": False,
    }


_WORD = re.compile(f"[A-Za-z][A-Za-z'-]{{2,}}|[{CJK}]{{2,}}")
_STOP = {"the", "and", "was", "who", "what", "when", "where", "how", "why", "did", "does", "with", "that", "this"}


def _terms(text: str) -> set[str]:
    terms: set[str] = set()
    for word in _WORD.findall(text or ""):
        if CJK_RE.match(word):
            terms.update(word[i:i + 2] for i in range(len(word) - 1))
        elif word.lower() not in _STOP:
            terms.add(word.lower())
    return terms


def context_excerpts(texts: list[str], query: str, budget: int = CONTEXT_BUDGET, window: int = 160) -> list[str]:
    """The passages of ``texts`` that share the most terms with ``query``, within ``budget`` characters.

    Scripts run to tens of thousands of characters; the model needs only the paragraphs about the
    question (the victim, the place, the act), so passages are ranked by shared terms.
    """
    wanted = _terms(query)
    passages: list[tuple[int, int, str]] = []
    order = 0
    for text in texts:
        text = (text or "").strip()
        for start in range(0, len(text), window):
            chunk = text[start:start + window].strip()
            if not chunk:
                continue
            lowered = chunk.lower()
            score = sum(1 for t in wanted if t in lowered)
            passages.append((score, -order, chunk))
            order += 1
    passages.sort(reverse=True)
    chosen: list[tuple[int, str]] = []
    used = 0
    for score, neg_order, chunk in passages:
        if score == 0 and chosen:
            break
        if used + len(chunk) > budget:
            break
        chosen.append((-neg_order, chunk))
        used += len(chunk)
    return [chunk for _, chunk in sorted(chosen)]


def _length_hint(answer: str, language: str) -> str:
    if language == "zh" and has_cjk(answer):
        return f"about {len(answer)} characters long (the correct option has {len(answer)})"
    words = len(answer.split())
    return f"about {words} word{'s' if words != 1 else ''} long (the correct option has {words})"


def build_messages(req: DistractorRequest) -> list[dict[str, str]]:
    """The chat messages for one question."""
    language = "Simplified Chinese" if req.language == "zh" else "English"
    slot = req.slot
    system = (
        "You write distractors (wrong answer options) for multiple-choice questions of a murder-mystery "
        "reasoning benchmark. Good distractors are plausible to someone who has not read the scripts, "
        "clearly wrong to someone who has, of the same type and style as the correct answer, and about "
        "as long, so that neither length nor wording gives the answer away. Never repeat or paraphrase "
        "the correct answer or an existing option. Answer only with JSON."
    )
    lines = [
        f"Question: {req.stem}",
        f"Correct answer: {req.answer}",
        f"Question kind: {req.kind}" + (f" / {req.sub_type}" if req.sub_type else ""),
        f"Answer type: {SLOT_DESCRIPTIONS.get(slot, 'same type as the correct answer')}",
        f"Language of the options: {language}",
    ]
    if req.existing:
        lines.append("Options already present (do not repeat them): " + " | ".join(req.existing))
    if slot == "person" and req.names:
        lines.append("People in this game: " + ", ".join(req.names))
    if req.perspective:
        lines.append(f"The question is asked to the character {req.perspective}.")
    if req.context:
        lines.append("Context from the game:\n" + "\n---\n".join(req.context))
    lines.append(
        f"Write exactly {req.n} distractors, each {_length_hint(req.answer, req.language)}, in {language}. "
        f'Reply as JSON: {{"distractors": ["...", ...]}}'
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]
