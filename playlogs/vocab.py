"""Vocabularies per session type (multimind.md §2–3): roles, the action set of the stance
triplets, the role whose suspicion the belief matrix counts, and the 8 emotion labels.

A session type is plain data so that readers, the annotation page, the LLM prompt, exports and
the evaluation all use one list. Labels are compared after removing whitespace and lower-casing
(as the ONUW repository does); an unknown emotion maps to ``other``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

EMOTIONS = ("sad", "anger", "neutral", "happy", "surprise", "fear", "disgust", "other")
EMOTION_LABELS_ZH = {"sad": "悲伤", "anger": "愤怒", "neutral": "平静", "happy": "高兴", "surprise": "惊讶",
                     "fear": "恐惧", "disgust": "厌恶", "other": "其他"}


@dataclass(frozen=True)
class SessionType:
    key: str
    title: str
    roles: tuple[str, ...]
    actions: tuple[str, ...]
    suspect_role: str  # the role a suspicion set is about (Eq. 15): werewolf / murderer
    note: str = ""


ONUW_ROLES = ("Werewolf", "Villager", "Seer", "Troublemaker", "Robber", "Insomniac")
SESSION_TYPES: dict[str, SessionType] = {t.key: t for t in (
    SessionType("onuw", "One Night Ultimate Werewolf (MultiMind training data, 8 actions)", ONUW_ROLES,
                ("point_as_werewolf", "point_as_villager", "point_as_seer", "point_as_troublemaker",
                 "point_as_robber", "point_as_insomniac", "support", "oppose"), "werewolf"),
    SessionType("onuw-paper", "One Night Ultimate Werewolf (MultiMind paper, 7 predicates)", ONUW_ROLES[:5],
                ("support", "suspect", "accuse_as_werewolf", "accuse_as_villager", "accuse_as_seer",
                 "accuse_as_troublemaker", "accuse_as_robber"), "werewolf"),
    SessionType("jubensha", "Murder mystery game (剧本杀)", ("murderer", "detective"),
                ("support", "suspect", "accuse_as_murderer"), "murderer",
                note="the game's characters are the players; the murderer's true role is 'murderer'"),
)}
DEFAULT_TYPE = "jubensha"


def session_type(key: str) -> SessionType:
    try:
        return SESSION_TYPES[key]
    except KeyError:
        raise ValueError(f"unknown session type {key!r}; choose {', '.join(SESSION_TYPES)}") from None


def fold(label: str) -> str:
    """Labels compare without whitespace and case (the ONUW repository's rule)."""
    return re.sub(r"\s+", "", label or "").lower()


def normalize_emotion(label: str | None) -> str:
    """One of :data:`EMOTIONS`; empty stays empty, 'angry' reads as 'anger', unknown → 'other'."""
    key = fold(label or "")
    if not key:
        return ""
    if key == "angry":
        return "anger"
    return key if key in EMOTIONS else "other"


def normalize_action(label: str, stype: SessionType) -> str | None:
    """The action as spelled in the session type's set (spaces/underscores/case ignored), else None."""
    key = fold(label).replace("_", "")
    for action in stype.actions:
        if action.replace("_", "") == key:
            return action
    return None
