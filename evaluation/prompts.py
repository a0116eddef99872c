"""Prompts for one multiple-choice question, per perspective, fitted to a token budget.

Perspectives (WellPlay): ``own`` = the asked character's role script (the paper's personal
perspective), ``all`` = every role script (omniscient / full script access), ``none`` = stem and
options only (a leakage check: accuracy well above chance means the answer is guessable).

Token counting (no tokenizer download, same on every machine): every CJK character counts as one
token, and every run of other non-space text counts as ``words / 0.75`` tokens (≈ 1.33 tokens
per English word). That overestimates slightly for GPT-4-class tokenizers, so a budget is safe.

Fitting: a context over budget keeps its *start* (the first quarter of the budget: who the
character is, the setting) and then the paragraphs most relevant to the question — scored by how
many of the question's terms (names in 【】, words and CJK bigrams of the stem and options) they
contain — in their original order, with an omission marker between kept pieces. With ``all``,
the budget is shared between the scripts in proportion to their length.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from casebook.interchange import Character, Game, Question
from casebook.text import CJK, CJK_RUN_RE, cjk_count

__all__ = [
    "DEFAULT_BUDGET", "PERSPECTIVES", "build_messages", "context_for", "count_tokens", "fit_to_budget",
    "format_options", "question_terms",
]

PERSPECTIVES = ("own", "all", "none")
DEFAULT_BUDGET = 12_000  # tokens of context per request (the question itself comes on top)
OMITTED = {"zh": "\n……（中间省略）……\n", "en": "\n[… omitted …]\n"}
LETTERS = "abcdefghij"

_WORD_RE = re.compile(f"[^\\s{CJK}]+")


def count_tokens(text: str) -> int:
    """CJK characters + (other whitespace-separated words) / 0.75, rounded up."""
    cjk = cjk_count(text)
    words = len(_WORD_RE.findall(text))
    return cjk + -(-words * 4 // 3)


def question_terms(question: Question) -> set[str]:
    """Terms that make a paragraph relevant: bracketed names, words, and CJK bigrams."""
    text = " ".join([question.stem] + [o.text for o in question.options])
    terms = {m.strip() for m in re.findall(r"【([^】]+)】", text) if m.strip()}
    terms |= {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]{2,}", text)}
    for run in CJK_RUN_RE.findall(text):
        terms |= {run[i:i + 2] for i in range(len(run) - 1)}
    stop = {"the", "and", "what", "who", "was", "did", "is", "of", "between", "relationship", "是什", "什么",
            "的关", "关系", "被谁", "哪里", "怎么", "为什", "是被"}
    return {t for t in terms if t not in stop}


def _paragraphs(text: str) -> list[str]:
    parts = [p for p in re.split(r"(\n\s*\n|\n)", text) if p]
    # Re-attach separators so that joining gives back the text.
    out: list[str] = []
    for part in parts:
        if out and part.strip() == "":
            out[-1] += part
        else:
            out.append(part)
    # Very long paragraphs (OCR text without breaks) are cut into sentence groups.
    final: list[str] = []
    for p in out:
        if count_tokens(p) <= 400:
            final.append(p)
            continue
        sentences = re.split(r"(?<=[。！？!?.；;])", p)
        chunk = ""
        for s in sentences:
            if chunk and count_tokens(chunk + s) > 300:
                final.append(chunk)
                chunk = ""
            chunk += s
        if chunk:
            final.append(chunk)
    return final


def fit_to_budget(text: str, budget: int, terms: set[str] | None = None, language: str = "zh") -> str:
    """``text`` itself when it fits; else its start plus the most relevant paragraphs (see module doc)."""
    if budget <= 0:
        return ""
    if count_tokens(text) <= budget:
        return text
    paragraphs = _paragraphs(text)
    costs = [count_tokens(p) for p in paragraphs]
    marker = OMITTED.get(language, OMITTED["en"])
    head_budget = budget // 4
    keep: set[int] = set()
    used = 0
    for i, cost in enumerate(costs):
        if used + cost > head_budget:
            break
        keep.add(i)
        used += cost
    if not keep and paragraphs:  # the first paragraph alone is too big: cut it by characters
        return _cut(paragraphs[0], budget)
    terms = terms or set()

    def relevance(i: int) -> float:
        p = paragraphs[i].lower()
        hits = sum(p.count(t.lower()) for t in terms)
        return hits / (costs[i] ** 0.5 + 1)

    for i in sorted(range(len(paragraphs)), key=lambda i: (-relevance(i), i)):
        if i in keep or relevance(i) <= 0:
            continue
        if used + costs[i] + 4 > budget:
            continue
        keep.add(i)
        used += costs[i] + 4
    # Fill what is left with the text right after the head (continuity beats fragments).
    for i in range(len(paragraphs)):
        if i not in keep and used + costs[i] + 4 <= budget:
            keep.add(i)
            used += costs[i] + 4
        elif i not in keep:
            break
    pieces: list[str] = []
    previous = -1
    for i in sorted(keep):
        if previous >= 0 and i != previous + 1:
            pieces.append(marker)
        pieces.append(paragraphs[i])
        previous = i
    if previous < len(paragraphs) - 1:
        pieces.append(marker)
    return "".join(pieces)


def _cut(text: str, budget: int) -> str:
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def format_options(question: Question) -> str:
    return "\n".join(f"{LETTERS[i].upper()}: {o.text.strip()}" for i, o in enumerate(question.options))


@dataclass
class Context:
    text: str
    characters: list[str]


def _script_text(character: Character) -> str:
    return character.script.replace("\\ n", "\n").replace("\\n", "\n").strip()


def context_for(game: Game, question: Question, perspective: str, budget: int = DEFAULT_BUDGET) -> Context:
    """The role-script context of a question for a perspective, fitted to ``budget`` tokens."""
    language = game.language if game.language in OMITTED else "en"
    terms = question_terms(question)
    if perspective == "none":
        return Context("", [])
    if perspective == "own":
        character = game.character(question.perspective) if question.perspective else None
        if character is None:
            return Context("", [])
        return Context(fit_to_budget(_script_text(character), budget, terms, language), [character.name])
    scripts = [(c.name, _script_text(c)) for c in game.characters if c.script.strip()]
    label = "角色剧本" if language == "zh" else "Role script"
    sizes = [max(1, count_tokens(s)) for _, s in scripts]
    total = sum(sizes)
    blocks = []
    floor = min(200, budget // max(1, len(scripts)))  # a small budget (small server) may go below 200 each
    for (name, script), size in zip(scripts, sizes, strict=True):
        share = budget if total <= budget else max(floor, budget * size // total)
        blocks.append(f"【{label}：{name}】\n{fit_to_budget(script, share, terms, language)}")
    public = game.public_clue_text.strip()
    if public:
        blocks.insert(0, ("【公开线索】\n" if language == "zh" else "[Public clues]\n") + public)
    return Context("\n\n".join(blocks), [n for n, _ in scripts])


SYSTEM = {
    "zh": "你正在参与一场剧本杀（谋杀之谜）游戏的推理测评。请仅根据给出的材料回答选择题。",
    "en": "You are taking part in a murder-mystery game reasoning evaluation. Answer the multiple-choice "
          "question using only the material given.",
}
INSTRUCTION = {
    ("zh", False): '只选一个选项。请只输出 JSON：{"reason": "一句话理由", "answer": "a"}',
    ("zh", True): '请选出两个选项。请只输出 JSON：{"reason": "一句话理由", "answer": "a,b"}',
    ("en", False): 'Choose exactly one option. Reply with JSON only: {"reason": "one sentence", "answer": "a"}',
    ("en", True): 'Choose two options. Reply with JSON only: {"reason": "one sentence", "answer": "a,b"}',
}


def build_messages(game: Game, question: Question, perspective: str, budget: int = DEFAULT_BUDGET,
                   images: Sequence[str] = (), extra_context: str = "") -> list[dict]:
    """Chat messages for one question; ``images`` are data URLs sent as image content parts."""
    language = game.language if game.language in SYSTEM else "en"
    context = context_for(game, question, perspective, budget)
    parts: list[str] = []
    if perspective == "own" and context.characters:
        parts.append(f"你扮演的角色是【{context.characters[0]}】。以下是你的角色剧本：" if language == "zh"
                     else f"You play the character {context.characters[0]}. Here is your role script:")
    if context.text:
        parts.append(context.text)
    if extra_context:
        parts.append(extra_context)
    header = "问题" if language == "zh" else "Question"
    parts.append(f"{header}：{question.stem.strip()}\n{format_options(question)}")
    parts.append(INSTRUCTION[(language, question.multi)])
    text = "\n\n".join(parts)
    if images:
        content: list[dict] | str = [{"type": "text", "text": text}] + [
            {"type": "image_url", "image_url": {"url": url}} for url in images]
    else:
        content = text
    return [{"role": "system", "content": SYSTEM[language]}, {"role": "user", "content": content}]
