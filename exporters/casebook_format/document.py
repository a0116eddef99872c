"""One stored game as a Casebook document: every field and annotation, with document-local ids.

Database ids never appear: characters are named, clues keyed, chains and their nodes numbered by
position, and every evidence span gets an id (``s1`` …) from a sort over its own content and the
items citing it. People appear by username. So the same game exports to the same bytes on any
server, and a game imported from a document exports back to that document.

``extra`` dicts are written packed (:func:`casebook.interchange.pack_key_order`), so key orders
the published formats need survive the sorted-keys JSON.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from django.apps import apps
from django.db.models import Prefetch

from annotate import models as m
from annotate.loader import load_game
from casebook import interchange as ix
from casebook.models import AuditEntry

from .audit import IMPORT_ACTION, imported_record, summary_of

FORMAT_NAME = "casebook-game"
FORMAT_VERSION = 1
DOCUMENT_NAME = "game.json"
IMAGE_DIR = "images"


@dataclass
class GameDocument:
    """What one game folder holds: the JSON document and its image files (relative path → bytes)."""

    data: dict[str, Any]
    images: dict[str, bytes] = field(default_factory=dict)

    # What import progress reporting reads of any game (as of an interchange Game).
    @property
    def slug(self) -> str:
        return self.data["game"]["slug"]

    @property
    def title(self) -> str:
        return self.data["game"]["title"]

    @property
    def language(self) -> str:
        return self.data["game"]["language"]


def packed(value: dict[str, Any] | None) -> dict[str, Any]:
    return ix.pack_key_order(ix.unpack_key_order(dict(value or {})))


def _username(user: Any) -> str:
    return user.get_username() if user is not None else ""


def image_path(sha256: str, filename: str, media_type: str) -> str:
    """Content-addressed, so two clues with one picture share a file and names never collide."""
    ext = filename.rsplit(".", 1)[-1].lower()[:5] if "." in filename else (media_type.rsplit("/", 1)[-1] or "bin")
    return str(PurePosixPath(IMAGE_DIR) / f"{sha256}.{ext}")


def build_document(row: m.Game) -> GameDocument:
    """The whole game ``row`` (drafts, rejected options and withdrawn spans included)."""
    game = load_game(row, statuses=None, with_images=True)
    recorded = imported_record(row)

    def person(user: Any, item_id: str, role: str) -> str:
        """A username, else the name an import recorded for someone with no account here."""
        return _username(user) or recorded.get(item_id, {}).get(role, "")

    names = {c.pk: c.name for c in row.characters.all()}
    clue_keys = {c.pk: c.key for c in row.clues.all()}
    chains = list(m.ReasoningChain.objects.filter(game=row).select_related("author", "reviewer").prefetch_related(
        Prefetch("nodes", queryset=m.ChainNode.objects.prefetch_related("parents", "evidence"))))
    node_keys = {n.pk: n.key for chain in chains for n in chain.nodes.all()}
    relationships = list(m.Relationship.objects.filter(game=row).select_related("author", "reviewer")
                         .prefetch_related("evidence"))
    questions = list(m.Question.objects.filter(game=row).select_related("author", "reviewer")
                     .prefetch_related("options", "evidence"))
    approved_at = dict(AuditEntry.objects.filter(game=row, item_type="question", action="approve")
                       .order_by("at", "id").values_list("item_id", "at"))

    citations: dict[int, list[str]] = {}
    for i, r in enumerate(relationships, 1):
        for s in r.evidence.all():
            citations.setdefault(s.pk, []).append(f"r{i}")
    for c, chain in enumerate(chains, 1):
        for node in chain.nodes.all():
            for s in node.evidence.all():
                citations.setdefault(s.pk, []).append(f"ch{c}/{node.key}")
    for i, q in enumerate(questions, 1):
        for s in q.evidence.all():
            citations.setdefault(s.pk, []).append(f"q{i}")

    def span_owner(s: m.EvidenceSpan) -> str:
        return names.get(s.character_id, "") if s.character_id else clue_keys.get(s.clue_id, "")

    def span_key(s: m.EvidenceSpan) -> tuple:
        return (s.document, span_owner(s), s.start, s.end, s.quote, s.label, s.state, sorted(citations.get(s.pk, [])))

    # Ties (equal spans cited by the same items) keep creation order, which an import reproduces.
    spans = sorted(m.EvidenceSpan.objects.filter(game=row).select_related("created_by").order_by("pk"), key=span_key)
    span_ids = {s.pk: f"s{i}" for i, s in enumerate(spans, 1)}

    def evidence(items) -> list[str]:
        return sorted((span_ids[s.pk] for s in items), key=lambda sid: int(sid[1:]))

    def review(item: m.ReviewedItem, item_id: str, when: Any = None) -> dict[str, Any]:
        return {
            "status": item.status,
            "author": person(item.author, item_id, "author"),
            "reviewer": person(item.reviewer, item_id, "reviewer"),
            "reject_reason": item.reject_reason,
            "approved_at": when.isoformat() if when is not None else recorded.get(item_id, {}).get("approved_at", ""),
        }

    images: dict[str, bytes] = {}
    clues = []
    for clue in game.clues:
        path = ""
        if clue.data is not None:
            path = image_path(clue.sha256, clue.filename, clue.media_type)
            images[path] = clue.data
        clues.append({
            "key": clue.key, "kind": clue.kind, "title": clue.title, "text": clue.text, "owner": clue.owner,
            "filename": clue.filename, "media_type": clue.media_type, "image_kind": clue.image_kind,
            "ocr_text": clue.ocr_text, "image": path, "sha256": clue.sha256 if clue.data is not None else "",
            "extra": ix.pack_key_order(clue.extra),
        })

    data: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "game": {
            "slug": game.slug, "title": game.title, "title_note": game.title_note, "language": game.language,
            "origin": game.origin, "counterpart": game.counterpart, "victims": game.victims,
            "truth": {"text": game.truth.text, "motive": game.truth.motive, "method": game.truth.method},
            "public_clue_text": game.public_clue_text, "task_prompts": game.task_prompts,
            "targets": row.targets or {}, "extra": ix.pack_key_order(game.extra),
            "import_report": [ix.asdict(p) for p in game.report],
        },
        "characters": [
            {"name": c.name, "aliases": c.aliases, "playable": c.playable, "script": c.script, "goals": c.goals,
             "self_intro": c.self_intro, "fixed_answer": c.fixed_answer, "is_murderer": c.is_murderer,
             "is_victim": c.is_victim, "key_role": c.key_role, "extra": ix.pack_key_order(c.extra)}
            for c in game.characters
        ],
        "kills": [{"killer": k.killer, "victim": k.victim} for k in game.kills],
        "clues": clues,
        "spans": [
            {"id": span_ids[s.pk], "document": s.document, "owner": span_owner(s), "start": s.start, "end": s.end,
             "quote": s.quote, "label": s.label, "state": s.state,
             "created_by": person(s.created_by, span_ids[s.pk], "created_by")}
            for s in spans
        ],
        "relationships": [
            {"id": f"r{i}", "source": names[r.source_id], "target": names[r.target_id], "labels": list(r.labels),
             "note": r.note, "evidence": evidence(r.evidence.all()), "review": review(r, f"r{i}")}
            for i, r in enumerate(relationships, 1)
        ],
        "chains": [
            {"id": f"ch{c}", "goal": chain.goal, "title": chain.title, "review": review(chain, f"ch{c}"),
             "nodes": [
                 {"key": n.key, "kind": n.kind, "text": n.text, "parents": [p.key for p in n.parents.all()],
                  "level": n.level, "knowledge": n.knowledge, "image_clue": clue_keys.get(n.image_clue_id, ""),
                  "evidence": evidence(n.evidence.all()), "extra": packed(n.extra)}
                 for n in chain.nodes.all()
             ]}
            for c, chain in enumerate(chains, 1)
        ],
        "key_statements": [{"owner": k.owner, "text": k.text, "node": k.node} for k in game.key_statements],
        "questions": [_question(q, f"q{i}", names, clue_keys, node_keys, evidence, review(q, f"q{i}", approved_at.get(q.pk)))
                      for i, q in enumerate(questions, 1)],
        "workflow": _workflow(row, person, {"question": [q.pk for q in questions],
                                            "relationship": [r.pk for r in relationships],
                                            "reasoningchain": [c.pk for c in chains]}, recorded),
        "sessions": _sessions(row, person),
        "synthesis": _synthesis(row, person),
        "audit": summary_of(row),
    }
    return GameDocument(data, images)


def _question(q: m.Question, qid: str, names, clue_keys, node_keys, evidence, review: dict) -> dict[str, Any]:
    return {
        "id": qid, "kind": q.kind, "sub_type": q.sub_type, "stem": q.stem, "answer": q.answer, "multi": q.multi,
        "weight": q.weight, "perspective": names.get(q.perspective_id, ""),
        "image_clue": clue_keys.get(q.image_clue_id, ""), "chain_node": node_keys.get(q.chain_node_id, ""),
        "level": q.level, "source": q.source, "raw": q.raw, "provenance": dict(q.provenance or {}),
        "extra": packed(q.extra), "evidence": evidence(q.evidence.all()), "review": review,
        "options": [
            {"text": o.text, "correct": o.is_correct, "origin": o.origin, "model": o.model_name, "review": o.review}
            for o in q.options.all()
        ],
    }


ITEM_PREFIX = {"question": "q", "relationship": "r", "reasoningchain": "ch"}


def _workflow(row: m.Game, person, pks: dict[str, list[int]], recorded: dict[str, Any]) -> dict[str, list]:
    """Review comments, blind validation answers and per-annotator relationship labels (the ``review``
    app, when installed), tied to items by document id. Answers and labels of people with no account
    here cannot be rows; an import keeps them in its audit entry and they are exported from there."""
    out: dict[str, list] = {"comments": [], "validations": [], "label_judgements": []}
    if not apps.is_installed("review"):
        return out
    Comment, ValidationAnswer, LabelJudgement = (apps.get_model("review", name)
                                                 for name in ("Comment", "ValidationAnswer", "LabelJudgement"))
    ids = {(kind, pk): f"{ITEM_PREFIX[kind]}{i}" for kind, items in pks.items() for i, pk in enumerate(items, 1)}
    comments = Comment.objects.filter(game=row).select_related("author").order_by("created_at", "id")
    for comment in comments:
        item = ids.get((comment.item_type, comment.item_id))
        if item is not None:  # comments on deleted items stay behind
            n = len(out["comments"]) + 1
            out["comments"].append({"item": item, "author": person(comment.author, f"comment{n}", "author"),
                                    "text": comment.text, "system": comment.system})
    for v in ValidationAnswer.objects.filter(question__game=row).select_related("validator"):
        out["validations"].append({"question": ids[("question", v.question_id)], "validator": v.validator.get_username(),
                                   "letters": v.letters, "key": v.key, "agrees": v.agrees,
                                   "question_version": v.question_version})
    for j in LabelJudgement.objects.filter(game=row).select_related("annotator", "source", "target"):
        out["label_judgements"].append({"annotator": j.annotator.get_username(), "source": j.source.name,
                                        "target": j.target.name, "labels": list(j.labels)})
    unplaced = recorded.get("_unplaced", {})
    out["validations"] += unplaced.get("validations", [])
    out["label_judgements"] += unplaced.get("label_judgements", [])
    out["validations"].sort(key=lambda v: (int(v["question"][1:]), v["validator"], v["question_version"]))
    out["label_judgements"].sort(key=lambda j: (j["source"], j["target"], j["annotator"]))
    return out


def _sessions(row: m.Game, person) -> list[dict[str, Any]]:
    """Played sessions (the ``playlogs`` app, when installed): players, turns, turn annotations."""
    if not apps.is_installed("playlogs"):
        return []
    Session = apps.get_model("playlogs", "Session")
    TurnAnnotation = apps.get_model("playlogs", "TurnAnnotation")
    out = []
    sessions = Session.objects.filter(game=row).order_by("id").prefetch_related("players__character", "turns")
    notes: dict[int, list] = {}
    for a in (TurnAnnotation.objects.filter(game=row).select_related("annotator", "author", "reviewer")
              .order_by("turn_id", "id")):
        notes.setdefault(a.turn_id, []).append(a)
    for n, session in enumerate(sessions, 1):
        players = {p.pk: p.name for p in session.players.all()}
        out.append({
            "title": session.title, "session_type": session.session_type, "source_format": session.source_format,
            "source_name": session.source_name, "extra": dict(session.extra or {}),
            "players": [{"name": p.name, "character": p.character.name if p.character else "",
                         "true_role": p.true_role} for p in session.players.all()],
            "turns": [
                {"index": t.index, "speaker": players.get(t.speaker_id, ""), "speaker_label": t.speaker_label,
                 "text": t.text, "phase": t.phase, "visible_to": list(t.visible_to or []), "timestamp": t.timestamp,
                 "extra": dict(t.extra or {}),
                 "annotations": [
                     {"annotator": person(a.annotator, f"session{n}/turn{t.index}/{j}", "annotator"),
                      "source": a.source, "triplets": a.triplets, "face": a.face, "tone": a.tone,
                      "suspicions": a.suspicions, "extra": dict(a.extra or {}),
                      "review": {"status": a.status,
                                 "author": person(a.author, f"session{n}/turn{t.index}/{j}", "author"),
                                 "reviewer": person(a.reviewer, f"session{n}/turn{t.index}/{j}", "reviewer"),
                                 "reject_reason": a.reject_reason, "approved_at": ""}}
                     for j, a in enumerate(notes.get(t.pk, []), 1)
                 ]}
                for t in session.turns.all()
            ],
        })
    return out


RUN_FIELDS = ("state", "settings", "outputs", "critic_rounds", "checks", "usage", "failure")
RECORD_FIELDS = ("stage", "key", "round", "messages", "model", "params", "reply", "parsed", "problems", "usage",
                 "cost", "ok", "error", "seconds")


def _synthesis(row: m.Game, person) -> list[dict[str, Any]]:
    """Synthesis provenance (the ``synthesis`` app, when installed): each run and every request it made."""
    if not apps.is_installed("synthesis"):
        return []
    SynthesisRun = apps.get_model("synthesis", "SynthesisRun")
    out = []
    runs = SynthesisRun.objects.filter(game=row).select_related("user").prefetch_related("records").order_by("id")
    for n, run in enumerate(runs, 1):
        entry = {f: getattr(run, f) for f in RUN_FIELDS}
        entry["user"] = person(run.user, f"synthesis{n}", "user")
        entry["records"] = [{f: getattr(r, f) for f in RECORD_FIELDS} for r in run.records.order_by("id")]
        out.append(entry)
    return out


__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "DOCUMENT_NAME", "GameDocument", "build_document", "image_path",
           "IMPORT_ACTION"]
