"""Pull finished Label Studio annotations back into Casebook as drafts.

All network reads happen first (:func:`pull_game` checks the project and exports it); then one
database transaction imports everything, so a failed pull changes nothing in Casebook. Each
annotation result is recorded as a :class:`~labelstudio.models.PulledItem` keyed by annotation id
and region id with a fingerprint of what was imported: pulling twice changes nothing, and an
annotation edited in Label Studio since the last pull updates what it created (unless a Casebook
reviewer has moved that item on from draft, which is reported and left alone).

* span regions → :class:`~annotate.models.EvidenceSpan` in the character's script, offsets checked
  and repaired by :mod:`labelstudio.offsets`; a span already in Casebook is reused, not duplicated;
* relations between regions → draft :class:`~annotate.models.Relationship` (the character each end
  names; "A → B labelled father of x" = A is father of B);
* MCQ reviews → ``Option.is_correct`` and ``Option.review`` (accepted / rejected) of generated
  distractors; a changed question goes back to draft for review.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotate.models import Character, EvidenceSpan, Game, Question, Relationship, SpanLabelConflict
from annotate.services.questions import snapshot as question_snapshot
from annotate.services.relationships import RelationshipError, clean_labels, save_relationship
from annotate.services.states import flag_conflict, withdraw_conflict
from casebook import audit, conan
from casebook.interchange import OptionReview, SpanDocument, Status, name_key
from generation.distractors import refresh_answer
from review.models import Comment

from . import config
from .agreement import labelstudio_agreement
from .client import LabelStudioClient, LabelStudioError
from .identity import find_link
from .models import LabelStudioLink, LabelStudioTask, PulledItem
from .offsets import OffsetError, place

Progress = Callable[[int, int, str], None]
BUCKETS = ("created", "updated", "unchanged", "deleted", "conflict", "skipped")


@dataclass
class PullReport:
    """What the pull did, item by item: kind (span / relation / review / task), task id, detail."""

    project_id: int = 0
    tasks: int = 0
    annotations: int = 0
    created: list[dict[str, Any]] = field(default_factory=list)
    updated: list[dict[str, Any]] = field(default_factory=list)
    unchanged: list[dict[str, Any]] = field(default_factory=list)
    deleted: list[dict[str, Any]] = field(default_factory=list)
    conflict: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    agreement: dict[str, str] = field(default_factory=dict)  # between Label Studio annotators, when several

    def add(self, bucket: str, kind: str, task_id: int, detail: str, **extra: Any) -> None:
        getattr(self, bucket).append({"kind": kind, "task": task_id, "detail": detail, **extra})

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for bucket in BUCKETS:
            per: dict[str, int] = {}
            for item in getattr(self, bucket):
                per[item["kind"]] = per.get(item["kind"], 0) + 1
            out[bucket] = per
        return out

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated)

    def summary(self) -> str:
        parts = []
        for bucket, per in self.counts().items():
            if bucket in ("deleted", "conflict") and not per:
                continue  # named only when there are some
            inner = ", ".join(f"{n} {kind}" for kind, n in sorted(per.items()))
            parts.append(f"{sum(per.values())} {bucket}" + (f" ({inner})" if inner else ""))
        return f"project {self.project_id}: {self.annotations} annotation(s) on {self.tasks} task(s); " + "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {"project_id": self.project_id, "tasks": self.tasks, "annotations": self.annotations,
                **{b: getattr(self, b) for b in BUCKETS}, "notes": self.notes, "agreement": self.agreement, "counts": self.counts(),
                "summary": self.summary()}


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def person_in(quote: str, characters: list[Character]) -> Character | None:
    """The character a span names (longest name or alias found, middle dots folded); None if none or ambiguous."""
    q = name_key(quote)
    best: dict[int, set[int]] = {}
    by_pk = {}
    for c in characters:
        for name in [c.name, *(c.aliases or [])]:
            key = name_key(name)
            if key and key in q:
                best.setdefault(len(key), set()).add(c.pk)
                by_pk[c.pk] = c
    if not best:
        return None
    top = best[max(best)]
    return by_pk[next(iter(top))] if len(top) == 1 else None


def _contributor(ann: dict[str, Any], users: dict[int, str]) -> str:
    """The Label Studio user who made the annotation (email, else username, else "user N")."""
    who = ann.get("completed_by")
    if isinstance(who, dict):
        return str(who.get("email") or who.get("username") or f"user {who.get('id')}")
    if isinstance(who, int):
        return users.get(who, f"Label Studio user {who}")
    return "unknown Label Studio user"


def _relation_key(item: dict[str, Any]) -> str:
    """"from>to" in reading order (the relation's target first)."""
    a_id, b_id = str(item.get("from_id")), str(item.get("to_id"))
    return f"{b_id}>{a_id}" if item.get("direction") == "left" else f"{a_id}>{b_id}"


def _present_keys(kind: str, ann_id: int, result: list[dict[str, Any]]) -> set[tuple[int, str]]:
    """Every (annotation, region / relation / review) the annotation still holds in Label Studio,
    importable or not: what is missing from these was deleted there."""
    if kind == LabelStudioTask.Kind.QUESTION:
        return {(ann_id, "review")}
    keys = {(ann_id, str(item.get("id") or "")) for item in result if item.get("type") == "labels"}
    return keys | {(ann_id, _relation_key(item)) for item in result if item.get("type") == "relation"}


@dataclass
class _Verdict:
    """One annotation's review of an MCQ task."""

    ann_id: int
    annotator: str
    correct: set[int] | None
    rejected: set[int]
    fingerprint: str
    row: PulledItem | None


class _Importer:
    """One pull's import, run inside a transaction; fills the report."""

    def __init__(self, game: Game, link: LabelStudioLink, report: PullReport, user, *, users: dict[int, str] | None = None,
                 keep_deleted: bool = False) -> None:
        self.game, self.link, self.report = game, link, report
        self.user = user if getattr(user, "is_authenticated", False) else None
        self.users, self.keep_deleted = users or {}, keep_deleted
        self.tasks = {t.task_id: t for t in link.tasks.all()}
        self.characters = {c.pk: c for c in game.characters.all()}
        self.questions = {q.pk: q for q in game.questions.prefetch_related("options")}
        self.pulled = {(p.annotation_id, p.key): p for p in link.pulled.select_related("span", "relationship", "question")}
        self.seen: set[tuple[int, str]] = set()
        self.annotator = ""
        self._casebook_users: dict[str, Any] = {}

    def casebook_user(self, annotator: str):
        """The member of this game whose username or email is the Label Studio user's name, else None
        (a non-member of the same name is not credited: work is only attributed within the game's team)."""
        if annotator not in self._casebook_users:
            from django.contrib.auth import get_user_model
            from django.db.models import Q

            users = get_user_model().objects.filter(memberships__game=self.game)
            local = annotator.split("@", 1)[0]
            self._casebook_users[annotator] = (users.filter(Q(email__iexact=annotator) | Q(username__iexact=annotator)).first()
                                               or users.filter(username__iexact=local).first())
        return self._casebook_users[annotator]

    def _remember(self, row: PulledItem | None, ann_id: int, task_id: int, key: str, kind: str, fp: str, *,
                  value: dict[str, Any], created: bool = False, **links: Any) -> None:
        if row is None:
            row = PulledItem(link=self.link, annotation_id=ann_id, task_id=task_id, key=key, kind=kind, created_item=created)
        for name, item in {"fingerprint": fp, "annotator": self.annotator, "user": self.casebook_user(self.annotator),
                           "value": value, "deleted_at": None, **links}.items():
            setattr(row, name, item)
        row.save()
        self.pulled[(ann_id, key)] = row

    def _alive_others(self, row: PulledItem, **item: Any) -> bool:
        return any(r is not row and r.deleted_at is None and (r.annotation_id, r.key) in self.seen
                   and all(getattr(r, f"{k}_id") == v.pk for k, v in item.items()) for r in self.pulled.values())

    # --- tasks ---------------------------------------------------------------------------
    def task(self, task: dict[str, Any]) -> None:
        task_id = int(task.get("id") or 0)
        mapped = self.tasks.get(task_id)
        if mapped is None:
            self.report.add("skipped", "task", task_id, "task was not created by a Casebook push (added in Label Studio); ignored")
            return
        annotations = sorted(task.get("annotations") or [], key=lambda a: (str(a.get("updated_at") or ""), int(a.get("id") or 0)))
        verdicts: list[_Verdict] = []
        for ann in annotations:
            if ann.get("was_cancelled"):
                self.report.add("skipped", "annotation", task_id, f"annotation {ann.get('id')} was skipped (cancelled) in Label Studio")
                continue
            self.report.annotations += 1
            self.annotator = _contributor(ann, self.users)
            self.seen |= _present_keys(mapped.kind, int(ann["id"]), ann.get("result") or [])
            if mapped.kind == LabelStudioTask.Kind.SCRIPT:
                self.script(mapped, int(ann["id"]), ann.get("result") or [])
            else:
                verdict = self.verdict(mapped, task.get("data") or {}, int(ann["id"]), ann.get("result") or [])
                if verdict is not None:
                    verdicts.append(verdict)
        if verdicts:
            self.review(mapped, task.get("data") or {}, verdicts)

    # --- spans and relations -------------------------------------------------------------
    def script(self, mapped: LabelStudioTask, ann_id: int, result: list[dict[str, Any]]) -> None:
        task_id = mapped.task_id
        character = self.characters.get(mapped.object_id)
        if character is None:
            self.report.add("skipped", "span", task_id, "the character of this script was deleted from Casebook")
            return
        regions: dict[str, EvidenceSpan] = {}
        # relation labels searched in the per-region Taxonomy, by the region they were picked on
        picked = {str(item.get("id")): config.relation_labels_of(item.get("value") or {}) for item in result
                  if item.get("type") == "taxonomy" and item.get("from_name") == config.RELATION_TAXONOMY}
        for item in result:
            if item.get("type") == "labels" and item.get("from_name") == config.SPAN_LABELS:
                span = self.span(character, task_id, ann_id, item)
                if span is not None:
                    regions[str(item.get("id"))] = span
        for item in result:
            if item.get("type") == "relation":
                self.relation(task_id, ann_id, item, regions, picked)

    def span(self, character: Character, task_id: int, ann_id: int, item: dict[str, Any]) -> EvidenceSpan | None:
        value = item.get("value") or {}
        labels = value.get("labels") or []
        shown = str(labels[0]) if labels else ""
        label = config.span_label_key(shown)
        rid = str(item.get("id") or "")
        where = f"{character.name}: {value.get('text', '')!r}"[:120]
        if label is None:
            allowed = ", ".join(config.span_label_shown(k, self.game.language) for k in config.SPAN_LABELS_ALL)
            self.report.add("skipped", "span", task_id, f"{where}: label {shown!r} is not one of {allowed}")
            return None
        try:
            placed = place(character.script, value.get("start"), value.get("end"), value.get("text"))
        except OffsetError as exc:
            self.report.add("skipped", "span", task_id, f"{where}: {exc}")
            return None
        repaired = "" if placed.how in ("exact", "offsets-only") else \
            f" (offsets [{value.get('start')}:{value.get('end')}] repaired to [{placed.start}:{placed.end}], {placed.how})"
        fp = _fingerprint(character.pk, placed.start, placed.end, placed.quote, label)
        row = self.pulled.get((ann_id, rid))
        by = f" by {self.annotator}"
        if row is not None and row.fingerprint == fp and row.deleted_at is None:
            if row.span is None:
                self.report.add("unchanged", "span", task_id, f"{where} [{label}]: deleted in Casebook after an earlier pull; "
                                "not recreated")
            else:
                self.report.add("unchanged", "span", task_id, f"{where} [{label}]")
            return row.span
        same = EvidenceSpan.objects.filter(game=self.game, document=SpanDocument.SCRIPT, character=character,
                                           start=placed.start, end=placed.end).first()
        created = False
        if row is not None and row.span is not None and (same is None or same.pk == row.span.pk):
            span = row.span
            before = audit.snapshot(span)
            span.start, span.end, span.quote, span.label = placed.start, placed.end, placed.quote, label
            if span.state == "withdrawn":
                span.state = "draft"
            span.save(update_fields=["start", "end", "quote", "label", "state"])
            audit.record(self.game, self.user, span, "labelstudio-pull", before, audit.snapshot(span))
            self.report.add("updated", "span", task_id, f"{where} [{label}]{by}{repaired}", span=span.pk)
        elif same is not None:
            span = same
            before = audit.snapshot(span)
            if span.state == "withdrawn":
                span.state = "draft"
            if not span.label:
                span.label = label
            if audit.snapshot(span) != before:
                span.save(update_fields=["label", "state"])
                audit.record(self.game, self.user, span, "labelstudio-pull", before, audit.snapshot(span))
            if span.label != label:
                conflict = self.span_conflict(span, label)
                self.report.add("conflict", "span", task_id, f"{where}: {self.annotator} labels it {label}, Casebook has "
                                f"{span.label} (span {span.pk}); the label was left as it is and the span sent to review "
                                f"(span label conflict {conflict.pk})", span=span.pk)
            else:
                self.report.add("unchanged", "span", task_id, f"{where} [{label}]{by}: already in Casebook as span {span.pk}",
                                span=span.pk)
        else:
            span = EvidenceSpan.objects.create(game=self.game, document=SpanDocument.SCRIPT, character=character,
                                               start=placed.start, end=placed.end, quote=placed.quote, label=label,
                                               state="draft", created_by=self.casebook_user(self.annotator) or self.user)
            audit.record(self.game, self.user, span, "labelstudio-pull", None, audit.snapshot(span))
            self.report.add("created", "span", task_id, f"{where} [{label}]{by}{repaired} (draft)", span=span.pk)
            created = True
        self._remember(row, ann_id, task_id, rid, PulledItem.Kind.SPAN, fp, value={"label": label}, created=created,
                       span=span, label=label)
        return span

    def span_conflict(self, span: EvidenceSpan, label: str) -> SpanLabelConflict:
        """Put a span whose label an annotator disputes into the review queue: one conflict item per
        span, listing who said what (earlier Label Studio annotators, else "Casebook" for the label the
        span had), sent to review by the same mechanism as disagreeing option reviews."""
        said = {r.annotator: r.label for r in self.pulled.values()
                if r.kind == PulledItem.Kind.SPAN and r.span_id == span.pk and r.deleted_at is None and r.label}
        said.pop(self.annotator, None)
        candidates = [{"who": who, "label": lb} for who, lb in said.items()]
        if span.label and span.label not in said.values():
            candidates.insert(0, {"who": "Casebook", "label": span.label})
        candidates.append({"who": self.annotator, "label": label})
        conflict = SpanLabelConflict.objects.filter(game=self.game, span=span).order_by("-pk").first()
        if conflict is None:
            conflict = SpanLabelConflict.objects.create(game=self.game, span=span, candidates=candidates)
        else:
            SpanLabelConflict.objects.filter(pk=conflict.pk).update(candidates=candidates, label="", version=F("version") + 1)
        owner = span.character.name if span.character_id else span.document
        detail = (f"Label Studio annotators disagree on the label of “{span.quote[:40]}” ({owner}): "
                  + ", ".join(f"{c['who']} says {c['label']}" for c in candidates))
        return flag_conflict(conflict, self.user, detail)

    def relation(self, task_id: int, ann_id: int, item: dict[str, Any], regions: dict[str, EvidenceSpan],
                 picked: dict[str, list[str]] | None = None) -> None:
        """One arrow A → B: its labels are those of Label Studio's relation dropdown (projects pushed
        before the Taxonomy, or an arrow given its own) plus those searched in the Taxonomy of A."""
        key = _relation_key(item)
        a_id, b_id = key.split(">", 1)
        a, b = regions.get(a_id), regions.get(b_id)
        if a is None or b is None:
            self.report.add("skipped", "relation", task_id, f"relation {key}: an end is a region that could not be imported")
            return
        where = f"{a.quote!r} → {b.quote!r}"
        try:
            given = list(item.get("labels") or [])
            labels = clean_labels(given + [lb for lb in (picked or {}).get(a_id, []) if lb not in given])
        except RelationshipError as exc:
            self.report.add("skipped", "relation", task_id, f"{where}: {exc}")
            return
        people = list(self.characters.values())
        target, source = person_in(a.quote, people), person_in(b.quote, people)
        for span, who in ((a, target), (b, source)):
            if who is None:
                self.report.add("skipped", "relation", task_id,
                                f"{where}: the span {span.quote!r} names no single character of the game; "
                                "mark the name itself (label person) as the relation's end")
                return
        if target.pk == source.pk:
            self.report.add("skipped", "relation", task_id, f"{where}: both ends name {target.name}")
            return
        where = conan.render_relation_option(target.name, labels, source.name)
        evidence = sorted({a.pk, b.pk})
        fp = _fingerprint(target.pk, source.pk, labels, evidence)
        row = self.pulled.get((ann_id, key))
        if row is not None and row.fingerprint == fp and row.deleted_at is None:
            gone = "" if row.relationship is not None else ": deleted in Casebook after an earlier pull; not recreated"
            self.report.add("unchanged", "relation", task_id, where + gone)
            return
        created = False
        if row is not None and row.relationship is not None:
            rel = row.relationship
            if rel.status != Status.DRAFT:
                self.report.add("skipped", "relation", task_id,
                                f"{where}: relationship {rel.pk} is already {rel.status} in Casebook; not overwritten")
                return
            save_relationship(self.game, rel, source_id=source.pk, target_id=target.pk, labels=labels,
                              note=rel.note, evidence_ids=evidence, status=Status.DRAFT, user=self.user)
            self.report.add("updated", "relation", task_id, f"{where} (by {self.annotator})", relationship=rel.pk)
        else:
            pair = list(Relationship.objects.filter(game=self.game, source=source, target=target))
            rel = next((r for r in pair if sorted(r.labels) == sorted(labels)), None)
            theirs = {r.relationship_id: r for r in self.pulled.values() if r.kind == PulledItem.Kind.RELATION
                      and r.deleted_at is None and r.annotator != self.annotator and r.relationship_id in {p.pk for p in pair}}
            if rel is not None:
                self.report.add("unchanged", "relation", task_id, f"{where} (by {self.annotator}): already in Casebook as "
                                f"relationship {rel.pk}", relationship=rel.pk)
            elif theirs:
                rel = next(r for r in pair if r.pk in theirs)
                other = theirs[rel.pk]
                detail = (f"Label Studio annotators disagree on {target.name} → {source.name}: {other.annotator} says "
                          f"{' / '.join(rel.labels)}, {self.annotator} says {' / '.join(labels)}")
                flag_conflict(rel, self.user, detail)
                self.report.add("conflict", "relation", task_id, detail, relationship=rel.pk)
            else:
                rel = save_relationship(self.game, None, source_id=source.pk, target_id=target.pk, labels=labels,
                                        note=f"From Label Studio (project {self.link.project_id}, task {task_id}, "
                                             f"{self.annotator}).",
                                        evidence_ids=evidence, status=Status.DRAFT,
                                        user=self.casebook_user(self.annotator) or self.user)
                self.report.add("created", "relation", task_id, f"{where} (by {self.annotator}, draft)", relationship=rel.pk)
                created = True
        self._remember(row, ann_id, task_id, key, PulledItem.Kind.RELATION, fp, value={"labels": labels}, created=created,
                       relationship=rel)

    # --- MCQ reviews ---------------------------------------------------------------------
    def verdict(self, mapped: LabelStudioTask, data: dict[str, Any], ann_id: int, result: list[dict[str, Any]]) -> _Verdict | None:
        """One annotation's review, checked; None (reported) when it cannot be used."""
        task_id = mapped.task_id
        question = self.questions.get(mapped.object_id)
        if question is None:
            self.report.add("skipped", "review", task_id, "the question was deleted from Casebook")
            return None
        where = f"question {question.pk} {question.stem[:40]!r} ({self.annotator})"
        values = {v.get("value"): v.get("option_id") for v in data.get("options") or []}
        distractor_ids = {v.get("option_id") for v in data.get("distractors") or []}
        chosen: dict[str, list[str]] = {}
        for item in result:
            name = item.get("from_name")
            if item.get("type") == "choices" and name in (config.CORRECT, config.CORRECT_MULTI, config.REJECT):
                name = config.CORRECT if name == config.CORRECT_MULTI else name
                chosen.setdefault(name, []).extend((item.get("value") or {}).get("choices") or [])
        if not chosen.get(config.CORRECT) and config.REJECT not in chosen and not distractor_ids:
            self.report.add("skipped", "review", task_id, f"{where}: no correct option chosen and nothing rejected")
            return None
        unknown = [v for vs in chosen.values() for v in vs if v not in values]
        if unknown:
            self.report.add("skipped", "review", task_id, f"{where}: choice {unknown[0]!r} is not an option of the task "
                            "(its text was changed by a later push)")
            return None
        options = {o.pk for o in question.options.all()}
        correct = {values[v] for v in chosen.get(config.CORRECT, [])} or None
        rejected = {values[v] for v in chosen.get(config.REJECT, [])}
        gone = [i for i in (correct or set()) | rejected | distractor_ids if i not in options]
        if gone:
            self.report.add("skipped", "review", task_id, f"{where}: option {gone[0]} was deleted from Casebook since the push")
            return None
        if correct and correct & rejected:
            self.report.add("skipped", "review", task_id, f"{where}: an option is marked both correct and rejected")
            return None
        if correct and not question.multi and len(correct) > 1:
            self.report.add("skipped", "review", task_id, f"{where}: {len(correct)} options marked correct on a single-answer question")
            return None
        fp = _fingerprint(sorted(correct) if correct else None, sorted(rejected), sorted(distractor_ids))
        return _Verdict(ann_id, self.annotator, correct, rejected, fp, self.pulled.get((ann_id, "review")))

    def review(self, mapped: LabelStudioTask, data: dict[str, Any], verdicts: list[_Verdict]) -> None:
        """Apply the annotations' common review; when they disagree, send the question to review as a conflict."""
        task_id = mapped.task_id
        question = self.questions[mapped.object_id]
        where = f"question {question.pk} {question.stem[:40]!r}"
        distractor_ids = {v.get("option_id") for v in data.get("distractors") or []}
        changed = [v for v in verdicts if v.row is None or v.row.fingerprint != v.fingerprint or v.row.deleted_at is not None]
        if not changed:
            for v in verdicts:
                self.report.add("unchanged", "review", task_id, f"{where} ({v.annotator})")
            return
        options = {o.pk: o for o in question.options.all()}
        names = {v.get("option_id"): v.get("value") for v in data.get("options") or []}
        disputed = sorted({pk for pk in distractor_ids if len({pk in v.rejected for v in verdicts}) > 1}
                          | {pk for pk in options if len({pk in v.correct for v in verdicts if v.correct is not None}) > 1})
        if disputed:
            parts = []
            for pk in disputed:
                says = []
                for v in verdicts:
                    if pk in distractor_ids:
                        says.append(f"{v.annotator} {'rejects' if pk in v.rejected else 'accepts'}")
                    elif v.correct is not None:
                        says.append(f"{v.annotator} {'marks it correct' if pk in v.correct else 'does not mark it correct'}")
                parts.append(f"{names.get(pk, pk)}: " + ", ".join(says))
            detail = "Label Studio annotators disagree — " + "; ".join(parts)
            flag_conflict(question, self.user, detail)
            self.report.add("conflict", "review", task_id, f"{where}: {detail}; nothing applied, sent to review",
                            question=question.pk)
        else:
            self.apply_review(task_id, question, options, verdicts[-1], distractor_ids)
        for v in verdicts:
            self.annotator = v.annotator
            value = {"correct": sorted(v.correct) if v.correct is not None else None, "rejected": sorted(v.rejected),
                     "distractors": sorted(distractor_ids)}
            self._remember(v.row, v.ann_id, task_id, "review", PulledItem.Kind.REVIEW, v.fingerprint, value=value,
                           question=question)

    def apply_review(self, task_id: int, question: Question, options: dict[int, Any], verdict: _Verdict,
                     distractor_ids: set[int]) -> None:
        where = f"question {question.pk} {question.stem[:40]!r}"
        changes = []
        for pk, option in options.items():
            is_correct = option.is_correct if verdict.correct is None else pk in verdict.correct
            review = OptionReview.REJECTED if pk in verdict.rejected else \
                (OptionReview.ACCEPTED if pk in distractor_ids else option.review)
            if (is_correct, review) != (option.is_correct, option.review):
                changes.append((option, is_correct, review))
        if not changes:
            self.report.add("unchanged", "review", task_id, f"{where}: the review agrees with Casebook", question=question.pk)
            return
        self._set_options(question, changes)
        detail = "; ".join(f"option {o.pk} {'correct' if c else 'not correct'}, {r}" for o, c, r in changes)
        self.report.add("updated", "review", task_id, f"{where}: {detail}", question=question.pk)

    def _set_options(self, question: Question, changes: list[tuple[Any, bool, str]]) -> None:
        """Change options (is_correct, review) and put the question back to draft, audited."""
        before = question_snapshot(question)
        for option, is_correct, review in changes:
            option.is_correct, option.review, option.version = is_correct, review, option.version + 1
            option.save(update_fields=["is_correct", "review", "version"])
        refresh_answer(question)
        if question.status != Status.DRAFT:
            Question.objects.filter(pk=question.pk).update(status=Status.DRAFT)
            question.status = Status.DRAFT
        audit.record(self.game, self.user, question, "labelstudio-pull", before, question_snapshot(question))

    # --- deletions -----------------------------------------------------------------------
    def deletions(self) -> None:
        """Items imported earlier whose annotation or region is gone from Label Studio: report them and,
        unless kept, withdraw the drafts they created (reviewed or approved work is never touched)."""
        now = timezone.now()
        for (ann_id, key), row in sorted(self.pulled.items(), key=lambda kv: (kv[1].task_id, kv[0])):
            if row.deleted_at is not None or (ann_id, key) in self.seen:
                continue
            what = f"{row.kind} of annotation {ann_id} by {row.annotator or 'an earlier annotator'}"
            if self.keep_deleted:
                outcome = "deleted in Label Studio; kept in Casebook (--keep-deleted)"
            elif row.kind == PulledItem.Kind.SPAN:
                outcome = self._withdraw_span(row)
            elif row.kind == PulledItem.Kind.RELATION:
                outcome = self._withdraw_relation(row)
            else:
                outcome = self._withdraw_review(row)
            row.deleted_at = now
            row.save(update_fields=["deleted_at"])
            self.report.add("deleted", row.kind, row.task_id, f"{what}: {outcome}",
                            **{k: getattr(row, f"{k}_id") for k in ("span", "relationship", "question") if getattr(row, f"{k}_id")})

    def _withdraw_span(self, row: PulledItem) -> str:
        span = row.span
        if span is None:
            return "the span was already deleted in Casebook"
        if self._alive_others(row, span=span):
            return f"span {span.pk} {span.quote[:30]!r} is still marked by another annotation; kept" + self._retract_label(row, span)
        if not row.created_item:
            return f"span {span.pk} {span.quote[:30]!r} was in Casebook before the pull; kept" + self._retract_label(row, span)
        if span.state != "draft":
            return f"span {span.pk} {span.quote[:30]!r} was checked in Casebook ({span.state}); kept, look at it"
        before = audit.snapshot(span)
        span.state = "withdrawn"
        span.save(update_fields=["state"])
        audit.record(self.game, self.user, span, "labelstudio-withdraw", before, audit.snapshot(span))
        closed = ""
        for conflict in SpanLabelConflict.objects.filter(game=self.game, span=span, status=Status.SUBMITTED):
            withdraw_conflict(conflict, self.user, f"the span was deleted in Label Studio (project {self.link.project_id}, "
                                                   f"task {row.task_id}) and withdrawn")
            closed = f"; its label conflict {conflict.pk} left the review queue"
        return f"span {span.pk} {span.quote[:30]!r} withdrawn (a draft; not deleted){closed}"

    def _retract_label(self, row: PulledItem, span: EvidenceSpan) -> str:
        """A deleted contribution's label stays listed in the span's open label conflict: tell the reviewer."""
        notes = ""
        for conflict in SpanLabelConflict.objects.filter(game=self.game, span=span, status=Status.SUBMITTED):
            Comment.objects.create(game=self.game, item_type="spanlabelconflict", item_id=conflict.pk, system=True,
                                   text=f"{row.annotator or 'An annotator'}'s label {row.label or '?'} was deleted in Label "
                                        f"Studio (project {self.link.project_id}, task {row.task_id}).")
            notes = f"; its label {row.label} is marked deleted in label conflict {conflict.pk}"
        return notes

    def _withdraw_relation(self, row: PulledItem) -> str:
        rel = row.relationship
        if rel is None:
            return "the relationship was already deleted in Casebook"
        if self._alive_others(row, relationship=rel):
            return f"relationship {rel.pk} is still drawn by another annotation; kept"
        if not row.created_item:
            return f"relationship {rel.pk} was in Casebook before the pull; kept"
        if rel.status != Status.DRAFT:
            return f"relationship {rel.pk} is {rel.status} in Casebook; kept, look at it"
        reason = f"Withdrawn: deleted in Label Studio (project {self.link.project_id}, task {row.task_id})."
        Relationship.objects.filter(pk=rel.pk).update(reject_reason=reason, version=F("version") + 1)
        Comment.objects.create(game=self.game, item_type="relationship", item_id=rel.pk, text=reason, system=True)
        return f"relationship {rel.pk} stays a draft, marked withdrawn"

    def _withdraw_review(self, row: PulledItem) -> str:
        question = row.question
        if question is None:
            return "the question was deleted in Casebook"
        if self._alive_others(row, question=question):
            return f"question {question.pk}: other reviews remain; kept"
        if question.status != Status.DRAFT:
            return f"question {question.pk} is {question.status} in Casebook; kept, look at it"
        set_by_it = {pk: (OptionReview.REJECTED if pk in (row.value.get("rejected") or []) else OptionReview.ACCEPTED)
                     for pk in row.value.get("distractors") or []}
        changes = [(o, o.is_correct, OptionReview.PENDING) for o in question.options.all()
                   if set_by_it.get(o.pk) == o.review]
        if not changes:
            return f"question {question.pk}: nothing of that review is left to withdraw"
        self._set_options(question, changes)
        return f"question {question.pk}: {len(changes)} distractor review(s) back to pending (draft)"


def agreement_lines(game: Game) -> dict[str, str]:
    """The annotator agreement figures as text, for the report (empty while one annotator works alone)."""
    out = {}
    for name, figure in labelstudio_agreement(game).items():
        if figure is not None:
            kappa = str(figure.overall) if figure.overall is not None else "n/a (no item rated by everyone)"
            out[name] = f"{kappa}; raters {', '.join(figure.raters)}"
    return out


def pull_game(game: Game, client: LabelStudioClient, *, user=None, progress: Progress | None = None,
              keep_deleted: bool = False) -> PullReport:
    """Import the finished annotations of the game's project; raises LabelStudioError, changing nothing, on failure.
    Annotations deleted in Label Studio withdraw the drafts they created unless ``keep_deleted``."""
    note = progress or (lambda done, total, message: None)
    note(0, 0, f"connecting to {client.url}")
    client.check()
    found = find_link(game, client)
    link = found.link
    if link is None:
        raise LabelStudioError(f"{game.title} has not been pushed to the Label Studio server at {client.url} yet "
                               "(under this or any other URL Casebook knows); push it first.", kind="not_found")
    if found.project is None:
        raise LabelStudioError(f"Project {link.project_id} of {game.title} no longer exists in Label Studio at {client.url} "
                               "(deleted?). Nothing was changed; push the game again to create a new project.",
                               status=404, kind="not_found")
    note(0, 0, f"reading project {link.project_id}")
    exported = client.export_tasks(link.project_id)
    users = client.users()
    report = PullReport(project_id=link.project_id, tasks=len(exported), notes=[found.note] if found.note else [])
    total = len(exported)
    with transaction.atomic():
        importer = _Importer(game, link, report, user, users=users, keep_deleted=keep_deleted)
        for done, task in enumerate(exported, start=1):
            importer.task(task)
            note(done, total, f"imported task {task.get('id')}")
        importer.deletions()
        report.agreement = agreement_lines(game)
        LabelStudioLink.objects.filter(pk=link.pk).update(pulled_at=timezone.now())
    note(total, total, report.summary())
    return report
