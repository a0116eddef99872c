"""``manage.py synthesize``: generate a synthetic draft game with the multi-agent pipeline."""
from __future__ import annotations

import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = ("Generate a murder-mystery game with an LLM (outline → characters → critic → clues → QA) and store "
            "it as a draft game (origin synthetic) for review. Needs an endpoint: OPENAI_API_KEY, or --base-url "
            "for a local OpenAI-compatible server (no key needed). Re-run one stage of an earlier run with "
            "--rerun critic|clues|qa --run ID.")

    def add_arguments(self, parser):
        parser.add_argument("--players", type=int, default=4)
        parser.add_argument("--language", choices=("zh", "en"), default="en")
        parser.add_argument("--theme", default="")
        parser.add_argument("--setting", default="")
        parser.add_argument("--critic-rounds", type=int, default=1)
        parser.add_argument("--per-script", type=int, default=4, help="long-script questions per character")
        parser.add_argument("--per-image", type=int, default=3, help="questions per image clue")
        parser.add_argument("--max-tokens", type=int, default=3000, help="reply budget per request")
        parser.add_argument("--model", default="")
        parser.add_argument("--base-url", default="")
        parser.add_argument("--as", dest="username", default="", help="user who becomes the draft's manager")
        parser.add_argument("--rerun", choices=("critic", "clues", "qa"), default="")
        parser.add_argument("--run", type=int, default=0, help="the run whose stage --rerun repeats")

    def handle(self, *args, **opts):
        from casebook.llm import LLMError
        from synthesis.models import SynthesisRun
        from synthesis.pipeline import SynthesisSettings, rerun_stage, run_synthesis

        user = None
        if opts["username"]:
            user = get_user_model().objects.filter(username=opts["username"]).first()
            if user is None:
                raise CommandError(f"no user named {opts['username']!r}")
        verbosity = opts["verbosity"]

        def progress(label: str, done: int, total: int) -> None:
            if verbosity >= 1:
                sys.stderr.write(f"\r[{done}/{total}] {label[:60]:<60}")
                sys.stderr.flush()

        options = SynthesisSettings(
            players=opts["players"], language=opts["language"], theme=opts["theme"], setting=opts["setting"],
            critic_rounds=opts["critic_rounds"], per_script=opts["per_script"], per_image=opts["per_image"],
            model=opts["model"], base_url=opts["base_url"], max_tokens=opts["max_tokens"])
        try:
            if opts["rerun"]:
                run = SynthesisRun.objects.filter(pk=opts["run"]).first()
                if run is None:
                    raise CommandError(f"no synthesis run {opts['run']} (give --run ID with --rerun)")
                if opts["base_url"] or opts["model"]:
                    run.settings.update({k: opts[k] for k in ("base_url", "model") if opts[k]})
                run = rerun_stage(run, opts["rerun"], user=user, progress=progress)
            else:
                run = run_synthesis(options, user=user, progress=progress)
        except (LLMError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if verbosity >= 1:
            sys.stderr.write("\n")
        usage = run.usage or {}
        cost = f", cost ${usage['cost']:.4f}" if usage.get("cost") is not None else ""
        self.stdout.write(f"run {run.pk}: {usage.get('requests', 0)} requests, {usage.get('prompt_tokens', 0)} prompt + "
                          f"{usage.get('completion_tokens', 0)} completion tokens{cost}")
        if run.failure:
            reply = run.failure.get("reply", "")
            raise CommandError(f"stage {run.failure['stage']} failed: {run.failure['message']}; no game was written."
                               + (f"\nlast reply:\n{reply[:2000]}" if reply else ""))
        game = run.game
        self.stdout.write(f"draft game '{game.title}' (/g/{game.slug}/): {game.characters.count()} characters, "
                          f"{game.clues.count()} clues, {game.questions.count()} questions, all in draft")
        for round_ in run.critic_rounds:
            self.stdout.write(f"critic round {round_['round']}: " + ", ".join(f"{k} {v}" for k, v in round_["scores"].items()))
        errors = [c for c in run.checks if c["severity"] == "error"]
        self.stdout.write(f"checks: {len(errors)} error(s), {len(run.checks) - len(errors)} warning(s)")
        for check in run.checks:
            self.stdout.write(f"  [{check['severity']}] {check['check']}: {check['message']}"
                              + (f" ({check['where']})" if check["where"] else ""))
