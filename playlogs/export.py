"""Session exports: one JSONL row per turn with the derived belief matrix (Eq. 15), and the ONUW
log layout (``{"roles", "messages"}``) so MultiMind-style training code reads Casebook sessions.

Which annotation counts as ground truth for a turn: the most recently approved one; else the
labels imported with the log; with ``include_drafts``, else the latest annotation of anyone.
Suspicions carry forward: a player with no suspicion set recorded at a turn keeps the last one
(no set yet = suspects nobody = a uniform row).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from casebook.belief import belief_matrix, suspicion_toward
from casebook.interchange import Status

from .models import Session, TurnAnnotation


def gold_annotation(annotations: list[TurnAnnotation], include_drafts: bool = False) -> TurnAnnotation | None:
    approved = [a for a in annotations if a.status == Status.APPROVED and a.source != TurnAnnotation.Source.IMPORTED]
    if approved:
        return max(approved, key=lambda a: a.updated_at)
    imported = [a for a in annotations if a.source == TurnAnnotation.Source.IMPORTED]
    if imported:
        return imported[0]
    if include_drafts and annotations:
        return max(annotations, key=lambda a: a.updated_at)
    return None


def turn_rows(session: Session, include_drafts: bool = False) -> Iterator[dict[str, Any]]:
    """Every turn of the session with its ground-truth labels and the belief matrix after it."""
    players = list(session.players.all())
    names = [p.name for p in players]
    state: dict[str, list[str]] = {}
    turns = session.turns.select_related("speaker").prefetch_related("annotations__annotator")
    for turn in turns:
        gold = gold_annotation(list(turn.annotations.all()), include_drafts)
        if gold is not None:
            state.update({k: list(v) for k, v in gold.suspicions.items() if k in names})
        matrix = belief_matrix(names, state)
        yield {
            "game": session.game.slug, "session": session.pk, "session_title": session.title,
            "session_type": session.session_type, "turn": turn.index,
            "speaker": turn.speaker.name if turn.speaker else None, "speaker_label": turn.speaker_label,
            "text": turn.text, "phase": turn.phase, "log_turn": turn.extra.get("turn"),
            "visible_to": turn.visible_to, "timestamp": turn.timestamp,
            "players": names, "true_roles": {p.name: p.true_role for p in players},
            "triplets": gold.triplets if gold else [], "face": gold.face if gold else "", "tone": gold.tone if gold else "",
            "suspicions": {n: list(state.get(n, [])) for n in names},
            "belief_matrix": [[round(v, 6) for v in row] for row in matrix],
            "suspicion_toward": dict(zip(names, [round(v, 6) for v in suspicion_toward(matrix)], strict=True)),
            "annotation": None if gold is None else {"source": gold.source, "status": gold.status,
                                                     "annotator": gold.annotator.username if gold.annotator else None},
        }


def onuw_log(session: Session, include_drafts: bool = False) -> dict[str, Any]:
    """The ONUW log layout: guesses name the suspect role for suspects, 'not <role>' for the rest."""
    role = session.vocabulary.suspect_role
    role_name = role.capitalize()
    messages = []
    for row in turn_rows(session, include_drafts):
        guesses = {subject: {obj: (role_name if obj in row["suspicions"][subject] else f"Not{role_name}")
                             for obj in row["players"] if obj != subject} for subject in row["players"]}
        messages.append({
            "agent_name": row["speaker"] or row["speaker_label"], "content": row["text"],
            "turn": row["turn"] if row["log_turn"] is None else row["log_turn"],
            "tone": row["tone"], "face": row["face"], "sp_actions": row["triplets"] or None,
            "guesses": guesses if row["annotation"] else None, "timestamp": row["timestamp"],
            "visible_to": row["visible_to"] or "all", "msg_type": "text", "belief_matrix": row["belief_matrix"],
        })
    return {"roles": row["true_roles"] if messages else {}, "messages": messages}


def write_sessions(sessions: Iterable[Session], out: Path, include_drafts: bool = False) -> list[Path]:
    """``OUT/<game>/session-<id>.jsonl`` and ``…/session-<id>.onuw.json`` per session."""
    written = []
    for session in sessions:
        folder = Path(out) / session.game.slug
        folder.mkdir(parents=True, exist_ok=True)
        jsonl = folder / f"session-{session.pk}.jsonl"
        with jsonl.open("w", encoding="utf-8") as fh:
            for row in turn_rows(session, include_drafts):
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        onuw = folder / f"session-{session.pk}.onuw.json"
        onuw.write_text(json.dumps(onuw_log(session, include_drafts), ensure_ascii=False, indent=1), encoding="utf-8")
        written += [jsonl, onuw]
    return written
