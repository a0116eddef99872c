"""Read the published WellPlay dataset (layouts G1, G2, G3 of shared/formats/wellplay.md) into Games.

The pipeline, one stage per module of this package:
:mod:`~exporters.wellplay.layout` finds the game folders and each game's files →
:mod:`~exporters.wellplay.characters` reads the people, victims and kills →
:mod:`~exporters.wellplay.rows` reads each question CSV with its repairs →
:mod:`~exporters.wellplay.kinds` turns rows into questions →
:mod:`~exporters.wellplay.consistency` checks the redundant copies →
:mod:`~exporters.wellplay.pairing` links the Chinese and English versions.

Nothing here raises on bad data: every irregularity becomes a :class:`Problem` saying what was
done (:mod:`~exporters.problems`), in the game's ``report`` and in
:attr:`ReadResult.problems`.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from casebook.interchange import Character, Game, Origin, name_key
from casebook.text import has_cjk
from exporters.common import ReadResult
from exporters.problems import ProblemLog
from exporters.wellplay.characters import game_victims, kills_of, read_character, read_relationships, read_script_info
from exporters.wellplay.consistency import (
    compare_aggregate,
    compare_relation_files,
    compare_texts,
    report_unknown_names,
)
from exporters.wellplay.kinds import question_from_row
from exporters.wellplay.layout import (
    G1_PREFIX,
    LANGUAGE_DIRS,
    STALE_DIRS,
    discover_game_dirs,
    find_file,
    locate,
    read_json,
    split_dir_name,
)
from exporters.wellplay.pairing import link_counterparts
from exporters.wellplay.rows import CsvRow, read_question_csv, signature

logger = logging.getLogger(__name__)

def detect_language(game_dir: Path, info: dict[str, Any], names: list[str]) -> str:
    for part in (game_dir.parent.name, game_dir.parent.parent.name):
        if part.lower() in LANGUAGE_DIRS:
            return LANGUAGE_DIRS[part.lower()]
    sample = " ".join([str(info.get("script_name", "")), *names, game_dir.name])
    return "zh" if has_cjk(sample) else "en"


def read_game_dir(game_dir: Path, root: Path | None = None) -> tuple[Game, dict[str, list[tuple]]]:
    """Read one game folder (any layout). Returns the game and its aggregate signatures.

    The signatures, value/type/truth per aggregate row, are what :func:`link_counterparts` needs.
    """
    log = ProblemLog(root or game_dir.parent)
    info, names = read_script_info(game_dir / "json", game_dir, log)
    files = locate(game_dir, names, log)
    language = detect_language(game_dir, info, names)
    slug, title, note = split_dir_name(game_dir.name, str(info.get("script_name") or ""))
    names_of_aggregates = {p.name for p in files.aggregates}
    if G1_PREFIX.match(game_dir.name) or (game_dir / "txt").is_dir():
        layout = "G1"
    elif language == "zh" and names_of_aggregates == {"FSA.csv"}:
        layout = "G2"
    else:
        layout = "G3"
    game = Game(slug=slug, title=title, language=language, origin=Origin.WELLPLAY, title_note=note)
    meta: dict[str, Any] = {"layout": layout, "dir_name": game_dir.name, "aggregates": [p.name for p in files.aggregates]}
    if info:
        meta["script_info"] = info
    if G1_PREFIX.match(game_dir.name):
        meta["g1_id"] = G1_PREFIX.match(game_dir.name).group(1)
    game.extra["wellplay"] = meta

    # characters and ground truth
    raws: dict[str, dict[str, Any]] = {}
    wanted = {name_key(n) for n in names}
    for name in names:
        character, data = read_character(name, find_file(files.json_files, name), game_dir, log)
        game.characters.append(character)
        raws[name] = data
    for key, path in files.json_files.items():
        if key not in wanted:
            log.add(path, "character file not listed in script_info character_name", "not imported")
    acts = {c.extra["wellplay"].get("acts_num") for c in game.characters} - {None}
    if info.get("acts_num") is not None and acts and acts != {info.get("acts_num")}:
        log.add(game_dir / "json", f"acts_num {info.get('acts_num')} in script_info, {sorted(acts)} in character files",
                "kept as published (not used)", severity="info")
    game.victims = game_victims(raws, game_dir, log)
    for character in game.playable:
        path = find_file(files.json_files, character.name) or game_dir / "json"
        if character.extra["wellplay"].get("victims") is not None or raws[character.name]:
            game.kills.extend(kills_of(character, raws[character.name], game.victims, path, log))
        if character.extra["wellplay"].get("victims") not in (None, game.victims):
            log.add(path, f"own victims list {character.extra['wellplay']['victims']}", "kept for this character",
                    severity="info")
    for victim in game.victims:
        existing = game.character(victim)
        if existing:
            existing.is_victim = True
        else:
            game.characters.append(Character(name=victim, playable=False, is_victim=True))
    killed = {k.victim for k in game.kills}
    for victim in game.victims:
        if victim not in killed:
            log.add(game_dir / "json", f"victim {victim!r} has no killer flagged in any kill_by_me", "kept",
                    severity="info")

    # G1 relationship graph (adds non-player people, so before the questions' name checks)
    read_relationships(files, game, log)
    qa = files.dir / "qa-character.json"
    if qa.is_file():
        data = read_json(qa, log)
        if data is not None:
            meta["qa_character"] = data

    # questions, per character file in character_name order
    all_names = [c.name for c in game.characters]
    rows_by_character: dict[str, list[CsvRow]] = {}
    concatenation: list[CsvRow] = []
    for character in game.playable:
        path = find_file(files.csv_files, character.name)
        if path is None:
            log.add(files.results_dir, f"no question file for {character.name!r}", "character has no questions")
            continue
        rows = read_question_csv(path, log) or []
        rows_by_character[character.name] = rows
        concatenation.extend(rows)
        rel = log.rel(path)
        game.questions.extend(question_from_row(r, character.name, rel, all_names) for r in rows)
    for key, path in files.csv_files.items():
        if key not in wanted:
            log.add(path, "question file of no character of character_name", "not imported")
    signatures = compare_aggregate(files, concatenation, log)
    if not files.aggregates and files.results_dir.is_dir():
        log.add(files.results_dir, "no aggregate GM.csv / FSA.csv", "nothing lost (it is derived)", severity="info")
    compare_relation_files(files, game, rows_by_character, log)
    compare_texts(files, game, log)
    report_unknown_names(game, files, log)
    for name in sorted(STALE_DIRS):
        if (game_dir / name).is_dir():
            log.add(game_dir / name, "stale backup / earlier version of the data", "not imported", severity="info")
    if not signatures:
        signatures["concatenation"] = [signature(r) for r in concatenation]
    game.report = log.items
    return game, signatures


def read_wellplay(path: Path) -> ReadResult:
    """Read every WellPlay game under ``path`` (layouts G1/G2/G3; dataset root, language folder or game)."""
    path = Path(path)
    result = ReadResult()
    log = ProblemLog(path)
    if not path.is_dir():
        log.add(path, "not a folder", "nothing imported", severity="error")
        result.problems.extend(log.items)
        return result
    signatures: dict[int, dict[str, list[tuple]]] = {}
    for game_dir in discover_game_dirs(path, log):
        try:
            game, sig = read_game_dir(game_dir, root=path)
        except Exception:  # one broken game must not stop the others
            logger.exception("reading WellPlay game %s", game_dir)
            log.add(game_dir, "could not read the game: its files have a shape the reader does not understand "
                    "(details in the server log)", "game skipped", severity="error")
            continue
        signatures[id(game)] = sig
        result.games.append(game)
    link_counterparts(result.games, signatures)
    result.problems.extend(log.items)
    for game in result.games:
        result.problems.extend(game.report)
    return result
