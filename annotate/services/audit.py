"""The audit trail: who changed what, with JSON snapshots before and after."""
from __future__ import annotations

import datetime
from typing import Any

from django.db import models

from annotate.models import AuditEntry, Game


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, models.fields.files.FieldFile):
        return value.name or ""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def snapshot(instance: models.Model, **extra: Any) -> dict[str, Any]:
    """A JSON-safe dict of the concrete fields (FKs as ids), plus ``extra`` (e.g. options)."""
    data = {}
    for f in instance._meta.concrete_fields:
        data[f.attname] = _plain(getattr(instance, f.attname))
    data.update({k: _plain(v) for k, v in extra.items()})
    return data


def record(game: Game, user, item: models.Model, action: str, before: dict | None, after: dict | None) -> AuditEntry:
    """Write one audit entry; ``user`` may be anonymous/None for scripted changes."""
    return AuditEntry.objects.create(
        game=game,
        user=user if getattr(user, "is_authenticated", False) else None,
        item_type=item._meta.model_name,
        item_id=item.pk,
        action=action,
        before=before,
        after=after,
    )
