"""Export and import from the browser as background jobs (django-tasks), with the commands' rules.

Both call :mod:`exporters.service` (the functions the ``export`` and ``import_dataset`` commands
call), so validation, refusal on errors unless forced, approved-only unless drafts are included and
atomic writing are the same. The job re-checks the user's role when it runs: a manager demoted
between click and run exports nothing. Files live under ``$CASEBOOK_DATA_DIR/exports/<job id>/``
(never under media) and are handed out only to managers of the job's game.
"""
from __future__ import annotations

import logging
import shutil
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings
from django_tasks import task

from annotate.models import Game, Membership
from annotate.services.permissions import MANAGER, has_role, role_of
from casebook.models import Job

from .service import (
    EXPORT_FORMATS,
    IMPORT_FORMATS,
    ExportRefused,
    NothingToExport,
    export_games,
    import_dataset,
)
from .validate import errors

log = logging.getLogger(__name__)

EXPORT_KIND, IMPORT_KIND = "export", "import"


class JobRefused(ValueError):
    """The job cannot start; the message is meant for the user."""


def job_dir(job: Job) -> Path:
    return Path(settings.DATA_DIR) / "exports" / str(job.pk)


def _update(job_id: int, **fields: Any) -> None:
    Job.objects.filter(pk=job_id).update(**fields)


def _problem_dicts(problems) -> list[dict]:
    return [{"severity": p.severity, "where": f"{p.file}:{p.location}" if p.location else p.file,
             "message": p.message, "action": p.action} for p in problems]


# ---- export --------------------------------------------------------------------------------


def start_export_job(game: Game, user, *, fmt: str, include_drafts: bool = False, force: bool = False,
                     allow_empty: bool = False) -> Job:
    """Record and enqueue an export of one game (the caller has checked the manager role)."""
    if fmt not in EXPORT_FORMATS:
        raise JobRefused(f"Unknown format “{fmt}”; choose one of {', '.join(EXPORT_FORMATS)}.")
    job = Job.objects.create(kind=EXPORT_KIND, game=game, user=user, total=3, message="queued",
                             params={"format": fmt, "include_drafts": include_drafts, "force": force,
                                     "allow_empty": allow_empty})
    export_task.enqueue(job.pk)
    job.refresh_from_db()
    return job


@task()
def export_task(job_id: int) -> dict:
    return run_export_job(job_id)


def run_export_job(job_id: int) -> dict:
    """Validate, write (atomically, through the service), then pack a ZIP; problems go in the result."""
    job = Job.objects.select_related("game", "user").get(pk=job_id)
    if job.game is None or job.user is None or not has_role(role_of(job.user, job.game), MANAGER):
        _update(job_id, state=Job.State.FAILED, message="Only a manager of the game may export it.")
        return {"error": "not a manager"}
    params, game = job.params, job.game
    _update(job_id, state=Job.State.RUNNING, message="Loading and validating", done=0)
    out = job_dir(job)
    shutil.rmtree(out, ignore_errors=True)
    data_dir = out / "data"
    try:
        summary = export_games(params["format"], data_dir, slugs=[game.slug], force=params["force"],
                               include_drafts=params["include_drafts"], allow_empty=params.get("allow_empty", False))
    except NothingToExport as empty:
        shutil.rmtree(out, ignore_errors=True)
        result = {"skipped": empty.skipped, "problems": []}
        _update(job_id, state=Job.State.FAILED, result=result, message=f"Not exported: {empty}.")
        return result
    except ExportRefused as refused:
        shutil.rmtree(out, ignore_errors=True)
        result = {"problems": _problem_dicts(refused.problems), "errors": len(errors(refused.problems))}
        _update(job_id, state=Job.State.FAILED, result=result,
                message=f"Export refused: {result['errors']} error(s) listed below. Fix them, or export with “write anyway”.")
        return result
    except Exception as exc:  # keep the job readable; the traceback goes to the log
        log.exception("export job %s failed", job_id)
        shutil.rmtree(out, ignore_errors=True)
        _update(job_id, state=Job.State.FAILED, message=f"The export failed ({exc}); nothing was written.")
        return {"error": str(exc)}
    _update(job_id, message="Packing the ZIP", done=2)
    name = f"{game.slug}-{params['format']}.zip"
    with zipfile.ZipFile(out / name, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in summary.files:
            archive.write(path, path.relative_to(data_dir).as_posix())
    shutil.rmtree(data_dir, ignore_errors=True)
    result = {"zip": name, "files": len(summary.files), "questions": summary.questions,
              "problems": _problem_dicts(summary.problems), "skipped": summary.skipped}
    _update(job_id, state=Job.State.DONE, done=3, result=result,
            message=f"Done: {len(summary.files)} file(s), {summary.questions} question(s).")
    _prune_exports(game)
    return result


KEEP_EXPORTS = 10


def _prune_exports(game: Game) -> None:
    """Keep the ZIPs of the game's newest exports only, so the data dir does not grow without end."""
    old = Job.objects.filter(kind=EXPORT_KIND, game=game).order_by("-created_at", "-pk")[KEEP_EXPORTS:]
    for job in old:
        shutil.rmtree(job_dir(job), ignore_errors=True)


def export_zip(job: Job) -> Path | None:
    """The finished export's ZIP, or None."""
    name = (job.result or {}).get("zip")
    path = job_dir(job) / name if name else None
    return path if path and path.is_file() else None


# ---- import --------------------------------------------------------------------------------


def may_import(user) -> bool:
    """Importing creates games: superusers and managers of some game may (the importer manages them)."""
    return user.is_superuser or Membership.objects.filter(user=user, role=Membership.Role.MANAGER).exists()


def start_import_job(user, *, fmt: str, upload, replace: bool = False) -> Job:
    """Unpack an uploaded ZIP of a dataset folder privately, record and enqueue the import."""
    if fmt not in IMPORT_FORMATS:
        raise JobRefused(f"Unknown format “{fmt}”; choose one of {', '.join(IMPORT_FORMATS)}.")
    if not zipfile.is_zipfile(upload):
        raise JobRefused("The file is not a ZIP archive. Zip the dataset folder (or one game's folder) and upload that.")
    job = Job.objects.create(kind=IMPORT_KIND, user=user, message="queued", params={"format": fmt, "replace": replace})
    target = job_dir(job) / "upload"
    try:
        _unzip(upload, target)
    except JobRefused as exc:
        shutil.rmtree(job_dir(job), ignore_errors=True)
        job.state, job.message = Job.State.FAILED, str(exc)
        job.save(update_fields=["state", "message", "updated_at"])
        raise
    import_task.enqueue(job.pk)
    job.refresh_from_db()
    return job


def _unzip(upload, target: Path) -> None:
    """Extract member by member, refusing names that would leave ``target`` (zip-slip)."""
    upload.seek(0)
    with zipfile.ZipFile(upload) as archive:
        for info in archive.infolist():
            name = info.filename
            if not info.flag_bits & 0x800:  # no UTF-8 flag: ZIPs made on Chinese Windows name files in GBK
                try:
                    name = info.filename.encode("cp437").decode("gbk")
                except (UnicodeEncodeError, UnicodeDecodeError):
                    name = info.filename
            parts = PurePosixPath(name.replace("\\", "/")).parts
            if not parts or any(p in ("..", "") for p in parts) or name.startswith("/"):
                raise JobRefused(f"The ZIP contains an unsafe path “{name}”; nothing was imported.")
            if parts[0] == "__MACOSX":
                continue
            dest = target.joinpath(*parts)
            if info.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as src, dest.open("wb") as out:
                shutil.copyfileobj(src, out)


def _stored(source_slug: str, language: str) -> Game | None:
    """The stored game a published game was (or would be) imported as."""
    return Game.objects.filter(source_id=source_slug, language=language).first()


@task()
def import_task(job_id: int) -> dict:
    return run_import_job(job_id)


def run_import_job(job_id: int) -> dict:
    """Import through the service; replacing a game needs the manager role in that game."""
    job = Job.objects.select_related("user").get(pk=job_id)
    user, params = job.user, job.params
    upload = job_dir(job) / "upload"
    if user is None or not may_import(user):
        _update(job_id, state=Job.State.FAILED, message="Importing needs the manager role in some game.")
        return {"error": "not allowed"}
    entries = [p for p in upload.iterdir()] if upload.is_dir() else []
    root = entries[0] if len(entries) == 1 and entries[0].is_dir() else upload  # a ZIP of one folder
    _update(job_id, state=Job.State.RUNNING, message="Reading the dataset")
    done, not_yours = 0, []

    def progress(games):
        nonlocal done
        games = list(games)
        _update(job_id, total=len(games), message="Storing games")
        for game in games:
            existing = _stored(game.slug, game.language) if params["replace"] and not user.is_superuser else None
            if existing is not None and not has_role(role_of(user, existing), MANAGER):
                not_yours.append({"slug": game.slug, "title": game.title, "status": "refused", "questions": 0, "problems": [
                    {"severity": "error", "where": game.slug, "action": "not replaced",
                     "message": "a game with this name exists and you are not its manager"}]})
            else:
                yield game
            done += 1
            _update(job_id, done=done)

    try:
        summary = import_dataset(params["format"], root, replace=params["replace"], user=user, progress=progress)
    except Exception as exc:
        log.exception("import job %s failed", job_id)
        _update(job_id, state=Job.State.FAILED, message=f"The import failed ({exc}).")
        return {"error": str(exc)}
    finally:
        shutil.rmtree(job_dir(job), ignore_errors=True)
    games = []
    for imported in summary.games:
        row = _stored(imported.slug, imported.language)
        if row is not None and imported.status in ("created", "replaced"):
            Membership.objects.get_or_create(user=user, game=row, defaults={"role": Membership.Role.MANAGER})
        games.append({"slug": row.slug if row else "", "title": imported.title, "status": imported.status,
                      "questions": imported.questions, "problems": _problem_dicts(imported.problems)})
    games += not_yours
    result = {"games": games, "problems": _problem_dicts(summary.problems)}
    failed = len(summary.failed) + len(not_yours)
    state = Job.State.DONE if len(games) > failed else Job.State.FAILED
    if games:
        message = f"{len(games) - failed} game(s) imported, {failed} not imported."
    elif summary.errors:  # e.g. a Casebook folder whose checksums or version do not match
        message = f"Nothing was imported: {summary.errors[0].message}"
    else:
        message = "No game was found in the upload; see the problems below."
    _update(job_id, state=state, result=result, message=message)
    return result

