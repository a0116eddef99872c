"""Snapshots of reviewed items for the audit trail: a question with its options, a chain with
its node keys, everybody's evidence ids. Shared by the editors, the review state machine and the
history page, so the history of an item mixes edits and workflow transitions in one shape."""
from __future__ import annotations

from typing import Any

from django.db import models

from annotate.models import Option, Question, ReasoningChain
from annotate.services.questions import snapshot as question_snapshot
from casebook import audit
from casebook.models import AuditEntry


def snapshot_item(item: models.Model) -> dict[str, Any]:
    """JSON snapshot of a reviewed item, with a question's options and everybody's evidence ids."""
    if isinstance(item, Question):
        return question_snapshot(item, list(Option.objects.filter(question=item)))
    extra: dict[str, Any] = {}
    if isinstance(item, ReasoningChain):
        extra["nodes"] = list(item.nodes.order_by("position", "id").values_list("key", flat=True))
    if hasattr(item, "evidence"):
        extra["evidence"] = sorted(item.evidence.values_list("pk", flat=True))
    return audit.snapshot(item, **extra)


def record_change(game, user, item: models.Model, action: str, before: dict | None,
                  after: dict | None = None) -> AuditEntry:
    """Record one change; ``after`` defaults to a fresh snapshot of ``item``."""
    if after is None and action != "delete":
        after = snapshot_item(item)
    return audit.record(game, user, item, action, before, after)
