"""Cross-file checks: the published dataset stores several things twice (aggregate GM.csv / FSA.csv,
G1 relation_<player>.csv, txt/ purpose/ txt_full/); the per-character files and the JSON are
authoritative, and every disagreement of a copy is reported, never imported.
"""
from __future__ import annotations

import difflib
from collections import Counter
from pathlib import Path

from casebook.interchange import Game, Question, name_key
from exporters.common import decode_text, not_text
from exporters.problems import ProblemLog
from exporters.wellplay.layout import BRACKETED, GameFiles, index_files
from exporters.wellplay.rows import CsvRow, read_question_csv, signature


def compare_aggregate(files: GameFiles, concatenation: list[CsvRow], log: ProblemLog) -> dict[str, list[tuple]]:
    """Compare GM.csv / FSA.csv with the concatenated per-character rows as multisets."""
    signatures: dict[str, list[tuple]] = {}
    mine = Counter(r.key() for r in concatenation)
    for path in files.aggregates:
        rows = read_question_csv(path, log)
        if rows is None:
            continue
        signatures[path.name] = [signature(r) for r in rows]
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


def compare_texts(files: GameFiles, game: Game, log: ProblemLog) -> None:
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
        index = index_files(path, ".txt", names, log)
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


def compare_relation_files(files: GameFiles, game: Game, rows_by_character: dict[str, list[CsvRow]], log: ProblemLog) -> None:
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


def report_unknown_names(game: Game, files: GameFiles, log: ProblemLog) -> None:
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
