"""The generation pages: members only, jobs with a JSON status, review actions, relation MCQs, quality."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import Option, Question
from casebook.models import Job

from .conftest import bare_copy


@pytest.fixture
def anna(client, sin_zh, member):
    client.force_login(member(sin_zh))
    return client


def _url(name, game, **kwargs):
    return reverse(f"generation:{name}", kwargs={"slug": game.slug, **kwargs})


def test_outsiders_get_404_and_anonymous_users_log_in(client, sin_zh, django_user_model):
    pages = ["index", "review", "relations", "quality"]
    for name in pages:
        response = client.get(_url(name, sin_zh))
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    client.force_login(django_user_model.objects.create_user("otto", password="pw-12345678"))
    for name in pages:
        assert client.get(_url(name, sin_zh)).status_code == 404
    assert client.post(_url("generate", sin_zh), {"question": [1]}).status_code == 404
    option = Option.objects.filter(question__game=sin_zh).first()
    assert client.post(_url("review_option", sin_zh, pk=option.pk), {"action": "reject"}).status_code == 404


def test_generate_one_question_then_review_it(anna, sin_zh, no_llm, immediate_tasks):
    q = bare_copy(sin_zh.questions.filter(sub_type="how").first())
    Question.objects.filter(pk=q.pk).update(author_id=anna.session["_auth_user_id"])  # anna's own draft
    page = anna.get(_url("index", sin_zh))
    assert page.status_code == 200 and "offline heuristics" in page.content.decode()

    response = anna.post(_url("generate", sin_zh), {"only": q.pk, "question": [1, 2], "n": 3, "mode": "auto"})
    job = Job.objects.get(game=sin_zh)
    assert response.status_code == 302 and response["Location"] == _url("job", sin_zh, pk=job.pk)
    assert job.params["question_ids"] == [q.pk]
    status = anna.get(_url("job_status", sin_zh, pk=job.pk)).json()
    assert status["state"] == "done" and status["done"] == status["total"] == 1 and status["finished"]
    assert "Distractor job" in anna.get(response["Location"]).content.decode()

    review = anna.get(_url("review", sin_zh)).content.decode()
    generated = list(q.options.filter(origin="heuristic").order_by("position"))
    assert len(generated) == 3 and all(o.text in review for o in generated)
    assert "data-review-row" in review and "<kbd>j</kbd>" in review

    ok = anna.post(_url("review_option", sin_zh, pk=generated[0].pk), {"action": "accept",
                   "version": generated[0].version}, HTTP_ACCEPT="application/json").json()
    assert ok["ok"] and ok["review"] == "accepted" and ok["answer"] == "a"
    bad = anna.post(_url("review_option", sin_zh, pk=generated[1].pk), {"action": "edit", "text": "",
                    "version": generated[1].version}, HTTP_ACCEPT="application/json")
    assert bad.status_code == 400 and "empty" in bad.json()["error"]
    plain = anna.post(_url("review_option", sin_zh, pk=generated[2].pk), {"action": "reject",
                                                                               "version": generated[2].version})
    assert plain.status_code == 302
    assert [o.review for o in q.options.order_by("position")] == ["accepted", "accepted", "pending", "rejected"]


def test_generate_form_errors_are_messages(anna, sin_zh, no_llm):
    response = anna.post(_url("generate", sin_zh), {"n": 3}, follow=True)
    assert "Select at least one question" in response.content.decode()
    response = anna.post(_url("generate", sin_zh), {"question": [1], "mode": "llm"}, follow=True)
    assert "No LLM endpoint is configured" in response.content.decode()
    assert not Job.objects.exists()


def test_relation_generator_page(anna, sin_zh):
    response = anna.post(_url("relations", sin_zh), {"seed": "5", "perspective": ""}, follow=True)
    text = response.content.decode()
    assert "draft relation question(s) created" in text and "的关系是什么" in text
    assert sin_zh.questions.filter(provenance__generator="relations", status="draft").exists()
    bad = anna.post(_url("relations", sin_zh), {"seed": "x"}, follow=True)
    assert "The seed must be a whole number" in bad.content.decode()


def test_quality_page_and_json(anna, sin_zh):
    html = anna.get(_url("quality", sin_zh)).content.decode()
    assert "every correct answer is at letter a" in html and "Per question" in html
    data = anna.get(_url("quality", sin_zh) + "?format=json&kind=relations").json()
    assert data["errors"] >= 1 and data["questions_checked"] == 21


def test_the_question_editor_generates_with_the_llm(anna, sin_zh, llm_server, immediate_tasks):
    """The editor's "Generate with the LLM" button: a one-question job through the openai SDK."""
    q = bare_copy(sin_zh.questions.filter(sub_type="why").first())
    q.author = q.game.memberships.get().user
    q.save(update_fields=["author"])
    llm_server.reply = '{"distractors": ["为了报复多年前的旧怨", "为了争夺遗产", "被勒索后反击"]}'
    started = anna.post(_url("question_distractors", sin_zh, pk=q.pk), {"mode": "llm"}).json()
    status = anna.get(started["status_url"]).json()
    assert status["finished"] and status["written"] == 1 and status["origin"] == "llm"
    generated = list(q.options.filter(origin="llm").values_list("text", "model_name", "review"))
    assert [t for t, _, _ in generated] == ["为了报复多年前的旧怨", "为了争夺遗产", "被勒索后反击"]
    assert {(m, r) for _, m, r in generated} == {("test-model", "pending")}
    assert len(llm_server.requests) == 1
