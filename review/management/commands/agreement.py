"""``python manage.py agreement GAME``: kappas on relationship labels and blind-validation agreement."""
from __future__ import annotations

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Game
from annotate.services import permissions
from review import agreement


class Command(BaseCommand):
    help = "Print Cohen's / Fleiss' kappa on relationship labels and per-question blind-validation agreement."

    def add_arguments(self, parser) -> None:
        parser.add_argument("game", help="Game slug")
        parser.add_argument("--as", dest="as_user", default="",
                            help="Check that this user holds the reviewer role in the game (for shared servers).")
        parser.add_argument("--questions", action="store_true", help="List every validated question.")
        parser.add_argument("--sessions", action="store_true",
                            help="Played sessions instead: triplet precision/recall/F1, face/tone kappa, suspicion sets.")

    def handle(self, *args, game: str, as_user: str, questions: bool, sessions: bool = False, **opts) -> None:
        g = Game.objects.filter(slug=game).first()
        if g is None:
            raise CommandError(f"No game with slug {game!r}. Known slugs start with: "
                               + ", ".join(Game.objects.values_list("slug", flat=True)[:10]))
        permissions.command_user(as_user, g, "agreement")
        out = self.stdout
        if sessions:  # played sessions are the playlogs app's data: its command reports them
            call_command("session_agreement", g.slug, stdout=self.stdout)
            return
        out.write(f"Agreement for {g.title} [{g.slug}]")
        rel = agreement.relationship_agreement(g)
        out.write("\nRelationship labels")
        if rel is None:
            out.write("  fewer than two annotators have labelled pairs: no kappa")
        else:
            name = "Cohen's kappa" if rel.method == "cohen" else "Fleiss' kappa"
            out.write(f"  annotators: {', '.join(rel.raters)}")
            out.write(f"  pairs labelled by all: {rel.items} (left out, labelled by some only: {rel.partial})")
            out.write(f"  {name}: {rel.overall if rel.overall else 'n/a (no pair labelled by all)'}")
            for x, y, k in rel.pairwise:
                out.write(f"  Cohen's kappa {x} vs {y}: {k}")
        val = agreement.validation_agreement(g)
        out.write("\nBlind validation")
        if not val.answers:
            out.write("  no blind answers yet")
        else:
            out.write(f"  answers: {val.answers}, agreeing with the key: {val.agreeing} ({val.rate:.1%})")
            out.write(f"  questions validated: {len(val.questions)}, "
                      f"with a disagreement: {sum(1 for q in val.questions if q.agreeing < len(q.answers))}")
            if questions:
                for q in val.questions:
                    out.write(f"  #{q.question_id} key {q.key.upper()}  {q.agreeing}/{len(q.answers)}  "
                              f"[{' '.join(q.answers)}]  {q.stem[:60]}")
