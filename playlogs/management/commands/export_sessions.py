"""``manage.py export_sessions --out DIR``: sessions as JSONL per turn (with Eq. 15 belief matrices)
and in the ONUW log layout."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Game
from annotate.services import permissions
from playlogs.export import write_sessions
from playlogs.models import Session


class Command(BaseCommand):
    help = "Export played sessions: OUT/<game>/session-<id>.jsonl (one row per turn) and .onuw.json."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument("--game", nargs="+", default=[], metavar="SLUG", help="only these games")
        parser.add_argument("--session", nargs="+", type=int, default=[], metavar="ID", help="only these sessions")
        parser.add_argument("--include-drafts", action="store_true",
                            help="use unreviewed annotations where no approved or imported one exists")
        parser.add_argument("--as", dest="as_user", default="", help="check that this user manages every exported game")

    def handle(self, *args, out: Path, game: list[str], session: list[int], include_drafts: bool, as_user: str,
               **opts) -> None:
        sessions = Session.objects.select_related("game").order_by("game__slug", "id")
        if game:
            known = set(Game.objects.filter(slug__in=game).values_list("slug", flat=True))
            if missing := [g for g in game if g not in known]:
                raise CommandError(f"No game with slug {', '.join(missing)}.")
            sessions = sessions.filter(game__slug__in=game)
        if session:
            sessions = sessions.filter(pk__in=session)
        sessions = list(sessions)
        if not sessions:
            raise CommandError("No session matches; import one with manage.py import_session.")
        for g in {s.game for s in sessions}:
            permissions.command_user(as_user, g, "export")
        files = write_sessions(sessions, out, include_drafts)
        self.stdout.write(f"Exported {len(sessions)} sessions ({len(files)} files) to {out.resolve()}")
