"""python manage.py relation_questions GAME [--seed N] [--perspective NAME]"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from casebook.interchange import name_key
from generation.relations import create_relation_questions

from ._common import game_or_error


class Command(BaseCommand):
    help = (
        "Create draft relation MCQs from the game's relationship graph (WellPlay rules: ≥3 labels → which "
        "relationship does not exist; 2 → both joined with 'and'; 1 → that label), options shuffled with a seeded "
        "generator so the answer letters are balanced. Pairs already asked are skipped."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("game", help="game slug or published id")
        parser.add_argument("--seed", type=int, default=0, help="seed of the option shuffle and the false labels")
        parser.add_argument("--perspective", default="", help="ask every question to this character")

    def handle(self, *args, **opts) -> None:
        game = game_or_error(opts["game"])
        perspective = None
        if opts["perspective"]:
            perspective = next((c for c in game.characters.all() if name_key(c.name) == name_key(opts["perspective"])), None)
            if perspective is None:
                raise CommandError(f"'{opts['perspective']}' is not a character of {game.slug}")
        result = create_relation_questions(game, seed=opts["seed"], perspective=perspective)
        for message in result.messages:
            self.stderr.write(message)
        letters: dict[str, int] = {}
        for q in result.created:
            letters[q.answer] = letters.get(q.answer, 0) + 1
            if opts["verbosity"] > 1:
                self.stdout.write(f"  #{q.pk} [{q.sub_type}] {q.stem} → {q.answer}")
        spread = ", ".join(f"{k}: {v}" for k, v in sorted(letters.items())) or "-"
        self.stdout.write(self.style.SUCCESS(
            f"{len(result.created)} draft relation question(s) created for {game.slug} "
            f"({result.skipped} pair(s) already asked); answer letters {spread}"))
