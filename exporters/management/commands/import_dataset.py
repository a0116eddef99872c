"""python manage.py import_dataset --format wellplay|whodunitbench|casebook PATH [--replace] [--allow-errors]"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from exporters.service import IMPORT_FORMATS, ImportTooLarge, import_dataset


class Command(BaseCommand):
    help = (
        "Import a published dataset (WellPlay: a folder with chinese/ and/or english/ in layout G1, G2 or G3, "
        "or one game folder; WhodunitBench: a Dataset/ folder or one game folder). Prints a per-file report of "
        "every irregularity and what was done about it; the report is also stored with each game. A game whose "
        "reading met an error (a skipped file …) is not stored and the command fails, unless --allow-errors. "
        "Casebook: one game folder (with manifest.json) or a folder of them, as `export --format casebook` "
        "writes; checksums, format version and schema are checked first, and the games are stored all or none."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", required=True, choices=IMPORT_FORMATS)
        parser.add_argument(
            "--replace", action="store_true",
            help="make games that already exist equal to the source, even if edited in Casebook since: content "
                 "(characters, clues, questions, options, relationships, chains, spans, review states) is "
                 "overwritten in place, so ids, authors, audit, comments and validation answers of matching items "
                 "survive; members, jobs and the link to the other language are kept; a warning counts the "
                 "edited items it overwrote",
        )
        parser.add_argument("--allow-errors", action="store_true",
                            help="store games even when parts of them could not be read (partial imports)")
        parser.add_argument("--quiet-report", action="store_true",
                            help="print only the summary and the errors, not each warning or note")

    def handle(self, *args, **opts) -> None:
        path: Path = opts["path"]
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        try:
            summary = import_dataset(
                opts["format"], path, replace=opts["replace"], allow_errors=opts["allow_errors"],
                progress=lambda it: tqdm(list(it), desc="importing", unit="game", disable=opts["verbosity"] == 0),
            )
        except ImportTooLarge as exc:
            raise CommandError(str(exc)) from None
        out = self.stdout
        for problem in summary.problems:
            out.write(f"  {problem}")
        for game in summary.games:
            style = {"created": self.style.SUCCESS, "replaced": self.style.SUCCESS, "unchanged": self.style.NOTICE}.get(
                game.status, self.style.ERROR
            )
            out.write(style(f"{game.status:9} {game.slug} [{game.language}] — {game.questions} questions, "
                            f"{len(game.problems)} report line(s)"))
            for problem in game.problems:
                if not opts["quiet_report"] or problem.severity == "error":
                    out.write(f"    {problem}")
        done = [g for g in summary.games if g.status in {"created", "replaced", "unchanged"}]
        out.write(f"{len(done)} of {len(summary.games)} game(s) imported from {path}.")
        if summary.failed:
            hints = []
            if any(g.status == "exists" for g in summary.failed):
                hints.append("use --replace to overwrite existing games")
            if any(g.status == "refused" for g in summary.failed):
                hints.append("fix the errors listed above, or use --allow-errors to store what could be read")
            raise CommandError("not imported: " + ", ".join(f"{g.slug} ({g.status})" for g in summary.failed)
                               + "".join(f"; {h}" for h in hints))
        if not summary.games and summary.errors:
            raise CommandError(f"not imported: {summary.errors[0].message}")
        if not summary.games:
            raise CommandError(f"no game found under {path} for format {opts['format']}")
        if summary.errors and not opts["allow_errors"]:
            raise CommandError(f"{len(summary.errors)} error(s) while reading {path} (listed above)")
        if summary.errors:
            out.write(self.style.WARNING(f"{len(summary.errors)} error(s) listed above; the games were stored "
                                         "with what could be read (--allow-errors)"))
