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
from django.utils import timezone

from annotate.models import Character, EvidenceSpan, Game, Question, Relationship
from annotate.services import audit
from annotate.services.relationships import RelationshipError, clean_labels, save_relationship
from casebook.interchange import OptionReview, SpanDocument, Status, name_key
from generation.distractors import refresh_answer

from . import config
from .client import LabelStudioClient, LabelStudioError
from .models import LabelStudioLink, LabelStudioTask, PulledItem
from .offsets import OffsetError, place

Progress = Callable[[int, int, str], None]
BUCKETS = ("created", "updated", "unchanged", "skipped")


@dataclass
class PullReport:
    """What the pull did, item by item: kind (span / relation / review / task), task id, detail."""

    project_id: int = 0
    tasks: int = 0
    annotations: int = 0
    created: list[dict[str, Any]] = field(default_factory=list)
    updated: list[dict[str, Any]] = field(default_factory=list)
    unchanged: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)

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
            inner = ", ".join(f"{n} {kind}" for kind, n in sorted(per.items()))
            parts.append(f"{sum(per.values())} {bucket}" + (f" ({inner})" if inner else ""))
        return f"project {self.project_id}: {self.annotations} annotation(s) on {self.tasks} task(s); " + "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {"project_id": self.project_id, "tasks": self.tasks, "annotations": self.annotations,
                **{b: getattr(self, b) for b in BUCKETS}, "counts": self.counts(), "summary": self.summary()}


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


class _Importer:
    """One pull's import, run inside a transaction; fills the report."""

    def __init__(self, game: Game, link: LabelStudioLink, report: PullReport, user) -> None:
        self.game, self.link, self.report = game, link, report
        self.user = user if getattr(user, "is_authenticated", False) else None
        self.tasks = {t.task_id: t for t in link.tasks.all()}
        self.characters = {c.pk: c for c in game.characters.all()}
        self.questions = {q.pk: q for q in game.questions.prefetch_related("options")}
        self.pulled = {(p.annotation_id, p.key): p for p in link.pulled.select_related("span", "relationship")}

    def _remember(self, row: PulledItem | None, ann_id: int, task_id: int, key: str, kind: str, fp: str, **links: Any) -> None:
        if row is None:
            row = PulledItem(link=self.link, annotation_id=ann_id, task_id=task_id, key=key, kind=kind)
        for name, value in {"fingerprint": fp, **links}.items():
            setattr(row, name, value)
        row.save()
        self.pulled[(ann_id, key)] = row

    # --- tasks ---------------------------------------------------------------------------
    def task(self, task: dict[str, Any]) -> None:
        task_id = int(task.get("id") or 0)
        mapped = self.tasks.get(task_id)
        if mapped is None:
            self.report.add("skipped", "task", task_id, "task was not created by a Casebook push (added in Label Studio); ignored")
            return
        annotations = sorted(task.get("annotations") or [], key=lambda a: (str(a.get("updated_at") or ""), int(a.get("id") or 0)))
        for ann in annotations:
            if ann.get("was_cancelled"):
                self.report.add("skipped", "annotation", task_id, f"annotation {ann.get('id')} was skipped (cancelled) in Label Studio")
                continue
            self.report.annotations += 1
            if mapped.kind == LabelStudioTask.Kind.SCRIPT:
                self.script(mapped, int(ann["id"]), ann.get("result") or [])
            else:
                self.review(mapped, task.get("data") or {}, int(ann["id"]), ann.get("result") or [])

    # --- spans and relations -------------------------------------------------------------
    def script(self, mapped: LabelStudioTask, ann_id: int, result: list[dict[str, Any]]) -> None:
        task_id = mapped.task_id
        character = self.characters.get(mapped.object_id)
        if character is None:
            self.report.add("skipped", "span", task_id, "the character of this script was deleted from Casebook")
            return
        regions: dict[str, EvidenceSpan] = {}
        for item in result:
            if item.get("type") == "labels" and item.get("from_name") == config.SPAN_LABELS:
                span = self.span(character, task_id, ann_id, item)
                if span is not None:
                    regions[str(item.get("id"))] = span
        for item in result:
            if item.get("type") == "relation":
                self.relation(task_id, ann_id, item, regions)

    def span(self, character: Character, task_id: int, ann_id: int, item: dict[str, Any]) -> EvidenceSpan | None:
        value = item.get("value") or {}
        labels = value.get("labels") or []
        label = str(labels[0]) if labels else ""
        rid = str(item.get("id") or "")
        where = f"{character.name}: {value.get('text', '')!r}"[:120]
        if label not in config.SPAN_LABEL_INFO:
            self.report.add("skipped", "span", task_id, f"{where}: label {label!r} is not one of {', '.join(config.SPAN_LABELS_ALL)}")
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
        if row is not None and row.fingerprint == fp:
            if row.span is None:
                self.report.add("unchanged", "span", task_id, f"{where} [{label}]: deleted in Casebook after an earlier pull; "
                                "not recreated")
            else:
                self.report.add("unchanged", "span", task_id, f"{where} [{label}]")
            return row.span
        same = EvidenceSpan.objects.filter(game=self.game, document=SpanDocument.SCRIPT, character=character,
                                           start=placed.start, end=placed.end).first()
        if row is not None and row.span is not None and (same is None or same.pk == row.span.pk):
            span = row.span
            before = audit.snapshot(span)
            span.start, span.end, span.quote = placed.start, placed.end, placed.quote
            span.save(update_fields=["start", "end", "quote"])
            audit.record(self.game, self.user, span, "labelstudio-pull", before, audit.snapshot(span))
            self.report.add("updated", "span", task_id, f"{where} [{label}]{repaired}", span=span.pk)
        elif same is not None:
            span = same
            self.report.add("unchanged", "span", task_id, f"{where} [{label}]: already in Casebook as span {span.pk}", span=span.pk)
        else:
            span = EvidenceSpan.objects.create(game=self.game, document=SpanDocument.SCRIPT, character=character,
                                               start=placed.start, end=placed.end, quote=placed.quote, created_by=self.user)
            audit.record(self.game, self.user, span, "labelstudio-pull", None, audit.snapshot(span))
            self.report.add("created", "span", task_id, f"{where} [{label}]{repaired}", span=span.pk)
        self._remember(row, ann_id, task_id, rid, PulledItem.Kind.SPAN, fp, span=span, label=label)
        return span

    def relation(self, task_id: int, ann_id: int, item: dict[str, Any], regions: dict[str, EvidenceSpan]) -> None:
        a_id, b_id = str(item.get("from_id")), str(item.get("to_id"))
        if item.get("direction") == "left":
            a_id, b_id = b_id, a_id
        key = f"{a_id}>{b_id}"
        a, b = regions.get(a_id), regions.get(b_id)
        if a is None or b is None:
            self.report.add("skipped", "relation", task_id, f"relation {key}: an end is a region that could not be imported")
            return
        where = f"{a.quote!r} → {b.quote!r}"
        try:
            labels = clean_labels(item.get("labels") or [])
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
        where = f"{target.name} is {' / '.join(labels)} of {source.name}"
        evidence = sorted({a.pk, b.pk})
        fp = _fingerprint(target.pk, source.pk, labels, evidence)
        row = self.pulled.get((ann_id, key))
        if row is not None and row.fingerprint == fp:
            gone = "" if row.relationship is not None else ": deleted in Casebook after an earlier pull; not recreated"
            self.report.add("unchanged", "relation", task_id, where + gone)
            return
        if row is not None and row.relationship is not None:
            rel = row.relationship
            if rel.status != Status.DRAFT:
                self.report.add("skipped", "relation", task_id,
                                f"{where}: relationship {rel.pk} is already {rel.status} in Casebook; not overwritten")
                return
            save_relationship(self.game, rel, source_id=source.pk, target_id=target.pk, labels=labels,
                              note=rel.note, evidence_ids=evidence, status=Status.DRAFT, user=self.user)
            self.report.add("updated", "relation", task_id, where, relationship=rel.pk)
        else:
            rel = next((r for r in Relationship.objects.filter(game=self.game, source=source, target=target)
                        if sorted(r.labels) == sorted(labels)), None)
            if rel is not None:
                self.report.add("unchanged", "relation", task_id, f"{where}: already in Casebook as relationship {rel.pk}",
                                relationship=rel.pk)
            else:
                rel = save_relationship(self.game, None, source_id=source.pk, target_id=target.pk, labels=labels,
                                        note=f"From Label Studio (project {self.link.project_id}, task {task_id}).",
                                        evidence_ids=evidence, status=Status.DRAFT, user=self.user)
                self.report.add("created", "relation", task_id, where, relationship=rel.pk)
        self._remember(row, ann_id, task_id, key, PulledItem.Kind.RELATION, fp, relationship=rel)

    # --- MCQ reviews ---------------------------------------------------------------------
    def review(self, mapped: LabelStudioTask, data: dict[str, Any], ann_id: int, result: list[dict[str, Any]]) -> None:
        task_id = mapped.task_id
        question = self.questions.get(mapped.object_id)
        if question is None:
            self.report.add("skipped", "review", task_id, "the question was deleted from Casebook")
            return
        where = f"question {question.pk} {question.stem[:40]!r}"
        values = {v.get("value"): v.get("option_id") for v in data.get("options") or []}
        distractor_ids = {v.get("option_id") for v in data.get("distractors") or []}
        chosen: dict[str, list[str]] = {}
        for item in result:
            if item.get("type") == "choices" and item.get("from_name") in (config.CORRECT, config.REJECT):
                chosen[item["from_name"]] = list((item.get("value") or {}).get("choices") or [])
        if not chosen.get(config.CORRECT) and config.REJECT not in chosen:
            self.report.add("skipped", "review", task_id, f"{where}: no correct option chosen and nothing rejected")
            return
        unknown = [v for vs in chosen.values() for v in vs if v not in values]
        if unknown:
            self.report.add("skipped", "review", task_id, f"{where}: choice {unknown[0]!r} is not an option of the task")
            return
        options = {o.pk: o for o in question.options.all()}
        correct = {values[v] for v in chosen.get(config.CORRECT, [])} or None
        rejected = {values[v] for v in chosen.get(config.REJECT, [])}
        gone = [i for i in (correct or set()) | rejected | distractor_ids if i not in options]
        if gone:
            self.report.add("skipped", "review", task_id, f"{where}: option {gone[0]} was deleted from Casebook since the push")
            return
        fp = _fingerprint(sorted(correct) if correct else None, sorted(rejected), sorted(distractor_ids))
        row = self.pulled.get((ann_id, "review"))
        if row is not None and row.fingerprint == fp:
            self.report.add("unchanged", "review", task_id, where)
            return
        if correct and correct & rejected:
            self.report.add("skipped", "review", task_id, f"{where}: an option is marked both correct and rejected")
            return
        if correct and not question.multi and len(correct) > 1:
            self.report.add("skipped", "review", task_id, f"{where}: {len(correct)} options marked correct on a single-answer question")
            return
        changes = []
        for pk, option in options.items():
            is_correct = option.is_correct if correct is None else pk in correct
            review = OptionReview.REJECTED if pk in rejected else (OptionReview.ACCEPTED if pk in distractor_ids else option.review)
            if (is_correct, review) != (option.is_correct, option.review):
                changes.append((option, is_correct, review))
        if changes:
            before = audit.snapshot(question, options=[(o.text, o.is_correct, o.review) for o in options.values()])
            for option, is_correct, review in changes:
                option.is_correct, option.review = is_correct, review
                option.save(update_fields=["is_correct", "review"])
            refresh_answer(question)
            if question.status != Status.DRAFT:
                Question.objects.filter(pk=question.pk).update(status=Status.DRAFT)
                question.status = Status.DRAFT
            after = audit.snapshot(question, options=[(o.text, o.is_correct, o.review) for o in question.options.all()])
            audit.record(self.game, self.user, question, "labelstudio-pull", before, after)
            detail = "; ".join(f"option {o.pk} {'correct' if c else 'not correct'}, {r}" for o, c, r in changes)
            self.report.add("updated", "review", task_id, f"{where}: {detail}", question=question.pk)
        else:
            self.report.add("unchanged", "review", task_id, f"{where}: the review agrees with Casebook", question=question.pk)
        self._remember(row, ann_id, task_id, "review", PulledItem.Kind.REVIEW, fp, question=question)


def pull_game(game: Game, client: LabelStudioClient, *, user=None, progress: Progress | None = None) -> PullReport:
    """Import the finished annotations of the game's project; raises LabelStudioError, changing nothing, on failure."""
    note = progress or (lambda done, total, message: None)
    link = LabelStudioLink.objects.filter(game=game, url=client.url).first()
    if link is None:
        raise LabelStudioError(f"{game.title} has not been pushed to {client.url} yet; push it first.", kind="not_found")
    note(0, 0, f"reading project {link.project_id}")
    client.check()
    if not client.project_exists(link.project_id):
        raise LabelStudioError(f"Project {link.project_id} of {game.title} no longer exists in Label Studio at {client.url} "
                               "(deleted?). Nothing was changed; push the game again to create a new project.",
                               status=404, kind="not_found")
    exported = client.export_tasks(link.project_id)
    report = PullReport(project_id=link.project_id, tasks=len(exported))
    total = len(exported)
    with transaction.atomic():
        importer = _Importer(game, link, report, user)
        for done, task in enumerate(exported, start=1):
            importer.task(task)
            note(done, total, f"imported task {task.get('id')}")
        LabelStudioLink.objects.filter(pk=link.pk).update(pulled_at=timezone.now())
    note(total, total, report.summary())
    return report
