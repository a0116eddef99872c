"""Jubensha free-text items from a generic export (``questions.jsonl``): factual and inferential.

- **factual** (an answer with its source span): the reply's answer — the JSON ``answer`` field, else
  the whole reply — is compared with the reference *exactly* (after trimming) and *normalised*
  (NFKC, case-folded, whitespace and punctuation removed). The source quote is kept next to each row
  in ``results.csv`` (``x_source``).
- **inferential** (premises → conclusion): the same two matches, plus **informed accuracy**: an LLM
  judge (``--judge-model``, default the evaluated model) reads the premises, the reference, the
  model's answer and its rationale, and replies ``{"answer_correct": true|false,
  "rationale_score": 1-5}``; a row is *informed-right* when the answer is correct **and** the
  rationale scores at least :data:`INFORMED_THRESHOLD` (it states the premises). A judge that fails
  or whose verdict cannot be read leaves the row out of ``informed`` (counted in
  ``summary.judge.failed``), never a 0. The judge's prompt and model are saved in ``summary.json``.

Context sent: ``--perspective none`` = the question only; ``own``/``all`` = the item's evidence
quotes (the record carries no scripts). Offline baselines: ``baseline:lexical`` answers with the
item's first evidence quote (a "copy the source" floor), ``baseline:random`` with nothing.
"""
from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from typing import Any

from casebook.interchange import Game, Question
from casebook.llm import ChatClient, ChatRequest, run_blocking
from evaluation.config import ConfigError, EvalConfig
from evaluation.engine import Item, ask
from evaluation.parsing import json_objects
from evaluation.scoring import ResultRow, aggregate

__all__ = ["CATEGORIES", "INFORMED_JUDGE_PROMPT", "MODES", "normalise", "run_jsonl"]

CATEGORIES = ("factual", "inferential")
MODES = ("exact", "normalised", "informed")
INFORMED_THRESHOLD = 4
INFORMED_JUDGE_PROMPT = """你是剧本杀推理测评的评委。/ You judge a murder-mystery reasoning test.
前提 / Premises:
{premises}
标准结论 / Reference conclusion: {truth}
模型的回答 / Model's answer: {answer}
模型的理由 / Model's rationale: {rationale}

1. answer_correct: 回答与标准结论意思相同吗？/ Does the answer mean the same as the reference?
2. rationale_score (1-5): 理由在多大程度上依据了上述前提？1 = 无关或编造，3 = 部分，5 = 完整准确地使用了前提。
   How far does the rationale rest on the premises? 1 = unrelated or invented, 3 = partly, 5 = fully and correctly.
只输出 JSON / reply with JSON only: {"answer_correct": true, "rationale_score": 1-5}"""

INSTRUCTION = {
    "zh": '请简短回答，并给出理由。只输出 JSON：{"answer": "答案", "rationale": "依据哪些事实推出"}',
    "en": 'Answer briefly and give your reasoning. Reply with JSON only: {"answer": "...", "rationale": "which facts"}',
}


def normalise(text: str) -> str:
    """NFKC, case-folded, without whitespace and punctuation/symbols."""
    text = unicodedata.normalize("NFKC", text or "").casefold()
    return "".join(ch for ch in text if not ch.isspace() and unicodedata.category(ch)[0] not in "PS")


def answer_and_rationale(reply: str) -> tuple[str, str]:
    """The JSON ``answer``/``rationale`` fields (last object that has ``answer``), else the whole reply."""
    for candidate in reversed(json_objects(reply)):
        if isinstance(candidate.get("answer"), str):
            rationale = candidate.get("rationale", candidate.get("reason", ""))
            return candidate["answer"].strip(), rationale if isinstance(rationale, str) else ""
    return reply.strip(), ""


def load_records(config: EvalConfig) -> list[dict[str, Any]]:
    from exporters.generic.reader import read_jsonl

    path = config.export_dir / "questions.jsonl"
    if not path.is_file():
        raise ConfigError(f"{config.export_dir} has no questions.jsonl (export it with --format jsonl)")
    records = [r for r in read_jsonl(path) if r.get("kind") in CATEGORIES and str(r.get("answer", "")).strip()]
    if config.language:
        records = [r for r in records if r.get("language") == config.language]
    if config.games:
        wanted = {g.casefold() for g in config.games}
        records = [r for r in records if str(r.get("game", "")).casefold() in wanted]
    if config.limit is not None:
        counts: dict[tuple[str, str], int] = {}
        kept = []
        for r in records:
            key = (r.get("game", ""), r["kind"])
            counts[key] = counts.get(key, 0) + 1
            if counts[key] <= config.limit:
                kept.append(r)
        records = kept
    if not records:
        raise ConfigError("no factual or inferential items with a reference answer in questions.jsonl")
    return records


def _messages(record: dict[str, Any], perspective: str) -> list[dict[str, Any]]:
    language = "zh" if record.get("language") == "zh" else "en"
    quotes = [e.get("quote", "") for e in record.get("evidence", []) if e.get("quote")]
    parts = []
    if perspective != "none" and quotes:
        parts.append(("材料：\n" if language == "zh" else "Material:\n") + "\n".join(quotes))
    parts.append(("问题：" if language == "zh" else "Question: ") + record["stem"])
    parts.append(INSTRUCTION[language])
    return [{"role": "user", "content": "\n\n".join(parts)}]


def _items(records: Sequence[dict[str, Any]], config: EvalConfig) -> list[Item]:
    games: dict[str, Game] = {}
    items = []
    for record in records:
        slug = record.get("game", "")
        game = games.setdefault(slug, Game(slug=slug, title=record.get("game_title", slug),
                                           language=record.get("language", "")))
        question = Question(kind=record["kind"], stem=record["stem"], answer=str(record["answer"]))
        quotes = [e.get("quote", "") for e in record.get("evidence", []) if e.get("quote")]
        items.append(Item(id=record.get("id", ""), game=game, question=question, category=record["kind"],
                          messages=_messages(record, config.perspective),
                          extra={"source": " | ".join(quotes), "premises": list(record.get("premises", []))}))
    return items


def _judge(items: Sequence[Item], replies: dict[tuple[str, int], tuple[str, str]], config: EvalConfig,
           client: ChatClient) -> dict[tuple[str, int], dict[str, Any] | None]:
    """Verdicts for the inferential rows (None = the judge failed or could not be read)."""
    keys, requests = [], []
    by_id = {item.id: item for item in items}
    for (item_id, run), (answer, rationale) in replies.items():
        item = by_id[item_id]
        if item.category != "inferential":
            continue
        prompt = (INFORMED_JUDGE_PROMPT.replace("{premises}", "\n".join(f"- {p}" for p in item.extra["premises"]))
                  .replace("{truth}", item.question.answer).replace("{answer}", answer or "(no answer)")
                  .replace("{rationale}", rationale or "(none)"))
        keys.append((item_id, run))
        requests.append(ChatRequest(config.judge, [{"role": "user", "content": prompt}],
                                    {"temperature": 0, "max_tokens": 200}))
    verdicts: dict[tuple[str, int], dict[str, Any] | None] = {}
    results = run_blocking(client.run(requests, desc="informed-accuracy judge")) if requests else []
    for key, result in zip(keys, results, strict=True):
        verdict = None
        for candidate in reversed(json_objects(result.content or "")):
            score, correct = candidate.get("rationale_score"), candidate.get("answer_correct")
            if isinstance(correct, bool) and isinstance(score, (int, float)) and 1 <= score <= 5:
                verdict = {"answer_correct": correct, "rationale_score": score}
                break
        verdicts[key] = verdict
    return verdicts


def run_jsonl(config: EvalConfig, client: ChatClient | None) -> tuple[dict[str, Any], list[ResultRow], str]:
    """Ask, match, judge and aggregate; returns (summary core, rows, extra Markdown)."""
    items = _items(load_records(config), config)
    if config.is_baseline:
        answers = [(item, run, json.dumps({"answer": item.extra["source"].split(" | ")[0]
                                           if config.model == "baseline:lexical" else ""}, ensure_ascii=False),
                    "", "") for run in range(config.runs) for item in items]
    else:
        answers = [(a.item, a.run, a.reply, a.error, a.failure) for a in ask(items, config, client, desc="items")]
    replies = {(item.id, run): answer_and_rationale(reply) for item, run, reply, _, _ in answers if reply is not None}
    judge = config.judge
    verdicts = _judge(items, replies, config, client) if judge and client is not None else {}
    rows = []
    for item, run, reply, error, failure in answers:
        truth = item.question.answer
        row = ResultRow(run=run, game=item.game.slug, question_id=item.id, category=item.category, weight=1,
                        truth=truth, reply=reply, error=error, extra=dict(item.extra))
        if reply is None:
            row.status, row.failure = "failed", failure or "server"
            rows.append(row)
            continue
        answer, rationale = replies[(item.id, run)]
        row.answer = answer
        row.status = "answered" if answer else "unparseable"
        row.right = {"exact": float(answer == truth.strip()),
                     "normalised": float(bool(answer) and normalise(answer) == normalise(truth))}
        row.extra.update({"rationale": rationale})
        verdict = verdicts.get((item.id, run))
        if item.category == "inferential" and verdict is not None:
            row.right["informed"] = float(verdict["answer_correct"] and verdict["rationale_score"] >= INFORMED_THRESHOLD)
            row.extra.update({"judge_answer_correct": verdict["answer_correct"],
                              "judge_rationale_score": verdict["rationale_score"]})
        rows.append(row)
    summary = aggregate(rows, config.runs, CATEGORIES, MODES)
    kind_of = {item.id: item.category for item in items}
    judged = [k for k in replies if kind_of[k[0]] == "inferential"] if judge and client is not None else []
    summary["modes"] = list(MODES)
    summary["modes_note"] = (
        "Accuracy in %. *exact* = the answer equals the reference after trimming; *normalised* = equal after "
        "NFKC, case folding and removing spaces and punctuation; *informed* (inferential only) = the judge finds "
        f"the answer correct and its rationale scores ≥ {INFORMED_THRESHOLD}/5 against the premises.")
    summary["judge"] = {"model": judge if client is not None else None, "prompt": INFORMED_JUDGE_PROMPT,
                        "threshold": INFORMED_THRESHOLD, "judged": len(judged),
                        "failed": sum(1 for k in judged if verdicts.get(k) is None)}
    summary["questions"] = len(items)
    summary["games"] = sorted({item.game.slug for item in items})
    extra = (f"## Informed accuracy\n\nJudge: {summary['judge']['model'] or 'none'}; judged "
             f"{summary['judge']['judged']}, failed or unreadable {summary['judge']['failed']} (left out).")
    return summary, rows, extra
