"""Question editor ergonomics: drafts with only the key, submitting needs two options, wrong options
generated from the editor (offline, LLM refused clearly without an endpoint, a suggestion when
nothing fits), the rejection reason where the fix is made."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import Membership, Option, Question

pytestmark = pytest.mark.django_db


def _post(client, game, *, stem: str, options: list[str], then: str = "", pk: int | None = None, version: int = 0):
    url = reverse("annotate:question_edit", args=[game.slug, pk]) if pk else reverse("annotate:question_new", args=[game.slug])
    data = {"version": version, "kind": "reasoning", "sub_type": "", "stem": stem, "weight": "",
            "option_row": [str(i) for i in range(len(options))], "then": then}
    for i, text in enumerate(options):
        data[f"option_text_{i}"] = text
    data["option_correct_0"] = "on"
    return client.post(url, data, follow=True)


def test_a_draft_may_hold_only_the_key_but_submitting_needs_two_options(anna_client, game):
    page = _post(anna_client, game, stem="凶器是什么？", options=["匕首"]).content.decode()
    question = Question.objects.get(stem="凶器是什么？")
    assert "Saved question" in page and question.status == "draft" and question.options.count() == 1
    refused = _post(anna_client, game, stem="凶器是什么？", options=["匕首"], then="submit", pk=question.pk,
                    version=question.version).content.decode()
    question.refresh_from_db()
    assert "at least two options before it is submitted" in refused and question.status == "draft"
    assert "凶器是什么？" in refused  # the text is kept on the page
    assert "Write the correct option" in _post(anna_client, game, stem="空的？", options=[""]).content.decode()


def test_generating_from_the_editor(anna_client, game, annotator, settings, django_user_model):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.OPENAI_API_KEY = ""
    _post(anna_client, game, stem="谁是凶手？", options=["林管家"])
    question = Question.objects.get(stem="谁是凶手？")
    url = reverse("generation:question_distractors", args=[game.slug, question.pk])
    llm = anna_client.post(url, {"mode": "llm"})
    assert llm.status_code == 400 and "No LLM endpoint" in llm.json()["error"]
    started = anna_client.post(url, {"mode": "offline"}).json()
    status = anna_client.get(started["status_url"]).json()
    assert status["finished"] and status["written"] == 1
    assert sorted(Option.objects.filter(question=question, origin="heuristic").values_list("text", flat=True)) == \
        sorted(c.name for c in game.characters.filter(playable=True).exclude(name="林管家"))

    # nothing left to draw from: the job says why and what to do instead
    lonely = Question.objects.create(game=game, kind="reasoning", stem="他欠了谁的钱？", answer="a", author=annotator)
    Option.objects.create(question=lonely, position=0, text="一大笔赌债", is_correct=True)
    started = anna_client.post(reverse("generation:question_distractors", args=[game.slug, lonely.pk]), {"mode": "offline"}).json()
    failure = anna_client.get(started["status_url"]).json()["failures"][0]["error"]
    assert "Write the wrong options yourself" in failure

    # an annotator may not generate into someone else's question
    other = django_user_model.objects.create_user("olga", password="x")
    Membership.objects.create(user=other, game=game, role="annotator")
    anna_client.force_login(other)
    assert anna_client.post(url, {"mode": "offline"}).status_code == 403


def test_the_rejection_reason_is_shown_in_the_editor(anna_client, game, annotator):
    question = game.questions.first()
    Question.objects.filter(pk=question.pk).update(status="rejected", reject_reason="选项b和c意思重复", author=annotator)
    page = anna_client.get(reverse("annotate:question_edit", args=[game.slug, question.pk])).content.decode()
    assert "Rejected by the reviewer:" in page and "选项b和c意思重复" in page


def test_home_page_lists_work_sent_back_with_the_reason(anna_client, game, annotator):
    question = game.questions.first()
    Question.objects.filter(pk=question.pk).update(status="rejected", reject_reason="答案不唯一", author=annotator)
    page = anna_client.get(reverse("annotate:game_list")).content.decode()
    assert "Sent back to you" in page and "答案不唯一" in page
    assert reverse("annotate:question_edit", args=[game.slug, question.pk]) in page


def test_progress_without_a_target_says_so_and_forms_have_labels(anna_client, game):
    page = anna_client.get(reverse("annotate:workspace", args=[game.slug])).content.decode()
    assert "no target" in page and "Bars fill towards the targets a manager sets" in page
    chains = anna_client.get(reverse("annotate:chain_list", args=[game.slug])).content.decode()
    assert "What the chain proves" in chains and '<label for="id_title">Title' in chains
