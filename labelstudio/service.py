"""Entry points shared by the command, the background job and the views (no request objects)."""
from __future__ import annotations

import os

from annotate.models import Game

from .client import LabelStudioClient, LabelStudioError
from .pull import Progress, PullReport, pull_game
from .push import PushReport, push_game


class GameNotFound(LookupError):
    """GAME names no game, or several."""


def find_game(ident: str) -> Game:
    """The game whose slug or source_id is ``ident`` (slug first)."""
    ident = (ident or "").strip()
    game = Game.objects.filter(slug=ident).first()
    if game is not None:
        return game
    matches = list(Game.objects.filter(source_id=ident).order_by("slug"))
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise GameNotFound(f"{ident!r} is the source id of {len(matches)} games ({', '.join(g.slug for g in matches)}); "
                           "give the slug instead")
    raise GameNotFound(f"no game with slug or source id {ident!r}")


def connection(url: str | None, token: str | None) -> LabelStudioClient:
    """A client from explicit values, else CASEBOOK_LABELSTUDIO_URL / _TOKEN (or LABEL_STUDIO_API_KEY)."""
    url = url or os.environ.get("CASEBOOK_LABELSTUDIO_URL", "")
    token = token or os.environ.get("CASEBOOK_LABELSTUDIO_TOKEN", "") or os.environ.get("LABEL_STUDIO_API_KEY", "")
    if not url:
        raise LabelStudioError("Give the Label Studio URL (--url or CASEBOOK_LABELSTUDIO_URL).", kind="bad_request")
    return LabelStudioClient(url, token)


def push(game: Game, url: str | None, token: str | None, *, kinds=None, progress: Progress | None = None) -> PushReport:
    return push_game(game, connection(url, token), kinds=kinds, progress=progress)


def pull(game: Game, url: str | None, token: str | None, *, user=None, progress: Progress | None = None,
         keep_deleted: bool = False) -> PullReport:
    return pull_game(game, connection(url, token), user=user, progress=progress, keep_deleted=keep_deleted)
