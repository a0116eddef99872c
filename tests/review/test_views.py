"""The review pages through Django's test client: roles (404/403), queue filters, approve /
reject / bulk, comments, history + revert, assignments, blind validation, pair labels, dashboards."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import Question
from annotate.services import snapshots, states
from casebook.interchange import Status
from casebook.models import AuditEntry
from review import agreement
from review.models import Assignment, Comment, LabelJudgement


def login(client, user):
    client.force_login(user)
    return client


def _submitted(game, author, n=2):
    qs = list(game.questions.order_by("position")[:n])
    Question.objects.filter(pk__in=[q.pk for q in qs]).update(status=Status.SUBMITTED, author=author)
    return [Question.objects.get(pk=q.pk) for q in qs]


PAGES = [
    ("review:dashboard", "annotator"), ("review:validate", "annotator"), ("review:labels", "annotator"),
    ("review:assignments", "manager"),
]


@pytest.mark.parametrize("name,needed", PAGES)
def test_game_pages_404_for_outsiders_403_for_low_roles(client, game, users, name, needed):
    url = reverse(name, args=[game.slug])
    assert login(client, users["otto"]).get(url).status_code == 404
    for who, role in [("anna", "annotator"), ("rita", "reviewer"), ("mia", "manager"), ("root", "manager")]:
        expected = 200 if {"annotator": 1, "reviewer": 2, "manager": 3}[role] >= {"annotator": 1, "manager": 3}[needed] else 403
        assert login(client, users[who]).get(url).status_code == expected, (who, name)
    client.logout()
    assert client.get(url).status_code == 302  # to the login page


def test_item_page_404_and_unknown_type(client, game, users, anna_question):
    url = reverse("review:item", args=[game.slug, "question", anna_question.pk])
    assert login(client, users["otto"]).get(url).status_code == 404
    assert login(client, users["bob"]).get(url).status_code == 200
    assert client.get(reverse("review:item", args=[game.slug, "character", 1])).status_code == 404
    assert client.get(reverse("review:item", args=[game.slug, "question", 999999])).status_code == 404


def test_queue_lists_submitted_and_filters(client, game, users):
    anna_qs = _submitted(game, users["anna"], 2)
    rel = game.relationships.get()
    states.transition(rel, "submit", users["rita"])
    login(client, users["rex"])
    page = client.get(reverse("review:queue")).content.decode()
    assert anna_qs[0].stem in page and "林管家 → 王·小明" in page
    page = client.get(reverse("review:queue"), {"author": "anna"}).content.decode()
    assert anna_qs[0].stem in page and "林管家 → 王·小明" not in page
    page = client.get(reverse("review:queue"), {"type": "relationship", "game": game.slug}).content.decode()
    assert anna_qs[0].stem not in page and "林管家 → 王·小明" in page
    page = client.get(reverse("review:queue"), {"state": "bogus"}).content.decode()
    assert "Unknown state" in page
    # annotators have no queue: they land on their own work
    assert login(client, users["anna"]).get(reverse("review:queue")).url == reverse("review:mine")


def test_reject_needs_reason_then_annotator_sees_it(client, game, users):
    q = _submitted(game, users["anna"], 1)[0]
    url = reverse("review:transition", args=[game.slug, "question", q.pk])
    login(client, users["rita"])
    r = client.post(url, {"action": "reject", "reason": "", "version": q.version}, follow=True)
    assert "needs a reason" in r.content.decode()
    assert Question.objects.get(pk=q.pk).status == Status.SUBMITTED
    client.post(url, {"action": "reject", "reason": "答案应为B：管家十点不在书房", "version": q.version})
    assert Question.objects.get(pk=q.pk).status == Status.REJECTED
    login(client, users["anna"])
    mine = client.get(reverse("review:mine")).content.decode()
    assert "答案应为B：管家十点不在书房" in mine
    item = client.get(reverse("review:item", args=[game.slug, "question", q.pk])).content.decode()
    assert "答案应为B：管家十点不在书房" in item and 'data-action="submit"' in item and 'data-action="approve"' not in item


def test_stale_version_and_annotator_cannot_approve(client, game, users):
    q = _submitted(game, users["anna"], 1)[0]
    url = reverse("review:transition", args=[game.slug, "question", q.pk])
    r = login(client, users["rita"]).post(url, {"action": "approve", "version": q.version - 1}, follow=True)
    assert "changed by someone else" in r.content.decode()
    r = login(client, users["bob"]).post(url, {"action": "approve", "version": q.version}, follow=True)
    assert "needs the reviewer role" in r.content.decode()
    assert Question.objects.get(pk=q.pk).status == Status.SUBMITTED
    assert login(client, users["otto"]).post(url, {"action": "approve"}).status_code == 404


def test_bulk_approve(client, game, users):
    qs = _submitted(game, users["anna"], 3)
    draft = game.questions.order_by("position")[3]
    login(client, users["rita"])
    r = client.post(reverse("review:bulk"), {"action": "approve", "items": [f"question:{q.pk}" for q in qs] + [f"question:{draft.pk}"]},
                    follow=True)
    text = r.content.decode()
    assert "Approved 3 item(s)" in text and "Cannot approve an item that is draft" in text
    assert Question.objects.filter(game=game, status=Status.APPROVED).count() == 3
    assert set(Question.objects.filter(game=game, status=Status.APPROVED).values_list("reviewer__username", flat=True)) == {"rita"}
    login(client, users["otto"])
    assert client.post(reverse("review:bulk"), {"items": [f"question:{draft.pk}"]}).status_code == 404


def test_comment_and_history_revert(client, game, users, anna_question):
    login(client, users["anna"])
    url = reverse("review:comment", args=[game.slug, "question", anna_question.pk])
    client.post(url, {"text": "我改了选项，请再看 / please look again"})
    assert Comment.objects.get(item_id=anna_question.pk).author == users["anna"]
    r = client.post(url, {"text": "  "}, follow=True)
    assert "Write something" in r.content.decode()
    before = snapshots.snapshot_item(anna_question)
    Question.objects.filter(pk=anna_question.pk).update(stem="被改坏的题干")
    anna_question.refresh_from_db()
    entry = snapshots.record_change(game, users["anna"], anna_question, "update", before)
    item_url = reverse("review:item", args=[game.slug, "question", anna_question.pk])
    page = login(client, users["rita"]).get(item_url).content.decode()
    assert "被改坏的题干" in page and "Before this" in page
    revert_url = reverse("review:revert", args=[game.slug, "question", anna_question.pk, entry.pk])
    assert login(client, users["anna"]).post(revert_url, {"side": "before"}).status_code == 403
    login(client, users["rita"]).post(revert_url, {"side": "before"})
    assert Question.objects.get(pk=anna_question.pk).stem == before["stem"]
    assert AuditEntry.objects.filter(item_id=anna_question.pk, action="revert", user=users["rita"]).exists()


def test_assignments_and_annotator_progress(client, game, users):
    url = reverse("review:assignments", args=[game.slug])
    login(client, users["mia"])
    r = client.post(url, {"assignee": "anna", "kind": "questions", "first": "1", "last": "2", "target": "2",
                          "note": "前两题"}, follow=True)
    assert "Assigned" in r.content.decode()
    a = Assignment.objects.get()
    assert (a.assignee, a.first, a.last, a.assigned_by) == (users["anna"], 1, 2, users["mia"])
    r = client.post(url, {"assignee": "otto", "kind": "questions"}, follow=True)
    assert "not a member" in r.content.decode()
    r = client.post(url, {"assignee": "anna", "kind": "questions", "first": "5", "last": "2"}, follow=True)
    assert "range is empty" in r.content.decode()
    assert login(client, users["rita"]).post(url, {"assignee": "anna", "kind": "questions"}).status_code == 403
    in_range = list(game.questions.filter(position__gte=1, position__lte=2))
    assert len(in_range) == 2
    Question.objects.filter(pk=in_range[0].pk).update(status=Status.SUBMITTED)
    page = login(client, users["anna"]).get(reverse("review:mine")).content.decode()
    assert "前两题" in page and "1/2" in page
    assert AuditEntry.objects.filter(item_type="assignment", action="assign").exists()


def test_blind_validation_page_hides_key_and_sends_back(client, game, users):
    q = game.questions.order_by("position").first()
    Question.objects.filter(game=game).update(status=Status.APPROVED, author=users["anna"])
    url = reverse("review:validate", args=[game.slug])
    login(client, users["bob"])
    page = client.get(url).content.decode()
    assert q.stem in page and "林管家" in page
    assert "key" not in page.split('id="validate-form"')[1].split("</form>")[0].replace("The key stays hidden", "")
    r = client.post(url, {"question": q.pk, "letters": ["b"]}, follow=True)
    assert "went back to review" in r.content.decode()
    q.refresh_from_db()
    assert q.status == Status.SUBMITTED
    assert Comment.objects.filter(item_id=q.pk, system=True).exists()
    # the author cannot validate their own questions
    other = game.questions.order_by("position")[1]
    r = login(client, users["anna"]).post(url, {"question": other.pk, "letters": ["a"]}, follow=True)
    assert "written by someone else" in r.content.decode()


def test_label_pairs_and_dashboard_kappa(client, game, users):
    rel = game.relationships.get()
    url = reverse("review:labels", args=[game.slug])
    for who, labels in [("anna", "nephew"), ("bob", "nephew"), ("rex", "friend")]:
        login(client, users[who]).post(url, {"source": rel.source_id, "target": rel.target_id, "labels": labels})
    assert LabelJudgement.objects.count() == 3
    r = login(client, users["anna"]).post(url, {"source": rel.source_id, "target": rel.target_id, "labels": "bestie"}, follow=True)
    assert "Not a Conan label" in r.content.decode()
    expected = agreement.relationship_agreement(game)
    assert expected.method == "fleiss"
    page = login(client, users["mia"]).get(reverse("review:dashboard", args=[game.slug])).content.decode()
    assert "Fleiss&#x27; kappa" in page or "Fleiss' kappa" in page
    assert "anna, bob, rex" in page


def test_dashboards_count_and_throughput(client, game, users):
    qs = _submitted(game, users["anna"], 2)
    states.transition(qs[0], "approve", users["rita"])
    states.transition(qs[1], "reject", users["rita"], reason="太模糊")
    login(client, users["mia"])
    page = client.get(reverse("review:dashboard", args=[game.slug])).content.decode()
    assert "objective" in page and "rita" in page
    person = client.get(reverse("review:person", args=[game.slug, "anna"])).content.decode()
    assert "太模糊" in person and "rejection rate 0.5" in person
    # annotators see their own page but not other people's
    assert login(client, users["bob"]).get(reverse("review:person", args=[game.slug, "anna"])).status_code == 403
    assert client.get(reverse("review:person", args=[game.slug, "bob"])).status_code == 200
    assert client.get(reverse("review:person", args=[game.slug, "otto"])).status_code == 404


def test_relationship_and_chain_item_pages(client, game, users):
    rel, chain = game.relationships.get(), game.chains.get()
    login(client, users["rita"])
    page = client.get(reverse("review:item", args=[game.slug, "relationship", rel.pk])).content.decode()
    assert "王·小明" in page and "nephew" in page and 'data-action="submit"' in page
    client.post(reverse("review:transition", args=[game.slug, "reasoningchain", chain.pk]), {"action": "submit"})
    page = client.get(reverse("review:item", args=[game.slug, "reasoningchain", chain.pk])).content.decode()
    assert "管家十点在书房" in page and "submitted" in page and 'data-action="approve"' in page


def test_queue_submit_and_approve_hold_the_editors_two_option_rule(client, game, users, anna_question):
    """A draft may hold only the key (the editor saves it); the review path, like the editor's
    "Save and submit", refuses to send it on with fewer than two exported options."""
    q = anna_question
    q.options.exclude(is_correct=True).delete()
    q.options.create(position=5, text="生成的干扰项", origin="llm", review="pending")  # held back: does not count
    url = reverse("review:transition", args=[game.slug, "question", q.pk])
    page = login(client, users["anna"]).post(url, {"action": "submit", "version": q.version}, follow=True).content.decode()
    assert "needs at least two options" in page
    assert Question.objects.get(pk=q.pk).status == Status.DRAFT

    # Submitted some other way (e.g. before this rule, or by the import), it cannot be approved either,
    # one by one or in bulk; once a second option is accepted it goes through.
    Question.objects.filter(pk=q.pk).update(status=Status.SUBMITTED)
    q.refresh_from_db()
    login(client, users["rita"])
    page = client.post(url, {"action": "approve", "version": q.version}, follow=True).content.decode()
    assert "needs at least two options" in page
    bulk = client.post(reverse("review:bulk"), {"action": "approve", "items": [f"question:{q.pk}"]}, follow=True)
    assert "needs at least two options" in bulk.content.decode()
    assert Question.objects.get(pk=q.pk).status == Status.SUBMITTED
    q.options.filter(origin="llm").update(review="accepted")
    client.post(url, {"action": "approve", "version": q.version}, follow=True)
    assert Question.objects.get(pk=q.pk).status == Status.APPROVED
