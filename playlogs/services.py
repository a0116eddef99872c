"""Writing annotations: validation against the session's vocabulary, roles, version checks, audit
and review states — the same rules as questions, chains and relationships (annotate.services.permissions,
annotate.services.states, the audit trail)."""
from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F

from annotate.services import permissions, snapshots, states
from casebook.interchange import Status

from .models import Turn, TurnAnnotation
from .vocab import EMOTIONS, normalize_action


class AnnotationError(ValueError):
    """Bad annotation input; the message is for the annotator."""


class StaleAnnotation(AnnotationError):
    """The annotation changed (or vanished) since the page was loaded."""


def clean(turn: Turn, data: dict[str, Any]) -> dict[str, Any]:
    """Validated fields from posted data; raises AnnotationError listing every problem."""
    session = turn.session
    stype = session.vocabulary
    names = session.player_names()
    speaker = turn.speaker.name if turn.speaker else None
    problems: list[str] = []
    triplets = []
    for triple in data.get("triplets") or []:
        if not (isinstance(triple, (list, tuple)) and len(triple) == 3):
            problems.append(f"a triplet must be [speaker, action, object], got {triple!r}")
            continue
        subject, action, obj = (str(x) for x in triple)
        action_key = normalize_action(action, stype)
        if action_key is None:
            problems.append(f"action {action!r} is not one of: {', '.join(stype.actions)}")
        if subject != speaker:
            problems.append(f"the subject of a triplet is the speaker ({speaker or 'unknown'}), not {subject!r}")
        if obj not in names:
            problems.append(f"{obj!r} is not a player of this session")
        triplets.append([subject, action_key or action, obj])
    emotions = {}
    for key in ("face", "tone"):
        value = (data.get(key) or "").strip()
        if value and value not in EMOTIONS:
            problems.append(f"{key} {value!r} is not one of: {', '.join(EMOTIONS)}")
        emotions[key] = value
    suspicions = {}
    for who, suspects in (data.get("suspicions") or {}).items():
        if who not in names or not isinstance(suspects, list) or any(s not in names for s in suspects):
            problems.append(f"suspicions of {who!r} must name players of this session")
            continue
        suspicions[who] = sorted(set(suspects), key=names.index)
    if problems:
        raise AnnotationError("; ".join(problems))
    return {"triplets": triplets, **emotions, "suspicions": suspicions}


@transaction.atomic
def save_annotation(turn: Turn, user, data: dict[str, Any], *, expected_version: int | None,
                    source: str = TurnAnnotation.Source.HUMAN) -> TurnAnnotation:
    """Create or update ``user``'s annotation of ``turn``. ``expected_version`` is the version the
    page was loaded with (None = the page had none yet); a mismatch refuses the save."""
    game = turn.session.game
    permissions.require(user, game, "create")
    fields = clean(turn, data)
    mine = TurnAnnotation.objects.select_for_update().filter(turn=turn, annotator=user).first()
    if mine is None:
        if expected_version is not None:
            raise StaleAnnotation("Your annotation of this turn was deleted meanwhile; reload the page.")
        try:
            with transaction.atomic():  # another tab may create it at the same moment
                mine = TurnAnnotation.objects.create(game=game, turn=turn, annotator=user, author=user, source=source,
                                                     **fields)
        except IntegrityError:
            raise StaleAnnotation("You already annotated this turn in another window; reload the page.") from None
        snapshots.record_change(game, user, mine, "create", None)
        return mine
    if expected_version != mine.version:
        raise StaleAnnotation(f"This annotation was changed elsewhere (now version {mine.version}); reload and look again.")
    permissions.require(user, game, "edit", mine)
    before = snapshots.snapshot_item(mine)
    for key, value in fields.items():
        setattr(mine, key, value)
    mine.source = source
    mine.version = F("version") + 1
    mine.save()
    mine.refresh_from_db()
    snapshots.record_change(game, user, mine, "edit", before)
    return mine


def transition(annotation: TurnAnnotation, action: str, user, *, reason: str = "",
               expected_version: int | None = None) -> TurnAnnotation:
    """Submit / withdraw / approve / reject / reopen: the review state machine, as for every reviewed item."""
    return states.transition(annotation, action, user, reason=reason, expected_version=expected_version)


def is_editable(annotation: TurnAnnotation | None) -> bool:
    return annotation is None or annotation.status in (Status.DRAFT, Status.REJECTED)
