"""Generic exports: one question per line (JSONL) or per row (CSV), any benchmark kind.

Each record carries the game, language, kind, sub-type, stem, options, answer, weight,
perspective and provenance (who wrote and who approved it, the published file and line), so a
dataset can be rebuilt or audited from the file alone. The texts a question is asked over come by
reference: ``context_script_ids``/``context_clue_ids`` (and the ``evidence_*`` ids it cites) name rows
of ``scripts.jsonl``/``clues.jsonl`` (``.csv``) written beside it — the same ids as the Hugging Face
tables' ``script_id``/``clue_id`` (:mod:`exporters.references`) — so the files alone answer a question.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from casebook import interchange as ix

from ..references import clue_id, context_ids, evidence_ids, question_id, script_id

LIST_COLUMNS = ("options", "answer_texts", "premises", "evidence", "provenance", "context_script_ids",
                "context_clue_ids", "evidence_script_ids", "evidence_clue_ids")
CSV_COLUMNS = [
    "id", "game", "game_title", "language", "benchmark", "kind", "sub_type", "stem", "options", "answer",
    "answer_texts", "premises", "multi", "weight", "perspective", "image", "chain_node", "level", "source", "evidence",
    "status", "provenance", "context_script_ids", "context_clue_ids", "evidence_script_ids", "evidence_clue_ids",
]
SCRIPT_COLUMNS = ["script_id", "game", "character", "language", "text", "goals"]
CLUE_COLUMNS = ["clue_id", "game", "key", "kind", "title", "text", "owner", "image", "ocr_text"]


def question_record(game: ix.Game, q: ix.Question, index: int) -> dict[str, Any]:
    clue = game.clue(q.image_clue) if q.image_clue else None
    letters = q.answer.strip().lower()
    answer_texts = (
        [q.options[ix.LETTERS.index(ch)].text for ch in dict.fromkeys(letters) if ch in ix.LETTERS
         and ix.LETTERS.index(ch) < len(q.options)]
        if letters and set(letters) <= set(ix.LETTERS) else []
    )
    scripts, clues = context_ids(game)
    cited_scripts, cited_clues = evidence_ids(game.slug, q.evidence)
    return {
        "id": question_id(game.slug, index),
        "game": game.slug,
        "game_title": game.title,
        "language": game.language,
        "benchmark": ix.benchmark_of(q.kind).value,
        "kind": q.kind,
        "sub_type": q.sub_type,
        "stem": q.stem,
        "options": [o.text for o in q.options],
        "answer": q.answer,
        "answer_texts": answer_texts,
        "premises": list(q.extra.get("premises", [])),  # inferential items: premises → conclusion (answer)
        "multi": q.multi,
        "weight": q.effective_weight,
        "perspective": q.perspective,
        "image": clue.filename if clue else "",
        "chain_node": q.chain_node,
        "level": q.level,
        "source": q.source,
        "evidence": [
            {"document": s.document, "owner": s.owner, "start": s.start, "end": s.end, "quote": s.quote, "label": s.label}
            for s in q.evidence
        ],
        "status": q.status,
        "provenance": q.provenance,
        "context_script_ids": scripts,
        "context_clue_ids": clues,
        "evidence_script_ids": cited_scripts,
        "evidence_clue_ids": cited_clues,
    }


def script_records(games: list[ix.Game]):
    for game in games:
        for c in game.characters:
            if c.script:
                yield {"script_id": script_id(game.slug, c.name), "game": game.slug, "character": c.name,
                       "language": game.language, "text": c.script, "goals": list(c.goals)}


def clue_records(games: list[ix.Game]):
    for game in games:
        for c in game.clues:
            yield {"clue_id": clue_id(game.slug, c.key), "game": game.slug, "key": c.key, "kind": c.kind,
                   "title": c.title, "text": c.text, "owner": c.owner, "image": c.filename, "ocr_text": c.ocr_text}


def iter_records(games: list[ix.Game]):
    for game in games:
        for i, q in enumerate(game.questions):
            yield question_record(game, q, i)


def write_jsonl(games: list[ix.Game], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, records in (("questions", iter_records(games)), ("scripts", script_records(games)),
                          ("clues", clue_records(games))):
        path = out_dir / f"{name}.jsonl"
        with path.open("w", encoding="utf-8", newline="\n") as fh:
            for record in records:
                fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        written.append(path)
    return written


def write_csv(games: list[ix.Game], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, columns, records in (("questions", CSV_COLUMNS, iter_records(games)),
                                   ("scripts", SCRIPT_COLUMNS, script_records(games)),
                                   ("clues", CLUE_COLUMNS, clue_records(games))):
        path = out_dir / f"{name}.csv"
        # utf-8-sig: spreadsheet programs then open Chinese text correctly.
        with path.open("w", encoding="utf-8-sig", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
            writer.writeheader()
            for record in records:
                row = dict(record)
                for key in (*LIST_COLUMNS, "goals"):
                    if key in row:
                        row[key] = json.dumps(row[key], ensure_ascii=False, sort_keys=True)
                writer.writerow(row)
        written.append(path)
    return written
