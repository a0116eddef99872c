"""Audit history of reviewed items and revert to an earlier version.

Entries are ``annotate.models.AuditEntry`` rows with JSON snapshots (the same shape the annotate
services write: concrete fields by attname, plus ``options`` and ``evidence`` for questions), so the
history of an item mixes edits from the editor and transitions from the review workflow.
Reverting restores the *content* of a snapshot (stem, options, labels, evidence …) and is itself
an audited change; the workflow fields (status, reviewer, author) are left to the state machine.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.db.models import F

from annotate.models import AuditEntry, EvidenceSpan, Option, Question, ReasoningChain, Relationship
from annotate.services import audit as base_audit
from annotate.services.questions import snapshot as question_snapshot
from casebook.interchange import LETTERS, OptionOrigin, OptionReview

MODELS: dict[str, type[models.Model]] = {
    "question": Question,
    "relationship": Relationship,
    "reasoningchain": ReasoningChain,
}
# Never restored: identity, bookkeeping and workflow fields.
NOT_RESTORED = {"id", "game_id", "created_at", "updated_at", "version", "status", "author_id", "reviewer_id",
                "reject_reason", "position"}


class AuditError(ValueError):
    """The history request cannot be carried out; the message is meant for the user."""


def item_type(item: models.Model) -> str:
    return item._meta.model_name


def get_item(game, kind: str, pk: int) -> models.Model:
    """The reviewed item of ``game`` with this type and id; AuditError when unknown."""
    model = MODELS.get(kind)
    if model is None:
        raise AuditError(f"Unknown item type {kind!r}; expected one of {', '.join(MODELS)}.")
    item = model.objects.filter(game=game, pk=pk).first()
    if item is None:
        raise AuditError(f"No {kind} #{pk} in this game (it may have been deleted).")
    return item


def snapshot_item(item: models.Model) -> dict[str, Any]:
    """JSON snapshot of a reviewed item, with a question's options and everybody's evidence ids."""
    if isinstance(item, Question):
        return question_snapshot(item, list(Option.objects.filter(question=item)))
    extra: dict[str, Any] = {}
    if isinstance(item, ReasoningChain):
        extra["nodes"] = list(item.nodes.order_by("position", "id").values_list("key", flat=True))
    if hasattr(item, "evidence"):
        extra["evidence"] = sorted(item.evidence.values_list("pk", flat=True))
    return base_audit.snapshot(item, **extra)


def record_change(game, user, item: models.Model, action: str, before: dict | None,
                  after: dict | None = None) -> AuditEntry:
    """Record one change; ``after`` defaults to a fresh snapshot of ``item``."""
    if after is None and action != "delete":
        after = snapshot_item(item)
    return base_audit.record(game, user, item, action, before, after)


def _review_note(option: dict) -> str:
    review = option.get("review")
    return f" ({review})" if review in {OptionReview.PENDING, OptionReview.REJECTED} else ""


def _display(key: str, value: Any) -> str:
    """Readable text of a snapshot value (options as "a. text ✓ / b. text")."""
    if value is None or value == "":
        return ""
    if key == "options" and isinstance(value, list):
        return " / ".join(f"{LETTERS[i] if i < len(LETTERS) else i}. {o.get('text', '')}{' ✓' if o.get('correct') else ''}"
                          f"{_review_note(o)}" for i, o in enumerate(map(_option, value)))
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


def _option(value: Any) -> dict:
    """An option of a stored snapshot as a dict: entries written before the one snapshot shape
    (``annotate.services.questions.option_snapshot``) hold plain texts, [text, correct, review] lists or only text/correct."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list | tuple):  # [text, correct, review] (Label Studio pulls)
        return dict(zip(("text", "correct", "review"), value, strict=False))
    return {"text": str(value)}


def _comparable(key: str, value: Any) -> Any:
    if key == "options" and isinstance(value, list):
        return [(o.get("text"), bool(o.get("correct")), o.get("review")) for o in map(_option, value)]
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


USER_FIELDS = {"author_id", "reviewer_id"}


def history(game, kind: str, pk: int) -> list[HistoryRow]:
    """Every audit entry of one item, newest first, with the fields each one changed (user ids
    shown as usernames)."""
    entries = list(AuditEntry.objects.filter(game=game, item_type=kind, item_id=pk).select_related("user"))
    rows = [HistoryRow(e, diff(e.before, e.after)) for e in entries]
    if kind == "reasoningchain":  # node edits (audited by the chain editor) belong to the chain's story
        nodes = AuditEntry.objects.filter(game=game, item_type="chainnode").filter(
            models.Q(after__chain_id=pk) | models.Q(before__chain_id=pk)).select_related("user")
        rows += [HistoryRow(e, diff(e.before, e.after), f"node {(e.after or e.before or {}).get('key', e.item_id)}")
                 for e in nodes]
        rows.sort(key=lambda r: (r.entry.at, r.entry.pk), reverse=True)
    ids = {v for r in rows for c in r.changes if c.field in USER_FIELDS for v in (c.before, c.after) if v}
    names = dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username")) if ids else {}
    for r in rows:
        for c in r.changes:
            if c.field in USER_FIELDS:
                c.field = c.field.removesuffix("_id")
                c.before, c.after = names.get(c.before, c.before), names.get(c.after, c.after)
    return rows


def _restore_fields(item: models.Model, snap: dict) -> list[str]:
    """Copy restorable concrete fields from ``snap`` onto ``item``; FKs whose target is gone become NULL."""
    changed = []
    for f in item._meta.concrete_fields:
        if f.attname in NOT_RESTORED or f.attname not in snap:
            continue
        value = snap[f.attname]
        if f.is_relation and value is not None and not f.related_model.objects.filter(pk=value).exists():
            if not f.null:
                raise AuditError(f"Cannot restore: the {f.name} it pointed to no longer exists.")
            value = None
        if isinstance(f, models.DateTimeField | models.DateField):
            continue
        setattr(item, f.attname, value)
        changed.append(f.attname)
    return changed


def _restore_options(question: Question, options: list) -> None:
    options = [_option(o) for o in options]
    current = {o.text: o for o in Option.objects.filter(question=question)}
    Option.objects.filter(question=question).delete()
    rows = []
    for position, o in enumerate(options):
        old = current.get(o.get("text"))
        rows.append(Option(
            question=question, position=position, text=o.get("text", ""), is_correct=bool(o.get("correct")),
            origin=o.get("origin") or (old.origin if old else OptionOrigin.HUMAN),
            model_name=o.get("model") or (old.model_name if old else ""),
            review=o.get("review") or (old.review if old else OptionReview.ACCEPTED),
        ))
    Option.objects.bulk_create(rows)


@transaction.atomic
def revert(game, entry: AuditEntry, user, *, side: str = "after") -> models.Model:
    """Restore the item to the snapshot ``entry.after`` (the version that change produced) or
    ``entry.before`` (the version before it); bumps the version and audits the revert."""
    if entry.game_id != game.pk:
        raise AuditError("That history entry belongs to another game.")
    if side not in {"after", "before"}:
        raise AuditError("Choose the version after or before the change.")
    snap = entry.after if side == "after" else entry.before
    if not snap:
        raise AuditError("That history entry has no snapshot on this side (it is a creation or a deletion).")
    model = MODELS.get(entry.item_type)
    if model is None:
        raise AuditError(f"Items of type {entry.item_type!r} cannot be reverted here.")
    item = model.objects.select_for_update().filter(game=game, pk=entry.item_id).first()
    if item is None:
        raise AuditError("The item was deleted; it cannot be reverted in place.")
    before = snapshot_item(item)
    _restore_fields(item, snap)
    item.version = F("version") + 1
    item.save()
    item.refresh_from_db()
    if isinstance(item, Question) and "options" in snap:
        _restore_options(item, snap["options"])
    if "evidence" in snap and hasattr(item, "evidence"):
        item.evidence.set(EvidenceSpan.objects.filter(game=game, pk__in=snap["evidence"]))
    after = snapshot_item(item)
    after["_reverted_to"] = {"entry": entry.pk, "side": side}
    record_change(game, user, item, "revert", before, after)
    return item


def approvals(game, item_type: str = "question") -> dict[int, dict[str, str]]:
    """Who approved each item and when (the latest approve entry per item), for export provenance:
    ``{item_id: {"approved_by": username, "approved_at": ISO time}}``."""
    out: dict[int, dict[str, str]] = {}
    rows = (AuditEntry.objects.filter(game=game, item_type=item_type, action="approve")
            .order_by("at", "id").values_list("item_id", "user__username", "at"))
    for item_id, username, at in rows:
        out[item_id] = {"approved_by": username or "", "approved_at": at.isoformat()}
    return out
