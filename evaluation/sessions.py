"""``evaluate --format sessions``: turn by turn, who does each player suspect now?

Reads the JSONL rows written by ``manage.py export_sessions`` (one per turn, each with the
ground-truth belief matrix of Eq. 15), asks the model — or an offline baseline — for every
player's suspects after the turn, turns the answer into a belief matrix the same way, and scores
it row-wise: cross-entropy (the MultiMind training loss), argmax agreement (rows whose truth is
not uniform) and mean absolute error. Requests go through the shared client (cache, concurrency,
retries) and the report through the shared report writer.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casebook.belief import belief_matrix, normalize_rows, row_cross_entropy
from casebook.llm import ChatClient, ChatRequest, run_blocking
from evaluation.config import ConfigError, EvalConfig
from evaluation.scoring import ResultRow, aggregate, mean_std

__all__ = ["SessionTurn", "load_turns", "parse_beliefs", "run_sessions", "score_turn"]

CONTEXT_TURNS = 30  # earlier turns shown to the model
TURN_CHARS = 400  # each turn clipped to this many characters


@dataclass
class SessionTurn:
    id: str  # "<game>#session:<id>:turn:<n>"
    game: str
    row: dict[str, Any]
    history: list[dict[str, Any]]  # earlier rows of the same session, oldest first


def load_turns(export_dir: Path, games: list[str] | None = None, limit: int | None = None) -> list[SessionTurn]:
    """Every turn row of every ``*.jsonl`` session export under ``export_dir``."""
    files = sorted(Path(export_dir).rglob("session-*.jsonl"))
    if not files:
        raise ConfigError(f"no session exports (session-*.jsonl) under {export_dir}; run manage.py export_sessions")
    turns: list[SessionTurn] = []
    for path in files:
        rows = []
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}: line {n} is not valid JSON ({exc.msg})") from exc
            if not isinstance(row, dict) or not {"players", "belief_matrix", "text"} <= set(row):
                raise ConfigError(f"{path}: line {n} is not a session turn row (players, belief_matrix, text)")
            rows.append(row)
        if games and rows and rows[0].get("game") not in games:
            continue
        for k, row in enumerate(rows[:limit] if limit else rows):
            turns.append(SessionTurn(f"{row.get('game')}#session:{row.get('session')}:turn:{row.get('turn', k)}",
                                     str(row.get("game", "")), row, rows[max(0, k - CONTEXT_TURNS):k]))
    return turns


def _suspect_role(row: dict[str, Any]) -> str:
    return "werewolf" if str(row.get("session_type", "")).startswith("onuw") else "murderer"


def messages_for(turn: SessionTurn) -> list[dict[str, str]]:
    row = turn.row
    players = row["players"]
    role = _suspect_role(row)
    lines = [f"{r.get('speaker') or r.get('speaker_label') or '?'}: {r['text'][:TURN_CHARS]}" for r in [*turn.history, row]]
    example = json.dumps({"suspects": {players[0]: players[1:2]}}, ensure_ascii=False)
    return [
        {"role": "system", "content": "You track beliefs in social-deduction games. 你在推理游戏中追踪每位玩家的怀疑对象。"},
        {"role": "user", "content": (
            f"Players: {', '.join(players)}\nTranscript so far:\n" + "\n".join(lines) +
            f"\n\nAfter the last turn, whom does each player suspect of being the {role}? "
            f"Reply with JSON only: {{\"suspects\": {{player: [suspected players]}}}} covering every player "
            f"(an empty list = no one in particular), e.g. {example}. "
            "Alternatively give probabilities: {\"beliefs\": {player: {player: probability}}}.")},
    ]


def _json_object(text: str) -> Any:
    text = re.sub(r"```(?:json)?", "", text or "")
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text[start:])
            if isinstance(value, dict):
                return value
        except json.JSONDecodeError:
            continue
    return None


def parse_beliefs(reply: str | None, players: list[str]) -> list[list[float]] | None:
    """A predicted belief matrix from ``{"suspects": …}`` (via Eq. 15) or ``{"beliefs": …}``; None if unreadable."""
    data = _json_object(reply or "")
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("beliefs"), dict):
        rows = []
        for who in players:
            row = data["beliefs"].get(who) if isinstance(data["beliefs"].get(who), dict) else {}
            rows.append([float(row.get(p, 0) or 0) if isinstance(row.get(p, 0), (int, float)) else 0.0 for p in players])
        return normalize_rows(rows)
    if isinstance(data.get("suspects"), dict):
        suspects = {k: [s for s in v if isinstance(s, str)] for k, v in data["suspects"].items() if isinstance(v, list)}
        return belief_matrix(players, suspects)
    return None


def score_turn(truth: list[list[float]], predicted: list[list[float]]) -> dict[str, float | None]:
    """Mean row cross-entropy, argmax agreement over rows with a non-uniform truth, and MAE."""
    n = len(truth)
    ce = sum(row_cross_entropy(t, p) for t, p in zip(truth, predicted, strict=True)) / n
    agree = []
    for t, p in zip(truth, predicted, strict=True):
        if max(t) - min(t) < 1e-9:
            continue
        best = {j for j, v in enumerate(t) if abs(v - max(t)) < 1e-9}
        agree.append(float(max(range(n), key=lambda j: p[j]) in best))
    mae = sum(abs(a - b) for t, p in zip(truth, predicted, strict=True) for a, b in zip(t, p, strict=True)) / (n * n)
    return {"cross_entropy": ce, "argmax": sum(agree) / len(agree) if agree else None, "mae": mae}


def baseline_reply(turn: SessionTurn, model: str, seed: int, run: int) -> str:
    """Offline replies: ``random`` = one random other player per player; ``lexical`` = each player
    suspects whoever they have named most in their own turns so far (nobody when no one)."""
    players = turn.row["players"]
    if model == "baseline:random":
        rng = random.Random(f"{seed}:{run}:{turn.id}")
        return json.dumps({"suspects": {p: [rng.choice([q for q in players if q != p] or [p])] for p in players}})
    counts: dict[str, dict[str, int]] = {p: {} for p in players}
    for r in [*turn.history, turn.row]:
        speaker = r.get("speaker")
        if speaker in counts:
            for other in players:
                if other != speaker and other in r["text"]:
                    counts[speaker][other] = counts[speaker].get(other, 0) + r["text"].count(other)
    suspects = {p: [max(c, key=c.get)] if c else [] for p, c in counts.items()}
    return json.dumps({"suspects": suspects}, ensure_ascii=False)


def run_sessions(config: EvalConfig, client: ChatClient | None) -> tuple[dict[str, Any], list[ResultRow], str]:
    """Ask, score and aggregate; returns (summary core, per-turn rows, extra Markdown)."""
    turns = load_turns(config.export_dir, config.games, config.limit)
    pairs = [(turn, run) for run in range(config.runs) for turn in turns]
    if config.is_baseline:
        replies = [(baseline_reply(t, config.model, config.seed, run), False, "") for t, run in pairs]
    else:
        assert client is not None
        requests = [ChatRequest(config.model, messages_for(t), config.request_params(run)) for t, run in pairs]
        results = run_blocking(client.run(requests, desc="turns")) if requests else []
        replies = [(r.content, r.cached, r.error) for r in results]
    rows: list[ResultRow] = []
    for (turn, run), (reply, cached, error) in zip(pairs, replies, strict=True):
        players = turn.row["players"]
        predicted = parse_beliefs(reply, players)
        scores = score_turn(turn.row["belief_matrix"], predicted) if predicted else {}
        right = {m: scores["argmax"] for m in ("strict", "repository")} if predicted and scores["argmax"] is not None else {}
        rows.append(ResultRow(
            run=run, game=turn.game, question_id=turn.id, category="belief", weight=1,
            truth=json.dumps(turn.row["suspicions"], ensure_ascii=False), character=turn.row.get("speaker") or "",
            reply=reply, answer=None if predicted is None else json.dumps(predicted), answer_raw=(reply or "")[:200],
            right=right if predicted else {"strict": 0.0, "repository": 0.0}, cached=cached, error=error,
            extra={"cross_entropy": scores.get("cross_entropy"), "mae": scores.get("mae"),
                   "session": turn.row.get("session"), "turn": turn.row.get("turn")}))
    core = aggregate(rows, config.runs, ["belief"])
    core["questions"] = len(turns)
    belief: dict[str, Any] = {}
    for key in ("cross_entropy", "mae"):
        per_run = [mean_std([r.extra[key] for r in rows if r.run == run and r.extra[key] is not None])[0]
                   for run in range(config.runs)]
        belief[key], belief[f"{key}_std"] = mean_std(per_run)
    argmax_runs = [mean_std([r.right["strict"] for r in rows if r.run == run and r.right])[0] for run in range(config.runs)]
    belief["argmax_agreement"], belief["argmax_agreement_std"] = mean_std(argmax_runs)
    belief["unparseable"] = sum(1 for r in rows if r.answer is None)
    core["belief"] = belief

    def fmt(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.4f}"

    extra = ("\n## Belief matrices (turn by turn)\n\n| measure | mean | std over runs |\n|---|---|---|\n"
             f"| row-wise cross-entropy (lower is better) | {fmt(belief['cross_entropy'])} | {fmt(belief['cross_entropy_std'])} |\n"
             f"| argmax agreement | {fmt(belief['argmax_agreement'])} | {fmt(belief['argmax_agreement_std'])} |\n"
             f"| mean absolute error | {fmt(belief['mae'])} | {fmt(belief['mae_std'])} |\n"
             f"\nTurns: {len(turns)} · unparseable replies: {belief['unparseable']}\n")
    return core, rows, extra
