"""The shared middle of every runner: ask items (model or baseline), parse, score.

A runner (``wellplay``, ``whodunitbench``) turns an export into :class:`Item` s — one multiple-
choice question with the messages to send and the context a lexical baseline reads — and hands
them to :func:`ask` and :func:`score_items`; it never talks to the client itself.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from casebook.interchange import Game, Question
from casebook.llm import ChatClient, ChatRequest, ResponseCache, run_blocking
from evaluation.baselines import lexical_answer, random_answer
from evaluation.config import EvalConfig
from evaluation.parsing import parse_answer
from evaluation.scoring import ResultRow, score_reply

__all__ = ["Answer", "Item", "ask", "make_client", "score_items"]


@dataclass
class Item:
    id: str  # stable across runs and reruns: "<game slug>#<kind>:<index>"
    game: Game
    question: Question
    category: str
    messages: list[dict[str, Any]]
    context: str = ""  # what baseline:lexical reads
    character: str = ""
    level: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Answer:
    item: Item
    run: int
    reply: str | None
    cached: bool = False
    error: str = ""
    failure: str = ""  # why no reply came (casebook.llm.FAILURE_REASONS); empty when answered


def make_client(config: EvalConfig) -> ChatClient:
    return ChatClient(
        base_url=config.base_url, api_key=config.api_key,
        cache=None if config.no_cache else ResponseCache(config.cache_dir),
        concurrency=config.concurrency, max_retries=config.max_retries, timeout=config.timeout,
        prices=config.prices, progress=config.progress, refresh_failed=config.refresh_failed,
    )


def ask(items: Sequence[Item], config: EvalConfig, client: ChatClient | None, desc: str = "questions") -> list[Answer]:
    """Every item in every run: baseline replies computed locally, model replies via the client."""
    answers: list[Answer] = []
    if config.is_baseline:
        for run in range(config.runs):
            for item in items:
                if config.model == "baseline:random":
                    reply = random_answer(item.question, item.id, config.seed, run)
                else:
                    reply = lexical_answer(item.question, item.context, item.id, config.seed, run)
                # in the shape the prompt asks a model for, so both scoring modes read it alike
                answers.append(Answer(item, run, json.dumps({"answer": reply})))
        return answers
    assert client is not None
    requests = [
        ChatRequest(config.model, item.messages, config.request_params(run))
        for run in range(config.runs) for item in items
    ]
    results = run_blocking(client.run(requests, desc=desc)) if requests else []
    pairs = [(item, run) for run in range(config.runs) for item in items]
    for (item, run), result in zip(pairs, results, strict=True):
        answers.append(Answer(item, run, result.content, result.cached, result.error, result.failure))
    return answers


def score_items(answers: Sequence[Answer]) -> list[ResultRow]:
    """Parse each reply and score it in both modes; a failed request is recorded, never scored."""
    rows: list[ResultRow] = []
    for a in answers:
        q = a.item.question
        truth = (q.answer or q.answer_letters or "").strip().lower()
        if a.reply is None:
            parsed, right, status = None, {}, "failed"
        else:
            parsed = parse_answer(a.reply, n_options=len(q.options) or 5, multi=q.multi)
            right = score_reply(a.reply, parsed.letters, truth, q.multi)
            status = "answered" if parsed.ok else "unparseable"
        rows.append(ResultRow(
            run=a.run, game=a.item.game.slug, question_id=a.item.id, category=a.item.category,
            weight=q.effective_weight if a.item.category in ("objective", "reasoning", "relations") else 1,
            truth=truth, character=a.item.character, sub_type=q.sub_type, multi=q.multi, level=a.item.level,
            reply=a.reply, answer=parsed.letters if parsed else None, right=right,
            cached=a.cached, error=a.error, status=status, failure=(a.failure or "server") if status == "failed" else "",
            extra={"parse_rule": parsed.rule if parsed else "", **a.item.extra},
        ))
    return rows
