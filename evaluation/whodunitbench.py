"""WhodunitBench evaluation: LSU, TIU, MIU, MMR (per level) and CMD asked of a model or baseline;
SPC, ITD and the murderer vote computed from recorded agent logs.

What is asked, per ``shared/formats/whodunitbench.md`` §7:

- **LSU**: each detective's (non-murderer role's) long-script questions, with that role's own
  script (``--perspective own``; ``all`` gives every script, ``none`` only the question).
- **TIU** / **MIU**: the text-rich (``ei_q``) / media-rich (``cxi_q``) image questions with all of
  the game's images attached as ``image_url`` content parts (base64 data URLs, downscaled so the
  longer side is at most ``--image-max-side`` pixels). The published questions name no image, so
  every image of the game goes with each question.
- **MMR**: the multi-step questions with the images and, unless ``--perspective none``, the public
  clue and every role script (by the end of a game the detectives have shared their clues);
  accuracy overall and per hop level (``0`` = direct facts, ``role`` = role-only questions with
  no level).
- ``--text-only`` (a server that takes no images): no image is ever sent. TIU/MIU questions get
  the stored text of the game's image clues (OCR / description) instead, and are *skipped* when no
  image has any — MMR keeps its text context plus that image text. The summary's ``text_only``
  block counts both.
- **CMD**: the model writes the motive and method (context as for MMR); an LLM judge scores it
  0–100 against the game's ``reason``. The judge model and prompt are in the report's config.
  Baselines cannot write free text, so CMD is ``null`` for them unless a judge is given.

``overall`` in the summary is the micro-average over the LSU/TIU/MIU/MMR questions (every question
weighs 1, so "weighted" equals "accuracy"); CMD is a judge score, reported apart under
``by_category.cmd`` (0–1, plus ``score_0_100``) and never mixed into ``overall``.

Recorded agent logs (``Agent_*.json``) give **SPC** (share of a key role's private key statements
found in its clue-sharing text: a statement counts as shared when at least half of its content
words — jieba tokens of two or more characters, numbers and function words dropped — occur in what that role
shared; a cheap lexical stand-in for the paper's judged coverage, documented per run), **ITD** (share
of key roles that some detective questioned) and the **vote** (share of detectives naming the
murderer), one value per recorded run.
"""
from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from casebook.interchange import ClueKind, Game, Question, QuestionKind, name_key
from casebook.llm import ChatClient, ChatRequest, run_blocking
from evaluation.config import ConfigError, EvalConfig
from evaluation.context import fit_to_context, token_counter
from evaluation.engine import Item, ask, score_items
from evaluation.prompts import build_messages, context_for
from evaluation.scoring import ResultRow, aggregate, outcome_counts
from exporters.whodunitbench.agent_logs import AgentRun, read_agent_runs

__all__ = ["CATEGORIES", "agent_metrics", "build_items", "image_data_urls", "parse_judge_score", "run_whodunitbench"]

CATEGORIES = ("lsu", "tiu", "miu", "mmr")
CATEGORY_OF = {
    QuestionKind.LONG_SCRIPT: "lsu",
    QuestionKind.TEXT_IMAGE: "tiu",
    QuestionKind.MEDIA_IMAGE: "miu",
    QuestionKind.MULTI_STEP: "mmr",
}
SPC_THRESHOLD = 0.5
_FUNCTION_WORDS = {"因为", "但是", "不是", "感觉", "特别", "所以", "如果", "已经", "没有", "一个", "自己", "时候", "我们",
                   "他们", "她们", "这个", "那个", "什么", "可能", "就是", "还是", "然后"}


def content_words(text: str) -> set[str]:
    """Words that carry a statement's content (for SPC): 2+ characters, numbers (list numbering) and function words dropped."""
    from evaluation.baselines import tokenize

    return {t for t in tokenize(text) if len(t) >= 2 and not t.isdigit() and t not in _FUNCTION_WORDS}


def statement_shared(statement: str, shared: str) -> bool:
    words = content_words(statement)
    if not words or not shared:
        return False
    found = content_words(shared)
    return len(words & found) / len(words) >= SPC_THRESHOLD


# -- images --------------------------------------------------------------------------------

def image_data_urls(game: Game, max_side: int = 1024) -> list[str]:
    """Every image clue of the game as a data URL, downscaled (JPEG q85; PNG kept if small)."""
    from PIL import Image

    urls: list[str] = []
    for clue in game.clues:
        if not clue.data:
            continue
        try:
            img = Image.open(io.BytesIO(clue.data))
            img.load()
        except (OSError, ValueError, Image.DecompressionBombError):
            continue  # the reader already reported unreadable images
        if max(img.size) <= max_side and clue.media_type in ("image/png", "image/jpeg") and len(clue.data) < 400_000:
            data, media = clue.data, clue.media_type
        else:
            img.thumbnail((max_side, max_side))
            buffer = io.BytesIO()
            img.convert("RGB").save(buffer, "JPEG", quality=85)
            data, media = buffer.getvalue(), "image/jpeg"
        urls.append(f"data:{media};base64,{base64.b64encode(data).decode('ascii')}")
    return urls


# -- items ---------------------------------------------------------------------------------

def _detectives(game: Game) -> list[str]:
    murderers = {name_key(n) for n in game.murderers}
    return [c.name for c in game.characters if c.playable and name_key(c.name) not in murderers]


def _full_context(game: Game, perspective: str, budget: int) -> str:
    """Public clue + every role script (MMR and CMD), empty for perspective none."""
    if perspective == "none":
        return ""
    probe = Question(kind=QuestionKind.MULTI_STEP, stem="", options=[])
    return context_for(game, probe, "all", budget).text


def image_text(game: Game) -> str:
    """The stored OCR / description text of the game's image clues (what --text-only sends instead)."""
    language = "zh" if game.language == "zh" else "en"
    blocks = [(f"【图片 {c.title or c.key} 的文字】\n" if language == "zh" else f"[Text of image {c.title or c.key}]\n")
              + c.ocr_text.strip() for c in game.clues if c.kind == ClueKind.IMAGE and c.ocr_text.strip()]
    return "\n\n".join(blocks)


def build_items(games: Sequence[Game], config: EvalConfig, skipped: dict[str, int] | None = None) -> list[Item]:
    """The questions to ask; with ``--text-only`` image questions without stored image text are counted
    in ``skipped`` (by category) instead."""
    items: list[Item] = []
    for game in games:
        detectives = {name_key(n) for n in _detectives(game)}
        images: list[str] | None = [] if config.text_only else None
        stored_image_text = image_text(game) if config.text_only else ""
        counts: dict[str, int] = {}
        for index, question in enumerate(game.questions):
            category = CATEGORY_OF.get(question.kind)
            if category is None or not question.options:
                continue
            if category == "lsu" and name_key(question.perspective) not in detectives:
                continue
            counts[category] = counts.get(category, 0) + 1
            if config.limit is not None and counts[category] > config.limit:
                continue
            level = question.level if category == "mmr" else None
            messages: list[dict[str, Any]] = []
            context, note = "", ""
            count = token_counter(config.model)[0]
            if category == "lsu":
                perspective = config.perspective
                if not config.is_baseline:
                    messages, note = fit_to_context(
                        lambda budget, game=game, question=question: build_messages(game, question,
                                                                                    config.perspective, budget),
                        config.token_budget, config.prompt_limit(), count)
                elif config.model == "baseline:lexical":
                    context = context_for(game, question, perspective, 10**9).text
            else:
                if config.text_only and category in ("tiu", "miu") and not stored_image_text:
                    if skipped is not None:
                        skipped[category] = skipped.get(category, 0) + 1
                    continue
                if images is None and not config.is_baseline:
                    images = image_data_urls(game, config.image_max_side)
                extra = ""
                if category == "mmr":
                    extra = _full_context(game, config.perspective,
                                          config.token_budget if not config.is_baseline else 10**9)
                if stored_image_text:
                    extra = "\n\n".join(p for p in (extra, stored_image_text) if p)
                if not config.is_baseline:
                    def build(budget: int, game=game, question=question, category=category,
                              image_text=stored_image_text, pictures=images) -> list[dict[str, Any]]:
                        text = _full_context(game, config.perspective, budget) if category == "mmr" else ""
                        text = "\n\n".join(p for p in (text, image_text) if p)
                        return build_messages(game, question, "none", config.token_budget, pictures or [], text)

                    messages, note = fit_to_context(build, config.token_budget, config.prompt_limit(), count)
                context = extra  # image questions: the lexical baseline has only text to go on
            items.append(Item(
                id=f"{game.slug}#{index}", game=game, question=question, category=category, messages=messages,
                context=context or question.stem, character=question.perspective if category == "lsu" else "",
                level=level, extra={"source": question.source, **({"context_note": note} if note else {})},
            ))
    return items


# -- CMD -----------------------------------------------------------------------------------

CMD_PROMPT = {
    "zh": "请根据以上材料推理：凶手的作案动机是什么？作案手法是什么？请分两段回答，分别以“作案动机：”和“作案手法：”开头。",
    "en": "From the material above: what was the murderer's motive, and what was the method? Answer in two "
          "paragraphs starting with 'Motive:' and 'Method:'.",
}


def _cmd_messages(game: Game, config: EvalConfig) -> list[dict[str, Any]]:
    language = "zh" if game.language == "zh" else "en"
    context = _full_context(game, config.perspective, config.token_budget)
    task = game.task_prompts.get("civilian", "").strip()
    text = "\n\n".join(p for p in (context, task, CMD_PROMPT[language]) if p)
    system = ("你正在参与一场剧本杀（谋杀之谜）游戏的推理测评。" if language == "zh"
              else "You are taking part in a murder-mystery reasoning evaluation.")
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


def parse_judge_score(reply: str | None) -> float | None:
    """0–100 from the judge's JSON ``{"score": n}``, else from the first number in the reply."""
    if not reply:
        return None
    for match in re.finditer(r"\{.*?\}", reply, re.S):
        try:
            value = json.loads(match.group(0)).get("score")
        except (json.JSONDecodeError, AttributeError):
            continue
        try:
            return max(0.0, min(100.0, float(value)))
        except (TypeError, ValueError):
            continue
    number = re.search(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)(?![\d.])", reply)
    if number and float(number.group(1)) <= 100:
        return float(number.group(1))
    return None


def run_cmd(games: Sequence[Game], config: EvalConfig, client: ChatClient | None) -> list[ResultRow]:
    """One deduction per game per run, each scored by the judge; empty rows when nobody can judge."""
    judge = config.judge
    games = [g for g in games if g.truth.text.strip()]
    if not games:
        return []
    rows: list[ResultRow] = []
    if config.is_baseline:
        if judge is None:
            return []
        predictions = {(g.slug, run): "" for g in games for run in range(config.runs)}
    else:
        assert client is not None
        requests = [ChatRequest(config.model, _cmd_messages(g, config), config.request_params(run))
                    for run in range(config.runs) for g in games]
        results = run_blocking(client.run(requests, desc="CMD deductions"))
        pairs = [(g.slug, run) for run in range(config.runs) for g in games]
        predictions = {pair: r.content for pair, r in zip(pairs, results, strict=True)}
        for (slug, run), r in zip(pairs, results, strict=True):
            if r.content is None:  # the deduction request failed: recorded, never judged or scored
                rows.append(ResultRow(run=run, game=slug, question_id=f"{slug}#cmd", category="cmd", weight=1,
                                      truth="", reply=None, error=r.error, status="failed",
                                      failure=r.failure or "server", extra={"judge": judge}))
        predictions = {pair: text for pair, text in predictions.items() if text is not None}
    if judge is None or client is None:
        for (slug, run), prediction in predictions.items():
            rows.append(ResultRow(run=run, game=slug, question_id=f"{slug}#cmd", category="cmd", weight=1, truth="",
                                  reply=prediction, extra={"judge": None}))
        return rows
    by_slug = {g.slug: g for g in games}
    judge_requests = []
    keys = []
    for (slug, run), prediction in predictions.items():
        prompt = config.judge_prompt_for(by_slug[slug].truth.text.strip(), prediction.strip() or "(no answer)")
        judge_requests.append(ChatRequest(judge, [{"role": "user", "content": prompt}],
                                          {"temperature": 0, "max_tokens": 300}))
        keys.append((slug, run, prediction))
    verdicts = run_blocking(client.run(judge_requests, desc="CMD judge"))
    for (slug, run, prediction), verdict in zip(keys, verdicts, strict=True):
        score = parse_judge_score(verdict.content) if prediction.strip() else 0.0
        # A judge that failed or whose verdict cannot be read is excluded (and counted), never a 0.
        failed = score is None
        right = {} if failed else {"strict": score / 100, "repository": score / 100}
        rows.append(ResultRow(run=run, game=slug, question_id=f"{slug}#cmd", category="cmd", weight=1,
                              truth=by_slug[slug].truth.text.strip()[:200], reply=prediction, right=right,
                              answer=None if failed else f"{score:g}", error=verdict.error,
                              status="failed" if failed else "answered", failure="judge" if failed else "",
                              extra={"judge": judge, "judge_reply": verdict.content or ""}))
    return rows


# -- recorded agents -----------------------------------------------------------------------

def _game_dir(config: EvalConfig, game: Game) -> Path | None:
    for candidate in (config.export_dir / game.slug, config.export_dir):
        if (candidate / "env_p_all.json").is_file():
            return candidate
    return None


def agent_metrics(game: Game, game_dir: Path) -> dict[str, Any] | None:
    """SPC, ITD and vote accuracy per recorded run of one game (None when no logs exist)."""
    runs = read_agent_runs(game_dir, [c.name for c in game.characters])
    if not runs:
        return None
    key_roles = [c.name for c in game.characters if c.key_role]
    murderers = {name_key(m) for m in game.murderers}
    statements: dict[str, list[str]] = {}
    for ks in game.key_statements:
        owner = game.character(ks.owner)
        statements.setdefault(owner.name if owner else ks.owner, []).append(ks.text)
    per_run = []
    for run in runs:
        spc_hits, spc_total = 0, 0
        for owner, texts in statements.items():
            shared = _shared_text(run, owner)
            for text in texts:
                spc_total += 1
                if statement_shared(text, shared):
                    spc_hits += 1
        targets = {name_key(t) for t in _targets(run)}
        itd = (sum(1 for k in key_roles if name_key(k) in targets) / len(key_roles)) if key_roles else None
        votes = _votes(run)
        vote_acc = (sum(1 for v in votes.values() if v and name_key(v) in murderers) / len(votes)) if votes else None
        per_run.append({
            "run": _run_name(run), "source": run.source, "spc": spc_hits / spc_total if spc_total else None,
            "spc_counts": [spc_hits, spc_total], "itd": itd, "questioned": sorted(_targets(run)),
            "vote": vote_acc, "votes": votes,
        })
    return {"runs": per_run}


def _run_name(run: AgentRun) -> str:
    return f"{run.run} ({run.source})"


def _shared_text(run: AgentRun, owner: str) -> str:
    """What a key role said it shared: its Agent_clue entry plus its clue-sharing in the discussion."""
    key = name_key(owner)
    parts = [text for role, text in run.clues.items() if name_key(role) == key]
    parts += [t.clue_sharing or t.text for t in run.discussion if t.speaker and name_key(t.speaker) == key]
    return "\n".join(p for p in parts if p)


def _targets(run: AgentRun) -> list[str]:
    return [t.target for t in run.discussion if t.target]


def _votes(run: AgentRun) -> dict[str, str | None]:
    return dict(run.votes)


def _agents_block(games: Sequence[Game], config: EvalConfig) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for game in games:
        game_dir = _game_dir(config, game)
        if game_dir is None:
            continue
        metrics = agent_metrics(game, game_dir)
        if metrics is None:
            continue
        for key in ("spc", "itd", "vote"):
            values = [r[key] for r in metrics["runs"] if r[key] is not None]
            metrics[key] = sum(values) / len(values) if values else None
        out[game.slug] = metrics
    return out


# -- runner --------------------------------------------------------------------------------

def load_games(config: EvalConfig) -> list[Game]:
    from exporters.whodunitbench.reader import read_whodunitbench

    result = read_whodunitbench(config.export_dir)
    games = [g for g in result.games if config.language is None or g.language == config.language]
    if config.games:
        wanted = {g.casefold() for g in config.games}
        games = [g for g in games if g.slug.casefold() in wanted]
        if not games:
            known = ", ".join(sorted(g.slug for g in result.games)) or "none"
            raise ConfigError(f"no game matches --game {' '.join(config.games)}; games in the export: {known}")
    if not games:
        errors = "; ".join(str(p) for p in result.problems if p.severity == "error")
        raise ConfigError(f"no WhodunitBench games found in {config.export_dir}" + (f" ({errors})" if errors else ""))
    return games


def _levels(rows: Sequence[ResultRow], runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    mmr = [r for r in rows if r.category == "mmr"]
    keys = sorted({r.level for r in mmr if r.level is not None}) + (["role"] if any(r.level is None for r in mmr) else [])
    for level in keys:
        subset = [r for r in mmr if (r.level is None if level == "role" else r.level == level)]
        block = aggregate(subset, runs, ["mmr"])["by_category"].get("mmr", {})
        out[str(level)] = block
    return out


def run_whodunitbench(config: EvalConfig, client: ChatClient | None) -> tuple[dict[str, Any], list[ResultRow], str]:
    games = load_games(config)
    skipped: dict[str, int] = {}
    items = build_items(games, config, skipped)
    if not items:
        raise ConfigError("the selected games have no multiple-choice questions")
    answers = ask(items, config, client, desc="WhodunitBench questions")
    rows = score_items(answers)
    summary = aggregate(rows, config.runs, CATEGORIES)
    summary["mmr_levels"] = _levels(rows, config.runs)
    cmd_rows = run_cmd(games, config, client)
    cmd_summary = aggregate(cmd_rows, config.runs, ["cmd"])
    cmd = cmd_summary["by_category"].get("cmd") or {"strict": None, "repository": None, "n": 0}
    cmd["outcomes"] = cmd_summary["outcomes"]
    cmd["judge_model"] = config.judge
    cmd["score_0_100"] = None if cmd.get("strict") is None else round(100 * cmd["strict"], 2)
    summary["by_category"]["cmd"] = cmd
    for slug, block in cmd_summary.get("by_game", {}).items():
        summary["by_game"].setdefault(slug, {"by_category": {}, "overall": {}})["by_category"]["cmd"] = \
            block["by_category"].get("cmd")
    summary["agents"] = _agents_block(games, config)
    summary["outcomes"] = outcome_counts(rows + cmd_rows)  # CMD deductions and verdicts included
    if config.text_only:
        summary["text_only"] = {
            "images_sent": 0, "skipped_without_image_text": skipped,
            "image_questions_with_stored_text": sum(1 for i in items if i.category in ("tiu", "miu")),
        }
    summary["questions"] = len(items)
    summary["games"] = [{"slug": g.slug, "title": g.title, "language": g.language} for g in games]
    extra = ["## MMR by hop level", ""]
    extra += [f"- level {lvl}: strict {100 * (b.get('strict') or 0):.1f}% (n={b.get('n')})"
              for lvl, b in summary["mmr_levels"].items()]
    extra += ["", f"## CMD (judge: {config.judge or 'none'})", "",
              f"- mean judge score: {cmd['score_0_100'] if cmd['score_0_100'] is not None else 'n/a'}"]
    if summary["agents"]:
        extra += ["", "## Recorded agent logs", ""]
        for slug, metrics in summary["agents"].items():
            for r in metrics["runs"]:
                shown = {k: "n/a" if r[k] is None else f"{100 * r[k]:.0f}%" for k in ("spc", "itd", "vote")}
                extra.append(f"- {slug} run {r['run']}: SPC {shown['spc']} ({r['spc_counts'][0]}/{r['spc_counts'][1]} "
                             f"key statements), ITD {shown['itd']}, vote {shown['vote']}")
    return summary, rows + cmd_rows, "\n".join(extra)


