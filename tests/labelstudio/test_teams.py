"""The bridge with a real team on a real Label Studio server: several annotators who disagree,
deletions, the same server under another URL, pushes that move annotations, the labeling screens."""
from __future__ import annotations

import os

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotate.models import EvidenceSpan, Membership, Option, Question, Relationship, SpanLabelConflict
from casebook.interchange import OptionReview, SpanDocument, Status
from casebook.models import AuditEntry
from labelstudio import config
from labelstudio.agreement import labelstudio_agreement
from labelstudio.client import LabelStudioClient, LabelStudioError, normalise_url
from labelstudio.models import LabelStudioLink, PulledItem
from labelstudio.pull import pull_game
from labelstudio.push import push_game
from review.models import Comment

from .conftest import EN_SCRIPT, ZH_SCRIPT
from .test_bridge import _region, _snapshot, _task

pytestmark = [pytest.mark.labelstudio, pytest.mark.django_db]


@pytest.fixture
def client(labelstudio_server) -> LabelStudioClient:
    url, token = labelstudio_server
    return LabelStudioClient(url, token)


def _choices(name: str, *values: str) -> dict:
    return {"id": name, "from_name": name, "to_name": config.STEM, "type": "choices", "value": {"choices": list(values)}}


def _relation(a: str, b: str, label: str) -> dict:
    return {"from_id": a, "to_id": b, "type": "relation", "direction": "right", "labels": [label]}


def test_deletions_in_label_studio_withdraw_the_drafts_they_created(game, client):
    push_game(game, client)
    link = LabelStudioLink.objects.get(game=game)
    mi, q_zh = game.characters.get(name="𠮷田·美咲"), game.questions.get(kind="objective")
    script = client.create_annotation(_task(link, "script", mi.pk), [
        _region("t1", ZH_SCRIPT, "昨晚十点", "时间"),  # the label as the Chinese screen shows it
        _region("n1", ZH_SCRIPT, "𠮷田·由纪", "人物"),
        _region("n2", ZH_SCRIPT, "𠮷田·美咲", "person"),
        _relation("n1", "n2", "younger sister of x"),
    ])
    review = client.create_annotation(_task(link, "question", q_zh.pk), [
        _choices(config.CORRECT, "B. 𠮷田·由纪"), _choices(config.REJECT, "D. 管家")])
    first = pull_game(game, client)
    assert first.counts()["created"] == {"span": 3, "relation": 1}
    assert "𠮷田·由纪 is younger sister of 𠮷田·美咲 (by admin@example.com, draft)" in [i["detail"] for i in first.created]
    time_span = EvidenceSpan.objects.get(game=game, quote="昨晚十点")
    assert (time_span.label, time_span.state) == ("time", "draft")  # the label lives on the span; pulled = draft
    rel = Relationship.objects.get(game=game, labels=["younger sister of x"])
    assert Option.objects.get(question=q_zh, text="管家").review == OptionReview.REJECTED
    # a reviewer checks the span of 由纪 in Casebook: deleting it in Label Studio must not withdraw it
    EvidenceSpan.objects.filter(game=game, quote="𠮷田·由纪").update(state="live")

    # in Label Studio: delete regions t1 and n1 (and so the relation) and the whole MCQ annotation
    client.sdk.annotations.update(id=script, result=[_region("n2", ZH_SCRIPT, "𠮷田·美咲", "person")])
    client.sdk.annotations.delete(id=review)
    report = pull_game(game, client)
    assert report.counts()["deleted"] == {"span": 2, "relation": 1, "review": 1}, report.deleted
    assert "1 deleted" not in report.summary() and "4 deleted" in report.summary()
    time_span.refresh_from_db()
    assert time_span.state == "withdrawn"  # withdrawn, not deleted
    assert EvidenceSpan.objects.get(game=game, quote="𠮷田·由纪").state == "live"
    assert any("checked in Casebook (live); kept" in i["detail"] for i in report.deleted)
    rel.refresh_from_db()
    assert rel.status == Status.DRAFT and rel.reject_reason.startswith("Withdrawn: deleted in Label Studio")
    assert Comment.objects.filter(item_type="relationship", item_id=rel.pk, system=True, text__startswith="Withdrawn").exists()
    assert Option.objects.get(question=q_zh, text="管家").review == OptionReview.PENDING

    before = _snapshot(game)
    again = pull_game(game, client)
    assert not again.deleted and not again.created and not again.updated
    assert _snapshot(game) == before
    # withdrawn spans go out no more as predictions, and a new push does not revive them
    from labelstudio.push import span_predictions
    assert all(r["value"]["text"] != "昨晚十点" for p in span_predictions(game, mi) for r in p["result"])


def test_keep_deleted_reports_without_withdrawing_and_quiet_prints_nothing(game, labelstudio_server, capsys):
    url, token = labelstudio_server
    client = LabelStudioClient(url, token)
    push_game(game, client, kinds="spans")
    hale = game.characters.get(name="Dr. Hale")
    ann = client.create_annotation(_task(LabelStudioLink.objects.get(game=game), "script", hale.pk),
                                   [_region("a1", EN_SCRIPT, "almonds", "clue")])
    call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token, verbosity=0)
    assert capsys.readouterr().out == ""  # -v 0 prints nothing, not even the summary
    client.sdk.annotations.delete(id=ann)
    call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token, "--keep-deleted")
    out = capsys.readouterr().out
    assert "deleted  span" in out and "kept in Casebook (--keep-deleted)" in out and "1 deleted (1 span)" in out
    assert EvidenceSpan.objects.get(game=game, quote="almonds").state == "draft"


def test_two_annotators_who_disagree_become_conflicts_in_the_review_queue(game, client, django_user_model):
    suffix = os.urandom(3).hex()
    bob = client.sdk.users.create(username=f"bob{suffix}", email=f"bob-{suffix}@example.org")
    casebook_bob = django_user_model.objects.create_user(f"bob{suffix}", email=f"bob-{suffix}@example.org")
    Membership.objects.create(user=casebook_bob, game=game, role="annotator")
    # a Casebook user named like the admin but not on this game's team is not credited
    django_user_model.objects.create_user("admin", email="admin@example.com")
    push_game(game, client)
    link = LabelStudioLink.objects.get(game=game)
    mi, q_zh = game.characters.get(name="𠮷田·美咲"), game.questions.get(kind="objective")
    people = [_region("n1", ZH_SCRIPT, "𠮷田·由纪", "人物"), _region("n2", ZH_SCRIPT, "𠮷田·美咲", "人物")]
    client.create_annotation(_task(link, "script", mi.pk), [*people, _region("s1", ZH_SCRIPT, "书房", "线索"),
                                                              _relation("n1", "n2", "younger sister of x")])
    client.create_annotation(_task(link, "script", mi.pk), [*people, _region("s1", ZH_SCRIPT, "书房", "地点"),
                                                              _relation("n1", "n2", "elder sister of x")], user_id=bob.id)
    # the admin rejects the generated distractor 管家; Bob leaves it unticked, i.e. accepts it
    client.create_annotation(_task(link, "question", q_zh.pk),
                             [_choices(config.CORRECT, "B. 𠮷田·由纪"), _choices(config.REJECT, "D. 管家")])
    client.create_annotation(_task(link, "question", q_zh.pk), [_choices(config.CORRECT, "B. 𠮷田·由纪")], user_id=bob.id)

    report = pull_game(game, client)
    assert report.counts()["conflict"] == {"relation": 1, "review": 1, "span": 1}, report.as_dict()
    span = next(i for i in report.conflict if i["kind"] == "span")
    assert f"bob-{suffix}@example.org labels it place, Casebook has clue" in span["detail"]
    assert EvidenceSpan.objects.get(game=game, quote="书房").label == "clue"  # the first label stays until review
    # the span reaches the review queue as a conflict, like the disputed option review
    study = EvidenceSpan.objects.get(game=game, quote="书房")
    (conflict,) = SpanLabelConflict.objects.filter(game=game, span=study)
    assert conflict.status == Status.SUBMITTED and f"span label conflict {conflict.pk}" in span["detail"]
    assert conflict.candidates == [{"who": "admin@example.com", "label": "clue"},
                                   {"who": f"bob-{suffix}@example.org", "label": "place"}]
    assert Comment.objects.filter(item_type="spanlabelconflict", item_id=conflict.pk, system=True,
                                  text__contains=f"bob-{suffix}@example.org says place").count() == 1
    review = next(i for i in report.conflict if i["kind"] == "review")
    assert f"admin@example.com rejects, bob-{suffix}@example.org accepts" in review["detail"]
    q_zh.refresh_from_db()
    assert q_zh.status == Status.SUBMITTED  # in the reviewers' queue
    assert Option.objects.get(question=q_zh, text="管家").review == OptionReview.PENDING  # nobody silently wins
    assert Comment.objects.filter(item_type="question", item_id=q_zh.pk, system=True, text__contains="disagree").count() == 1
    (rel,) = Relationship.objects.filter(game=game, target__name="𠮷田·由纪", source__name="𠮷田·美咲")  # not two
    assert rel.status == Status.SUBMITTED and rel.labels == ["younger sister of x"]
    assert Comment.objects.filter(item_type="relationship", item_id=rel.pk, text__contains="elder sister of x").exists()
    # every annotation is its own contribution, with its Label Studio user, mapped to Casebook users by name
    rows = PulledItem.objects.filter(link=link)
    assert {r.annotator for r in rows} == {"admin@example.com", f"bob-{suffix}@example.org"}
    assert {r.user for r in rows if r.annotator.startswith("bob")} == {casebook_bob}
    assert {r.user for r in rows if r.annotator.startswith("admin")} == {None}

    figures = labelstudio_agreement(game)
    reviews = figures["option reviews"]
    assert reviews.items == 2 and round(reviews.overall.kappa, 3) == 0.333  # agree on the key, not on 管家
    assert figures["relation labels"].overall.observed == 0
    assert figures["span labels"].items == 3 and round(figures["span labels"].overall.observed, 3) == 0.667
    assert set(report.agreement) == {"span labels", "relation labels", "option reviews"}

    # the game's Label Studio page shows each contribution and the agreement
    manager = django_user_model.objects.create_user(f"lead{suffix}")
    Membership.objects.create(user=manager, game=game, role="manager")
    web = Client()
    web.force_login(manager)
    page = web.get(reverse("labelstudio:game", kwargs={"slug": game.slug})).content.decode()
    assert f'data-annotator="bob-{suffix}@example.org"' in page and f"<td>bob{suffix}</td>" in page
    assert "Agreement on option reviews: κ = 0.333" in page

    queue = web.get(reverse("review:queue") + f"?game={game.slug}").content.decode()
    assert reverse("review:item", args=[game.slug, "spanlabelconflict", conflict.pk]) in queue and "“书房”: clue (admin@example.com) / place" in queue
    item_url = reverse("review:item", args=[game.slug, "spanlabelconflict", conflict.pk])
    page = web.get(item_url).content.decode()
    assert 'id="resolve-span-label"' in page and "地点 / place" in page and f"(bob-{suffix}@example.org)" in page
    transition = reverse("review:transition", args=[game.slug, "spanlabelconflict", conflict.pk])
    # an annotator may not resolve it; approving without a label sets none; a stale version is refused
    annotator = Client()
    annotator.force_login(casebook_bob)
    annotator.post(transition, {"action": "approve", "label": "place", "version": conflict.version})
    web.post(transition, {"action": "approve", "version": conflict.version})
    web.post(transition, {"action": "approve", "label": "place", "version": conflict.version - 1})
    conflict.refresh_from_db()
    assert conflict.status == Status.SUBMITTED and EvidenceSpan.objects.get(pk=study.pk).label == "clue"
    web.post(transition, {"action": "approve", "label": "place", "version": conflict.version})  # the lead resolves it
    conflict.refresh_from_db()
    study.refresh_from_db()
    assert (conflict.status, conflict.label, study.label, study.state) == (Status.APPROVED, "place", "place", "live")
    assert AuditEntry.objects.filter(game=game, item_type="evidencespan", item_id=study.pk, action="update").exists()

    before = (_snapshot(game), Comment.objects.count(), EvidenceSpan.objects.get(pk=study.pk).label)
    again = pull_game(game, client)  # nothing new: no second conflict, no second comment, the resolution holds
    assert not again.conflict and not again.created
    assert (_snapshot(game), Comment.objects.count(), EvidenceSpan.objects.get(pk=study.pk).label) == before


def test_the_same_server_under_another_name_is_the_same_project(game, client, labelstudio_server, tmp_path):
    url, token = labelstudio_server
    assert normalise_url("HTTP://LocalHost:80/") == "http://localhost"
    assert normalise_url("https://ls.example.org:443/base/") == "https://ls.example.org/base"
    push_game(game, client)
    link = LabelStudioLink.objects.get(game=game)
    other = LabelStudioClient(url.replace("127.0.0.1", "localhost"), token)
    hale = game.characters.get(name="Dr. Hale")
    client.create_annotation(_task(link, "script", hale.pk), [_region("a1", EN_SCRIPT, "almonds", "clue")])
    pulled = pull_game(game, other)
    assert pulled.counts()["created"] == {"span": 1}
    assert "same Label Studio server" in pulled.notes[0]
    again = push_game(game, other)
    assert (again.project, again.project_id, again.tasks_created) == ("updated", link.project_id, 0)
    assert LabelStudioLink.objects.filter(game=game).count() == 1
    ours = [p.id for p in client.sdk.projects.list(page_size=1000) if (p.description or "").startswith(f"Casebook game {game.slug} ")]
    assert ours == [link.project_id]  # no second project

    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(LabelStudioError, match="is not a Label Studio server") as wrong:
            pull_game(game, LabelStudioClient(f"http://127.0.0.1:{server.server_port}", token))
        assert "not been pushed" not in str(wrong.value)
    finally:
        server.shutdown()
        server.server_close()


def test_push_warns_about_moved_or_orphaned_annotations_and_reanchors_predictions(game, client):
    mi, q_en = game.characters.get(name="𠮷田·美咲"), game.questions.get(kind="reasoning")
    at = ZH_SCRIPT.index("杏仁味")
    EvidenceSpan.objects.create(game=game, document=SpanDocument.SCRIPT, character=mi, start=at, end=at + 3,
                                quote="杏仁味", label="method")
    push_game(game, client)
    link = LabelStudioLink.objects.get(game=game)
    script_task, question_task = _task(link, "script", mi.pk), _task(link, "question", q_en.pk)
    client.create_annotation(script_task, [_region("p1", ZH_SCRIPT, "书房", "地点")])
    client.create_annotation(question_task, [_choices(config.CORRECT, "A. almonds")])

    mi.script = "序：" + ZH_SCRIPT
    mi.save(update_fields=["script"])
    Option.objects.filter(question=q_en, text="almonds").update(text="bitter almonds")
    report = push_game(game, client)
    assert report.tasks_updated == 2
    warned = {w["task"]: w["detail"] for w in report.warnings}
    assert "'书房'" in warned[script_task] and "re-anchors it by its quote" in warned[script_task]
    assert "'A. almonds' is no longer an option" in warned[question_task]
    assert "2 warning(s)" in report.summary()
    # Casebook's own prediction moved with its words (re-anchored by quote), sent once
    (prediction,) = [p for p in client.sdk.predictions.list(task=script_task) if p.model_version.startswith("casebook:")]
    (region,) = [r for r in prediction.result if r.get("value", {}).get("text") == "杏仁味"]
    assert mi.script[region["value"]["start"]:region["value"]["end"]] == "杏仁味"
    assert region["value"]["labels"] == ["手法"]


def test_labeling_screens_per_task_type_in_the_games_language(game, client):
    mi = game.characters.get(name="𠮷田·美咲")
    q_zh = game.questions.get(kind="objective")
    # an evidence span naming both people of the relationship must not become a self-loop
    quote = ZH_SCRIPT[:ZH_SCRIPT.index("喝下")]
    both = EvidenceSpan.objects.create(game=game, document=SpanDocument.SCRIPT, character=mi, start=0, end=len(quote),
                                       quote=quote, label="clue")
    rel = Relationship.objects.get(game=game)
    rel.evidence.add(both)
    push_game(game, client)
    link = LabelStudioLink.objects.get(game=game)
    script = client.sdk.tasks.get(id=str(_task(link, "script", mi.pk))).data
    question = client.sdk.tasks.get(id=str(_task(link, "question", q_zh.pk))).data
    assert [c["value"] for c in script["span_labels"]] == ["线索", "不在场证明", "动机", "手法", "时间", "地点", "人物"]
    assert question["span_labels"] == []  # no span buttons on an MCQ task
    assert question["options_single"] and question["options_multi"] == []  # a single-answer question: radio buttons
    assert question["correct_header"] == "正确选项（单选）" and question["heading"] == "选择题审核 · 客观题 · 𠮷田·美咲"

    predictions = list(client.sdk.predictions.list(task=_task(link, "script", mi.pk)))
    versions = [p.model_version for p in predictions]
    assert len(versions) == len(set(versions))  # one prediction per model_version
    for p in predictions:
        ids = [r["id"] for r in p.result if r["type"] == "labels"]
        places = [(r["value"]["start"], r["value"]["end"]) for r in p.result if r["type"] == "labels"]
        assert len(ids) == len(set(ids)) and len(places) == len(set(places))  # no span sent twice
        for r in p.result:
            if r["type"] == "relation":
                assert r["from_id"] != r["to_id"]  # no self-loop
    question_versions = {p.model_version for p in client.sdk.predictions.list(task=_task(link, "question", q_zh.pk))}
    assert "casebook:heuristic" not in question_versions and not any("llm" in v for v in question_versions)
    assert Question.objects.filter(game=game).count() == 2
