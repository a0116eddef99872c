"""Reading Casebook game folders, with every check done before anything is stored.

A path is one game folder (it holds ``manifest.json``) or a folder of them. Each folder's manifest
and checksums (:mod:`.manifest`), its document's JSON Schema and its internal references (span ids,
character names, clue keys, image files) are checked; :func:`read_folders` raises
:class:`~.manifest.ManifestError` naming the first problem, so an import changes nothing.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .document import DOCUMENT_NAME, GameDocument
from .manifest import MANIFEST_NAME, ManifestError, read_checked
from .schema import schema_problems


def game_folders(path: Path) -> list[Path]:
    if (path / MANIFEST_NAME).is_file():
        return [path]
    folders = sorted(p.parent for p in path.glob(f"*/{MANIFEST_NAME}"))
    if not folders:
        raise ManifestError(f"{path}: no Casebook game folder (a folder holding {MANIFEST_NAME}) found")
    return folders


def read_folder(folder: Path) -> GameDocument:
    files = read_checked(folder)
    try:
        data = json.loads(files.pop(DOCUMENT_NAME).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestError(f"{folder.name}/{DOCUMENT_NAME} is not valid JSON ({exc})") from None
    problems = schema_problems(data)
    if problems:
        raise ManifestError(f"{folder.name}/{DOCUMENT_NAME} does not match the schema: " + "; ".join(problems))
    problems = reference_problems(data, set(files))
    if problems:
        raise ManifestError(f"{folder.name}/{DOCUMENT_NAME} has broken references: " + "; ".join(problems[:10]))
    return GameDocument(data, files)


def read_folders(path: Path) -> list[GameDocument]:
    documents = [read_folder(folder) for folder in game_folders(Path(path))]
    seen: dict[tuple[str, str], int] = {}
    for doc in documents:
        key = (doc.data["game"]["slug"], doc.data["game"]["language"])
        seen[key] = seen.get(key, 0) + 1
    twice = [f"{slug} [{lang}]" for (slug, lang), n in seen.items() if n > 1]
    if twice:
        raise ManifestError(f"the same game is in more than one folder: {', '.join(twice)}")
    return documents


def reference_problems(data: dict[str, Any], images: set[str]) -> list[str]:
    """What in the document points at something it does not hold."""
    out: list[str] = []
    names = {c["name"] for c in data["characters"]}
    clues = {c["key"] for c in data["clues"]}
    spans = {s["id"] for s in data["spans"]}
    if len(spans) != len(data["spans"]):
        out.append("two spans share an id")
    for s in data["spans"]:
        if s["end"] < s["start"]:
            out.append(f"span {s['id']} ends before it starts")
        if s["document"] in ("script", "goals") and s["owner"] not in names:
            out.append(f"span {s['id']} points into the script of unknown character {s['owner']!r}")
        if s["document"] == "clue" and s["owner"] not in clues:
            out.append(f"span {s['id']} points into unknown clue {s['owner']!r}")
    cited = [(r["id"], r["evidence"]) for r in data["relationships"]] + [(q["id"], q["evidence"]) for q in data["questions"]]
    cited += [(f"{c['id']}/{n['key']}", n["evidence"]) for c in data["chains"] for n in c["nodes"]]
    for item, evidence in cited:
        out += [f"{item} cites unknown span {sid}" for sid in evidence if sid not in spans]
    items = ({q["id"] for q in data["questions"]} | {r["id"] for r in data["relationships"]}
             | {c["id"] for c in data["chains"]})
    out += [f"a comment is on unknown item {c['item']}" for c in data["workflow"]["comments"] if c["item"] not in items]
    out += [f"a validation answer is on unknown question {v['question']}" for v in data["workflow"]["validations"]
            if v["question"] not in items]
    out += [f"relationship labels name unknown characters {j['source']!r} → {j['target']!r}"
            for j in data["workflow"]["label_judgements"] if j["source"] not in names or j["target"] not in names]
    for c in data["clues"]:
        if c["image"] and c["image"] not in images:
            out.append(f"clue {c['key']!r} names image {c['image']} which the folder does not hold")
    used = {c["image"] for c in data["clues"] if c["image"]}
    out += [f"file {name} is listed but no clue uses it" for name in sorted(images - used)]
    return out
