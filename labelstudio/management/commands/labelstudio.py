"""python manage.py labelstudio push|pull GAME --url URL --token TOKEN [--kinds spans,relations,questions]"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from labelstudio import config, service
from labelstudio.client import LabelStudioError


class Command(BaseCommand):
    help = (
        "Label Studio bridge. `push GAME` creates or updates the game's Label Studio project (role scripts to mark "
        "spans and relations on, MCQ review tasks) with Casebook's own annotations as predictions; `pull GAME` "
        "imports finished annotations back as drafts and reports what was created, updated and skipped. GAME is a "
        "game slug or source id. URL and token may also come from CASEBOOK_LABELSTUDIO_URL / CASEBOOK_LABELSTUDIO_TOKEN "
        "(keeps the token out of the process list)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("action", choices=["push", "pull"])
        parser.add_argument("game", metavar="GAME", help="game slug or source id")
        parser.add_argument("--url", help="Label Studio base URL, e.g. http://127.0.0.1:8089")
        parser.add_argument("--token", help="Label Studio (legacy) API token")
        parser.add_argument("--kinds", default=",".join(config.KINDS),
                            help="push only: comma-separated subset of spans,relations,questions (default all)")
        parser.add_argument("--keep-deleted", action="store_true",
                            help="pull only: report items deleted in Label Studio but keep them in Casebook "
                                 "(default: the drafts they created are withdrawn)")
        parser.add_argument("--json", action="store_true", help="print the full report as JSON")

    def handle(self, *args, **opts) -> None:
        try:
            game = service.find_game(opts["game"])
            kinds = config.normalise_kinds(opts["kinds"])
        except (service.GameNotFound, ValueError) as exc:
            raise CommandError(str(exc)) from None
        quiet = opts["verbosity"] == 0

        def progress(done: int, total: int, message: str) -> None:
            if not quiet and opts["verbosity"] > 1:
                self.stderr.write(f"  [{done}/{total}] {message}")

        try:
            if opts["action"] == "push":
                report = service.push(game, opts["url"], opts["token"], kinds=kinds, progress=progress)
            else:
                report = service.pull(game, opts["url"], opts["token"], progress=progress, keep_deleted=opts["keep_deleted"])
        except LabelStudioError as exc:
            suffix = " Nothing was changed in Casebook." if opts["action"] == "pull" and "Nothing was changed" not in str(exc) else ""
            raise CommandError(f"{opts['action']} failed: {exc}{suffix}") from None
        data = report.as_dict()
        if opts["json"]:
            self.stdout.write(json.dumps(data, ensure_ascii=False, indent=2))
            return
        if quiet:
            return
        for note in report.notes:
            self.stdout.write(f"  note: {note}")
        if opts["action"] == "pull":
            for bucket in ("created", "updated", "deleted", "conflict", "skipped"):
                for item in data[bucket]:
                    self.stdout.write(f"  {bucket:8} {item['kind']:9} task {item['task']}: {item['detail']}")
            for name, figure in report.agreement.items():
                self.stdout.write(f"  agreement {name}: {figure}")
        else:
            for warning in report.warnings:
                self.stdout.write(self.style.WARNING(f"  warning  task {warning['task']}: {warning['detail']}"))
            self.stdout.write(f"  open: {report.project_url}")
        self.stdout.write(self.style.SUCCESS(f"{game.slug}: {report.summary()}"))
