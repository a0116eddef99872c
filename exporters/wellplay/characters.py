"""The people of a WellPlay game: ``character_name`` in script_info.json, one JSON file per playable
character (script, goals, murderer flag), the victims and who killed them (``kill_by_me``), and the
G1 relationship graph (``all.json``, which also names people who are not players).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from casebook import conan
from casebook.interchange import Character, Game, Kill, Relationship, name_key
from exporters.problems import ProblemLog
from exporters.wellplay.layout import (
    CHARACTER_KEYS,
    SCRIPT_INFO_KEYS,
    GameFiles,
    as_text_list,
    flag_set,
    normalize_newlines,
    read_json,
)


def read_script_info(files_dir: Path, game_dir: Path, log: ProblemLog) -> tuple[dict[str, Any], list[str]]:
    path = files_dir / "script_info.json"
    info: dict[str, Any] = {}
    if path.is_file():
        data = read_json(path, log)
        if isinstance(data, dict):
            info = data
        elif data is not None:
            log.add(path, "script_info.json is not a JSON object", "ignored", severity="error")
    else:
        log.add(game_dir, "no json/script_info.json", "characters taken from the json/ file names", severity="error")
    names = info.get("character_name")
    if not (isinstance(names, list) and names and all(isinstance(n, str) and n.strip() for n in names)):
        if info:
            log.add(path, "character_name is missing or not a list of names",
                    "characters taken from the json/ file names", severity="error")
        stems = sorted(p.stem for p in files_dir.glob("*.json") if p.stem != "script_info") if files_dir.is_dir() else []
        names = stems
    if info:
        missing = [k for k in SCRIPT_INFO_KEYS if k not in info]
        if missing:
            layout = " (G2 layout)" if len(info) == 3 else ""
            log.add(path, f"script_info has {len(info)} of {len(SCRIPT_INFO_KEYS)} keys{layout}; missing {', '.join(missing)}",
                    "kept as is; engine defaults are written on export", severity="info")
        if "agent_num" in info and info["agent_num"] != len(names):
            log.add(path, f"agent_num {info['agent_num']} != {len(names)} names in character_name",
                    "character_name used", severity="warning")
    return info, list(names)


def read_character(
    name: str, path: Path | None, game_dir: Path, log: ProblemLog
) -> tuple[Character, dict[str, Any]]:
    """One playable character from json/<name>.json; returns (character, the raw JSON object)."""
    character = Character(name=name, playable=True)
    meta: dict[str, Any] = {}
    character.extra["wellplay"] = meta
    if path is None:
        log.add(game_dir / "json", f"no json file for character {name!r}", "character imported without script",
                severity="error")
        return character, {}
    if path.stem != name:
        log.add(path, f"file name differs from character_name {name!r} (middle dot / spelling)", "matched by name",
                severity="info")
    data = read_json(path, log)
    if data is None:
        return character, {}
    if not isinstance(data, dict):
        log.add(path, "not a JSON object", "character imported without script", severity="error")
        return character, {}
    meta["keys"] = list(data)
    absent = [k for k in CHARACTER_KEYS if k not in data]
    if absent:
        if len(absent) == len(CHARACTER_KEYS) - 5 and "questions" in absent:
            log.add(path, f"only {len(data)} of 10 keys (G2 layout); missing {', '.join(absent)}",
                    "defaults written on export", severity="info")
        else:
            log.add(path, f"missing key(s) {', '.join(absent)}", "kept missing; defaults written on export",
                    severity="warning" if "script" in absent else "info")
    unknown = [k for k in data if k not in CHARACTER_KEYS]
    if unknown:
        meta["other"] = {k: data[k] for k in unknown}
        log.add(path, f"unknown key(s) {', '.join(unknown)}", "kept in extra", severity="info")
    script_raw = as_text_list(data.get("script", []))
    character.script = normalize_newlines(script_raw[0]) if script_raw else ""
    if script_raw != [character.script]:
        meta["script_raw"] = script_raw
    if len(script_raw) > 1:
        log.add(path, f"script has {len(script_raw)} elements (expected 1)", "first used; all kept in extra")
    goals_raw = as_text_list(data.get("acts_goal", []))
    character.goals = [normalize_newlines(g) for g in goals_raw]
    if goals_raw != character.goals:
        meta["acts_goal_raw"] = goals_raw
    literal = sum(("\\n" in s or "\\ n" in s) for s in script_raw + goals_raw)
    if literal:
        log.add(path, "literal \\n sequences in script/acts_goal", "read as newlines (raw kept for export)",
                severity="info")
    for key in ("acts_num", "questions", "final_goal", "acts_performance", "secrets"):
        if key in data:
            meta[key] = data[key]
    if "is_murderer" in data:
        character.is_murderer = flag_set(data.get("is_murderer"))
    return character, data


def game_victims(raws: dict[str, dict[str, Any]], game_dir: Path, log: ProblemLog) -> list[str]:
    lists = [tuple(str(x) for x in v) for v in (d.get("victims") for d in raws.values()) if isinstance(v, list)]
    if not lists:
        return []
    counts = Counter(lists)
    best = max(counts, key=lambda v: (counts[v], -lists.index(v)))
    if len(counts) > 1:
        log.add(game_dir / "json", f"the character files name {len(counts)} different victims lists",
                f"the most common one {list(best)} used for the game; others kept per character", severity="info")
    return [str(v) for v in best]


def game_victim(own: list[str], i: int, victims: list[str]) -> str:
    """The game victim meant by entry ``i`` of a character's own victims list.

    Same name (middle dots folded) first; else the same position when both lists have the same
    length (Solitary Boat Firefly names victims from each character's point of view, §4).
    """
    keys = [name_key(v) for v in victims]
    if name_key(own[i]) in keys:
        return victims[keys.index(name_key(own[i]))]
    return victims[i] if len(own) == len(victims) else own[i]


def kills_of(character: Character, data: dict[str, Any], victims: list[str], path: Path, log: ProblemLog) -> list[Kill]:
    """Kills from ``kill_by_me`` (aligned with this character's own victims list)."""
    meta = character.extra["wellplay"]
    own = data.get("victims")
    own = [str(v) for v in own] if isinstance(own, list) else list(victims)
    flags = data.get("kill_by_me", [])
    if not isinstance(flags, list):
        flags = []
    if own != victims:
        meta["victims"] = own
    if len(flags) != len(own) and data:
        log.add(path, f"kill_by_me has {len(flags)} flags for {len(own)} victims", "extra flags ignored")
        meta["kill_by_me"] = flags
    kills = [
        Kill(killer=character.name, victim=game_victim(own, i, victims))
        for i, flag in enumerate(flags[: len(own)])
        if flag_set(flag)
    ]
    if data and "is_murderer" in data and flag_set(data.get("is_murderer")) != bool(kills):
        log.add(path, f"is_murderer={data.get('is_murderer')} but kill_by_me={flags}", "both kept as published")
    return kills


def read_relationships(files: GameFiles, game: Game, log: ProblemLog) -> None:
    path = files.dir / "all.json"
    if not path.is_file():
        return
    data = read_json(path, log)
    if not isinstance(data, dict):
        if data is not None:
            log.add(path, "all.json is not a JSON object", "no relationships imported", severity="error")
        return
    unknown: Counter[str] = Counter()
    for source, edges in data.items():
        if not isinstance(edges, list):
            log.add(path, f"entry of {source!r} is not a list", "skipped", location=source)
            continue
        for edge in edges:
            if not (isinstance(edge, list) and len(edge) == 2 and all(isinstance(x, str) for x in edge)):
                log.add(path, f"malformed edge {edge!r}", "skipped", location=source)
                continue
            target, text = edge
            labels = [conan.normalize_label(lab) for lab in text.split(",") if lab.strip()]
            unknown.update(conan.validate_labels(labels))
            game.relationships.append(Relationship(source=source, target=target, labels=labels))
    if unknown:
        log.add(path, f"labels not in the Conan taxonomy: {sorted(unknown)}", "kept as written", severity="info")
    for name in [n for r in game.relationships for n in (r.source, r.target)]:
        if game.character(name) is None:
            game.characters.append(Character(name=name, playable=False))
    log.add(path, f"{len(game.relationships)} relationship edges between {len(data)} people", "imported",
            severity="info")
