"""Casebook game folders: ``<game>/game.json``, ``<game>/images/…``, ``<game>/manifest.json``.

The service writes into a staging folder that replaces the target only when complete, so each
export is atomic; the bytes depend only on the games (sorted keys, fixed indentation, no times
of export), so exporting unchanged games again gives identical files.
"""
from __future__ import annotations

import re
from pathlib import Path

from .document import DOCUMENT_NAME, GameDocument
from .manifest import MANIFEST_NAME, build_manifest, dumps


def folder_name(slug: str, language: str, taken: set[str]) -> str:
    """A folder name for the game: its slug with path separators replaced, unique in the export."""
    name = re.sub(r'[\\/:*?"<>|\x00-\x1f]', "_", slug).strip(" .") or "game"
    if name in taken:
        name = f"{name}.{language}"
    n = 2
    base = name
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def write_casebook(documents: list[GameDocument], out_dir: Path) -> list[Path]:
    written: list[Path] = []
    taken: set[str] = set()
    for doc in documents:
        folder = out_dir / folder_name(doc.data["game"]["slug"], doc.data["game"]["language"], taken)
        files = {DOCUMENT_NAME: dumps(doc.data), **doc.images}
        for rel, data in files.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            written.append(path)
        manifest = folder / MANIFEST_NAME
        manifest.write_bytes(dumps(build_manifest(doc.data, files)))
        written.append(manifest)
    return written
