"""python manage.py generate_distractors GAME [--kind ...] [--n 3] [--offline] [--model NAME] [--question ID ...]"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from casebook.llm import LLMSettings
from generation.distractors import FREE_TEXT_KINDS
from generation.jobs import create_distractor_job, run_distractor_job

from ._common import KIND_CHOICES, game_or_error


class Command(BaseCommand):
    help = (
        "Add distractors (wrong options) to a game's multiple-choice questions until each has N, with the "
        "configured LLM (OPENAI_API_KEY / OPENAI_BASE_URL / CASEBOOK_LLM_MODEL) or, with --offline or without a "
        "key, with the offline heuristics. New options wait for review (origin llm/heuristic, review pending). "
        "Runs in this process and records a job; the exit code is 1 when some questions failed."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("game", help="game slug or published id")
        parser.add_argument("--kind", action="append", choices=KIND_CHOICES, help="only these kinds (repeatable)")
        parser.add_argument("--question", action="append", type=int, help="only these question ids (repeatable)")
        parser.add_argument("--n", type=int, default=3, help="distractors wanted per question (default 3)")
        parser.add_argument("--offline", action="store_true", help="use the offline heuristics even with a key")
        parser.add_argument("--model", default=None, help="model name (default CASEBOOK_LLM_MODEL)")
        parser.add_argument("--concurrency", type=int, default=None, help="requests in flight at once")

    def handle(self, *args, **opts) -> None:
        game = game_or_error(opts["game"])
        if not 1 <= opts["n"] <= 4:
            raise CommandError("--n must be between 1 and 4 (WellPlay holds at most 5 options)")
        settings = LLMSettings.from_settings(model=opts["model"])
        if opts["offline"]:
            mode = "offline"
            self.stdout.write("Using the offline heuristics (--offline).")
        elif not settings.configured:
            mode = "offline"
            self.stdout.write(self.style.WARNING(
                "No OPENAI_API_KEY is configured: using the offline heuristics (the game's own characters, places "
                "and times, and curated methods/motives/relation labels). Set OPENAI_API_KEY (and OPENAI_BASE_URL "
                "for a local server) to use an LLM."))
        else:
            mode = "llm"
            self.stdout.write(f"Using {settings.describe()}.")
        questions = game.questions.exclude(kind__in=FREE_TEXT_KINDS)
        if opts["kind"]:
            questions = questions.filter(kind__in=opts["kind"])
        if opts["question"]:
            questions = questions.filter(pk__in=opts["question"])
        ids = list(questions.order_by("position", "id").values_list("pk", flat=True))
        if not ids:
            raise CommandError("no multiple-choice question matches")
        job = create_distractor_job(game, ids, n=opts["n"], mode=mode, model=opts["model"],
                                    concurrency=opts["concurrency"])
        result = run_distractor_job(job.pk)
        job.refresh_from_db()
        for failure in result["failures"]:
            self.stderr.write(f"  failed #{failure['question']} {failure['stem'][:50]}: {failure['error']}")
        written = sum(len(v) for v in result["written"].values())
        self.stdout.write(f"job {job.pk}: {job.message}; {written} option(s) written, waiting for review.")
        if result["failures"]:
            raise CommandError(f"{len(result['failures'])} question(s) failed (see above)", returncode=1)
