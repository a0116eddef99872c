"""python manage.py check_questions [GAME] [--kind ...] [--json] [--llm]"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Game
from casebook.llm import LLMClient, LLMError, LLMSettings
from generation.quality import ERROR, INFO, WARNING, check_game

from ._common import KIND_CHOICES, game_or_error


class Command(BaseCommand):
    help = (
        "Check multiple-choice questions: per question (duplicate or near-duplicate options, answer in the stem, "
        "correct option markedly longer/shorter, options of the wrong type) and per set (answer-position bias, "
        "answerable without context by blind strategies). Each finding explains itself. Exit code 1 on errors."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("game", nargs="?", help="game slug or published id (default: every game)")
        parser.add_argument("--kind", action="append", choices=KIND_CHOICES, help="only these kinds (repeatable)")
        parser.add_argument("--json", action="store_true", help="print the findings as JSON")
        parser.add_argument("--llm", action="store_true", help="also ask the configured LLM blind (stem + options)")
        parser.add_argument("--info", action="store_true", help="also print the checks that passed (info)")

    def handle(self, *args, **opts) -> None:
        games = [game_or_error(opts["game"])] if opts["game"] else list(Game.objects.order_by("slug"))
        client = None
        if opts["llm"]:
            try:
                client = LLMClient(LLMSettings.from_settings())
            except LLMError as exc:
                raise CommandError(f"--llm: {exc}") from None
        reports = [(game, check_game(game, kinds=opts["kind"], client=client)) for game in games]
        errors = sum(len(r.errors) for _, r in reports)
        if opts["json"]:
            self.stdout.write(json.dumps(
                [{"game": g.slug, "language": g.language, **r.to_dict()} for g, r in reports], ensure_ascii=False, indent=2))
        else:
            for game, report in reports:
                self._print(game, report, opts["info"])
        if errors:
            raise CommandError(f"{errors} error(s) found", returncode=1)

    def _print(self, game: Game, report, show_info: bool) -> None:
        out = self.stdout
        style = {ERROR: self.style.ERROR, WARNING: self.style.WARNING, INFO: lambda s: s}
        out.write(self.style.MIGRATE_HEADING(
            f"{game.slug} [{game.language}]: {report.items} question(s) checked, {len(report.errors)} error(s), "
            f"{len(report.warnings)} warning(s)"))
        sets = [f for f in report.per_set() if show_info or f.severity != INFO]
        if sets:
            out.write("  per set:")
            for f in sets:
                out.write(style[f.severity](f"    [{f.severity}] {f.check}: {f.message}"))
        stems = dict(game.questions.values_list("pk", "stem"))
        per_question = report.per_question()
        if per_question:
            out.write("  per question:")
        for qid, findings in per_question.items():
            out.write(f"    #{qid} {stems.get(qid, '')[:60]}")
            for f in findings:
                out.write(style[f.severity](f"      [{f.severity}] {f.check}: {f.message}"))
