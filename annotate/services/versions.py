"""The one optimistic version check of every editable object (questions, relationships, chains).

An editor form carries the ``version`` it was loaded at; saving bumps it with a compare-and-set
UPDATE inside the saving transaction, so of two tabs that loaded version 3 only the first save
wins and the second gets :class:`VersionConflict` with the saved row — its own input is handed
back untouched for the conflict screen (nothing silently overwritten, nothing lost).
"""
from __future__ import annotations

from django.db import models
from django.db.models import F


class VersionConflict(Exception):
    """Somebody saved a newer version since this form was loaded; ``current`` is the saved row."""

    def __init__(self, current: models.Model):
        super().__init__(f"{current._meta.verbose_name.capitalize()} {current.pk} was saved by someone else "
                         f"(now version {current.version}).")
        self.current = current


def claim(item: models.Model, expected_version: int | None, queryset: models.QuerySet | None = None) -> None:
    """Bump ``item``'s version if it is still ``expected_version``, else raise VersionConflict with
    the saved row (read through ``queryset`` when given, e.g. with its options prefetched)."""
    model = type(item)
    updated = model.objects.filter(pk=item.pk, version=expected_version).update(version=F("version") + 1)
    if not updated:
        raise VersionConflict((queryset if queryset is not None else model.objects).get(pk=item.pk))
    item.version = expected_version + 1
