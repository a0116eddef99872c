"""Push a small bilingual game to a real Label Studio server, annotate as a user would, pull back."""
from __future__ import annotations

import pytest

from annotate.models import EvidenceSpan, Option, Question, Relationship
from annotate.services.spans import codepoint_to_utf16
from casebook.interchange import OptionReview, SpanDocument, Status
from casebook.models import AuditEntry
from labelstudio import config
from labelstudio.client import LabelStudioClient, LabelStudioError
from labelstudio.models import LabelStudioLink, LabelStudioTask, PulledItem
from labelstudio.pull import pull_game
from labelstudio.push import push_game

from .conftest import EN_SCRIPT, ZH_SCRIPT

pytestmark = [pytest.mark.labelstudio, pytest.mark.django_db]


@pytest.fixture
def client(labelstudio_server) -> LabelStudioClient:
    url, token = labelstudio_server
    return LabelStudioClient(url, token)


def _task(link: LabelStudioLink, kind: str, object_id: int) -> int:
    return LabelStudioTask.objects.get(link=link, kind=kind, object_id=object_id).task_id


def _region(rid: str, text: str, quote: str, label: str, *, utf16: bool = False, nth: int = 0) -> dict:
    """A text region as the Label Studio editor records it (optionally with JavaScript UTF-16 offsets)."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(quote, start + 1)
    end = start + len(quote)
    if utf16:
        start, end = codepoint_to_utf16(text, start), codepoint_to_utf16(text, end)
    return {"id": rid, "from_name": config.SPAN_LABELS, "to_name": config.TEXT, "type": "labels",
            "value": {"start": start, "end": end, "text": quote, "labels": [label]}}


def _snapshot(game) -> dict:
    """Everything a pull may touch, to prove that a second or failed pull changes nothing."""
    return {
        "spans": sorted(EvidenceSpan.objects.filter(game=game).values_list("pk", "start", "end", "quote")),
        "relationships": sorted((r.pk, r.source_id, r.target_id, tuple(r.labels), r.status, r.version)
                                for r in Relationship.objects.filter(game=game)),
        "options": sorted(Option.objects.filter(question__game=game).values_list("pk", "is_correct", "review")),
        "questions": sorted(Question.objects.filter(game=game).values_list("pk", "status", "answer", "version")),
        "pulled": PulledItem.objects.filter(link__game=game).count(),
        "audit": AuditEntry.objects.filter(game=game).count(),
    }


def test_push_creates_project_tasks_and_predictions_once(game, client):
    report = push_game(game, client)
    assert report.project == "created"
    assert report.tasks_created == 5  # three scripts (the victim has none) + two MCQs
    link = LabelStudioLink.objects.get(game=game)
    assert link.kinds == ["spans", "relations", "questions"]
    project = client.get_project(link.project_id)
    assert 'value="younger sister of x"' in project["label_config"]

    mi = game.characters.get(name="𠮷田·美咲")
    predictions = list(client.sdk.predictions.list(task=_task(link, "script", mi.pk)))
    assert [p.model_version for p in predictions] == ["casebook:imported-wellplay"]
    result = predictions[0].result
    regions = {r["id"]: r["value"] for r in result if r["type"] == "labels"}
    relation = next(r for r in result if r["type"] == "relation")
    # the imported edge "美咲 is daughter of 健一", drawn between the first mentions of the two names
    assert relation["labels"] == ["daughter of x"]
    assert regions[relation["from_id"]]["text"] == "𠮷田·美咲"
    assert regions[relation["to_id"]]["text"] == "𠮷田·健一"
    assert all(ZH_SCRIPT[v["start"]:v["end"]] == v["text"] for v in regions.values())

    q = game.questions.get(kind="objective")
    (prediction,) = client.sdk.predictions.list(task=_task(link, "question", q.pk))
    # the key comes from the dataset, not from the model that wrote a distractor (honest model_version)
    assert prediction.model_version == "casebook:imported-wellplay"
    assert prediction.result[0]["value"]["choices"] == ["B. 𠮷田·由纪"]

    again = push_game(game, client)
    assert (again.project, again.tasks_created, again.tasks_updated, again.tasks_unchanged) == ("updated", 0, 0, 5)
    assert len(client.export_tasks(link.project_id)) == 5


def test_round_trip_spans_relation_and_review_then_pull_again_changes_nothing(game, client, django_user_model):
    push_game(game, client)
    link = LabelStudioLink.objects.get(game=game)
    mi = game.characters.get(name="𠮷田·美咲")
    hale = game.characters.get(name="Dr. Hale")
    q_zh, q_en = game.questions.get(kind="objective"), game.questions.get(kind="reasoning")

    # Chinese script: offsets after several 𠮷 (U+20BB7), one region in JavaScript UTF-16 units, as
    # some Label Studio frontends record them; a relation "由纪 is younger sister of 美咲"; a region
    # whose quote is not in the text (edited elsewhere) must be reported, not guessed.
    zh_result = [
        _region("t1", ZH_SCRIPT, "昨晚十点", "time"),
        _region("p1", ZH_SCRIPT, "书房", "place", utf16=True),
        _region("m1", ZH_SCRIPT, "杏仁味", "method", utf16=True),
        _region("n1", ZH_SCRIPT, "𠮷田·由纪", "person", utf16=True),
        _region("n2", ZH_SCRIPT, "𠮷田·美咲", "person"),
        {"id": "bad", "from_name": "span", "to_name": "text", "type": "labels",
         "value": {"start": 3, "end": 6, "text": "氰化钾", "labels": ["method"]}},
        {"from_id": "n1", "to_id": "n2", "type": "relation", "direction": "right", "labels": ["younger sister of x"]},
    ]
    client.create_annotation(_task(link, "script", mi.pk), zh_result)
    client.create_annotation(_task(link, "script", hale.pk), [_region("a1", EN_SCRIPT, "almonds", "clue")])
    # MCQ reviews: keep 由纪 as the answer and reject the LLM distractor; accept the heuristic one.
    client.create_annotation(_task(link, "question", q_zh.pk), [
        {"id": "c", "from_name": "correct", "to_name": "stem", "type": "choices", "value": {"choices": ["B. 𠮷田·由纪"]}},
        {"id": "r", "from_name": "reject", "to_name": "stem", "type": "choices", "value": {"choices": ["D. 管家"]}},
    ])
    client.create_annotation(_task(link, "question", q_en.pk), [
        {"id": "c", "from_name": "correct", "to_name": "stem", "type": "choices", "value": {"choices": ["A. almonds"]}},
    ])

    manager = django_user_model.objects.create_user("lead", password="x")
    report = pull_game(game, client, user=manager)
    counts = report.counts()
    assert counts["created"] == {"span": 6, "relation": 1}, report.as_dict()
    assert counts["updated"] == {"review": 2}
    assert counts["skipped"] == {"span": 1}
    assert "氰化钾" in report.skipped[0]["detail"] and "does not occur" in report.skipped[0]["detail"]
    assert sum("repaired" in item["detail"] for item in report.created) == 3  # the three UTF-16 regions

    spans = EvidenceSpan.objects.filter(game=game, document=SpanDocument.SCRIPT)
    for span in spans:
        assert span.character.script[span.start:span.end] == span.quote
        assert span.created_by == manager
    yu = spans.get(quote="𠮷田·由纪")
    assert (yu.start, yu.end) == (ZH_SCRIPT.index("𠮷田·由纪"), ZH_SCRIPT.index("𠮷田·由纪") + 5)
    assert PulledItem.objects.get(span=spans.get(quote="书房")).label == "place"

    rel = Relationship.objects.get(game=game, labels=["younger sister of x"])
    assert (rel.target.name, rel.source.name, rel.status) == ("𠮷田·由纪", "𠮷田·美咲", Status.DRAFT)
    assert sorted(rel.evidence.values_list("quote", flat=True)) == ["𠮷田·由纪", "𠮷田·美咲"]

    options = {o.text: o for o in Option.objects.filter(question=q_zh)}
    assert options["管家"].review == OptionReview.REJECTED and options["𠮷田·由纪"].is_correct
    q_zh.refresh_from_db()
    assert (q_zh.status, q_zh.answer) == (Status.DRAFT, "b")
    assert Option.objects.get(question=q_en, text="roses").review == OptionReview.ACCEPTED

    before = _snapshot(game)
    second = pull_game(game, client, user=manager)
    assert not second.created and not second.updated, second.as_dict()
    assert second.counts()["unchanged"] == {"span": 6, "relation": 1, "review": 2}
    assert _snapshot(game) == before


def test_bad_token_unreachable_and_deleted_project_change_nothing(game, client, labelstudio_server):
    url, _ = labelstudio_server
    with pytest.raises(LabelStudioError) as bad:
        push_game(game, LabelStudioClient(url, "0" * 40))
    assert bad.value.kind == "auth" and "token" in str(bad.value)
    assert ".." not in str(bad.value)  # Label Studio's "Invalid token." is not followed by another full stop
    assert not LabelStudioLink.objects.filter(game=game).exists()

    with pytest.raises(LabelStudioError) as down:
        push_game(game, LabelStudioClient("http://127.0.0.1:9", "x" * 40, timeout=5))
    assert down.value.kind == "unreachable" and "Cannot reach Label Studio" in str(down.value)

    push_game(game, client)
    link = LabelStudioLink.objects.get(game=game)
    hale = game.characters.get(name="Dr. Hale")
    client.create_annotation(_task(link, "script", hale.pk), [_region("a1", EN_SCRIPT, "almonds", "clue")])
    before = _snapshot(game)
    with pytest.raises(LabelStudioError) as denied:
        pull_game(game, LabelStudioClient(url, "0" * 40))
    assert denied.value.kind == "auth"
    client.delete_project(link.project_id)
    with pytest.raises(LabelStudioError) as gone:
        pull_game(game, client)
    assert gone.value.kind == "not_found" and "no longer exists" in str(gone.value) and "Nothing was changed" in str(gone.value)
    assert _snapshot(game) == before

    again = push_game(game, client)  # a new push recreates the project
    assert again.project == "recreated" and again.tasks_created == 5 and again.project_id != link.project_id


def test_label_config_rejected_by_label_studio_is_reported(game, client):
    push_game(game, client)
    link = LabelStudioLink.objects.get(game=game)
    mi = game.characters.get(name="𠮷田·美咲")
    client.create_annotation(_task(link, "script", mi.pk), [_region("t1", ZH_SCRIPT, "昨晚十点", "time")])
    # dropping the span labels would orphan that annotation: Label Studio refuses the new config
    with pytest.raises(LabelStudioError) as refused:
        push_game(game, client, kinds="questions")
    assert refused.value.kind == "config", refused.value
    assert "labeling config" in str(refused.value)
    # Label Studio's own explanation (validation_errors), not just its "Validation error"
    assert "from_name=span" in str(refused.value) and "incompatible" in str(refused.value), refused.value


def test_edits_on_either_side_after_a_pull(game, client):
    """An annotation edited in Label Studio updates what it created; a relationship approved in
    Casebook or a span deleted there is left alone; an edited script is re-sent on the next push."""
    push_game(game, client)
    link = LabelStudioLink.objects.get(game=game)
    mi = game.characters.get(name="𠮷田·美咲")
    task_id = _task(link, "script", mi.pk)
    first = [
        _region("t1", ZH_SCRIPT, "昨晚十点", "time"),
        _region("n1", ZH_SCRIPT, "𠮷田·由纪", "person"),
        _region("n2", ZH_SCRIPT, "𠮷田·美咲", "person"),
        {"from_id": "n1", "to_id": "n2", "type": "relation", "direction": "right", "labels": ["sister of x"]},
    ]
    ann_id = client.create_annotation(task_id, first)
    assert pull_game(game, client).counts()["created"] == {"span": 3, "relation": 1}

    # in Label Studio: the time region is widened, the relation relabelled
    second = [_region("t1", ZH_SCRIPT, "昨晚十点，我在书房", "time"), *first[1:3],
              {**first[3], "labels": ["younger sister of x"]}]
    client.sdk.annotations.update(id=ann_id, result=second)
    report = pull_game(game, client)
    assert report.counts()["updated"] == {"span": 1, "relation": 1}, report.as_dict()
    assert EvidenceSpan.objects.filter(game=game, quote="昨晚十点，我在书房").count() == 1
    assert not EvidenceSpan.objects.filter(game=game, quote="昨晚十点").exists()
    rel = Relationship.objects.get(game=game, target__name="𠮷田·由纪")
    assert rel.labels == ["younger sister of x"] and rel.status == Status.DRAFT

    # in Casebook: the relationship is approved, the span deleted; Label Studio changes the label again
    Relationship.objects.filter(pk=rel.pk).update(status=Status.APPROVED)
    EvidenceSpan.objects.filter(game=game, quote="昨晚十点，我在书房").delete()
    client.sdk.annotations.update(id=ann_id, result=[*second[:3], {**first[3], "labels": ["twin sister of x"]}])
    before = _snapshot(game)
    report = pull_game(game, client)
    assert not report.created and not report.updated, report.as_dict()
    assert any("already approved in Casebook; not overwritten" in s["detail"] for s in report.skipped)
    assert any("not recreated" in u["detail"] for u in report.unchanged)
    assert _snapshot(game) == before

    # an edited script is re-sent to its task, not duplicated
    mi.script = ZH_SCRIPT + "\n（补充）"
    mi.save(update_fields=["script"])
    again = push_game(game, client)
    assert (again.tasks_created, again.tasks_updated) == (0, 1)
    exported = {t["id"]: t for t in client.export_tasks(link.project_id)}
    assert exported[task_id]["data"]["text"].endswith("（补充）")


def test_real_wellplay_game_pushes_and_a_confirming_review_changes_nothing(wellplay_anchor, client):
    from django.core.management import call_command

    from annotate.models import Game

    call_command("import_dataset", str(wellplay_anchor / "chinese" / "罪恶（4人封闭）"), format="wellplay", verbosity=0)
    game = Game.objects.get()
    report = push_game(game, client, kinds="spans,questions")
    scripts = game.characters.exclude(script="").count()
    mcqs = game.questions.filter(options__isnull=False).distinct().count()
    assert report.tasks_created == scripts + mcqs and scripts == 4 and mcqs > 30
    link = LabelStudioLink.objects.get(game=game)
    exported = {t["id"]: t for t in client.export_tasks(link.project_id)}
    for mapped in LabelStudioTask.objects.filter(link=link):
        data = exported[mapped.task_id]["data"]
        if mapped.kind == "script":
            assert data["text"] == game.characters.get(pk=mapped.object_id).script
        else:
            question = game.questions.get(pk=mapped.object_id)
            assert data["stem"] == question.stem
            assert [o["option_id"] for o in data["options"]] == list(question.options.values_list("pk", flat=True))

    # a reviewer confirms the published answer of the first question: nothing changes in Casebook
    question = game.questions.filter(options__isnull=False).order_by("position", "id").first()
    mapped = LabelStudioTask.objects.get(link=link, kind="question", object_id=question.pk)
    options = exported[mapped.task_id]["data"]["options"]
    correct = [o["value"] for o, row in zip(options, question.options.all(), strict=True) if row.is_correct]
    assert correct, "the published question has a correct option"
    client.create_annotation(mapped.task_id, [{"id": "c", "from_name": "correct", "to_name": "stem", "type": "choices",
                                               "value": {"choices": correct}}])
    before = _snapshot(game)
    pulled = pull_game(game, client)
    assert pulled.counts()["unchanged"] == {"review": 1} and not pulled.updated and not pulled.created
    after = _snapshot(game)
    assert after["questions"] == before["questions"] and after["options"] == before["options"]
