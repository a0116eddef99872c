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
from .identity import description_marker, find_link
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
    warnings: list[dict[str, Any]] = field(default_factory=list)  # per task: annotations a change moves or orphans

    def summary(self) -> str:
        warned = f"; {len(self.warnings)} warning(s) about existing annotations" if self.warnings else ""
        return (f"project {self.project_id} {self.project} ({', '.join(self.kinds)}): {self.tasks_created} task(s) created, "
                f"{self.tasks_updated} updated, {self.tasks_unchanged} unchanged, {self.predictions} prediction(s) sent{warned}")

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__} | {"summary": self.summary()}


# --- origins --------------------------------------------------------------------------------
def origin_tag(game: Game, *, human: bool = False) -> str:
    """The prediction ``model_version``: where a Casebook annotation came from (a person, or the
    game's source). Generated distractors are never predicted, so no tag claims a model or heuristic."""
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
        config.TEXT: character.script, "span_labels": config.span_label_choices(game.language),
    })
    if "relation_header" in data:
        data["relation_header"] = _heading(
            game, "关系：从一方的姓名拉箭头到另一方，选中箭头起点的姓名，在下面搜索关系（“A 是 x 的…”）",
            "Relations: draw an arrow from one name to the other, select the name it starts from and search its label "
            "below (“A is … of x”)")
    return data


KIND_ZH = {"objective": "客观题", "reasoning": "推理题", "relations": "关系题", "long_script": "长剧本理解",
           "text_image": "图文理解", "media_image": "多图理解", "multi_step": "多步推理", "open_ended": "开放题"}


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
        "heading": _heading(game, f"选择题审核 · {KIND_ZH.get(question.kind, question.kind)}{perspective}",
                            f"MCQ review · {question.get_kind_display()}{perspective}"),
        config.STEM: question.stem,
        "options": values,
        "options_single": [] if question.multi else values,
        "options_multi": values if question.multi else [],
        "distractors": generated,
        "correct_header": _heading(game, "正确选项（多选，可选多个）", "Correct options (several answers)") if question.multi
        else _heading(game, "正确选项（单选）", "Correct option (one answer)"),
        "reject_header": _heading(game, "拒绝的生成干扰项（未勾选 = 接受）", "Generated distractors to reject (unticked = accepted)")
        if generated else "",
    })
    return data


# --- predictions ----------------------------------------------------------------------------
def _span_region(game: Game, region_id: str, start: int, end: int, quote: str, label: str) -> dict[str, Any]:
    return {"id": region_id, "from_name": config.SPAN_LABELS, "to_name": config.TEXT, "type": "labels",
            "origin": "prediction", "value": {"start": start, "end": end, "text": quote,
                                              "labels": [config.span_label_shown(label, game.language)]}}


def _placed(text: str, span: EvidenceSpan) -> tuple[int, int] | None:
    """Where the span's quote is in ``text`` now: its offsets if they still hold, else the
    occurrence nearest to them (re-anchoring after a script edit), None if the quote is gone."""
    from .offsets import OffsetError, place

    try:
        found = place(text, span.start, span.end, span.quote)
    except OffsetError:
        return None
    return found.start, found.end


def span_predictions(game: Game, character: Character) -> list[dict[str, Any]]:
    """The character's live script spans with their labels (clue when unlabelled), one prediction per origin."""
    spans = (EvidenceSpan.objects.filter(game=game, document=SpanDocument.SCRIPT, character=character)
             .exclude(state="withdrawn").order_by("start", "end"))
    pulled = set(PulledItem.objects.filter(span__in=spans).values_list("span_id", flat=True))
    by_tag: dict[str, list[dict[str, Any]]] = {}
    text = character.script
    for span in spans:
        at = _placed(text, span)
        if at is None:
            continue  # the quote is no longer in the script: it would mislead annotators
        tag = origin_tag(game, human=span.created_by_id is not None or span.pk in pulled)
        by_tag.setdefault(tag, []).append(_span_region(game, f"cb-span-{span.pk}", at[0], at[1], span.quote, span.label or "clue"))
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
    it, else between the first mentions of the two names ("person" regions). A span naming both
    people would be a self-loop, so each end is a different region or the relation is left out."""
    text = character.script
    rels = Relationship.objects.filter(game=game).select_related("source", "target").prefetch_related("evidence")
    by_tag: dict[str, list[dict[str, Any]]] = {}
    for rel in rels:
        ends: list[dict[str, Any]] = []
        evidence = [s for s in rel.evidence.all() if s.document == SpanDocument.SCRIPT and s.character_id == character.pk
                    and s.state != "withdrawn"]
        for person, other in ((rel.target, rel.source), (rel.source, rel.target)):  # drawn from target ("A is L of B")
            span = next((s for s in evidence if _mentions(s.quote, person) and not _mentions(s.quote, other)), None)
            at = _placed(text, span) if span is not None else None
            if span is not None and at is not None:
                ends.append(_span_region(game, f"cb-span-{span.pk}", at[0], at[1], span.quote, "person"))
                continue
            hit = _mentions(text, person)
            if hit is None:
                break
            ends.append(_span_region(game, f"cb-person-{person.pk}", hit[0], hit[1], text[hit[0]:hit[1]], "person"))
        if len(ends) != 2 or not rel.labels or ends[0]["id"] == ends[1]["id"] or \
                (ends[0]["value"]["start"], ends[0]["value"]["end"]) == (ends[1]["value"]["start"], ends[1]["value"]["end"]):
            continue
        result = by_tag.setdefault(origin_tag(game, human=rel.author_id is not None), [])
        result += ends
        result.append({"from_id": ends[0]["id"], "to_id": ends[1]["id"], "type": "relation", "direction": "right",
                       "labels": list(rel.labels)})
    return [{"model_version": tag, "score": 1.0, "result": result} for tag, result in by_tag.items()]


def script_predictions(game: Game, character: Character, kinds: list[str]) -> list[dict[str, Any]]:
    """Spans and relations of one script, one prediction per model_version, every region once."""
    found = span_predictions(game, character) if "spans" in kinds else []
    if "relations" in kinds:
        found += relation_predictions(game, character)
    merged: dict[str, dict[str, Any]] = {}
    for prediction in found:
        into = merged.setdefault(prediction["model_version"], {**prediction, "result": []})
        ids = {r.get("id") for r in into["result"] if r.get("type") != "relation"}
        places = {(r["value"]["start"], r["value"]["end"]): r["id"] for r in into["result"] if r.get("type") == "labels"}
        renamed: dict[str, str] = {}
        for item in prediction["result"]:
            if item.get("type") == "relation":
                relation = {**item, "from_id": renamed.get(item["from_id"], item["from_id"]),
                            "to_id": renamed.get(item["to_id"], item["to_id"])}
                if relation not in into["result"]:
                    into["result"].append(relation)
                continue
            where = (item["value"]["start"], item["value"]["end"])
            if item["id"] in ids:
                continue
            if where in places:  # the same words already went out as another region: reuse it
                renamed[item["id"]] = places[where]
                continue
            ids.add(item["id"])
            places[where] = item["id"]
            into["result"].append(item)
    return list(merged.values())


def question_prediction(game: Game, question: Question, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The key (tagged with where it came from: the dataset or the question's author) and, apart,
    the distractors a Casebook reviewer rejected (a person's decision, tagged casebook:human)."""
    options = {o.pk: o for o in question.options.all()}
    correct = [v["value"] for v in data["options"] if options[v["option_id"]].is_correct]
    rejected = [v["value"] for v in data["distractors"] if options[v["option_id"]].review == OptionReview.REJECTED]
    out = []
    if correct:
        out.append({"model_version": origin_tag(game, human=question.author_id is not None), "score": 1.0, "result": [
            {"id": "cb-correct", "from_name": config.CORRECT_MULTI if question.multi else config.CORRECT,
             "to_name": config.STEM, "type": "choices", "value": {"choices": correct}}]})
    if rejected:
        reject = {"id": "cb-reject", "from_name": config.REJECT, "to_name": config.STEM, "type": "choices",
                  "value": {"choices": rejected}}
        if out and out[0]["model_version"] == "casebook:human":
            out[0]["result"].append(reject)
        else:
            out.append({"model_version": "casebook:human", "score": 1.0, "result": [reject]})
    return out


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


def _moved_annotations(kind: str, old: dict[str, Any], new: dict[str, Any], annotations: list[dict[str, Any]]) -> list[str]:
    """What the new task data does to annotations made on the old: regions that now cover other
    words (or whose words are gone), choices that are no longer options."""
    problems: list[str] = []
    for ann in annotations:
        who = f"annotation {ann.get('id')}"
        for item in ann.get("result") or []:
            value = item.get("value") or {}
            if kind == LabelStudioTask.Kind.SCRIPT and item.get("type") == "labels":
                start, end, quote = value.get("start"), value.get("end"), value.get("text") or ""
                text = str(new.get(config.TEXT) or "")
                if isinstance(start, int) and isinstance(end, int) and text[start:end] != quote:
                    where = "is still in the text (a pull re-anchors it by its quote)" if quote and quote in text \
                        else "is no longer in the text (a pull will skip it)"
                    problems.append(f"{who}: region {quote[:30]!r} at [{start}:{end}] now shows other words; the quote {where}")
            elif kind == LabelStudioTask.Kind.QUESTION and item.get("type") == "choices":
                values = {v.get("value") for v in (new.get("options") or [])}
                for choice in value.get("choices") or []:
                    if choice not in values:
                        problems.append(f"{who}: choice {choice!r} is no longer an option (the option's text changed); "
                                        "a pull will skip this review")
    return problems


def _update_task(client: LabelStudioClient, game: Game, mapped: LabelStudioTask, kind: str, obj: Any,
                 data: dict[str, Any], kinds: list[str], report: PushReport) -> None:
    """Send changed task data; warn about annotations it moves or orphans; re-anchor Casebook's predictions."""
    task = client.get_task(mapped.task_id)
    problems = _moved_annotations(kind, task.get("data") or {}, data, task.get("annotations") or [])
    client.update_task_data(mapped.task_id, data)
    for problem in problems:
        report.warnings.append({"task": mapped.task_id, "detail": problem})
    if kind == LabelStudioTask.Kind.SCRIPT:
        fresh = script_predictions(game, obj, kinds)
    else:
        fresh = question_prediction(game, obj, data)
    client.replace_predictions(mapped.task_id, [p | {"task": mapped.task_id} for p in fresh], prefix="casebook:")
    report.predictions += len(fresh)


def push_game(game: Game, client: LabelStudioClient, *, kinds: list[str] | str | None = None,
              progress: Progress | None = None) -> PushReport:
    """Create or update the game's project on ``client``'s server; raises LabelStudioError on failure."""
    kinds = config.normalise_kinds(kinds)
    report = PushReport(kinds=kinds)
    note = progress or (lambda done, total, message: None)
    label_config = config.build_label_config(kinds, language=game.language)
    description = (f"{description_marker(game)}({game.get_origin_display()}); "
                   f"pushed {timezone.now():%Y-%m-%d %H:%M} UTC.")
    client.check()

    found = find_link(game, client)
    link = found.link
    if found.note:
        report.notes.append(found.note)
    if link is not None and found.project is not None:
        client.update_project(link.project_id, title=project_title(game), description=description, label_config=label_config)
        report.project = "updated"
    else:
        project_id, stamp = client.create_project(title=project_title(game), description=description, label_config=label_config)
        if link is not None:
            report.notes.append(f"project {link.project_id} no longer exists in Label Studio; created project {project_id} "
                                "(annotations pulled from the old one stay in Casebook)")
            with transaction.atomic():
                link.tasks.all().delete()
                link.project_id, link.project_created = project_id, stamp
                link.save(update_fields=["project_id", "project_created"])
            report.project = "recreated"
        else:
            link = LabelStudioLink.objects.create(game=game, url=client.url, project_id=project_id, project_created=stamp,
                                                  kinds=kinds)
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
            _update_task(client, game, mapped, kind, obj, data, kinds, report)
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
                found_predictions = script_predictions(game, obj, kinds)
            else:
                found_predictions = question_prediction(game, obj, data)
            predictions += [p | {"task": tid} for p in found_predictions]
        report.predictions += client.import_predictions(predictions, link.project_id)

    LabelStudioLink.objects.filter(pk=link.pk).update(kinds=kinds, pushed_at=timezone.now())
    note(total, total, report.summary())
    return report
