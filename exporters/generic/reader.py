"""Read a generic JSONL/CSV export back into plain records (for checks and round trips)."""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from .writer import LIST_COLUMNS


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    records = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path.name} line {n}: not valid JSON ({exc.msg})") from exc
    return records


def read_csv(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        for key in (*LIST_COLUMNS, "goals"):
            if row.get(key):
                row[key] = json.loads(row[key])
        if "multi" in row:  # questions.csv (scripts.csv and clues.csv have no such columns)
            row["multi"] = row["multi"] == "True"
            row["weight"] = int(row["weight"]) if row.get("weight") else None
    return rows
