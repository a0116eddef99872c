"""Write Games in the WellPlay layout G3 (shared/formats/wellplay.md §11).

Per game: ``chinese/<slug>/`` or ``english/<slug>/`` with ``json/script_info.json``, one
``json/<name>.json`` and one ``final_result/<name>.csv`` per playable character, and the
aggregate under both names ``GM.csv`` and ``FSA.csv`` (G3 code reads GM.csv, G2 code FSA.csv).

Data imported unedited comes back with the published content: the raw strings kept in
``extra["wellplay"]`` are written while the edited field still equals them after normalisation.
Output is deterministic. Validation is :mod:`exporters.validate`'s job; this module only refuses
what the format cannot hold (more than 5 options, names unusable as file names).
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from casebook.conan import render_relation_option
from casebook.interchange import WELLPLAY_VALUE_LETTER, Character, Game, Question, QuestionKind, name_key
from exporters.wellplay.characters import game_victim
from exporters.wellplay.kinds import relation_names
from exporters.wellplay.layout import CHARACTER_KEYS, HEADER, LANGUAGE_FOLDERS, SCRIPT_INFO_KEYS, normalize_newlines

SCRIPT_INFO_DEFAULTS: dict[str, Any] = {
    "acts_num": 1,
    "stage": [""] * 7,
    "open_discuss_rounds": [2, 2, 2],
    "keep_asking": [2, 2, 2],
    "privacy_discuss_rounds": [0, 0, 1],
}
MAX_OPTIONS = 5


def _dump_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=4) + "\n"


def _check_file_name(name: str, what: str) -> str:
    if not name.strip() or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise ValueError(f"{what} {name!r} cannot be used as a file name")
    return name


def game_dir_name(game: Game) -> str:
    """The published directory name: the slug, else title + player note."""
    return _check_file_name(game.slug or f"{game.title}{game.title_note}", "game directory")


def script_info_of(game: Game) -> dict[str, Any]:
    """script_info.json: stored engine settings (key order kept) with names and counts from the game."""
    stored = dict(game.extra.get("wellplay", {}).get("script_info") or {})
    names = [c.name for c in game.playable]
    current = {"agent_num": len(names), "script_name": game.title, "character_name": names}
    keys = list(stored) + [k for k in SCRIPT_INFO_KEYS if k not in stored]
    out: dict[str, Any] = {}
    for key in keys:
        if key in current:
            out[key] = current[key]
        elif key in stored:
            out[key] = stored[key]
        else:
            out[key] = SCRIPT_INFO_DEFAULTS[key]
    return out


def _raw_or(raw: Any, normalised: list[str]) -> list[str]:
    """The published list when it still says the same thing as the (maybe edited) field."""
    if isinstance(raw, list) and [normalize_newlines(x) for x in raw] == normalised:
        return list(raw)
    return normalised


def _own_victims(own: Any, game: Game) -> list[str]:
    """A character's published victims list while it still names the game's (maybe edited) victims.

    Names in it that are not characters (a point-of-view name such as "my husband") map by position.
    """
    victims = list(game.victims)
    if not isinstance(own, list) or len(own) != len(victims):
        return victims
    victim_keys = {name_key(v) for v in victims}
    named = [game.character(str(o)) for o in own]
    names_other_characters = any(ch is not None and name_key(ch.name) not in victim_keys for ch in named)
    if names_other_characters or [game_victim(own, i, victims) for i in range(len(own))] != victims:
        return victims
    return list(own)


def character_json(game: Game, character: Character) -> dict[str, Any]:
    """The 10-key character object, in the stored key order when known (else §4's order)."""
    meta = character.extra.get("wellplay", {})
    script_raw = meta.get("script_raw")
    if isinstance(script_raw, list) and script_raw and normalize_newlines(script_raw[0]) == character.script:
        script = list(script_raw)
    else:
        script = [character.script]
    goals = list(character.goals)
    if "acts_goal_raw" in meta:
        acts_goal = _raw_or(meta["acts_goal_raw"], goals)
    elif "keys" in meta:  # imported: the published list had exactly these elements (maybe none)
        acts_goal = goals
    else:
        acts_goal = goals or [""]
    victims = _own_victims(meta.get("victims"), game)
    killed = {(k.killer, k.victim) for k in game.kills}
    kill_by_me = [int((character.name, game_victim(victims, i, game.victims)) in killed) for i in range(len(victims))]
    stored_flags = meta.get("kill_by_me")
    if isinstance(stored_flags, list) and [int(bool(f)) for f in stored_flags[: len(victims)]] == kill_by_me:
        kill_by_me = stored_flags
    settings = game.extra.get("wellplay", {}).get("script_info") or {}
    values: dict[str, Any] = {
        "acts_num": meta.get("acts_num", settings.get("acts_num", 1)),
        "script": script,
        "acts_goal": acts_goal,
        "questions": meta.get("questions", []),
        "victims": victims,
        "kill_by_me": kill_by_me,
        "final_goal": meta.get("final_goal", ""),
        "acts_performance": meta.get("acts_performance", []),
        "secrets": meta.get("secrets", ""),
        "is_murderer": int(bool(character.is_murderer)),
    }
    stored_keys = [k for k in meta.get("keys", []) if k in values]
    order = stored_keys + [k for k in CHARACTER_KEYS if k not in stored_keys]
    out = {k: values[k] for k in order}
    out.update(meta.get("other", {}))
    return out


def option_texts(question: Question) -> list[str]:
    """Option texts; a Relations option with no text but labels is rendered from its labels."""
    labels = question.extra.get("option_labels") or []
    texts = []
    for i, option in enumerate(question.options):
        text = option.text.strip()
        entry = labels[i] if i < len(labels) else None
        if not text and question.kind == QuestionKind.RELATIONS and entry and entry.get("labels"):
            text = render_relation_option(entry["subject"], entry["labels"], entry["object"])
        texts.append(text)
    return texts


def truth_of(question: Question) -> str:
    """The published truth while it still names the correct options ("bb", "ac"), else the letters."""
    letters = question.answer_letters
    answer = question.answer.strip().lower()
    if answer and (set(answer) == set(letters) or (not letters and set(answer) <= set("abcde"))):
        return answer  # also when no option is marked but the answer letters are known
    return letters


def csv_row(question: Question, where: str) -> list[str]:
    if question.kind not in WELLPLAY_VALUE_LETTER:
        raise ValueError(f"{where}: question kind {question.kind!r} is not a WellPlay kind")
    texts = option_texts(question)
    if len(texts) > MAX_OPTIONS:
        raise ValueError(
            f"{where}: {len(texts)} options, but WellPlay has only {MAX_OPTIONS} option columns (a–e); "
            "remove options before exporting"
        )
    return [
        WELLPLAY_VALUE_LETTER[question.kind],
        "b" if question.multi else "a",
        question.stem,
        *texts,
        *[""] * (MAX_OPTIONS - len(texts)),
        truth_of(question),
    ]


def _csv_text(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(rows)
    return buffer.getvalue()


def _write(path: Path, text: str, written: list[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    written.append(path)


def write_game(game: Game, out_dir: Path, *, g1_extras: bool = False) -> list[Path]:
    """Write one game under ``out_dir/<chinese|english>/<slug>/``; returns the files written."""
    folder = LANGUAGE_FOLDERS.get(game.language)
    if folder is None:
        raise ValueError(f"{game.slug}: language {game.language!r} is neither 'zh' nor 'en'")
    game_dir = Path(out_dir) / folder / game_dir_name(game)
    written: list[Path] = []
    playable = game.playable
    for character in playable:
        _check_file_name(character.name, "character name")
    _write(game_dir / "json" / "script_info.json", _dump_json(script_info_of(game)), written)
    aggregate: list[list[str]] = []
    wellplay_questions = [q for q in game.questions if q.kind in WELLPLAY_VALUE_LETTER]
    for character in playable:
        _write(game_dir / "json" / f"{character.name}.json", _dump_json(character_json(game, character)), written)
        rows = []
        mine = [q for q in wellplay_questions if name_key(q.perspective) == name_key(character.name)]
        for i, question in enumerate(mine):
            rows.append(csv_row(question, f"{game.slug} / {character.name} question {i + 1}"))
        aggregate.extend(rows)
        _write(game_dir / "final_result" / f"{character.name}.csv", _csv_text(rows), written)
    for name in ("GM.csv", "FSA.csv"):
        _write(game_dir / "final_result" / name, _csv_text(aggregate), written)
    if g1_extras:
        _write(game_dir / "all.json", _dump_json(all_json_of(game)), written)
        qa = game.extra.get("wellplay", {}).get("qa_character")
        if qa is None:
            qa = qa_character_of(game)
        _write(game_dir / "qa-character.json", _dump_json(qa), written)
    return written


def all_json_of(game: Game) -> dict[str, list[list[str]]]:
    """G1 ``all.json``: source -> [[target, "l1, l2"], …] (edge "target is <labels> of source")."""
    graph: dict[str, list[list[str]]] = {}
    for rel in game.relationships:
        graph.setdefault(rel.source, []).append([rel.target, ", ".join(rel.labels)])
    return graph


def qa_character_of(game: Game) -> dict[str, list[str]]:
    """G1 ``qa-character.json`` rebuilt from the Relations questions: whose relationships each
    player is quizzed on (A of "relationship between A and B")."""
    out: dict[str, list[str]] = {c.name: [] for c in game.playable}
    for q in game.questions:
        if q.kind != QuestionKind.RELATIONS or q.perspective not in out:
            continue
        named = relation_names(q.stem, [])
        entries = q.extra.get("option_labels") or []
        correct = [e for o, e in zip(q.options, entries, strict=False) if o.correct and e]
        person = named[0] if named else correct[0]["object"] if correct else ""
        if person and person not in out[q.perspective]:
            out[q.perspective].append(person)
    return out


def write_wellplay(games: list[Game], out_dir: Path, *, g1_extras: bool = False) -> list[Path]:
    """Write ``games`` in layout G3 under ``out_dir``; returns every file written, in order."""
    written: list[Path] = []
    seen: set[tuple[str, str]] = set()
    for game in games:
        key = (game.language, game_dir_name(game))
        if key in seen:
            raise ValueError(f"two games would be written to {key[1]!r} ({key[0]})")
        seen.add(key)
        written.extend(write_game(game, Path(out_dir), g1_extras=g1_extras))
    return written


__all__ = ["write_wellplay", "write_game", "script_info_of", "character_json", "csv_row"]
