"""The audit summary a Casebook document carries, and what an import records in the audit log.

A document carries a summary of the game's audit log (entries per action, item type and user;
first and last time), not the snapshots themselves. Importing a document writes one audit entry
(``casebook-import``) holding that summary and each item's review people (author, reviewer,
approval time) as named in the document. A later export adds the summary recorded there to the
entries made on this server since that import (earlier ones of a replaced game are still in the log,
but the document replaced them), and names people who have no account here as recorded — so the
import → export round trip gives back the same document.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from annotate import models as m
from casebook.models import AuditEntry

IMPORT_ACTION = "casebook-import"


def _latest_import(row: m.Game) -> AuditEntry | None:
    return (AuditEntry.objects.filter(game=row, item_type="game", item_id=row.pk, action=IMPORT_ACTION)
            .order_by("-at", "-id").first())


def imported_record(row: m.Game) -> dict[str, dict[str, str]]:
    """People per document item id (author, reviewer, approved_at, created_by …) as the last import
    recorded them ({} if never imported)."""
    entry = _latest_import(row)
    return dict((entry.after or {}).get("items", {})) if entry else {}


def summary_of(row: m.Game) -> dict[str, Any]:
    """Counts of the game's audit entries: those summarised at its last import plus this server's since."""
    imported = _latest_import(row)
    local = AuditEntry.objects.filter(game=row).exclude(action=IMPORT_ACTION).select_related("user")
    if imported is not None:
        local = local.filter(pk__gt=imported.pk)
    actions, types, users = Counter(), Counter(), Counter()
    times = []
    for entry in local.only("action", "item_type", "at", "user__username"):
        actions[entry.action] += 1
        types[entry.item_type] += 1
        users[entry.user.get_username() if entry.user else ""] += 1
        times.append(entry.at.isoformat())
    before = (imported.after or {}).get("audit", {}) if imported else {}
    actions.update(before.get("by_action", {}))
    types.update(before.get("by_item_type", {}))
    users.update(before.get("by_user", {}))
    times += [t for t in (before.get("first", ""), before.get("last", "")) if t]
    return {
        "entries": sum(actions.values()),
        "by_action": dict(sorted(actions.items())),
        "by_item_type": dict(sorted(types.items())),
        "by_user": dict(sorted(users.items())),
        "first": min(times) if times else "",
        "last": max(times) if times else "",
    }


def record_import(row: m.Game, document: dict[str, Any], user: Any = None,
                  unplaced: dict[str, list] | None = None) -> AuditEntry:
    """The one audit entry an import writes: the document's summary, review people per item, and the
    validation answers and relationship labels of people with no account here (``unplaced``)."""
    items: dict[str, dict[str, str]] = {}

    def note(item_id: str, **names: str) -> None:
        kept = {role: name for role, name in names.items() if name}
        if kept:
            items[item_id] = kept

    for kind in ("relationships", "chains", "questions"):
        for item in document.get(kind, []):
            review = item["review"]
            note(item["id"], author=review["author"], reviewer=review["reviewer"], approved_at=review["approved_at"])
    for span in document.get("spans", []):
        note(span["id"], created_by=span["created_by"])
    for n, session in enumerate(document.get("sessions", []), 1):
        for turn in session["turns"]:
            for j, a in enumerate(turn["annotations"], 1):
                note(f"session{n}/turn{turn['index']}/{j}", annotator=a["annotator"], author=a["review"]["author"],
                     reviewer=a["review"]["reviewer"])
    for n, run in enumerate(document.get("synthesis", []), 1):
        note(f"synthesis{n}", user=run["user"])
    workflow = document.get("workflow", {})
    for n, comment in enumerate(workflow.get("comments", []), 1):
        note(f"comment{n}", author=comment["author"])
    if unplaced:
        items["_unplaced"] = unplaced
    return AuditEntry.objects.create(
        game=row, user=user if getattr(user, "is_authenticated", False) else None, item_type="game",
        item_id=row.pk, action=IMPORT_ACTION,
        after={"format_version": document.get("version"), "audit": document.get("audit", {}), "items": items},
    )
