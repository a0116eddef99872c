"""Helpers shared by the views."""
from __future__ import annotations

from django.db.models import QuerySet

from annotate.models import EvidenceSpan, Game


def game_spans(game: Game) -> QuerySet[EvidenceSpan]:
    """All spans of a game with the owner names loaded (one query), for evidence pickers."""
    return EvidenceSpan.objects.filter(game=game).select_related("character", "clue").only(
        "id", "document", "start", "end", "quote", "character__name", "clue__key", "clue__title"
    )
