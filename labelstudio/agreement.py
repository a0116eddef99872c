"""Agreement between Label Studio annotators, from the contributions a pull recorded.

Each live :class:`~labelstudio.models.PulledItem` is one annotator's judgement. Within a task,
an annotator who annotated it but did not mark a span (or draw a relation) rates that item
"none", so leaving something out counts as disagreeing. The figures use the same kappa as
Casebook's own judgements (:func:`review.agreement.ratings_agreement`).
"""
from __future__ import annotations

from collections import defaultdict

from annotate.models import Game
from casebook.agreement import RelationshipAgreement, ratings_agreement

from .models import PulledItem

NONE = "none"


def _fill(by_item: dict, annotators_of: dict[int, set[str]], task_of: dict) -> dict:
    for item, ratings in by_item.items():
        for annotator in annotators_of[task_of[item]]:
            ratings.setdefault(annotator, NONE)
    return by_item


def labelstudio_agreement(game: Game) -> dict[str, RelationshipAgreement | None]:
    """κ on span labels and on relation labels, and per-option agreement on MCQ reviews."""
    rows = list(PulledItem.objects.filter(link__game=game, deleted_at__isnull=True)
                .select_related("span", "relationship").order_by("pk"))
    annotators_of: dict[int, set[str]] = defaultdict(set)
    for row in rows:
        annotators_of[row.task_id].add(row.annotator)
    spans: dict[tuple, dict[str, str]] = defaultdict(dict)
    relations: dict[tuple, dict[str, str]] = defaultdict(dict)
    options: dict[tuple, dict[str, str]] = defaultdict(dict)
    task_of: dict[tuple, int] = {}
    for row in rows:
        if row.kind == PulledItem.Kind.SPAN and row.span is not None:
            item = ("span", row.span.character_id, row.span.start, row.span.end)
            spans[item][row.annotator] = row.value.get("label") or row.label
        elif row.kind == PulledItem.Kind.RELATION and row.relationship is not None:
            item = ("relation", row.relationship.target_id, row.relationship.source_id)
            relations[item][row.annotator] = "+".join(sorted(row.value.get("labels") or [])) or NONE
        elif row.kind == PulledItem.Kind.REVIEW:
            correct, rejected = row.value.get("correct"), set(row.value.get("rejected") or [])
            for pk in row.value.get("distractors") or []:
                item = ("option", row.question_id, pk)
                options[item][row.annotator] = "rejected" if pk in rejected else "accepted"
                task_of[item] = row.task_id
            for pk in correct or []:
                item = ("key", row.question_id, pk)
                options[item][row.annotator] = "correct"
                task_of[item] = row.task_id
            continue
        else:
            continue
        task_of[item] = row.task_id
    for item, ratings in options.items():  # an annotator who did not mark a key option says "not correct"
        if item[0] == "key":
            for annotator in annotators_of[task_of[item]]:
                ratings.setdefault(annotator, "not correct")
    return {
        "span labels": ratings_agreement(_fill(spans, annotators_of, task_of)),
        "relation labels": ratings_agreement(_fill(relations, annotators_of, task_of)),
        "option reviews": ratings_agreement(options),
    }


def contributions(game: Game) -> list[dict]:
    """Per Label Studio annotator: their Casebook user (if any) and how many spans, relations and
    reviews they contributed, and how many of those were deleted in Label Studio since."""
    from django.db.models import Count, Q

    per: dict[str, dict] = {}
    rows = (PulledItem.objects.filter(link__game=game).values("annotator", "user__username", "kind")
            .annotate(n=Count("pk"), deleted=Count("pk", filter=Q(deleted_at__isnull=False))).order_by("annotator", "kind"))
    for row in rows:
        name = row["annotator"] or "(before annotators were recorded)"
        entry = per.setdefault(name, {"annotator": name, "user": row["user__username"] or "", "span": 0, "relation": 0,
                                      "review": 0, "deleted": 0})
        entry[row["kind"]] += row["n"]
        entry["deleted"] += row["deleted"]
        entry["user"] = entry["user"] or row["user__username"] or ""
    return list(per.values())
