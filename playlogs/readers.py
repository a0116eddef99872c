"""Played-game logs → plain data (no database): ONUW log JSON, WhodunitBench agent logs, and plain
CSV / JSONL transcripts. Every reader collects per-line problems instead of stopping at the first,
so the importer can refuse the whole file with the complete list (nothing half-imported).
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casebook.belief import suspects_from_guesses

from .vocab import normalize_action, normalize_emotion, session_type

FORMATS = ("onuw", "whodunitbench", "csv", "jsonl")


@dataclass
class ParsedAnnotation:
    triplets: list[list[str]] = field(default_factory=list)
    face: str = ""
    tone: str = ""
    suspicions: dict[str, list[str]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParsedTurn:
    speaker: str | None  # a player name, or None when the label names nobody
    text: str
    speaker_label: str = ""
    phase: str = ""
    visible_to: list[str] = field(default_factory=list)
    timestamp: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    annotation: ParsedAnnotation | None = None


@dataclass
class ParsedSession:
    title: str
    session_type: str
    source_format: str
    players: list[tuple[str, str]] = field(default_factory=list)  # (name, true role)
    turns: list[ParsedTurn] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class LogError(ValueError):
    """The log cannot be imported; ``errors`` lists every problem, one per line/message."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("\n".join(errors))


def _natural(name: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _visible(value: Any) -> list[str]:
    if value in (None, "", "all") or value == ["all"]:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value] if isinstance(value, list) else []


# ---- ONUW ---------------------------------------------------------------------------------------

def read_onuw(data: Any, title: str, type_key: str = "onuw") -> ParsedSession:
    """``{"messages": [...]}`` as in multimind.md; optional top-level ``roles`` {player: true role}."""
    stype = session_type(type_key)
    parsed = ParsedSession(title=title, session_type=type_key, source_format="onuw")
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        parsed.errors.append('the file must be a JSON object with a "messages" list (ONUW log layout)')
        return parsed
    roles = data.get("roles") if isinstance(data.get("roles"), dict) else {}
    names: dict[str, None] = {}
    rows: list[tuple[int, dict]] = []
    for i, msg in enumerate(data["messages"], start=1):
        where = f"message {i}"
        if not isinstance(msg, dict):
            parsed.errors.append(f"{where}: not a JSON object")
            continue
        speaker, content = msg.get("agent_name"), msg.get("content")
        if not isinstance(speaker, str) or not speaker.strip():
            parsed.errors.append(f"{where}: 'agent_name' (the speaker) is missing or empty")
            continue
        if not isinstance(content, str):
            parsed.errors.append(f"{where}: 'content' (the statement) is missing or not text")
            continue
        names[speaker.strip()] = None
        guesses = msg.get("guesses")
        if guesses is not None and not isinstance(guesses, dict):
            parsed.errors.append(f"{where}: 'guesses' must be an object subject → {{object → role}} or null")
            continue
        for subject, row in (guesses or {}).items():
            names[subject] = None
            if isinstance(row, dict):
                names.update(dict.fromkeys(row))
        rows.append((i, msg))
    names.update(dict.fromkeys(roles))
    parsed.players = [(n, str(roles.get(n, ""))) for n in sorted(names, key=_natural)]
    for i, msg in rows:
        speaker = msg["agent_name"].strip()
        triplets = []
        for k, triple in enumerate(msg.get("sp_actions") or []):
            if not (isinstance(triple, list) and len(triple) == 3 and all(isinstance(x, str) for x in triple)):
                parsed.errors.append(f"message {i}: sp_actions[{k}] is not [subject, action, object]")
                continue
            action = normalize_action(triple[1], stype)
            if action is None:
                parsed.errors.append(f"message {i}: action {triple[1]!r} is not in the {stype.key} action set "
                                     f"({', '.join(stype.actions)})")
                continue
            triplets.append([triple[0], action, triple[2]])
        guesses = msg.get("guesses")
        annotation = None
        if triplets or msg.get("face") or msg.get("tone") or guesses:
            annotation = ParsedAnnotation(
                triplets=triplets, face=normalize_emotion(msg.get("face")), tone=normalize_emotion(msg.get("tone")),
                suspicions=suspects_from_guesses(guesses, stype.suspect_role) if guesses else {},
                extra={"guesses": guesses} if guesses else {})
        timestamp = msg.get("timestamp")
        parsed.turns.append(ParsedTurn(
            speaker=speaker, speaker_label=speaker, text=msg["content"], phase=str(msg.get("phase") or ""),
            visible_to=_visible(msg.get("visible_to")), timestamp=timestamp if isinstance(timestamp, int) else None,
            extra={k: msg[k] for k in ("belief", "strategy", "thought", "msg_type", "turn") if msg.get(k) not in (None, "")},
            annotation=annotation))
    if not rows and not parsed.errors:
        parsed.errors.append("the log has no messages")
    return parsed


# ---- plain transcripts -----------------------------------------------------------------------------

def _transcript(records: list[tuple[str, Any]], title: str, fmt: str, type_key: str) -> ParsedSession:
    parsed = ParsedSession(title=title, session_type=type_key, source_format=fmt)
    players: dict[str, str] = {}
    for where, rec in records:
        if not isinstance(rec, dict):
            parsed.errors.append(f"{where}: expected an object with 'speaker' and 'text'")
            continue
        speaker = str(rec.get("speaker") or "").strip()
        text = rec.get("text")
        missing = [k for k, v in (("speaker", speaker), ("text", text)) if not (isinstance(v, str) and v.strip())]
        if missing:
            parsed.errors.append(f"{where}: {' and '.join(missing)} missing or empty")
            continue
        timestamp = rec.get("timestamp") or rec.get("time")
        if timestamp not in (None, ""):
            try:
                timestamp = int(timestamp)
            except (TypeError, ValueError):
                parsed.errors.append(f"{where}: timestamp {timestamp!r} is not a whole number")
                continue
        else:
            timestamp = None
        if rec.get("role"):
            players[speaker] = str(rec["role"]).strip()
        else:
            players.setdefault(speaker, "")
        parsed.turns.append(ParsedTurn(speaker=speaker, speaker_label=speaker, text=text, phase=str(rec.get("phase") or ""),
                                       visible_to=_visible(rec.get("visible_to")), timestamp=timestamp))
    parsed.players = list(players.items())
    if not parsed.turns and not parsed.errors:
        parsed.errors.append("the transcript has no turns")
    return parsed


def read_csv(text: str, title: str, type_key: str = "jubensha") -> ParsedSession:
    """A header row with at least ``speaker,text``; optional ``phase,timestamp,visible_to,role``."""
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    if "speaker" not in header or "text" not in header:
        parsed = ParsedSession(title=title, session_type=type_key, source_format="csv")
        parsed.errors.append(f"line 1: the header must name the columns 'speaker' and 'text' (found: {', '.join(header) or 'nothing'})")
        return parsed
    reader.fieldnames = header
    return _transcript([(f"line {reader.line_num}", row) for row in reader], title, "csv", type_key)


def read_jsonl(text: str, title: str, type_key: str = "jubensha") -> ParsedSession:
    """One JSON object per line with ``speaker`` and ``text`` (same optional keys as CSV)."""
    records: list[tuple[str, Any]] = []
    bad: list[str] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"line {n}", json.loads(line)))
        except json.JSONDecodeError as exc:
            bad.append(f"line {n}: not valid JSON ({exc.msg})")
    parsed = _transcript(records, title, "jsonl", type_key)
    parsed.errors[:0] = bad
    return parsed


# ---- WhodunitBench agent logs -------------------------------------------------------------------------

def read_whodunitbench(game_dir: Path, run: int = 1) -> ParsedSession:
    """One recorded run of a WhodunitBench game folder: intros, the discussion, then each detective's
    vote (with the reasoning) as a final accusation carrying an imported ``accuse_as_murderer``."""
    from exporters.whodunitbench.agent_logs import read_agent_runs

    game_dir = Path(game_dir)
    parsed = ParsedSession(title=f"{game_dir.name} run {run}", session_type="jubensha", source_format="whodunitbench")
    try:
        env = json.loads((game_dir / "env_p_all.json").read_text(encoding="utf-8-sig"))
        roles = [r["name"] for r in env["role"]]
        murderer = env.get("murder", "")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        parsed.errors.append(f"{game_dir.name}/env_p_all.json: cannot read the role list ({exc})")
        return parsed
    runs = {r.run: r for r in read_agent_runs(game_dir, roles)}
    if run not in runs:
        parsed.errors.append(f"{game_dir.name}: no recorded agent run {run} (Agent_*.json files)")
        return parsed
    agent_run = runs[run]
    parsed.warnings += [f"{p.file} {p.location}: {p.message}" for p in agent_run.problems]
    parsed.players = [(r, "murderer" if r == murderer else "detective") for r in roles]
    parsed.extra = {"folder": game_dir.name, "run": run, "aliases": agent_run.aliases,
                    "final_accusations": dict(agent_run.votes)}
    for role, text in agent_run.intro.items():
        parsed.turns.append(ParsedTurn(speaker=role, speaker_label=role, text=text, phase="intro"))
    for turn in agent_run.discussion:
        extra = {"question_target": turn.target} if turn.target else {}
        if turn.question:
            extra["question"] = turn.question
        parsed.turns.append(ParsedTurn(speaker=turn.speaker if turn.speaker in roles else None,
                                       speaker_label=turn.speaker_label, text=turn.text, phase="discussion", extra=extra))
    for role, voted in agent_run.votes.items():
        reason = agent_run.reasons.get(role)
        text = f"我认为凶手是：{voted or '?'}" + (f"\n{reason.text}" if reason and reason.text else "")
        annotation = None
        if voted:
            annotation = ParsedAnnotation(triplets=[[role, "accuse_as_murderer", voted]], suspicions={role: [voted]})
        parsed.turns.append(ParsedTurn(speaker=role, speaker_label=role, text=text, phase="vote", annotation=annotation))
    if not parsed.turns:
        parsed.errors.append(f"{game_dir.name}: run {run} has no intro, discussion or vote")
    return parsed


def read_log(path: Path, fmt: str, *, title: str = "", type_key: str | None = None, run: int = 1) -> ParsedSession:
    """Dispatch on ``fmt``; unreadable files become one error, never an exception."""
    path = Path(path)
    if fmt not in FORMATS:
        raise LogError([f"unknown format {fmt!r}; choose {', '.join(FORMATS)}"])
    if fmt == "whodunitbench":
        return read_whodunitbench(path, run)
    title = title or path.stem
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return ParsedSession(title=title, session_type=type_key or "", source_format=fmt,
                             errors=[f"{path.name}: cannot read the file ({exc})"])
    if fmt == "onuw":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return ParsedSession(title=title, session_type=type_key or "onuw", source_format=fmt,
                                 errors=[f"line {exc.lineno}: not valid JSON ({exc.msg})"])
        return read_onuw(data, title, type_key or "onuw")
    reader = read_csv if fmt == "csv" else read_jsonl
    return reader(text, title, type_key or "jubensha")
