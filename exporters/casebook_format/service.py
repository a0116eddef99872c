"""Importing Casebook game folders: everything checked first, then all games in one transaction.

Unlike the published layouts (where each sound game is stored on its own), a Casebook import is
all or nothing: a damaged folder, an unknown version, a game that already exists with other
content (without ``replace``) or a failure while storing any game leaves the database unchanged.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from django.db import transaction

from casebook import interchange as ix

from ..service import ImportedGame, ImportSummary
from .manifest import ManifestError
from .reader import read_folders
from .restore import restore_document

logger = logging.getLogger(__name__)


class _RollBack(Exception):
    """Raised inside the transaction to undo every game of an import that did not fully succeed."""


def import_casebook(
    path: Path, *, replace: bool = False, user: Any = None,
    progress: Callable[[Iterable], Iterable] = lambda it: it,
) -> ImportSummary:
    """Check every folder under ``path``, then store every game or none (see the module docstring)."""
    summary = ImportSummary()
    try:
        documents = read_folders(path)
    except ManifestError as exc:
        summary.problems.append(ix.Problem(file=str(path), message=str(exc), action="nothing was imported",
                                           severity="error"))
        return summary
    except OSError as exc:
        summary.problems.append(ix.Problem(file=str(path), message=f"cannot be read ({exc.strerror or exc})",
                                           action="nothing was imported", severity="error"))
        return summary
    try:
        with transaction.atomic():
            for doc in progress(documents):
                g = doc.data["game"]
                try:
                    with transaction.atomic():
                        built = restore_document(doc.data, doc.images, replace=replace, user=user)
                except Exception:
                    logger.exception("storing Casebook game %s", g["slug"])
                    problem = ix.Problem(file=g["slug"], message="could not be stored (details in the server log)",
                                         action="nothing was imported", severity="error")
                    summary.games.append(ImportedGame(g["slug"], g["title"], g["language"], "failed",
                                                      len(doc.data["questions"]), [problem]))
                    continue
                summary.games.append(ImportedGame(g["slug"], g["title"], g["language"], built.status,
                                                  len(doc.data["questions"]), list(built.problems)))
            if summary.failed:
                raise _RollBack
    except _RollBack:
        for game in summary.games:
            if game.status in {"created", "replaced"}:
                game.status = "rolled back"
                game.problems.append(ix.Problem(file=game.slug, message="not stored: another game of this import "
                                                "failed", action="nothing was imported", severity="error"))
    return summary
