"""Read the published WellPlay dataset (layouts G1, G2, G3 of shared/formats/wellplay.md) into Games.

Stages, each usable alone:
- :func:`discover_game_dirs` finds game folders under a dataset root, a language folder or a game;
- :func:`read_question_csv` / :func:`parse_row` read one question file, applying the repairs of §9;
- :func:`read_game_dir` builds one :class:`~casebook.interchange.Game` (characters, victims, kills,
  questions, G1 relationship graph) and compares the redundant files (aggregate, G1 txt/purpose);
- :func:`link_counterparts` pairs the Chinese and English versions of a game.

Nothing here raises on bad data: every irregularity becomes a :class:`Problem` saying what was
done, in the game's ``report`` and in :attr:`ReadResult.problems`.
"""
from __future__ import annotations

import csv
import difflib
import io
import json
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casebook import conan
from casebook.interchange import (
    WELLPLAY_KIND_OF_LETTER,
    Character,
    Game,
    Kill,
    Option,
    OptionOrigin,
    Origin,
    Problem,
    Question,
    QuestionKind,
    Relationship,
    name_key,
)
from casebook.text import has_cjk
from exporters.common import GBK, UTF8_BOM, ReadResult, decode_text, not_text

logger = logging.getLogger(__name__)

HEADER = ["value", "type", "question", "a", "b", "c", "d", "e", "truth"]
CHARACTER_KEYS = [
    "acts_num", "script", "acts_goal", "questions", "victims", "kill_by_me", "final_goal", "acts_performance",
    "secrets", "is_murderer",
]
SCRIPT_INFO_KEYS = [
    "agent_num", "script_name", "character_name", "acts_num", "stage", "open_discuss_rounds", "keep_asking",
    "privacy_discuss_rounds",
]
AGGREGATE_NAMES = ("GM.csv", "FSA.csv")
LANGUAGE_DIRS = {"chinese": "zh", "english": "en"}
STALE_DIRS = {"purpose copy", "purpose_copy", "final_result_before"}
OPTION_LETTERS = "abcde"

# The 12 published games: Chinese directory -> English directory (wellplay.md §2.1).
PUBLISHED_PAIRS: dict[str, str] = {
    "死穿白（8人开放）": "Death Wears White (open to 8 people)",
    "幽灵复仇（7人)": "Ghost Revenge (7 people)",
    "丹水山庄（7人）": "Danshui Villa (7 people)",
    "未完结的爱（7人开放）": "Unfinished Love (open to 7 people)",
    "东方之星号游轮事件（5人开放）": "Oriental Star Cruise Incident (open to 5 people)",
    "罪恶（4人封闭）": "Sin (4 people closed)",
    "致命喷泉（4人封闭）": "Deadly Fountain (4 people closed)",
    "校园不思议事件（5人）": "Unbelievable Incident (5 people)",
    "绝命阳光号（4人封闭）": "Desperate Sunshine (4 people closed)",
    "江湖客栈（4人封闭）": "Riverside Inn (4 people closed)",
    "孤舟萤（6人）": "Solitary Boat Firefly (6 people)",
    "曼娜（6人）": "Manna (6 people)",
}

_G1_PREFIX = re.compile(r"^(\d+)-(.+)$")
_NOTE = re.compile(r"^(.*?)(\s*[（(][^（()）]*[)）])$")
BRACKETED = re.compile(r"【([^【】]+)】")


def normalize_newlines(text: str) -> str:
    """Turn the literal two-character ``\\n`` (and the mangled ``\\ n``) into real newlines (§4)."""
    return text.replace("\\ n", "\n").replace("\\n", "\n")


# --------------------------------------------------------------------------------------------
# Problems


class _Log:
    """Collects problems with file paths relative to the root the user gave."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.items: list[Problem] = []

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix() or "."
        except ValueError:
            return path.as_posix()

    def add(
        self, path: Path, message: str, action: str = "", location: str = "", severity: str = "warning"
    ) -> None:
        self.items.append(
            Problem(file=self.rel(path), message=message, action=action, location=location, severity=severity)
        )


# --------------------------------------------------------------------------------------------
# Question CSV files


@dataclass
class CsvRow:
    """One question row after the repairs of §9 (cells stripped, shifted truth moved back)."""

    line: int
    value: str
    type: str
    question: str
    options: list[str]
    truth: str
    notes: list[tuple[str, str, str]] = field(default_factory=list)  # (message, action, severity)

    def key(self) -> tuple[str, str, str, tuple[str, ...], str]:
        return (self.value, self.type, self.question, tuple(self.options), self.truth)


def _letter(cell: str) -> str:
    cell = cell.strip().lower()
    return cell if len(cell) == 1 else ""


def parse_row(cells: list[str], line: int) -> CsvRow | None:
    """One CSV record -> CsvRow (None for blank lines and rows that are not questions).

    Applies the shifted-truth rule of §9.1: when the truth cell is empty or missing and the last
    filled option cell is a single letter a–e, that letter is the truth and not an option; empty
    surplus fields are dropped.
    """
    notes: list[tuple[str, str, str]] = []
    if not cells or not any(c.strip() for c in cells):
        return None
    raw_value = cells[0].strip()
    value = raw_value.lower()
    if value not in ("a", "b", "c"):
        row = CsvRow(line, "", "", "", [], "")
        row.notes.append(
            (f"unknown value (category) {raw_value!r}; expected a, b or c", "row not imported", "warning")
        )
        return row
    raw_type = cells[1].strip() if len(cells) > 1 else ""
    qtype = raw_type.lower()
    if raw_value != value or (raw_type != qtype and qtype in ("a", "b")):
        notes.append((f"uppercase letters {raw_value!r}/{raw_type!r} in value/type", "read as lowercase", "info"))
    if qtype not in ("a", "b"):
        notes.append((f"unknown type {raw_type!r}; expected a or b", "read as single choice (a)", "warning"))
        qtype = "a"
    question = cells[2].strip() if len(cells) > 2 else ""
    if not question:
        notes.append(("blank question text", "imported with an empty stem", "warning"))
    tail = [c.strip() for c in cells[3:]]
    if len(cells) != 9:
        surplus = "empty surplus fields dropped" if len(cells) > 9 else "missing fields read as empty"
        notes.append((f"{len(cells)} fields instead of 9", surplus, "warning"))
    if len(cells) == 9 and tail[5]:
        options, truth = tail[:5], tail[5]
    else:
        filled = list(tail)
        while filled and not filled[-1]:
            filled.pop()
        truth = ""
        if filled and _letter(filled[-1]) and _letter(filled[-1]) in OPTION_LETTERS:
            position = len(filled) - 1  # index in tail; 5 = the truth column
            truth = filled.pop()
            if position != 5:
                column = OPTION_LETTERS[position] if position < 5 else f"field {position + 4}"
                notes.append(
                    (f"truth is empty and column {column} holds the letter {truth!r} (shifted truth)",
                     f"read {truth.lower()!r} as the truth, not as an option", "warning")
                )
        options = filled
    while options and not options[-1]:
        options.pop()
    if not truth:
        notes.append(("no truth (answer letter)", "imported with no correct option", "warning"))
    if truth != truth.lower():
        notes.append((f"uppercase truth {truth!r}", "read as lowercase", "info"))
        truth = truth.lower()
    if "" in options:
        notes.append(("empty option cell between filled ones", "kept as an empty option", "warning"))
    if len(options) > 5:
        notes.append((f"{len(options)} options (WellPlay has 5 columns a–e)", "all options kept", "warning"))
    dups = sorted({o for o, n in Counter(options).items() if n > 1 and o})
    if dups:
        notes.append((f"duplicate option texts {dups}", "kept as published", "info"))
    bad = [ch for ch in truth if ch not in OPTION_LETTERS[: len(options)]]
    if bad:
        notes.append((f"truth {truth!r} names no option ({''.join(bad)!r})", "kept verbatim", "warning"))
    if truth and len(set(truth)) < len(truth):
        notes.append((f"truth {truth!r} repeats a letter", f"kept verbatim; option(s) {''.join(sorted(set(truth)))!r} marked correct", "warning"))
    elif qtype == "a" and len(set(truth)) > 1:
        notes.append((f"single-choice question with {len(set(truth))} accepted answers {truth!r}", "kept; all marked correct", "info"))
    return CsvRow(line, value, qtype, question, options, truth, notes)


def read_question_csv(path: Path, log: _Log) -> list[CsvRow] | None:
    """Read one ``final_result/*.csv`` (utf-8-sig, csv module). None if the file is unusable."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        log.add(path, f"cannot read file: {(exc.strerror or 'input/output error').lower()}", "file skipped",
                severity="error")
        return None
    try:
        text, encoding = decode_text(data)
    except UnicodeDecodeError as exc:
        log.add(path, not_text(exc), "file skipped", severity="error")
        return None
    if encoding == GBK:
        log.add(path, f"encoded as {encoding}", f"read as {encoding}", severity="info")
    elif data.startswith(UTF8_BOM):
        log.add(path, "starts with a UTF-8 BOM", "ignored", severity="info")
    if data and not data.endswith(b"\n"):
        log.add(path, "no final newline", "last row read normally", severity="info")
    if "\r" in text:
        log.add(path, "CR line ends", "read as LF", severity="info")
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[CsvRow] = []
    try:
        header = next(reader, None)
    except csv.Error as exc:
        log.add(path, f"not a CSV file ({exc})", "file skipped", severity="error")
        return None
    if header is None:
        log.add(path, "empty file", "no questions imported", severity="warning")
        return []
    columns = [h.strip().lower() for h in header]
    order: list[int] | None = None
    if columns != HEADER:
        if sorted(columns) == sorted(HEADER):
            order = [columns.index(h) for h in HEADER]
            log.add(path, f"header columns in another order: {','.join(header)}", "columns mapped by name",
                    location="line 1")
        else:
            log.add(path, f"unexpected header {','.join(header)!r} (expected {','.join(HEADER)})",
                    "file skipped", location="line 1", severity="error")
            return None
    elif header != HEADER:
        log.add(path, "header has spaces or uppercase letters", "read as the standard header", location="line 1",
                severity="info")
    spaces = 0
    blank_lines: list[int] = []
    last = reader.line_num
    try:
        for cells in reader:
            line = last + 1
            last = reader.line_num
            if order is not None and len(cells) >= len(HEADER):
                cells = [cells[i] for i in order] + cells[len(HEADER):]
            spaces += sum(1 for c in cells[2:] if c != c.strip())
            row = parse_row(cells, line)
            if row is None:
                blank_lines.append(line)
                continue
            for message, action, severity in row.notes:
                log.add(path, message, action, location=f"line {line}", severity=severity)
            if row.value:
                rows.append(row)
    except csv.Error as exc:
        log.add(path, f"CSV syntax error ({exc})", f"rows up to line {last} kept", location=f"line {last + 1}",
                severity="error")
    if blank_lines:
        log.add(path, f"blank line(s) {', '.join(map(str, blank_lines))}", "skipped", severity="info")
    if spaces:
        log.add(path, f"{spaces} cell(s) with leading/trailing spaces", "stripped", severity="info")
    return rows


# --------------------------------------------------------------------------------------------
# Question kinds


def relation_names(stem: str, names: list[str]) -> list[str]:
    """People a relation question may name: 【A】/【B】 (zh), "between A and B" (en), then ``names``."""
    found = BRACKETED.findall(stem)
    m = re.search(r"relationship between (.+?) and (.+?)\?*\s*$", stem, flags=re.IGNORECASE)
    if m:
        found += [m.group(1).strip(), m.group(2).strip()]
    return found + names


def infer_sub_type(kind: str, multi: bool, stem: str, correct_options: list[str], names: list[str]) -> str:
    """The WellPlay sub-type from the question templates of §5.4 (no column stores it)."""
    low = stem.lower()
    if kind == QuestionKind.OBJECTIVE:
        return "who_killed" if ("被谁杀" in stem or low.startswith("who killed")) else "identity"
    if kind == QuestionKind.REASONING:
        if multi and ("怀疑" in stem or "suspect" in low):
            return "suspect"
        if "凶手是被害人" in stem or low.startswith("the perpetrator is the victim"):
            return "relationship"
        if "动机" in stem or "motiv" in low:
            return "why"
        if "怎么死" in stem or re.match(r"how did .+ die", low):
            return "how"
        if "在哪里被杀" in stem or re.match(r"where (was|did) .+ (killed|die)", low):
            return "where"
        if re.search(r"(什么时候|何时)被杀", stem) or re.match(r"when (was|did) .+ (killed|die)", low):
            return "when"
        return "other"
    if kind == QuestionKind.RELATIONS:
        if "不存在的关系" in stem or "non-existent relationship" in low:
            return "non_existent"
        if len(correct_options) == 1:
            parsed = conan.parse_relation_option(correct_options[0], relation_names(stem, names))
            count = len(parsed[1]) if parsed else correct_options[0].count(" and ") + 1
            return "two" if count >= 2 else "one"
        return ""
    return ""


def question_from_row(row: CsvRow, perspective: str, file: str, names: list[str]) -> Question:
    kind = WELLPLAY_KIND_OF_LETTER[row.value]
    letters = set(row.truth)
    options = [
        Option(text=t, correct=OPTION_LETTERS[i] in letters, origin=OptionOrigin.IMPORTED)
        for i, t in enumerate(row.options)
    ]
    correct = [o.text for o in options if o.correct]
    question = Question(
        kind=kind,
        stem=row.question,
        options=options,
        answer=row.truth,
        multi=row.type == "b",
        perspective=perspective,
        provenance={"file": file, "line": row.line},
    )
    question.sub_type = infer_sub_type(kind, question.multi, row.question, correct, names)
    if kind == QuestionKind.RELATIONS:
        people = relation_names(row.question, names)
        parsed = [conan.parse_relation_option(t, people) for t in row.options]
        if any(parsed):
            question.extra["option_labels"] = [
                {"subject": p[0], "labels": p[1], "object": p[2]} if p else None for p in parsed
            ]
    return question


# --------------------------------------------------------------------------------------------
# Files of a game


def _read_json(path: Path, log: _Log) -> Any:
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


def _index_files(folder: Path, suffix: str, wanted: list[str], log: _Log) -> dict[str, Path]:
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


def _find(index: dict[str, Path], name: str) -> Path | None:
    return index.get(name_key(name))


def _split_dir_name(dir_name: str, script_name: str) -> tuple[str, str, str]:
    """(slug, title, title_note) from a game dir name such as ``131-罪恶（4人封闭）``."""
    m = _G1_PREFIX.match(dir_name)
    slug = m.group(2) if m else dir_name
    if script_name and slug.startswith(script_name):
        return slug, script_name, slug[len(script_name) :]
    note = _NOTE.match(slug)
    title = note.group(1) if note else slug
    return slug, script_name or title, note.group(2) if note else ""


def _flag(value: Any) -> bool:
    """0/1 flags as published (ints), tolerating "1"/"true" strings."""
    return str(value).strip().lower() in {"1", "true", "yes"}


def _as_text_list(value: Any) -> list[str]:
    if isinstance(value, list):
        return [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in value]
    if isinstance(value, str):
        return [value]
    return []


@dataclass
class _GameFiles:
    """What a game folder holds, located once."""

    dir: Path
    json_dir: Path
    results_dir: Path
    json_files: dict[str, Path]
    csv_files: dict[str, Path]
    relation_files: dict[str, Path]
    aggregates: list[Path]


def _locate(game_dir: Path, names: list[str], log: _Log) -> _GameFiles:
    json_dir, results_dir = game_dir / "json", game_dir / "final_result"
    json_files = _index_files(json_dir, ".json", names + ["script_info"], log)
    json_files.pop(name_key("script_info"), None)
    aggregates = [results_dir / n for n in AGGREGATE_NAMES if (results_dir / n).is_file()]
    csv_files = {
        k: p
        for k, p in _index_files(results_dir, ".csv", names, log).items()
        if p.name not in AGGREGATE_NAMES and not p.name.startswith("relation_")
    }
    relation_files = {}
    if results_dir.is_dir():
        for p in sorted(results_dir.glob("relation_*.csv")):
            relation_files[name_key(p.stem[len("relation_") :])] = p
    return _GameFiles(game_dir, json_dir, results_dir, json_files, csv_files, relation_files, aggregates)


# --------------------------------------------------------------------------------------------
# One game


def _detect_language(game_dir: Path, info: dict[str, Any], names: list[str]) -> str:
    for part in (game_dir.parent.name, game_dir.parent.parent.name):
        if part.lower() in LANGUAGE_DIRS:
            return LANGUAGE_DIRS[part.lower()]
    sample = " ".join([str(info.get("script_name", "")), *names, game_dir.name])
    return "zh" if has_cjk(sample) else "en"


def _read_script_info(files_dir: Path, game_dir: Path, log: _Log) -> tuple[dict[str, Any], list[str]]:
    path = files_dir / "script_info.json"
    info: dict[str, Any] = {}
    if path.is_file():
        data = _read_json(path, log)
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


def _read_character(
    name: str, path: Path | None, game_dir: Path, log: _Log
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
    data = _read_json(path, log)
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
    script_raw = _as_text_list(data.get("script", []))
    character.script = normalize_newlines(script_raw[0]) if script_raw else ""
    if script_raw != [character.script]:
        meta["script_raw"] = script_raw
    if len(script_raw) > 1:
        log.add(path, f"script has {len(script_raw)} elements (expected 1)", "first used; all kept in extra")
    goals_raw = _as_text_list(data.get("acts_goal", []))
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
        character.is_murderer = _flag(data.get("is_murderer"))
    return character, data


def _game_victims(raws: dict[str, dict[str, Any]], game_dir: Path, log: _Log) -> list[str]:
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


def _kills_of(character: Character, data: dict[str, Any], victims: list[str], path: Path, log: _Log) -> list[Kill]:
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
        if _flag(flag)
    ]
    if data and "is_murderer" in data and _flag(data.get("is_murderer")) != bool(kills):
        log.add(path, f"is_murderer={data.get('is_murderer')} but kill_by_me={flags}", "both kept as published")
    return kills


def _signature(row: CsvRow) -> tuple[str, str, str]:
    """What must agree between the two languages of a game: value, type and the truth's letter set
    (zh Ghost Revenge writes "bb" where en writes "b")."""
    return (row.value, row.type, "".join(sorted(set(row.truth))))


def _compare_aggregate(files: _GameFiles, concatenation: list[CsvRow], log: _Log) -> dict[str, list[tuple]]:
    """Compare GM.csv / FSA.csv with the concatenated per-character rows as multisets."""
    signatures: dict[str, list[tuple]] = {}
    mine = Counter(r.key() for r in concatenation)
    for path in files.aggregates:
        rows = read_question_csv(path, log)
        if rows is None:
            continue
        signatures[path.name] = [_signature(r) for r in rows]
        theirs = Counter(r.key() for r in rows)
        if theirs == mine:
            log.add(path, f"aggregate identical (as a multiset of rows) to the {len(rows)} per-character rows",
                    "not imported (questions come from the per-character files)", severity="info")
            continue
        only_agg = theirs - mine
        only_chars = mine - theirs
        example = next(iter(only_agg), None)
        log.add(
            path,
            f"aggregate has {len(rows)} rows, per-character files {len(concatenation)}; "
            f"{sum(only_agg.values())} row(s) only in the aggregate, {sum(only_chars.values())} only in the "
            f"per-character files" + (f" (e.g. {example[2]!r})" if example else ""),
            "not imported (per-character files are authoritative)",
            severity="info",
        )
    return signatures


def _first_difference(ours: str, theirs: str) -> str:
    """Where two texts first differ, with a little context (for report lines)."""
    i = next((k for k, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), min(len(ours), len(theirs)))
    return f"first difference at character {i}: JSON {ours[i : i + 12]!r}, file {theirs[i : i + 12]!r}"


def _squash(text: str) -> str:
    return "".join(text.split())


def _compare_texts(files: _GameFiles, game: Game, log: _Log) -> None:
    """G1 txt/, purpose/, txt_full/: compare with the JSON (authoritative) and report."""
    names = [c.name for c in game.playable]
    for folder, expected in (
        ("txt", lambda c: c.script),
        ("purpose", lambda c: "\n".join(c.goals)),
        ("txt_full", lambda c: c.script + "\n" + "\n".join(c.goals)),
    ):
        path = files.dir / folder
        if not path.is_dir():
            continue
        index = _index_files(path, ".txt", names, log)
        same = space = 0
        for file in index.values():
            character = game.character(file.stem) or next(
                (c for c in game.playable if name_key(file.stem).startswith(name_key(c.name))), None
            )
            if character is None:
                log.add(file, "text file of no character of character_name", "ignored", severity="info")
                continue
            try:
                text, _ = decode_text(file.read_bytes())
            except UnicodeDecodeError as exc:
                log.add(file, not_text(exc), "ignored", severity="error")
                continue
            except OSError as exc:
                log.add(file, f"cannot read file: {(exc.strerror or 'input/output error').lower()}", "ignored",
                        severity="error")
                continue
            want = expected(character)
            if text.strip() == want.strip():
                same += 1
            elif _squash(text) == _squash(want):
                space += 1
            else:
                log.add(file, f"differs from the JSON of {character.name}: {_first_difference(want, text)}",
                        "JSON kept (authoritative)", severity="info")
        log.add(path, f"{folder}/: {same} file(s) equal to the JSON, {space} equal up to whitespace",
                "not imported (JSON is authoritative)", severity="info")


def _read_relationships(files: _GameFiles, game: Game, log: _Log) -> None:
    path = files.dir / "all.json"
    if not path.is_file():
        return
    data = _read_json(path, log)
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


def _compare_relation_files(files: _GameFiles, game: Game, rows_by_character: dict[str, list[CsvRow]], log: _Log) -> None:
    for path in files.relation_files.values():
        character = game.character(path.stem[len("relation_") :])
        if character is None:
            log.add(path, "relation file of no character of character_name", "ignored", severity="info")
            continue
        rows = read_question_csv(path, log)
        if rows is None:
            continue
        mine = Counter(r.key() for r in rows_by_character.get(character.name, []) if r.value == "c")
        theirs = Counter(r.key() for r in rows)
        if mine == theirs:
            log.add(path, f"equal to the {len(rows)} relation rows of {character.name}.csv",
                    "not imported (duplicate)", severity="info")
        else:
            log.add(path, f"differs from the relation rows of {character.name}.csv "
                    f"({sum((theirs - mine).values())} only here, {sum((mine - theirs).values())} only there)",
                    "not imported (per-character file is authoritative)", severity="info")


def _report_unknown_names(game: Game, files: _GameFiles, log: _Log) -> None:
    """Names in 【】 that are no character: aliases, non-players or misspellings (§9.6)."""
    known = {name_key(c.name) for c in game.characters}
    seen: dict[str, Question] = {}
    for q in game.questions:
        for name in BRACKETED.findall(q.stem):
            if name_key(name) not in known and name not in seen:
                seen[name] = q
    names = [c.name for c in game.characters]
    for name, q in seen.items():
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        hint = f" (misspelling of {close[0]!r}?)" if close else ""
        log.add(Path(log.root, q.provenance["file"]), f"question names 【{name}】, no character of this game{hint}", "kept verbatim",
                location=f"line {q.provenance['line']}", severity="info")


def read_game_dir(game_dir: Path, root: Path | None = None) -> tuple[Game, dict[str, list[tuple]]]:
    """Read one game folder (any layout). Returns the game and its aggregate signatures.

    The signatures, value/type/truth per aggregate row, are what :func:`link_counterparts` needs.
    """
    log = _Log(root or game_dir.parent)
    info, names = _read_script_info(game_dir / "json", game_dir, log)
    files = _locate(game_dir, names, log)
    language = _detect_language(game_dir, info, names)
    slug, title, note = _split_dir_name(game_dir.name, str(info.get("script_name") or ""))
    names_of_aggregates = {p.name for p in files.aggregates}
    if _G1_PREFIX.match(game_dir.name) or (game_dir / "txt").is_dir():
        layout = "G1"
    elif language == "zh" and names_of_aggregates == {"FSA.csv"}:
        layout = "G2"
    else:
        layout = "G3"
    game = Game(slug=slug, title=title, language=language, origin=Origin.WELLPLAY, title_note=note)
    meta: dict[str, Any] = {"layout": layout, "dir_name": game_dir.name, "aggregates": [p.name for p in files.aggregates]}
    if info:
        meta["script_info"] = info
    if _G1_PREFIX.match(game_dir.name):
        meta["g1_id"] = _G1_PREFIX.match(game_dir.name).group(1)
    game.extra["wellplay"] = meta

    # characters and ground truth
    raws: dict[str, dict[str, Any]] = {}
    wanted = {name_key(n) for n in names}
    for name in names:
        character, data = _read_character(name, _find(files.json_files, name), game_dir, log)
        game.characters.append(character)
        raws[name] = data
    for key, path in files.json_files.items():
        if key not in wanted:
            log.add(path, "character file not listed in script_info character_name", "not imported")
    acts = {c.extra["wellplay"].get("acts_num") for c in game.characters} - {None}
    if info.get("acts_num") is not None and acts and acts != {info.get("acts_num")}:
        log.add(game_dir / "json", f"acts_num {info.get('acts_num')} in script_info, {sorted(acts)} in character files",
                "kept as published (not used)", severity="info")
    game.victims = _game_victims(raws, game_dir, log)
    for character in game.playable:
        path = _find(files.json_files, character.name) or game_dir / "json"
        if character.extra["wellplay"].get("victims") is not None or raws[character.name]:
            game.kills.extend(_kills_of(character, raws[character.name], game.victims, path, log))
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
    _read_relationships(files, game, log)
    qa = files.dir / "qa-character.json"
    if qa.is_file():
        data = _read_json(qa, log)
        if data is not None:
            meta["qa_character"] = data

    # questions, per character file in character_name order
    all_names = [c.name for c in game.characters]
    rows_by_character: dict[str, list[CsvRow]] = {}
    concatenation: list[CsvRow] = []
    for character in game.playable:
        path = _find(files.csv_files, character.name)
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
    signatures = _compare_aggregate(files, concatenation, log)
    if not files.aggregates and files.results_dir.is_dir():
        log.add(files.results_dir, "no aggregate GM.csv / FSA.csv", "nothing lost (it is derived)", severity="info")
    _compare_relation_files(files, game, rows_by_character, log)
    _compare_texts(files, game, log)
    _report_unknown_names(game, files, log)
    for name in sorted(STALE_DIRS):
        if (game_dir / name).is_dir():
            log.add(game_dir / name, "stale backup / earlier version of the data", "not imported", severity="info")
    if not signatures:
        signatures["concatenation"] = [_signature(r) for r in concatenation]
    game.report = log.items
    return game, signatures


# --------------------------------------------------------------------------------------------
# Dataset level


def _is_game_dir(path: Path) -> bool:
    return (path / "json").is_dir() or (path / "final_result").is_dir()


def discover_game_dirs(root: Path, log: _Log) -> list[Path]:
    """Game folders under ``root`` (a dataset root with chinese/ english/, a language folder or a game)."""
    if _is_game_dir(root):
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
            if _is_game_dir(path):
                found.append(path)
            else:
                log.add(path, "no json/ or final_result/ folder (not a game)", "skipped", severity="info")
    return found


def _pair_key(slug: str) -> str:
    return name_key(slug)


def link_counterparts(games: list[Game], signatures: dict[int, dict[str, list[tuple]]]) -> None:
    """Set ``counterpart`` on zh/en versions of one game: the 12 published pairs, else same characters
    count and identical value/type/truth sequences in the aggregate."""
    zh = [g for g in games if g.language == "zh"]
    en = [g for g in games if g.language == "en"]
    table = {_pair_key(k): _pair_key(v) for k, v in PUBLISHED_PAIRS.items()}
    for z in zh:
        for e in en:
            if table.get(_pair_key(z.slug)) == _pair_key(e.slug):
                z.counterpart, e.counterpart = e.slug, z.slug
    for z in [g for g in zh if not g.counterpart]:
        sz = {tuple(s) for s in signatures[id(z)].values()}
        matches = [
            e for e in en
            if not e.counterpart and len(e.playable) == len(z.playable)
            and sz & {tuple(s) for s in signatures[id(e)].values()} and any(len(s) for s in sz)
        ]
        if len(matches) == 1:
            z.counterpart, matches[0].counterpart = matches[0].slug, z.slug
            note = f"linked to {matches[0].slug!r} (same characters count and question sequence)"
            z.report.append(Problem(file=z.slug, message=note, action="counterpart set", severity="info"))


def read_wellplay(path: Path) -> ReadResult:
    """Read every WellPlay game under ``path`` (layouts G1/G2/G3; dataset root, language folder or game)."""
    path = Path(path)
    result = ReadResult()
    log = _Log(path)
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
