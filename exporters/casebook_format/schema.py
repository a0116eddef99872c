"""The committed JSON Schemas of a Casebook game folder, and validation against them."""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parent / "schema"
GAME_SCHEMA = SCHEMA_DIR / "casebook-game.schema.json"
MANIFEST_SCHEMA = SCHEMA_DIR / "casebook-manifest.schema.json"


@cache
def _validator(path: Path):
    from jsonschema import Draft202012Validator  # imported at first use: only imports and tests need it

    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_problems(data: Any, path: Path = GAME_SCHEMA, limit: int = 10) -> list[str]:
    """Where ``data`` breaks the schema, as ``at <json path>: <message>`` lines (empty = valid)."""
    errors = sorted(_validator(path).iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    return [f"at {e.json_path}: {e.message[:300]}" for e in errors[:limit]]
