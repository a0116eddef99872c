"""Helpers shared by the generation commands."""
from __future__ import annotations

from django.core.management.base import CommandError

from annotate.loader import resolve_game
from annotate.models import Game
from casebook.interchange import QuestionKind

KIND_CHOICES = [k.value for k in QuestionKind]


def game_or_error(slug: str) -> Game:
    """The game by DB slug or published id, or a CommandError naming a few that exist."""
    try:
        return resolve_game(slug)
    except Game.DoesNotExist:
        known = ", ".join(Game.objects.order_by("slug").values_list("slug", flat=True)[:10]) or "none imported yet"
        raise CommandError(f"no game '{slug}' (known: {known})") from None
