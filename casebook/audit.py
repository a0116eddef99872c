"""The audit trail, one API for every app: who changed what, with JSON snapshots before and after.

Writers call :func:`snapshot` and :func:`record`; readers get :func:`diff` (the fields a change
touched, options shown as "a. text ✓"), :class:`HistoryRow` and :func:`approvals` (who approved
each item, for export provenance). What a reviewed item's snapshot holds (a question's options,
a chain's nodes, evidence ids) is the domain's business: ``annotate.services.snapshots``.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from django.db import models

from casebook.interchange import LETTERS, OptionReview
from casebook.models import AuditEntry


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


def record(game: models.Model, user, item: models.Model, action: str, before: dict | None, after: dict | None) -> AuditEntry:
    """Write one audit entry; ``user`` may be anonymous/None for scripted changes."""
    return AuditEntry.objects.create(
        game=game,
        user=user if getattr(user, "is_authenticated", False) else None,
        item_type=item_type(item),
        item_id=item.pk,
        action=action,
        before=before,
        after=after,
    )


def item_type(item: models.Model) -> str:
    """What audit entries and comments call the item's kind (``question``, ``reasoningchain`` …)."""
    return item._meta.model_name


def _review_note(option: dict) -> str:
    review = option.get("review")
    return f" ({review})" if review in {OptionReview.PENDING, OptionReview.REJECTED} else ""


def _display(key: str, value: Any) -> str:
    """Readable text of a snapshot value (options as "a. text ✓ / b. text")."""
    if value is None or value == "":
        return ""
    if key == "options" and isinstance(value, list):
        return " / ".join(f"{LETTERS[i] if i < len(LETTERS) else i}. {o.get('text', '')}{' ✓' if o.get('correct') else ''}"
                          f"{_review_note(o)}" for i, o in enumerate(map(snapshot_option, value)))
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


@dataclass
class Change:
    field: str
    before: Any
    after: Any

    @property
    def before_text(self) -> str:
        return _display(self.field, self.before)

    @property
    def after_text(self) -> str:
        return _display(self.field, self.after)


@dataclass
class HistoryRow:
    entry: AuditEntry
    changes: list[Change] = field(default_factory=list)
    part: str = ""  # e.g. "node n3" for a chain node's entry shown in its chain's history

    @property
    def can_restore_after(self) -> bool:
        return bool(self.entry.after) and not self.part

    @property
    def can_restore_before(self) -> bool:
        return bool(self.entry.before) and not self.part


def snapshot_option(value: Any) -> dict:
    """An option of a stored snapshot as a dict: entries written before the one snapshot shape
    (``annotate.services.questions.option_snapshot``) hold plain texts, [text, correct, review] lists or only text/correct."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list | tuple):  # [text, correct, review] (Label Studio pulls)
        return dict(zip(("text", "correct", "review"), value, strict=False))
    return {"text": str(value)}


def _comparable(key: str, value: Any) -> Any:
    if key == "options" and isinstance(value, list):
        return [(o.get("text"), bool(o.get("correct")), o.get("review")) for o in map(snapshot_option, value)]
    return value


def diff(before: dict | None, after: dict | None) -> list[Change]:
    """Fields whose value differs (bookkeeping fields left out)."""
    before, after = before or {}, after or {}
    out = []
    for key in sorted(set(before) | set(after)):
        if key in {"updated_at", "created_at", "version"} or key.startswith("_"):
            continue
        b, a = before.get(key), after.get(key)
        if _comparable(key, b) != _comparable(key, a):
            out.append(Change(key, b, a))
    return out


def approvals(game, item_type: str = "question") -> dict[int, dict[str, str]]:
    """Who approved each item and when (the latest approve entry per item), for export provenance:
    ``{item_id: {"approved_by": username, "approved_at": ISO time}}``."""
    out: dict[int, dict[str, str]] = {}
    rows = (AuditEntry.objects.filter(game=game, item_type=item_type, action="approve")
            .order_by("at", "id").values_list("item_id", "user__username", "at"))
    for item_id, username, at in rows:
        out[item_id] = {"approved_by": username or "", "approved_at": at.isoformat()}
    return out
