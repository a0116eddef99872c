"""Offline baselines that need no key and no network: ``baseline:random`` and ``baseline:lexical``.

Both return a reply string ("b", or "a,c" for two-answer questions) that goes through the same
parser and scorers as a model's reply, so their numbers are directly comparable.

- ``random``: a uniformly random option (two distinct ones for multi-answer questions), from a
  generator seeded by (seed, run, question id) — the same call always gives the same answer, in
  any order and under any concurrency.
- ``lexical``: Okapi BM25 (k1 = 1.5, b = 0.75) of each option against the perspective's context
  split into passages; an option's score is its best passage score, computed on the option's own
  terms (terms shared by every option carry no signal and are dropped). Chinese is tokenised with
  jieba, other text by lowercase words. Ties (e.g. perspective ``none``, where the context is only
  the stem) are broken by the seeded generator.
"""
from __future__ import annotations

import hashlib
import logging
import math
import random
import re
from collections import Counter
from functools import lru_cache

from casebook.interchange import Question
from casebook.text import CJK_RUN_RE

__all__ = ["BASELINES", "is_baseline", "lexical_answer", "random_answer", "tokenize"]

BASELINES = ("baseline:random", "baseline:lexical")
LETTERS = "abcdefghij"
_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = {
    "the", "a", "an", "of", "and", "is", "was", "to", "in", "on", "by", "x", "with", "for", "at",
    "的", "了", "是", "在", "和", "与", "被", "我", "你", "他", "她", "也", "就", "都", "着", "一个",
}


def is_baseline(model: str) -> bool:
    return model.startswith("baseline:")


def _rng(seed: int, run: int, question_id: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}|{run}|{question_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _picks(question: Question) -> int:
    return min(2, len(question.options)) if question.multi else 1


def random_answer(question: Question, question_id: str, seed: int, run: int) -> str:
    rng = _rng(seed, run, question_id)
    letters = rng.sample(LETTERS[:len(question.options)], _picks(question)) if question.options else []
    return ",".join(sorted(letters))


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


@lru_cache(maxsize=4096)
def tokenize(text: str) -> tuple[str, ...]:
    """Lowercase words for Latin text, jieba words for CJK runs; stopwords and 1-char Latin dropped."""
    tokens: list[str] = [w.lower() for w in _WORD.findall(text)]
    runs = CJK_RUN_RE.findall(text)
    if runs:
        jieba = _jieba()
        for run in runs:
            tokens.extend(jieba.lcut(run))
    return tuple(t for t in tokens if t not in _STOP and not (len(t) == 1 and t.isascii()))


class BM25Index:
    """BM25 over passages of a context; built once per distinct context."""

    def __init__(self, text: str, passage_chars: int = 300, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        passages = [p for p in re.split(r"\n\s*\n|\n", text) if p.strip()]
        merged: list[str] = []
        for p in passages:  # merge short lines into ~passage_chars passages
            if merged and len(merged[-1]) + len(p) < passage_chars:
                merged[-1] += "\n" + p
            else:
                merged.append(p)
        self.docs = [Counter(tokenize(p)) for p in merged]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def score(self, terms: set[str]) -> float:
        best = 0.0
        for doc, length in zip(self.docs, self.lengths, strict=True):
            s = 0.0
            for t in terms:
                tf = doc.get(t, 0)
                if tf:
                    s += self.idf[t] * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * length / self.avg))
            best = max(best, s)
        return best


@lru_cache(maxsize=64)
def _index(text: str) -> BM25Index:
    return BM25Index(text)


def lexical_answer(question: Question, context: str, question_id: str, seed: int, run: int) -> str:
    if not question.options:
        return ""
    index = _index(context or question.stem)
    option_terms = [set(tokenize(o.text)) for o in question.options]
    shared = set.intersection(*option_terms) if option_terms else set()
    scores = [index.score(terms - shared) for terms in option_terms]
    rng = _rng(seed, run, question_id)
    tiebreak = [rng.random() for _ in scores]
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], tiebreak[i]))
    return ",".join(sorted(LETTERS[i] for i in order[:_picks(question)]))
