"""Push a game to Label Studio: one project, script and MCQ-review tasks, Casebook work as predictions.

Stages, each testable alone: :func:`script_task` / :func:`question_task` (task data),
:func:`span_predictions` / :func:`relation_predictions` / :func:`question_prediction` (Label Studio
prediction results from Casebook objects), and :func:`push_game`, which creates or updates the
project and syncs tasks. A second push updates the config and the data of changed tasks and adds
tasks for new objects; it never duplicates a task, and predictions go only onto new tasks (Label
Studio users may already have started from the old ones).

Offsets sent to Label Studio are Unicode code points, the unit of EvidenceSpan and of Label
Studio's text regions; pull re-checks them anyway (see :mod:`labelstudio.offsets`).
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotate.models import Character, EvidenceSpan, Game, Option, Question, Relationship
from casebook.interchange import LETTERS, OptionOrigin, OptionReview, SpanDocument, name_key

from . import config
from .client import LabelStudioClient
from .models import LabelStudioLink, LabelStudioTask, PulledItem

Progress = Callable[[int, int, str], None]


@dataclass
class PushReport:
    project_id: int = 0
    project_url: str = ""
    project: str = ""  # "created" / "updated" / "recreated"
    kinds: list[str] = field(default_factory=list)
    tasks_created: int = 0
    tasks_updated: int = 0
    tasks_unchanged: int = 0
    predictions: int = 0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"project {self.project_id} {self.project} ({', '.join(self.kinds)}): {self.tasks_created} task(s) created, "
                f"{self.tasks_updated} updated, {self.tasks_unchanged} unchanged, {self.predictions} prediction(s) sent")

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__} | {"summary": self.summary()}


# --- origins --------------------------------------------------------------------------------
def origin_tag(game: Game, *, human: bool = False, option: Option | None = None) -> str:
    """The prediction ``model_version``: where a Casebook annotation came from."""
    if option is not None and option.origin == OptionOrigin.LLM:
        return f"casebook:llm:{option.model_name or 'unknown'}"
    if option is not None and option.origin == OptionOrigin.HEURISTIC:
        return "casebook:heuristic"
    return "casebook:human" if human else f"casebook:{game.origin}"


def _digest(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


# --- task data ------------------------------------------------------------------------------
def _heading(game: Game, zh: str, en: str) -> str:
    return zh if game.language == "zh" else en


def script_task(game: Game, character: Character, kinds: list[str]) -> dict[str, Any]:
    data = config.empty_task_data(kinds)
    data.update({
        "kind": LabelStudioTask.Kind.SCRIPT, "casebook_game": game.slug, "casebook_character": character.pk,
        "heading": _heading(game, f"角色剧本 · {character.name}", f"Role script · {character.name}"),
        config.TEXT: character.script,
    })
    return data


def _option_value(index: int, option: Option) -> str:
    return f"{LETTERS[index].upper() if index < len(LETTERS) else index + 1}. {option.text}"


def question_task(game: Game, question: Question, kinds: list[str]) -> dict[str, Any]:
    options = list(question.options.all())
    data = config.empty_task_data(kinds)
    perspective = f" · {question.perspective.name}" if question.perspective_id else ""
    values = [{"value": _option_value(i, o), "option_id": o.pk} for i, o in enumerate(options)]
    generated = [v for v, o in zip(values, options, strict=True) if o.origin in (OptionOrigin.LLM, OptionOrigin.HEURISTIC)]
    data.update({
        "kind": LabelStudioTask.Kind.QUESTION, "casebook_game": game.slug, "casebook_question": question.pk,
        "heading": _heading(game, f"选择题审核 · {question.get_kind_display()}{perspective}",
                            f"MCQ review · {question.get_kind_display()}{perspective}"),
        config.STEM: question.stem,
        "options": values,
        "distractors": generated,
        "correct_header": _heading(game, "正确选项（多选题可选多个）", "Correct option(s)")
        + (" — multiple answers" if question.multi else ""),
        "reject_header": _heading(game, "拒绝的生成干扰项（未勾选 = 接受）", "Generated distractors to reject (unticked = accepted)")
        if generated else "",
    })
    return data


# --- predictions ----------------------------------------------------------------------------
def _span_region(region_id: str, start: int, end: int, quote: str, label: str) -> dict[str, Any]:
    return {"id": region_id, "from_name": config.SPAN_LABELS, "to_name": config.TEXT, "type": "labels",
            "origin": "prediction", "value": {"start": start, "end": end, "text": quote, "labels": [label]}}


def span_predictions(game: Game, character: Character) -> list[dict[str, Any]]:
    """The character's script spans, one prediction per origin (label remembered from a pull, else clue)."""
    spans = EvidenceSpan.objects.filter(game=game, document=SpanDocument.SCRIPT, character=character).order_by("start", "end")
    labels = dict(PulledItem.objects.filter(span__in=spans).exclude(label="").values_list("span_id", "label"))
    by_tag: dict[str, list[dict[str, Any]]] = {}
    text = character.script
    for span in spans:
        if text[span.start:span.end] != span.quote:
            continue  # a stale span (script edited since) would mislead annotators
        tag = origin_tag(game, human=span.created_by_id is not None or span.pk in labels)
        by_tag.setdefault(tag, []).append(_span_region(f"cb-span-{span.pk}", span.start, span.end, span.quote, labels.get(span.pk, "clue")))
    return [{"model_version": tag, "score": 1.0, "result": result} for tag, result in by_tag.items()]


def _mentions(text: str, character: Character) -> tuple[int, int] | None:
    """First mention of the character's name (or an alias) in ``text``, middle-dot variants folded."""
    folded = name_key(text) if len(name_key(text)) == len(text) else None
    for name in [character.name, *(character.aliases or [])]:
        if not name:
            continue
        hit = text.find(name)
        if hit < 0 and folded is not None:
            hit = folded.find(name_key(name))
        if hit >= 0:
            return hit, hit + len(name)
    return None


def relation_predictions(game: Game, character: Character) -> list[dict[str, Any]]:
    """Casebook relationships drawn in this script: between their evidence spans when both lie in
    it, else between the first mentions of the two names ("person" regions)."""
    text = character.script
    rels = Relationship.objects.filter(game=game).select_related("source", "target").prefetch_related("evidence")
    regions: dict[tuple[str, str], dict[str, Any]] = {}
    by_tag: dict[str, list[dict[str, Any]]] = {}
    for rel in rels:
        ends = []
        evidence = [s for s in rel.evidence.all() if s.document == SpanDocument.SCRIPT and s.character_id == character.pk
                    and text[s.start:s.end] == s.quote]
        for person in (rel.target, rel.source):  # relation drawn from target ("A is L of B") to source
            span = next((s for s in evidence if _mentions(s.quote, person)), None)
            if span is not None:
                ends.append(_span_region(f"cb-span-{span.pk}", span.start, span.end, span.quote, "person"))
                continue
            hit = _mentions(text, person)
            if hit is None:
                break
            ends.append(_span_region(f"cb-person-{person.pk}", hit[0], hit[1], text[hit[0]:hit[1]], "person"))
        if len(ends) != 2 or not rel.labels:
            continue
        tag = origin_tag(game, human=rel.author_id is not None)
        result = by_tag.setdefault(tag, [])
        for end in ends:
            if (tag, end["id"]) not in regions:
                regions[(tag, end["id"])] = end
                result.append(end)
        result.append({"from_id": ends[0]["id"], "to_id": ends[1]["id"], "type": "relation", "direction": "right",
                       "labels": list(rel.labels)})
    return [{"model_version": tag, "score": 1.0, "result": result} for tag, result in by_tag.items()]


def question_prediction(game: Game, question: Question, data: dict[str, Any]) -> dict[str, Any] | None:
    """The current correct options and the rejected distractors, as Label Studio would record them."""
    options = {o.pk: o for o in question.options.all()}
    correct = [v["value"] for v in data["options"] if options[v["option_id"]].is_correct]
    rejected = [v["value"] for v in data["distractors"] if options[v["option_id"]].review == OptionReview.REJECTED]
    result = []
    if correct:
        result.append({"id": "cb-correct", "from_name": config.CORRECT, "to_name": config.STEM, "type": "choices",
                       "value": {"choices": correct}})
    if rejected:
        result.append({"id": "cb-reject", "from_name": config.REJECT, "to_name": config.STEM, "type": "choices",
                       "value": {"choices": rejected}})
    if not result:
        return None
    generated = [o for o in options.values() if o.origin in (OptionOrigin.LLM, OptionOrigin.HEURISTIC)]
    tag = origin_tag(game, human=question.author_id is not None, option=generated[0] if generated else None)
    return {"model_version": tag, "score": 1.0, "result": result}


# --- the push -------------------------------------------------------------------------------
def _objects(game: Game, kinds: list[str]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if "spans" in kinds:
        out += [(LabelStudioTask.Kind.SCRIPT, c) for c in game.characters.exclude(script="").order_by("position", "id")]
    if "questions" in kinds:
        questions = (game.questions.filter(options__isnull=False).distinct().select_related("perspective")
                     .prefetch_related("options").order_by("position", "id"))
        out += [(LabelStudioTask.Kind.QUESTION, q) for q in questions]
    return out


_TITLE_CLEAN = re.compile(r"\s+")


def project_title(game: Game) -> str:
    return _TITLE_CLEAN.sub(" ", f"Casebook · {game.title} [{game.language}]")[:50]


def push_game(game: Game, client: LabelStudioClient, *, kinds: list[str] | str | None = None,
              progress: Progress | None = None) -> PushReport:
    """Create or update the game's project on ``client``'s server; raises LabelStudioError on failure."""
    kinds = config.normalise_kinds(kinds)
    report = PushReport(kinds=kinds)
    note = progress or (lambda done, total, message: None)
    label_config = config.build_label_config(kinds)
    description = f"Casebook game {game.slug} ({game.get_origin_display()}); pushed {timezone.now():%Y-%m-%d %H:%M} UTC."
    client.check()

    link = LabelStudioLink.objects.filter(game=game, url=client.url).first()
    if link is not None and client.project_exists(link.project_id):
        client.update_project(link.project_id, title=project_title(game), description=description, label_config=label_config)
        report.project = "updated"
    else:
        project_id = client.create_project(title=project_title(game), description=description, label_config=label_config)
        if link is not None:
            report.notes.append(f"project {link.project_id} no longer exists in Label Studio; created project {project_id} "
                                "(annotations pulled from the old one stay in Casebook)")
            with transaction.atomic():
                link.tasks.all().delete()
                link.project_id = project_id
                link.save(update_fields=["project_id"])
            report.project = "recreated"
        else:
            link = LabelStudioLink.objects.create(game=game, url=client.url, project_id=project_id, kinds=kinds)
            report.project = "created"
    report.project_id, report.project_url = link.project_id, link.project_url

    objects = _objects(game, kinds)
    total = len(objects)
    note(0, total, "syncing tasks")
    known = {(t.kind, t.object_id): t for t in link.tasks.all()}
    new: list[tuple[str, Any, dict[str, Any]]] = []
    for done, (kind, obj) in enumerate(objects, start=1):
        data = script_task(game, obj, kinds) if kind == LabelStudioTask.Kind.SCRIPT else question_task(game, obj, kinds)
        digest = _digest(data)
        mapped = known.get((kind, obj.pk))
        if mapped is None:
            new.append((kind, obj, data))
        elif mapped.data_hash != digest:
            client.update_task_data(mapped.task_id, data)
            LabelStudioTask.objects.filter(pk=mapped.pk).update(data_hash=digest)
            report.tasks_updated += 1
            note(done, total, f"updated task {mapped.task_id}")
        else:
            report.tasks_unchanged += 1

    if new:
        task_ids = client.import_tasks(link.project_id, [data for _, _, data in new])
        LabelStudioTask.objects.bulk_create([
            LabelStudioTask(link=link, task_id=tid, kind=kind, object_id=obj.pk, data_hash=_digest(data))
            for tid, (kind, obj, data) in zip(task_ids, new, strict=True)
        ])
        report.tasks_created = len(task_ids)
        note(report.tasks_updated + report.tasks_unchanged + len(new), total, f"created {len(new)} task(s)")
        predictions = []
        for tid, (kind, obj, data) in zip(task_ids, new, strict=True):
            if kind == LabelStudioTask.Kind.SCRIPT:
                found = span_predictions(game, obj) if "spans" in kinds else []
                if "relations" in kinds:
                    found += relation_predictions(game, obj)
            else:
                one = question_prediction(game, obj, data)
                found = [one] if one else []
            predictions += [p | {"task": tid} for p in found]
        report.predictions = client.import_predictions(predictions, link.project_id)

    LabelStudioLink.objects.filter(pk=link.pk).update(kinds=kinds, pushed_at=timezone.now())
    note(total, total, report.summary())
    return report
