"""Relationship editing: a directed edge "target is <labels> of source" with Conan labels."""
from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from annotate.models import Character, EvidenceSpan, Game, Relationship
from annotate.services import versions
from casebook import audit, conan
from casebook.interchange import Status


class RelationshipError(ValueError):
    """The input cannot be saved; the message is meant for the annotator."""


def known_labels() -> list[str]:
    """Every fine Conan label (lowercase, ``x`` = the other person), in taxonomy order."""
    return conan.all_fine_labels()


def search_labels(query: str, limit: int = 30) -> list[dict]:
    """Labels matching ``query`` in English or Chinese, exact match first (see conan.search_labels)."""
    return [{"label": m.label, "zh": m.zh, "canonical": m.canonical, "category": m.category,
             "category_zh": m.category_zh, "exact": m.exact}
            for m in conan.search_labels(query)[:limit]]


def zh_name(label: str) -> str:
    """The Chinese name of a Conan label, shown beside the English one."""
    return conan.zh_name(label)


def snapshot(rel: Relationship) -> dict:
    return audit.snapshot(rel, evidence=sorted(e.pk for e in rel.evidence.all()))


def clean_labels(labels: Iterable[str], keep: Iterable[str] = ()) -> list[str]:
    """Normalise, de-duplicate (order kept) and check against the Conan taxonomy.

    Labels in ``keep`` (those an imported edge already had) pass even when the taxonomy lacks
    them, so editing an imported relationship never forces dropping published data."""
    out: list[str] = []
    for label in labels:
        label = conan.normalize_label(str(label))
        if label and label not in out:
            out.append(label)
    if not out:
        raise RelationshipError("Choose at least one relationship label.")
    kept = {conan.normalize_label(label) for label in keep}
    unknown = [label for label in conan.validate_labels(out) if label not in kept]
    if unknown:
        raise RelationshipError(f"Not a Conan label: {', '.join(unknown)}. Pick labels from the list.")
    return out


@transaction.atomic
def save_relationship(
    game: Game, rel: Relationship | None, *, source_id: int, target_id: int, labels: Iterable[str],
    note: str = "", evidence_ids: Iterable[int] = (), status: str = Status.DRAFT, user=None,
    expected_version: int | None = None,
) -> Relationship:
    """Create or update an edge; both ends and all spans must belong to the game. An update checks
    the version the editor loaded (``expected_version``, else the one ``rel`` was read at) and
    raises VersionConflict when someone saved in between."""
    ends = {c.pk: c for c in Character.objects.filter(game=game, pk__in=[source_id, target_id])}
    if source_id not in ends or target_id not in ends:
        raise RelationshipError("Both ends must be characters (or non-players) of this game.")
    if source_id == target_id:
        raise RelationshipError("A relationship joins two different characters.")
    labels = clean_labels(labels, keep=rel.labels if rel else ())
    evidence_ids = sorted({int(i) for i in evidence_ids})
    if len(EvidenceSpan.objects.filter(game=game, pk__in=evidence_ids)) != len(evidence_ids):
        raise RelationshipError("Some evidence spans are not part of this game.")
    if status not in set(Status):
        raise RelationshipError(f"Unknown status {status!r}.")
    if rel is None:
        before = None
        position = Relationship.objects.filter(game=game).count()
        rel = Relationship(game=game, position=position, author=user if getattr(user, "is_authenticated", False) else None)
    else:
        before = snapshot(rel)
        versions.claim(rel, rel.version if expected_version is None else expected_version,
                       Relationship.objects.select_related("source", "target", "author"))
    rel.source, rel.target = ends[source_id], ends[target_id]
    rel.labels, rel.note, rel.status = labels, note.strip(), status
    rel.save()
    rel.evidence.set(evidence_ids)
    rel._prefetched_objects_cache = {}
    audit.record(game, user, rel, "update" if before else "create", before, snapshot(rel))
    return rel


@transaction.atomic
def delete_relationship(rel: Relationship, user=None) -> None:
    before, pk, game = snapshot(rel), rel.pk, rel.game
    rel.delete()
    rel.pk = pk
    audit.record(game, user, rel, "delete", before, None)
