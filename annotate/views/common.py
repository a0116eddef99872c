"""Helpers shared by the views."""
from __future__ import annotations

from django.db.models import QuerySet

from annotate.models import EvidenceSpan, Game
from casebook.models import AuditEntry


def game_spans(game: Game) -> QuerySet[EvidenceSpan]:
    """All spans of a game with the owner names loaded (one query), for evidence pickers."""
    return EvidenceSpan.objects.filter(game=game).select_related("character", "clue").only(
        "id", "document", "start", "end", "quote", "character__name", "clue__key", "clue__title"
    )


def conflict_context(current, pairs: list[tuple[str, object, object]], reload_url: str) -> dict:
    """What the one conflict screen (``annotate/_conflict.html``) shows: the saved version beside
    the user's (kept in the form), each field marked when the two differ, and who saved it."""
    last = (AuditEntry.objects.filter(item_type=current._meta.model_name, item_id=current.pk)
            .select_related("user").order_by("-at", "-id").first())
    saved_by = last.user if last and last.user else getattr(current, "author", None)
    rows = [{"field": name, "saved": saved, "mine": mine, "differs": saved != mine} for name, saved, mine in pairs]
    return {"conflict": current, "saved_by": saved_by, "conflict_rows": rows, "reload_url": reload_url}
