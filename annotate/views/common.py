"""Helpers shared by the views."""
from __future__ import annotations

from django.db.models import QuerySet

from annotate.models import Draft, EvidenceSpan, Game, Membership
from annotate.services import permissions
from casebook.interchange import Status
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


def locked_message(item, noun: str, user=None) -> str:
    """Why an editor is read-only for this user, and what to do about it (the same words everywhere)."""
    status = getattr(item, "status", "")
    if status == Status.SUBMITTED and user is not None and getattr(item, "author_id", None) == user.pk:
        return (f"You submitted this {noun}: it waits for a reviewer. To change it, withdraw it to a draft on its "
                "review page (“review & history”); your text is kept as a draft.")
    if status == Status.APPROVED:
        return (f"This {noun} is {status}: it changes only through review. Ask a reviewer to reopen "
                "it (“Request reopening” below); your text is kept as a draft.")
    if status == Status.SUBMITTED:
        return (f"This {noun} is submitted and waits for a reviewer: it changes only through review. Comment on "
                "its review page (“review & history”); your text is kept as a draft.")
    return f"Only its author or a reviewer may change this {noun}; your text is kept as a draft."


def keep_refused(user, game: Game, key: str, data: dict, version: int | None) -> None:
    """A refused save loses nothing: what the user typed becomes their server draft for ``key``."""
    Draft.objects.update_or_create(user=user, game=game, key=key[:100],
                                   defaults={"data": data, "base_version": version})


def kept_text(user, game: Game, key: str) -> dict | None:
    """The text a refused save kept for ``key`` (shown beside the editor until a save succeeds)."""
    found = Draft.objects.filter(user=user, game=game, key=key).only("data").first()
    return found.data if found and isinstance(found.data, dict) and found.data.get("kept") else None


def drop_kept(user, game: Game, key: str) -> None:
    Draft.objects.filter(user=user, game=game, key=key).delete()


def answer_key_context(user, game: Game, role: str) -> dict:
    """Whether this member may change the answer key (cast, kills, key statements, scripts) and, when
    not, whom to ask: the pages then show it read-only instead of forms whose save is refused."""
    if permissions.can(user, game, "ground_truth", role=role):
        return {"key_editable": True, "reviewers": []}
    reviewers = (Membership.objects.filter(game=game, role__in=[Membership.Role.REVIEWER, Membership.Role.MANAGER])
                 .order_by("user__username").values_list("user__username", flat=True))
    return {"key_editable": False, "reviewers": list(reviewers)}
