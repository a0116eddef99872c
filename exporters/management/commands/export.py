"""python manage.py export --format wellplay|whodunitbench|jsonl|csv|casebook|hf --out DIR [--game SLUG ...]"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from exporters.service import EXPORT_FORMATS, ExportRefused, export_games, select_games
from exporters.validate import errors


class Command(BaseCommand):
    help = (
        "Export games in a published layout (wellplay: G3 with json/ and final_result/; whodunitbench: "
        "Dataset/<game>/env_p_all.json + img/), as generic JSONL/CSV (questions plus the scripts and clues they "
        "refer to), as Casebook game folders (casebook: lossless, every item whatever its state, re-importable with "
        "import_dataset --format casebook) or as a Hugging Face dataset (hf: Parquet tables and a dataset card). Data is validated first; invalid data "
        "is refused with the list of problems unless --force. Only approved items unless --include-drafts. "
        "All games are read as one consistent snapshot; --out (new, empty or an earlier export) is replaced as a "
        "whole once the export is complete, so it holds exactly this export."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--format", required=True, choices=EXPORT_FORMATS)
        parser.add_argument("--out", required=True, type=Path)
        parser.add_argument("--game", action="append", dest="games", metavar="SLUG", help="repeatable; default all")
        parser.add_argument("--language", choices=["zh", "en"])
        parser.add_argument("--force", action="store_true", help="write despite validation errors (with a report)")
        parser.add_argument("--include-drafts", action="store_true", help="also export items not yet approved")
        parser.add_argument("--allow-empty", action="store_true",
                            help="wellplay/whodunitbench: also export games that have role scripts but no questions "
                                 "of the format (otherwise they are skipped, and the skip is reported)")
        parser.add_argument(
            "--as", dest="as_user", metavar="USERNAME",
            help="check that this user may export each game (a manager); default: the shell operator",
        )

    def handle(self, *args, **opts) -> None:
        if opts["as_user"]:
            from annotate.services.permissions import command_user

            try:
                rows, _ = select_games(opts["format"], opts["games"], opts["language"], opts["allow_empty"])
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            for row in rows:
                command_user(opts["as_user"], row, "export")
        try:
            summary = export_games(
                opts["format"], opts["out"], slugs=opts["games"], language=opts["language"], force=opts["force"],
                include_drafts=opts["include_drafts"], allow_empty=opts["allow_empty"],
                progress=lambda it: tqdm(list(it), desc="loading", unit="game", disable=opts["verbosity"] == 0),
            )
        except ExportRefused as refused:
            for problem in refused.problems:
                self.stderr.write(f"  {problem}")
            raise CommandError(
                f"export refused: {len(errors(refused.problems))} error(s) listed above; fix them or use --force"
            ) from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        for problem in summary.problems:
            self.stdout.write(f"  {problem}")
        if summary.skipped:
            self.stdout.write(self.style.WARNING(summary.skipped_message))
        self.stdout.write(self.style.SUCCESS(
            f"wrote {len(summary.files)} file(s) for {len(summary.games)} game(s), {summary.questions} questions, "
            f"to {opts['out']}"
        ))
