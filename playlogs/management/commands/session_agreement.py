"""``python manage.py session_agreement GAME``: agreement between annotators of played sessions
(triplet precision/recall/F1, face/tone kappa, identical suspicion sets); ``agreement --sessions``
prints the same."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Game
from annotate.services import permissions
from playlogs.agreement import session_agreement


class Command(BaseCommand):
    help = "Print agreement between annotators of the played sessions of a game."

    def add_arguments(self, parser) -> None:
        parser.add_argument("game", help="Game slug")
        parser.add_argument("--as", dest="as_user", default="",
                            help="Check that this user holds the reviewer role in the game (for shared servers).")

    def handle(self, *args, game: str, as_user: str = "", **opts) -> None:
        g = Game.objects.filter(slug=game).first()
        if g is None:
            raise CommandError(f"No game with slug {game!r}.")
        permissions.command_user(as_user, g, "agreement")
        self._report(g)

    def _report(self, game: Game) -> None:
        def pct(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.1%}"

        self.stdout.write(f"Played-session agreement for {game.title} [{game.slug}]")
        pairs = session_agreement(game)
        if not pairs:
            self.stdout.write("  no turn annotated by two annotators yet")
        for p in pairs:
            self.stdout.write(f"\n{p.first} (reference) vs {p.second}: {p.turns} turns annotated by both")
            self.stdout.write(f"  triplets: precision {pct(p.precision)}, recall {pct(p.recall)}, F1 {pct(p.f1)}")
            self.stdout.write(f"  face: {p.face if p.face else 'n/a (no turn labelled by both)'}")
            self.stdout.write(f"  tone: {p.tone if p.tone else 'n/a (no turn labelled by both)'}")
            self.stdout.write(f"  suspicion sets identical: {pct(p.suspicion_exact)}")
