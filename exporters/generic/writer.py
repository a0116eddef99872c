"""Generic exports: one question per line (JSONL) or per row (CSV), any benchmark kind.

Each record carries the game, language, kind, sub-type, stem, options, answer, weight,
perspective and provenance (who wrote and who approved it, the published file and line), so a
dataset can be rebuilt or audited from the file alone.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from casebook import interchange as ix

CSV_COLUMNS = [
    "game", "game_title", "language", "benchmark", "kind", "sub_type", "stem", "options", "answer",
    "answer_texts", "premises", "multi", "weight", "perspective", "image", "chain_node", "level", "source", "evidence",
    "status", "provenance",
]


def question_record(game: ix.Game, q: ix.Question, index: int) -> dict[str, Any]:
    clue = game.clue(q.image_clue) if q.image_clue else None
    letters = q.answer.strip().lower()
    answer_texts = (
        [q.options[ix.LETTERS.index(ch)].text for ch in dict.fromkeys(letters) if ch in ix.LETTERS
         and ix.LETTERS.index(ch) < len(q.options)]
        if letters and set(letters) <= set(ix.LETTERS) else []
    )
    return {
        "id": f"{game.slug}#{index}",
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
    }


def iter_records(games: list[ix.Game]):
    for game in games:
        for i, q in enumerate(game.questions):
            yield question_record(game, q, i)


def write_jsonl(games: list[ix.Game], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "questions.jsonl"
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for record in iter_records(games):
            fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    return [path]


def write_csv(games: list[ix.Game], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "questions.csv"
    # utf-8-sig: spreadsheet programs then open Chinese text correctly.
    with path.open("w", encoding="utf-8-sig", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for record in iter_records(games):
            row = dict(record)
            for key in ("options", "answer_texts", "premises", "evidence", "provenance"):
                row[key] = json.dumps(row[key], ensure_ascii=False, sort_keys=True)
            writer.writerow(row)
    return [path]
