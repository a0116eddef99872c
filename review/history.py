"""Audit history of reviewed items and revert to an earlier version.

Entries are ``casebook.models.AuditEntry`` rows (written through ``casebook.audit``) with JSON snapshots (the same shape the annotate
services write: concrete fields by attname, plus ``options`` and ``evidence`` for questions), so the
history of an item mixes edits from the editor and transitions from the review workflow.
Reverting restores the *content* of a snapshot (stem, options, labels, evidence …) and is itself
an audited change; the workflow fields (status, reviewer, author) are left to the state machine.
"""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.db.models import F

from annotate.models import EvidenceSpan, Option, Question, ReasoningChain, Relationship, SpanLabelConflict
from annotate.services.snapshots import record_change, snapshot_item
from casebook.audit import HistoryRow, diff, snapshot_option
from casebook.interchange import OptionOrigin, OptionReview
from casebook.models import AuditEntry

MODELS: dict[str, type[models.Model]] = {
    "question": Question,
    "relationship": Relationship,
    "reasoningchain": ReasoningChain,
    "spanlabelconflict": SpanLabelConflict,
}
# Never restored: identity, bookkeeping and workflow fields.
NOT_RESTORED = {"id", "game_id", "created_at", "updated_at", "version", "status", "author_id", "reviewer_id",
                "reject_reason", "position"}


class AuditError(ValueError):
    """The history request cannot be carried out; the message is meant for the user."""


def get_item(game, kind: str, pk: int) -> models.Model:
    """The reviewed item of ``game`` with this type and id; AuditError when unknown."""
    model = MODELS.get(kind)
    if model is None:
        raise AuditError(f"Unknown item type {kind!r}; expected one of {', '.join(MODELS)}.")
    item = model.objects.filter(game=game, pk=pk).first()
    if item is None:
        raise AuditError(f"No {kind} #{pk} in this game (it may have been deleted).")
    return item


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
    options = [snapshot_option(o) for o in options]
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


