"""Write a parsed log into the database in one transaction: all of it, or nothing.

Where the session's game comes from: ``game`` when given; for a WhodunitBench folder, the game
imported from that folder (``source_id`` = folder name) when there is one; otherwise a Game row of
its own marked ``extra["played_only"]`` (the home page of a scriptless session, e.g. ONUW), with a
Character per player so the usual members/roles and pages apply.
"""
from __future__ import annotations

from django.db import transaction
from django.utils.text import slugify

from annotate.models import Character, Game
from casebook.interchange import Origin, name_key

from .models import Player, Session, Turn, TurnAnnotation
from .readers import LogError, ParsedSession
from .vocab import session_type


def _unique_slug(base: str) -> str:
    base = slugify(base, allow_unicode=True)[:180] or "session"
    slug, n = base, 2
    while Game.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


def _check(parsed: ParsedSession) -> None:
    """Cross-field checks that need the whole log: triplet objects and suspects must be players."""
    stype = session_type(parsed.session_type)
    names = {p for p, _ in parsed.players}
    for i, turn in enumerate(parsed.turns, start=1):
        ann = turn.annotation
        if ann is None:
            continue
        for subject, action, obj in ann.triplets:
            if action not in stype.actions:
                parsed.errors.append(f"turn {i}: action {action!r} is not in the {stype.key} action set")
            if obj not in names or subject not in names:
                parsed.errors.append(f"turn {i}: triplet ({subject}, {action}, {obj}) names someone who is not a player")
        for who, suspects in ann.suspicions.items():
            unknown = [s for s in [who, *suspects] if s not in names]
            if unknown:
                parsed.errors.append(f"turn {i}: suspicion of {who} names non-players: {', '.join(unknown)}")


@transaction.atomic
def import_session(parsed: ParsedSession, *, game: Game | None = None, language: str = "zh") -> Session:
    """Create the session; raises :class:`LogError` with every problem and writes nothing."""
    if not parsed.errors:
        _check(parsed)
    if parsed.errors:
        raise LogError(parsed.errors)
    if game is None and parsed.source_format == "whodunitbench":
        game = Game.objects.filter(origin=Origin.WHODUNITBENCH, source_id=parsed.extra.get("folder")).first()
    if game is None:
        game = Game.objects.create(slug=_unique_slug(parsed.title), title=parsed.title, language=language,
                                   origin=Origin.MANUAL, extra={"played_only": True, "session_type": parsed.session_type})
        Character.objects.bulk_create([Character(game=game, name=name, position=k, is_murderer=role == "murderer",
                                                 extra={"true_role": role} if role else {})
                                       for k, (name, role) in enumerate(parsed.players)])
    characters = {name_key(c.name): c for c in game.characters.all()}
    for c in game.characters.all():
        for alias in c.aliases or []:
            characters.setdefault(name_key(alias), c)
    aliases = {name_key(a): name_key(r) for a, r in (parsed.extra.get("aliases") or {}).items()}
    session = Session.objects.create(game=game, title=parsed.title, session_type=parsed.session_type,
                                     source_format=parsed.source_format, source_name=parsed.extra.get("folder", parsed.title),
                                     extra={k: v for k, v in parsed.extra.items() if k != "aliases"})
    players = {}
    for k, (name, role) in enumerate(parsed.players):
        character = characters.get(name_key(name)) or characters.get(aliases.get(name_key(name), ""))
        players[name] = Player.objects.create(session=session, name=name, true_role=role, position=k, character=character)
    turns = Turn.objects.bulk_create([
        Turn(session=session, index=k, speaker=players.get(t.speaker) if t.speaker else None,
             speaker_label=t.speaker_label, text=t.text, phase=t.phase, visible_to=t.visible_to,
             timestamp=t.timestamp, extra=t.extra)
        for k, t in enumerate(parsed.turns)])
    TurnAnnotation.objects.bulk_create([
        TurnAnnotation(game=game, turn=row, source=TurnAnnotation.Source.IMPORTED, triplets=t.annotation.triplets,
                       face=t.annotation.face, tone=t.annotation.tone, suspicions=t.annotation.suspicions,
                       extra=t.annotation.extra)
        for row, t in zip(turns, parsed.turns, strict=True) if t.annotation is not None])
    return session
