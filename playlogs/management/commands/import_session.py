"""``manage.py import_session PATH --format onuw|whodunitbench|csv|jsonl``: import a played game."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Game
from annotate.services import permissions
from playlogs.importer import import_session
from playlogs.readers import FORMATS, LogError, read_log
from playlogs.vocab import SESSION_TYPES


class Command(BaseCommand):
    help = "Import a played game log as a session (all of it or, on any error, nothing)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path, help="log file, or a WhodunitBench game folder")
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("--game", default="", help="slug of the game played (default: its own played-only game)")
        parser.add_argument("--type", dest="type_key", default=None, choices=list(SESSION_TYPES),
                            help="session type / vocabulary (default: onuw for ONUW logs, else jubensha)")
        parser.add_argument("--title", default="")
        parser.add_argument("--run", type=int, default=1, help="WhodunitBench: 1 = Agent_*.json, 2 = Agent_*1.json")
        parser.add_argument("--language", default="zh", choices=["zh", "en"], help="language of a new played-only game")
        parser.add_argument("--as", dest="as_user", default="", help="check that this user may create items in --game")

    def handle(self, *args, path: Path, format: str, game: str, type_key: str | None, title: str, run: int,
               language: str, as_user: str, **opts) -> None:
        target = None
        if game:
            target = Game.objects.filter(slug=game).first()
            if target is None:
                raise CommandError(f"No game with slug {game!r}.")
            permissions.command_user(as_user, target, "create")
        if not path.exists():
            raise CommandError(f"{path} does not exist.")
        parsed = read_log(path, format, title=title, type_key=type_key, run=run)
        try:
            session = import_session(parsed, game=target, language=language)
        except LogError as exc:
            raise CommandError("nothing was imported; fix these problems first:\n  " + "\n  ".join(exc.errors)) from exc
        for warning in parsed.warnings:
            self.stderr.write(f"warning: {warning}")
        annotated = session.turns.filter(annotations__isnull=False).distinct().count()
        self.stdout.write(f"Imported session #{session.pk} {session.title!r} into /g/{session.game.slug}/sessions/"
                          f"{session.pk}/: {session.players.count()} players, {session.turns.count()} turns, "
                          f"{annotated} with imported annotations.")
