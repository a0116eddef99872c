"""What the WellPlay format fixes (shared/formats/wellplay.md §2-§4): file and key names, folder
layouts G1/G2/G3, and finding a game's files. Owned by the format, read by the reader and the
writer alike, so the writer never depends on the reader.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casebook.interchange import name_key
from exporters.common import GBK, decode_text, not_text
from exporters.problems import ProblemLog

HEADER = ["value", "type", "question", "a", "b", "c", "d", "e", "truth"]  # every question CSV (§5)
OPTION_LETTERS = "abcde"
CHARACTER_KEYS = [  # json/<character>.json (§4)
    "acts_num", "script", "acts_goal", "questions", "victims", "kill_by_me", "final_goal", "acts_performance",
    "secrets", "is_murderer",
]
SCRIPT_INFO_KEYS = [  # json/script_info.json (§3)
    "agent_num", "script_name", "character_name", "acts_num", "stage", "open_discuss_rounds", "keep_asking",
    "privacy_discuss_rounds",
]
AGGREGATE_NAMES = ("GM.csv", "FSA.csv")  # final_result/ aggregate of all characters' rows (zh / en)
LANGUAGE_DIRS = {"chinese": "zh", "english": "en"}
LANGUAGE_FOLDERS = {code: folder for folder, code in LANGUAGE_DIRS.items()}  # the writer's direction
STALE_DIRS = {"purpose copy", "purpose_copy", "final_result_before"}  # backups in some G1 games
BRACKETED = re.compile(r"【([^【】]+)】")  # a person named in a Chinese question
G1_PREFIX = re.compile(r"^(\d+)-(.+)$")  # "131-罪恶（4人封闭）": the G1 id before the directory name
_NOTE = re.compile(r"^(.*?)(\s*[（(][^（()）]*[)）])$")  # the player note after the title


def normalize_newlines(text: str) -> str:
    """Turn the literal two-character ``\\n`` (and the mangled ``\\ n``) into real newlines (§4)."""
    return text.replace("\\ n", "\n").replace("\\n", "\n")


def flag_set(value: Any) -> bool:
    """0/1 flags as published (ints), tolerating "1"/"true" strings."""
    return str(value).strip().lower() in {"1", "true", "yes"}


def as_text_list(value: Any) -> list[str]:
    if isinstance(value, list):
        return [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in value]
    if isinstance(value, str):
        return [value]
    return []


def read_json(path: Path, log: ProblemLog) -> Any:
    try:
        text, encoding = decode_text(path.read_bytes())
    except OSError as exc:
        log.add(path, f"cannot read file: {(exc.strerror or 'input/output error').lower()}", "file skipped",
                severity="error")
        return None
    except UnicodeDecodeError as exc:
        log.add(path, not_text(exc), "file skipped", severity="error")
        return None
    if encoding == GBK:
        log.add(path, f"encoded as {encoding}", f"read as {encoding}", severity="info")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        log.add(path, f"not valid JSON: {exc.msg}", "file skipped", location=f"line {exc.lineno}", severity="error")
        return None


def index_files(folder: Path, suffix: str, wanted: list[str], log: ProblemLog) -> dict[str, Path]:
    """Map name_key(stem) -> file, de-duplicating names that differ only by middle-dot variants.

    When two files share a key, the one spelled exactly as in ``wanted`` (character_name) wins.
    """
    groups: dict[str, list[Path]] = {}
    if not folder.is_dir():
        return {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.suffix.lower() == suffix:
            groups.setdefault(name_key(path.stem), []).append(path)
    exact = set(wanted)
    out: dict[str, Path] = {}
    for key, paths in groups.items():
        paths.sort(key=lambda p: (p.stem not in exact, p.name))
        out[key] = paths[0]
        for other in paths[1:]:
            same = other.read_bytes() == paths[0].read_bytes()
            log.add(
                other,
                f"duplicate of {paths[0].name} (names differ only by a middle-dot variant)"
                + ("" if same else "; contents differ"),
                f"kept {paths[0].name}, ignored this one",
                severity="info",
            )
    return out


def find_file(index: dict[str, Path], name: str) -> Path | None:
    return index.get(name_key(name))


def split_dir_name(dir_name: str, script_name: str) -> tuple[str, str, str]:
    """(slug, title, title_note) from a game dir name such as ``131-罪恶（4人封闭）``."""
    m = G1_PREFIX.match(dir_name)
    slug = m.group(2) if m else dir_name
    if script_name and slug.startswith(script_name):
        return slug, script_name, slug[len(script_name) :]
    note = _NOTE.match(slug)
    title = note.group(1) if note else slug
    return slug, script_name or title, note.group(2) if note else ""


@dataclass
class GameFiles:
    """What a game folder holds, located once."""

    dir: Path
    json_dir: Path
    results_dir: Path
    json_files: dict[str, Path]
    csv_files: dict[str, Path]
    relation_files: dict[str, Path]
    aggregates: list[Path]


def locate(game_dir: Path, names: list[str], log: ProblemLog) -> GameFiles:
    json_dir, results_dir = game_dir / "json", game_dir / "final_result"
    json_files = index_files(json_dir, ".json", names + ["script_info"], log)
    json_files.pop(name_key("script_info"), None)
    aggregates = [results_dir / n for n in AGGREGATE_NAMES if (results_dir / n).is_file()]
    csv_files = {
        k: p
        for k, p in index_files(results_dir, ".csv", names, log).items()
        if p.name not in AGGREGATE_NAMES and not p.name.startswith("relation_")
    }
    relation_files = {}
    if results_dir.is_dir():
        for p in sorted(results_dir.glob("relation_*.csv")):
            relation_files[name_key(p.stem[len("relation_") :])] = p
    return GameFiles(game_dir, json_dir, results_dir, json_files, csv_files, relation_files, aggregates)


def is_game_dir(path: Path) -> bool:
    return (path / "json").is_dir() or (path / "final_result").is_dir()


def discover_game_dirs(root: Path, log: ProblemLog) -> list[Path]:
    """Game folders under ``root`` (a dataset root with chinese/ english/, a language folder or a game)."""
    if is_game_dir(root):
        return [root]
    language_dirs = [root / d for d in LANGUAGE_DIRS if (root / d).is_dir()]
    containers = language_dirs or [root]
    if language_dirs:
        for other in sorted(root.iterdir()):
            if other.is_dir() and other.name not in LANGUAGE_DIRS and not other.name.startswith("."):
                log.add(other, "not a chinese/ or english/ folder", "not read", severity="info")
    found = []
    for container in containers:
        for path in sorted(container.iterdir()):
            if not path.is_dir() or path.name.startswith("."):
                continue
            if is_game_dir(path):
                found.append(path)
            else:
                log.add(path, "no json/ or final_result/ folder (not a game)", "skipped", severity="info")
    return found
