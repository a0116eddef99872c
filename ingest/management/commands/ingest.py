"""``python manage.py ingest PATH ... --game "Title" --language zh|en``: ingest a raw game package."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from ingest.build import DuplicateIngest
from ingest.pipeline import IngestOptions, run_ingest
from ingest.read import IngestError


class Command(BaseCommand):
    help = (
        "Ingest a raw murder-mystery package (PDFs with or without a text layer, scans, phone photos, "
        "TXT/Markdown; files, folders or ZIPs) into a Casebook game."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", nargs="+", help="files, folders or ZIP archives of the package")
        parser.add_argument("--game", required=True, help="title of the game")
        parser.add_argument("--language", required=True, choices=["zh", "en"])
        parser.add_argument("--characters", default="", help='cast list, comma-separated: "A,B,C" (anchors the split)')
        parser.add_argument("--traditional", action="store_true", help="Chinese text is traditional (chi_tra model)")
        parser.add_argument("--replace", action="store_true", help="overwrite a game/files ingested before")
        parser.add_argument("--workers", type=int, default=None, help="OCR processes (default: all cores)")

    def handle(self, *args, **options) -> None:
        cast = [c.strip() for c in options["characters"].replace("，", ",").replace("、", ",").split(",") if c.strip()]
        opts = IngestOptions(
            title=options["game"], language=options["language"], characters=cast,
            traditional=options["traditional"], replace=options["replace"], workers=options["workers"],
        )
        bars: dict[str, tqdm] = {}
        quiet = options["verbosity"] == 0

        def progress(stage: str, done: int, total: int) -> None:
            if quiet or stage not in ("read", "OCR"):  # the other stages take well under a second
                return
            bar = bars.get(stage)
            if bar is None:
                for other in bars.values():
                    other.close()
                bar = bars[stage] = tqdm(total=max(total, 1), desc=stage, unit="page" if stage == "OCR" else "file",
                                         file=self.stderr._out, leave=False)
            bar.total = max(total, 1)
            bar.n = done
            bar.refresh()

        try:
            summary = run_ingest(options["paths"], opts, progress=progress)
        except (IngestError, DuplicateIngest) as exc:
            raise CommandError(str(exc)) from None
        finally:
            for bar in bars.values():
                bar.close()
        for line in summary.lines():
            style = self.style.ERROR if line.startswith("error") else (
                self.style.WARNING if line.startswith("warning") else (lambda s: s))
            self.stdout.write(style(line))
        if summary.status in ("created", "replaced"):
            self.stdout.write(self.style.SUCCESS(f"ingested into {summary.game_slug}"))
        else:
            self.stdout.write(f"nothing changed ({summary.status})")
