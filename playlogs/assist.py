"""Suggestions for one turn — triplets, face/tone and suspicion sets — from the configured LLM
(``casebook.llm.LLMClient``, structured output) or, with no endpoint, from offline heuristics:
player names mentioned in the turn plus stance cue words in Chinese and English. A suggestion is
never saved by itself: the page fills the form and the annotator accepts, edits or rejects it.
"""
from __future__ import annotations

import re
from typing import Any

from .models import Turn
from .vocab import EMOTIONS, SessionType

# Stance cue words; negated accusations are checked first ("不是凶手" is support).
CUES = {
    "support": ("不是凶手", "不是狼", "清白", "相信", "支持", "同意", "信任", "好人", "not the murderer", "not a werewolf",
                "innocent", "trust", "support", "agree", "believe"),
    "accuse": ("是凶手", "凶手是", "是狼", "狼人", "杀了", "murderer", "werewolf", "killer", "killed", "guilty"),
    "oppose": ("撒谎", "说谎", "骗", "胡说", "不对", "lie", "lying", "liar", "wrong", "nonsense"),
    "suspect": ("怀疑", "可疑", "嫌疑", "不可信", "suspect", "suspicious", "doubt"),
}
_CLAUSE = re.compile(r"[。！？!?;；\n]+|(?<=[a-z])\.\s")
_PREFERENCE = {  # stance -> the session type's actions that express it, best first
    "accuse": ("accuse_as_murderer", "point_as_werewolf", "accuse_as_werewolf", "suspect"),
    "suspect": ("suspect", "point_as_werewolf", "accuse_as_werewolf", "oppose"),
    "oppose": ("oppose", "suspect"),
    "support": ("support",),
}


def _action(stype: SessionType, stance: str) -> str | None:
    return next((a for a in _PREFERENCE[stance] if a in stype.actions), None)


def _stance(clause: str) -> str | None:
    low = clause.lower()
    for stance in ("support", "accuse", "oppose", "suspect"):
        if any(cue in low for cue in CUES[stance]):
            return stance
    return None


def heuristic_suggestion(turn: Turn, previous: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Offline proposal: each clause naming a player and carrying a cue word gives one triplet;
    accusing/suspecting adds the player to the speaker's suspect set, supporting removes them."""
    session = turn.session
    stype = session.vocabulary
    speaker = turn.speaker.name if turn.speaker else None
    spellings: dict[str, str] = {}
    for player in session.players.select_related("character"):
        spellings[player.name] = player.name
        if player.character:
            spellings[player.character.name] = player.name
            for alias in player.character.aliases or []:
                spellings[alias] = player.name
    triplets: list[list[str]] = []
    suspects = list((previous or {}).get(speaker, [])) if speaker else []
    stances = []
    for clause in _CLAUSE.split(turn.text):
        stance = _stance(clause)
        if stance is None:
            continue
        stances.append(stance)
        low = clause.lower()
        named = {spellings[w] for w in sorted(spellings, key=len, reverse=True) if w.lower() in low}
        for target in sorted(named):
            action = _action(stype, stance)
            if speaker is None or action is None or (target == speaker and stance != "support"):
                continue
            if [speaker, action, target] not in triplets:
                triplets.append([speaker, action, target])
            if stance in ("accuse", "suspect") and target not in suspects:
                suspects.append(target)
            if stance == "support" and target in suspects:
                suspects.remove(target)
    exclaim = "!" in turn.text or "！" in turn.text
    face = "anger" if exclaim and {"accuse", "oppose"} & set(stances) else ("surprise" if exclaim else "neutral")
    suspicions = {speaker: suspects} if speaker else {}
    return {"triplets": triplets, "face": face, "tone": face, "suspicions": suspicions, "source": "heuristic"}


SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["triplets", "face", "tone", "suspicions"],
    "properties": {
        "triplets": {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                                 "required": ["action", "object"],
                                                 "properties": {"action": {"type": "string"}, "object": {"type": "string"}}}},
        "face": {"type": "string", "enum": list(EMOTIONS)},
        "tone": {"type": "string", "enum": list(EMOTIONS)},
        "suspicions": {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                                   "required": ["player", "suspects"],
                                                   "properties": {"player": {"type": "string"},
                                                                  "suspects": {"type": "array", "items": {"type": "string"}}}}},
    },
}


def llm_messages(turn: Turn, context_turns: int = 6) -> list[dict[str, str]]:
    session = turn.session
    stype = session.vocabulary
    names = session.player_names()
    earlier = session.turns.filter(index__lt=turn.index, index__gte=turn.index - context_turns).select_related("speaker")
    history = "\n".join(f"{t.speaker_label}: {t.text}" for t in earlier)
    system = ("You annotate played social-deduction / murder-mystery games for theory-of-mind research. "
              "你为剧本杀/狼人杀对局做心智理论标注。Reply with JSON only.")
    user = (f"Players: {', '.join(names)}\nAllowed actions: {', '.join(stype.actions)}\n"
            f"Emotion labels: {', '.join(EMOTIONS)}\nSuspected role: {stype.suspect_role}\n\n"
            f"Earlier turns:\n{history or '(none)'}\n\nCurrent turn — {turn.speaker_label}: {turn.text}\n\n"
            "Give the stance triplets of the current turn (the subject is always the speaker; give action and object), "
            "the speaker's likely facial expression and tone, and for every player the players they suspect "
            f"of being the {stype.suspect_role} after this turn.")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def llm_context(turn: Turn) -> dict[str, Any]:
    """Everything the LLM call needs, read from the database up front (so calls can run in threads)."""
    session = turn.session
    return {"messages": llm_messages(turn), "names": set(session.player_names()),
            "actions": set(session.vocabulary.actions), "speaker": turn.speaker.name if turn.speaker else None}


def llm_suggestion_from(context: dict[str, Any], client) -> dict[str, Any]:
    """Ask the endpoint; invalid pieces of the reply are dropped, never saved. No database access."""
    reply = client.chat_json(context["messages"], SCHEMA, name="turn_annotation")
    names, actions, speaker = context["names"], context["actions"], context["speaker"]
    reply = reply if isinstance(reply, dict) else {}
    triplets = [[speaker, t.get("action"), t.get("object")] for t in reply.get("triplets") or [] if isinstance(t, dict)
                and speaker and t.get("action") in actions and t.get("object") in names]
    suspicions = {s["player"]: [x for x in s.get("suspects") or [] if x in names]
                  for s in reply.get("suspicions") or [] if isinstance(s, dict) and s.get("player") in names}
    emotion = {k: reply.get(k) if reply.get(k) in EMOTIONS else "" for k in ("face", "tone")}
    return {"triplets": triplets, **emotion, "suspicions": suspicions, "source": "llm", "model": client.model}


def llm_suggestion(turn: Turn, client=None) -> dict[str, Any]:
    """The configured LLM's proposal for one turn."""
    from casebook.llm import LLMClient

    return llm_suggestion_from(llm_context(turn), client or LLMClient())


def suggest(turn: Turn, previous: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The LLM's proposal when an endpoint is configured, else (or when it fails) the heuristic one."""
    from casebook.llm import LLMError, LLMSettings

    settings = LLMSettings.from_settings()
    if settings.configured:
        try:
            return llm_suggestion(turn)
        except LLMError as exc:
            fallback = heuristic_suggestion(turn, previous)
            fallback["note"] = f"LLM unavailable ({exc}); offline suggestion shown"
            return fallback
    return heuristic_suggestion(turn, previous)
