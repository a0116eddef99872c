"""Import and export as plain functions (the management commands and the web app call these).

import: read (format reader → interchange games + problems) → build (one transaction per game).
export: load (DB → interchange) → validate → write (format writer), deterministic.
"""
from __future__ import annotations

import errno
import logging
import shutil
import tempfile
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from casebook import interchange as ix

from .common import ReadResult
from .validate import FORMAT_KINDS, errors, validate_games

logger = logging.getLogger(__name__)

IMPORT_FORMATS = ("wellplay", "whodunitbench", "casebook")
EXPORT_FORMATS = ("wellplay", "whodunitbench", "jsonl", "csv", "casebook", "hf")
# Written from the stored rows, not the interchange model: every field, review state and span.
DOCUMENT_FORMATS = ("casebook", "hf")


def read_dataset(fmt: str, path: Path) -> ReadResult:
    """Read a published dataset folder (or one game folder) into interchange games."""
    path = Path(path)
    if not path.exists():
        return ReadResult(problems=[ix.Problem(file=str(path), message="path does not exist", severity="error")])
    if fmt == "wellplay":
        from .wellplay.reader import read_wellplay

        return read_wellplay(path)
    if fmt == "whodunitbench":
        from .whodunitbench.reader import read_whodunitbench

        return read_whodunitbench(path)
    raise ValueError(f"unknown import format '{fmt}' (choose from {', '.join(IMPORT_FORMATS)})")


def write_dataset(fmt: str, games: list[ix.Game], out_dir: Path) -> list[Path]:
    if fmt == "wellplay":
        from .wellplay.writer import write_wellplay

        return write_wellplay(games, out_dir)
    if fmt == "whodunitbench":
        from .whodunitbench.writer import write_whodunitbench

        return write_whodunitbench(games, out_dir)
    if fmt == "jsonl":
        from .generic.writer import write_jsonl

        return write_jsonl(games, out_dir)
    if fmt == "csv":
        from .generic.writer import write_csv

        return write_csv(games, out_dir)
    raise ValueError(f"unknown export format '{fmt}' (choose from {', '.join(EXPORT_FORMATS)})")


# ---------------------------------------------------------------------------------------------
# Import


@dataclass
class ImportedGame:
    slug: str
    title: str
    language: str
    status: str  # created / replaced / unchanged / exists / refused (errors) / failed
    questions: int
    problems: list[ix.Problem] = field(default_factory=list)


@dataclass
class ImportSummary:
    games: list[ImportedGame] = field(default_factory=list)
    problems: list[ix.Problem] = field(default_factory=list)  # problems belonging to no game

    @property
    def failed(self) -> list[ImportedGame]:
        return [g for g in self.games if g.status in {"failed", "exists", "refused", "rolled back"}]

    @property
    def errors(self) -> list[ix.Problem]:
        """Every error-level problem, of the games and of none."""
        return errors([*self.problems, *(p for g in self.games for p in g.problems)])


class ImportTooLarge(ValueError):
    """The dataset is bigger than ``CASEBOOK_MAX_IMPORT_BYTES``; nothing was read or saved."""


def check_import_size(path: Path) -> int:
    """Total bytes under ``path``; raises ImportTooLarge past the cap (checked before anything is
    parsed: a JSON file costs several times its size in memory)."""
    from django.conf import settings

    limit = settings.CASEBOOK_MAX_IMPORT_BYTES
    files = [path] if path.is_file() else (p for p in path.rglob("*") if p.is_file())
    total = 0
    for file in files:
        total += file.stat().st_size
        if total > limit:
            raise ImportTooLarge(
                f"{path} holds more than {limit // 2**20} MB (the import limit, CASEBOOK_MAX_IMPORT_BYTES); "
                f"the published datasets are a few MB. Import one game folder at a time. Nothing was imported."
            )
    return total


def import_dataset(
    fmt: str,
    path: Path,
    *,
    replace: bool = False,
    allow_errors: bool = False,
    user=None,
    progress: Callable[[Iterable], Iterable] = lambda it: it,
) -> ImportSummary:
    """Import every sound game under ``path``; never raises on bad data (it is reported), only on
    a dataset over the size cap (ImportTooLarge).

    A game whose reading met an error-level problem (a skipped file, an unreadable part …) is
    refused, so nothing incomplete is stored, unless ``allow_errors`` keeps such partial games.
    """
    from annotate.builder import build_game

    check_import_size(path)
    if fmt == "casebook":
        from .casebook_format.service import import_casebook

        return import_casebook(Path(path), replace=replace, user=user, progress=progress)
    result = read_dataset(fmt, path)
    in_games = {id(p) for g in result.games for p in g.report}
    summary = ImportSummary(problems=[p for p in result.problems if id(p) not in in_games])
    for game in progress(result.games):
        if errors(game.report) and not allow_errors:
            summary.games.append(ImportedGame(game.slug, game.title, game.language, "refused", 0, list(game.report)))
            continue
        try:
            built = build_game(game, replace=replace, user=user)
        except Exception as exc:  # a defect in one game must not stop the others
            logger.exception("storing imported game %s", game.slug)
            problem = ix.Problem(file=game.slug, message=f"could not be stored: {_storage_problem(exc)} "
                                 "(details in the server log)", action="game skipped", severity="error")
            summary.games.append(ImportedGame(game.slug, game.title, game.language, "failed", 0,
                                              [*game.report, problem]))
            continue
        problems = built.problems if built.written else [*game.report, *built.problems]
        summary.games.append(
            ImportedGame(game.slug, game.title, game.language, built.status, len(game.questions), problems)
        )
    return summary


def _storage_problem(exc: Exception) -> str:
    """Why the database refused a game, in words (no exception class names or SQL)."""
    from django.db import DataError, IntegrityError

    if isinstance(exc, IntegrityError):
        return "two of its items collide (the same name, key or position twice)"
    if isinstance(exc, DataError):
        return "a value is too long or malformed for where it is stored"
    return "an unexpected problem in its data"


# ---------------------------------------------------------------------------------------------
# Export


class NothingToExport(ValueError):
    """Every chosen game lacks questions of the format (and empty games were not allowed); nothing written."""

    def __init__(self, skipped: list[str]) -> None:
        super().__init__(f"nothing to export: {', '.join(skipped)} ha{'s' if len(skipped) == 1 else 've'} no "
                         "questions of this format; allow empty games (--allow-empty) to export their scripts")
        self.skipped = skipped


class ExportRefused(Exception):
    """Validation found errors; nothing was written."""

    def __init__(self, problems: list[ix.Problem]) -> None:
        super().__init__(f"{len(errors(problems))} problem(s) stop the export")
        self.problems = problems


@dataclass
class ExportSummary:
    files: list[Path]
    games: list[str]
    questions: int
    problems: list[ix.Problem]
    skipped: list[str] = field(default_factory=list)

    @property
    def skipped_message(self) -> str:
        """Why games were left out (empty when none were), for the console and the job result."""
        if not self.skipped:
            return ""
        return (f"skipped {len(self.skipped)} game(s) with no questions of this format: {', '.join(self.skipped)} "
                "(allow empty games to export those that have role scripts)")


def select_games(fmt: str, slugs: list[str] | None, language: str | None, allow_empty: bool = False):
    """The Game rows to export: the named ones, else every game with content for ``fmt``.

    The published layouts hold games with questions of their kinds; ``allow_empty`` also takes a
    game that has role scripts but no such questions (a freshly ingested one). The rest are
    returned as skipped, for the caller to report.
    """
    from django.db.models import Q

    from annotate.models import Game

    qs = Game.objects.all().order_by("language", "source_id", "slug")
    if language:
        qs = qs.filter(language=language)
    if slugs:
        chosen = []
        for slug in slugs:
            found = qs.filter(Q(slug=slug) | Q(source_id=slug)).first()
            if found is None:
                raise ValueError(f"no game '{slug}'" + (f" in language '{language}'" if language else ""))
            chosen.append(found)
    else:
        chosen = list(qs)
    if fmt not in FORMAT_KINDS:
        return chosen, []
    wanted = Q(questions__kind__in=FORMAT_KINDS[fmt])
    if allow_empty:
        wanted |= Q(characters__script__gt="")
    with_content = set(Game.objects.filter(wanted, pk__in=[g.pk for g in chosen]).values_list("pk", flat=True))
    return [g for g in chosen if g.pk in with_content], [g.slug for g in chosen if g.pk not in with_content]


def export_games(
    fmt: str,
    out_dir: Path,
    *,
    slugs: list[str] | None = None,
    language: str | None = None,
    force: bool = False,
    include_drafts: bool = False,
    allow_empty: bool = False,
    progress: Callable[[Iterable], Iterable] = lambda it: it,
) -> ExportSummary:
    """Validate then write; with errors and no ``force``, raise ExportRefused and write nothing.

    Only approved items are exported unless ``include_drafts``; the casebook format always carries
    everything (drafts, rejected options, withdrawn spans), as it is a lossless copy of the games.
    The published layouts skip games without questions of their kinds unless ``allow_empty``
    (``ExportSummary.skipped``; NothingToExport when no game is left). Every game is read in one
    transaction (REPEATABLE READ on PostgreSQL), so concurrent edits land wholly in or wholly out
    of the export. The files are written to a staging folder beside ``out_dir`` that replaces it
    only once complete: ``out_dir`` then holds exactly this export (no stale files of an earlier
    one), and a failed export leaves it as it was. ExportError explains unwritable paths.
    """
    from annotate.loader import load_game

    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format '{fmt}' (choose from {', '.join(EXPORT_FORMATS)})")
    out_dir = Path(out_dir).absolute()
    _check_target(out_dir)
    statuses = None if include_drafts else (ix.Status.APPROVED,)
    with consistent_snapshot():
        rows, skipped = select_games(fmt, slugs, language, allow_empty)
        if skipped and not rows:
            raise NothingToExport(skipped)
        documents = []
        if fmt in DOCUMENT_FORMATS:
            from .casebook_format.document import build_document

            documents = [build_document(row) for row in progress(rows)]
        games = [] if fmt == "casebook" else [
            load_game(row, statuses=statuses) for row in (rows if documents else progress(rows))]
    if fmt == "casebook":
        return _write_documents(fmt, documents, out_dir, skipped)
    if fmt in FORMAT_KINDS:
        for game in games:
            game.questions = [q for q in game.questions if q.kind in FORMAT_KINDS[fmt]]
    problems = validate_games(games, fmt)
    if errors(problems) and not force:
        raise ExportRefused(problems)
    with staged(out_dir) as staging:
        if fmt == "hf":
            from .hf.writer import write_hf

            written = write_hf(documents, staging, include_drafts=include_drafts)
        else:
            written = write_dataset(fmt, games, staging)
        if problems:
            _write_problems(staging / "export_problems.txt", problems)
            written.append(staging / "export_problems.txt")
        (staging / EXPORT_MARKER).write_text(f"{fmt}\n", encoding="utf-8")
    return ExportSummary(
        files=sorted(out_dir / path.relative_to(staging) for path in written), games=[g.slug for g in games],
        questions=sum(len(g.questions) for g in games), problems=problems, skipped=skipped,
    )


def _write_documents(fmt: str, documents: list, out_dir: Path, skipped: list[str]) -> ExportSummary:
    """The casebook format: no validation (it copies work in progress as it is), the same atomic swap."""
    from .casebook_format.writer import write_casebook

    with staged(out_dir) as staging:
        written = write_casebook(documents, staging)
        (staging / EXPORT_MARKER).write_text(f"{fmt}\n", encoding="utf-8")
    return ExportSummary(
        files=sorted(out_dir / path.relative_to(staging) for path in written),
        games=[d.data["game"]["slug"] for d in documents],
        questions=sum(len(d.data["questions"]) for d in documents), problems=[], skipped=skipped,
    )


@contextmanager
def staged(out_dir: Path):
    """A staging folder beside ``out_dir`` that replaces it when the block completes (else is removed)."""
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.export-", dir=out_dir.parent))
    except OSError as exc:
        raise ExportError(f"Cannot write the export to {out_dir}: {os_problem(exc)}. Nothing was written.") from None
    try:
        yield staging
        _swap_into_place(staging, out_dir)
    except OSError as exc:
        raise ExportError(f"Cannot write the export to {out_dir}: {os_problem(exc)}. "
                          f"{out_dir} was left as it was.") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# Written into every export folder: only such a folder (or an empty one) is replaced by a new export.
EXPORT_MARKER = ".casebook-export"


class ExportError(ValueError):
    """The export cannot be written where asked; the message is meant for the user."""


@contextmanager
def consistent_snapshot():
    """One transaction for every read of an export: REPEATABLE READ on PostgreSQL (every query sees
    the same moment), a read transaction on SQLite (WAL gives it one snapshot). Inside an already
    open transaction the snapshot is that transaction's."""
    from django.db import connection, transaction

    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def os_problem(exc: OSError) -> str:
    """An operating-system error in words (no exception class names)."""
    where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
    if isinstance(exc, PermissionError):
        return f"permission denied{where}"
    if isinstance(exc, NotADirectoryError | FileExistsError):
        return f"part of the path is a file, not a folder{where}"
    if isinstance(exc, FileNotFoundError):
        return f"the folder does not exist{where}"
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    if exc.errno == errno.EROFS:
        return "the disk is read-only"
    return f"{(exc.strerror or 'input/output error').lower()}{where}"


def _check_target(out_dir: Path) -> None:
    """Refuse, before any work, a target that is a file or a folder holding something else."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"{out_dir} is a file, not a folder; choose a folder for the export.")
    if out_dir.is_dir() and not (out_dir / EXPORT_MARKER).exists() and any(out_dir.iterdir()):
        raise ExportError(f"{out_dir} already holds files that are not a Casebook export; an export replaces its "
                          "folder entirely, so choose a new or empty folder. Nothing was written.")


def _swap_into_place(staging: Path, out_dir: Path) -> None:
    """Replace ``out_dir`` by the complete ``staging`` folder (two renames on one file system)."""
    if not out_dir.exists():
        staging.rename(out_dir)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
    old.rmdir()
    out_dir.rename(old)
    try:
        staging.rename(out_dir)
    except OSError:
        old.rename(out_dir)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _write_problems(path: Path, problems: list[ix.Problem]) -> None:
    path.write_text("".join(f"{p}\n" for p in problems), encoding="utf-8")
