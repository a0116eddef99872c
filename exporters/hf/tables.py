"""Casebook documents as flat tables, one row per item, for the Hugging Face (Parquet) layout.

Each table has a fixed column list and type (``COLUMNS``), so every file has the same schema
whatever the games hold. Rows point at each other by the ids of :mod:`exporters.references`
(``script_id``, ``clue_id``, ``question_id``) and by ``<game>/<document id>`` for spans, chains and
relationships. Only approved relationships, chains and questions (and live spans, and options not
rejected or still pending) are published unless drafts are asked for, as in every export.
"""
from __future__ import annotations

import json
from typing import Any

from casebook import interchange as ix

from ..references import clue_id, evidence_ids, question_id, script_id

STR, INT, BOOL, FLOAT, STRS = "string", "int64", "bool", "float64", "list<string>"

COLUMNS: dict[str, dict[str, str]] = {
    "games": {"game": STR, "title": STR, "title_note": STR, "language": STR, "origin": STR, "counterpart": STR,
              "victims": STRS, "murderers": STRS, "truth_text": STR, "truth_motive": STR, "truth_method": STR,
              "public_clue_text": STR},
    "characters": {"game": STR, "name": STR, "aliases": STRS, "playable": BOOL, "is_murderer": BOOL,
                   "is_victim": BOOL, "key_role": BOOL, "script_id": STR},
    "scripts": {"script_id": STR, "game": STR, "character": STR, "language": STR, "text": STR, "goals": STRS,
                "self_intro": STR},
    "clues": {"clue_id": STR, "game": STR, "key": STR, "kind": STR, "title": STR, "text": STR, "owner": STR,
              "image": STR, "image_kind": STR, "media_type": STR, "ocr_text": STR},
    "questions": {"question_id": STR, "game": STR, "language": STR, "benchmark": STR, "kind": STR, "sub_type": STR,
                  "stem": STR, "options": STRS, "answer": STR, "multi": BOOL, "weight": INT, "perspective": STR,
                  "image_clue_id": STR, "image": STR, "chain_id": STR, "chain_node": STR, "level": INT,
                  "source": STR, "status": STR, "context_script_ids": STRS, "context_clue_ids": STRS,
                  "evidence_span_ids": STRS, "evidence_script_ids": STRS, "evidence_clue_ids": STRS,
                  "provenance": STR},
    "options": {"question_id": STR, "game": STR, "position": INT, "letter": STR, "text": STR, "correct": BOOL,
                "origin": STR, "model": STR, "review": STR},
    "chains": {"chain_id": STR, "game": STR, "position": INT, "goal": STR, "title": STR, "status": STR},
    "nodes": {"chain_id": STR, "game": STR, "key": STR, "position": INT, "kind": STR, "text": STR, "parents": STRS,
              "level": INT, "knowledge": STR, "image_clue_id": STR, "evidence_span_ids": STRS},
    "spans": {"span_id": STR, "game": STR, "document": STR, "owner": STR, "script_id": STR, "clue_id": STR,
              "start": INT, "end": INT, "quote": STR, "label": STR, "state": STR},
    "relationships": {"relationship_id": STR, "game": STR, "source": STR, "target": STR, "labels": STRS,
                      "note": STR, "status": STR, "evidence_span_ids": STRS},
    "sessions": {"session_id": STR, "game": STR, "title": STR, "session_type": STR, "source_format": STR,
                 "players": STRS, "characters": STRS, "true_roles": STRS},
    "turns": {"session_id": STR, "game": STR, "index": INT, "speaker": STR, "text": STR, "phase": STR,
              "visible_to": STRS, "timestamp": INT, "triplets": STR, "face": STR, "tone": STR, "suspicions": STR},
}
OPTIONAL = ("sessions", "turns")  # written only when some game has played sessions


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def tables(documents: list[dict[str, Any]], *, include_drafts: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Rows per table for the documents (see the module docstring for what is published)."""
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in COLUMNS}
    for doc in documents:
        _add_game(out, doc, include_drafts)
    if not out["sessions"]:
        for name in OPTIONAL:
            del out[name]
    return out


def _add_game(out: dict[str, list[dict[str, Any]]], doc: dict[str, Any], include_drafts: bool) -> None:
    g = doc["game"]
    slug = g["slug"]

    def published(item: dict[str, Any]) -> bool:
        return include_drafts or item["review"]["status"] == ix.Status.APPROVED

    hidden = {ix.OptionReview.REJECTED} | (set() if include_drafts else {ix.OptionReview.PENDING})
    murderers = [c["name"] for c in doc["characters"] if c["is_murderer"]]
    murderers += [k["killer"] for k in doc["kills"] if k["killer"] not in murderers]
    out["games"].append({
        "game": slug, "title": g["title"], "title_note": g["title_note"], "language": g["language"],
        "origin": g["origin"], "counterpart": g["counterpart"], "victims": g["victims"], "murderers": murderers,
        "truth_text": g["truth"]["text"], "truth_motive": g["truth"]["motive"], "truth_method": g["truth"]["method"],
        "public_clue_text": g["public_clue_text"],
    })
    for c in doc["characters"]:
        sid = script_id(slug, c["name"]) if c["script"] else ""
        out["characters"].append({
            "game": slug, "name": c["name"], "aliases": c["aliases"], "playable": c["playable"],
            "is_murderer": c["is_murderer"], "is_victim": c["is_victim"], "key_role": c["key_role"], "script_id": sid,
        })
        if sid:
            out["scripts"].append({"script_id": sid, "game": slug, "character": c["name"], "language": g["language"],
                                   "text": c["script"], "goals": c["goals"], "self_intro": c["self_intro"]})
    for c in doc["clues"]:
        out["clues"].append({
            "clue_id": clue_id(slug, c["key"]), "game": slug, "key": c["key"], "kind": c["kind"], "title": c["title"],
            "text": c["text"], "owner": c["owner"], "image": c["image"], "image_kind": c["image_kind"],
            "media_type": c["media_type"], "ocr_text": c["ocr_text"],
        })
    images = {c["key"]: c["image"] for c in doc["clues"]}
    spans = {s["id"]: s for s in doc["spans"] if include_drafts or s["state"] == "live"}

    def cited(ids: list[str]) -> list[str]:
        return [f"{slug}/{sid}" for sid in ids if sid in spans]

    for s in spans.values():
        script = s["document"] in (ix.SpanDocument.SCRIPT, ix.SpanDocument.GOALS)
        out["spans"].append({
            "span_id": f"{slug}/{s['id']}", "game": slug, "document": s["document"], "owner": s["owner"],
            "script_id": script_id(slug, s["owner"]) if script else "",
            "clue_id": clue_id(slug, s["owner"]) if s["document"] == ix.SpanDocument.CLUE else "",
            "start": s["start"], "end": s["end"], "quote": s["quote"], "label": s["label"], "state": s["state"],
        })
    for r in doc["relationships"]:
        if published(r):
            out["relationships"].append({
                "relationship_id": f"{slug}/{r['id']}", "game": slug, "source": r["source"], "target": r["target"],
                "labels": r["labels"], "note": r["note"], "status": r["review"]["status"],
                "evidence_span_ids": cited(r["evidence"]),
            })
    chain_of_node: dict[str, str] = {}
    for position, c in enumerate(doc["chains"]):
        if not published(c):
            continue
        chain = f"{slug}/{c['id']}"
        out["chains"].append({"chain_id": chain, "game": slug, "position": position, "goal": c["goal"],
                              "title": c["title"], "status": c["review"]["status"]})
        for n_pos, n in enumerate(c["nodes"]):
            chain_of_node.setdefault(n["key"], chain)
            out["nodes"].append({
                "chain_id": chain, "game": slug, "key": n["key"], "position": n_pos, "kind": n["kind"],
                "text": n["text"], "parents": n["parents"], "level": n["level"], "knowledge": n["knowledge"],
                "image_clue_id": clue_id(slug, n["image_clue"]) if n["image_clue"] else "",
                "evidence_span_ids": cited(n["evidence"]),
            })
    context_scripts = [script_id(slug, c["name"]) for c in doc["characters"] if c["script"]]
    context_clues = [clue_id(slug, c["key"]) for c in doc["clues"]]
    index = 0
    for q in doc["questions"]:
        if not published(q):
            continue
        qid = question_id(slug, index)
        index += 1
        options = [o for o in q["options"] if o["review"] not in hidden]
        answer = q["answer"]
        if len(options) != len(q["options"]):  # letters moved: the answer follows the options marked correct
            answer = "".join(ix.LETTERS[i] for i, o in enumerate(options) if o["correct"])
        evidence = [ix.Span(document=spans[sid]["document"], owner=spans[sid]["owner"])
                    for sid in q["evidence"] if sid in spans]
        scripts, clues = evidence_ids(slug, evidence)
        out["questions"].append({
            "question_id": qid, "game": slug, "language": g["language"], "benchmark": ix.benchmark_of(q["kind"]).value,
            "kind": q["kind"], "sub_type": q["sub_type"], "stem": q["stem"], "options": [o["text"] for o in options],
            "answer": answer, "multi": q["multi"],
            "weight": q["weight"] if q["weight"] is not None else ix.DEFAULT_WEIGHTS.get(q["kind"], 1),
            "perspective": q["perspective"],
            "image_clue_id": clue_id(slug, q["image_clue"]) if q["image_clue"] else "",
            "image": images.get(q["image_clue"], ""), "chain_id": chain_of_node.get(q["chain_node"], ""),
            "chain_node": q["chain_node"], "level": q["level"], "source": q["source"], "status": q["review"]["status"],
            "context_script_ids": context_scripts, "context_clue_ids": context_clues,
            "evidence_span_ids": cited(q["evidence"]), "evidence_script_ids": scripts, "evidence_clue_ids": clues,
            "provenance": _json(q["provenance"]),
        })
        for i, o in enumerate(options):
            out["options"].append({"question_id": qid, "game": slug, "position": i, "letter": ix.LETTERS[i],
                                   "text": o["text"], "correct": o["correct"], "origin": o["origin"],
                                   "model": o["model"], "review": o["review"]})
    for n, s in enumerate(doc["sessions"], 1):
        sid = f"{slug}/session{n}"
        out["sessions"].append({
            "session_id": sid, "game": slug, "title": s["title"], "session_type": s["session_type"],
            "source_format": s["source_format"], "players": [p["name"] for p in s["players"]],
            "characters": [p["character"] for p in s["players"]], "true_roles": [p["true_role"] for p in s["players"]],
        })
        for t in s["turns"]:
            truth = _ground_truth(t["annotations"], include_drafts)
            out["turns"].append({
                "session_id": sid, "game": slug, "index": t["index"], "speaker": t["speaker"], "text": t["text"],
                "phase": t["phase"], "visible_to": [str(v) for v in t["visible_to"]], "timestamp": t["timestamp"],
                "triplets": _json(truth.get("triplets", [])), "face": truth.get("face", ""),
                "tone": truth.get("tone", ""), "suspicions": _json(truth.get("suspicions", {})),
            })


def _ground_truth(annotations: list[dict[str, Any]], include_drafts: bool) -> dict[str, Any]:
    """A turn's labels: its last approved annotation (any, with drafts), else the imported ones."""
    approved = [a for a in annotations if include_drafts or a["review"]["status"] == ix.Status.APPROVED]
    imported = [a for a in annotations if a["source"] == "imported"]
    chosen = (approved or imported or [{}])[-1]
    return chosen
