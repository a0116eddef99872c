"""``manifest.json`` of a Casebook game folder: format version, every file with its sha256, counts.

An import trusts nothing it has not checked: the manifest must name the known format and version,
list exactly the files present, and each file must hash to what it lists.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .document import DOCUMENT_NAME, FORMAT_NAME, FORMAT_VERSION
from .schema import MANIFEST_SCHEMA, schema_problems

MANIFEST_NAME = "manifest.json"
COUNTED = ("characters", "clues", "spans", "relationships", "chains", "key_statements", "questions", "sessions",
           "synthesis")


class ManifestError(ValueError):
    """The folder is not a sound Casebook game folder; the message says why (nothing was imported)."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_manifest(document: dict[str, Any], files: dict[str, bytes]) -> dict[str, Any]:
    counts = {name: len(document[name]) for name in COUNTED}
    counts["nodes"] = sum(len(c["nodes"]) for c in document["chains"])
    counts["options"] = sum(len(q["options"]) for q in document["questions"])
    counts["turns"] = sum(len(s["turns"]) for s in document["sessions"])
    counts["images"] = len(files) - 1
    return {
        "format": FORMAT_NAME, "version": FORMAT_VERSION, "game": document["game"]["slug"],
        "files": [{"path": path, "sha256": sha256(data), "bytes": len(data)} for path, data in sorted(files.items())],
        "counts": counts,
    }


def dumps(value: Any) -> bytes:
    """The one JSON rendering of the format: sorted keys, two-space indent, UTF-8, final newline."""
    return (json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode("utf-8")


def read_checked(folder: Path) -> dict[str, bytes]:
    """Every file of ``folder`` listed by its manifest, checked; raises ManifestError on any mismatch."""
    where = folder.name
    path = folder / MANIFEST_NAME
    if not path.is_file():
        raise ManifestError(f"{where}: no {MANIFEST_NAME}; this is not a Casebook game folder")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestError(f"{where}/{MANIFEST_NAME} is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict):
        raise ManifestError(f"{where}/{MANIFEST_NAME} is not a JSON object")
    if manifest.get("format") != FORMAT_NAME:
        raise ManifestError(f"{where}: format {manifest.get('format')!r} is not {FORMAT_NAME!r}")
    if manifest.get("version") != FORMAT_VERSION:
        raise ManifestError(f"{where}: format version {manifest.get('version')!r} is not supported (this Casebook "
                            f"reads version {FORMAT_VERSION}); export it again with a matching Casebook")
    problems = schema_problems(manifest, MANIFEST_SCHEMA)
    if problems:
        raise ManifestError(f"{where}/{MANIFEST_NAME} is malformed: " + "; ".join(problems))
    listed = {entry["path"]: entry for entry in manifest["files"]}
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*")
               if p.is_file() and not p.is_symlink()} - {MANIFEST_NAME}
    if DOCUMENT_NAME not in listed:
        raise ManifestError(f"{where}/{MANIFEST_NAME} does not list {DOCUMENT_NAME}")
    if present - set(listed):
        raise ManifestError(f"{where}: files not in the manifest: {', '.join(sorted(present - set(listed)))}")
    if set(listed) - present:
        raise ManifestError(f"{where}: files in the manifest are missing: {', '.join(sorted(set(listed) - present))}")
    files = {}
    for name, entry in sorted(listed.items()):
        data = (folder / name).read_bytes()
        if sha256(data) != entry["sha256"] or len(data) != entry["bytes"]:
            raise ManifestError(f"{where}/{name}: checksum mismatch (the manifest says sha256 {entry['sha256'][:12]}…, "
                                f"{entry['bytes']} bytes; the file has {sha256(data)[:12]}…, {len(data)} bytes): "
                                "the file was changed or damaged after export")
        files[name] = data
    return files
