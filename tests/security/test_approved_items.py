"""Attack 3: approved questions and the game's answer key (cast, kills, key statements) change only
through review. An annotator's attempt is refused with a page saying why, and nothing changes."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import Character, KeyStatement, Kill, Option, Question

pytestmark = pytest.mark.django_db


@pytest.fixture
def approved(victim) -> Question:
    Question.objects.filter(game=victim).update(status="approved")
    question = victim.questions.first()
    Option.objects.create(question=question, position=4, text="生成的干扰项", origin="llm", review="pending")
    return question


def state(question: Question) -> list:
    question.refresh_from_db()
    return [question.version, question.status, question.answer,
            list(question.options.values_list("text", "review", "is_correct"))]


@pytest.mark.parametrize("action", ["edit", "reject", "accept"])
def test_annotator_cannot_review_options_of_an_approved_question(client, people, victim, approved, action):
    before = state(approved)
    client.force_login(people["annotator"])
    for option in approved.options.all():
        url = reverse("generation:review_option", args=[victim.slug, option.pk])
        response = client.post(url, {"action": action, "text": "改掉它"}, HTTP_ACCEPT="application/json")
        assert response.status_code == 403
        assert "approved" in response.json()["error"] and "reopen" in response.json()["error"]
    assert state(approved) == before


def test_reviewer_reviews_generated_options_but_not_the_correct_one_here(client, people, victim, approved):
    client.force_login(people["reviewer"])
    generated = approved.options.get(origin="llm")
    correct = approved.options.get(is_correct=True)
    ok = client.post(reverse("generation:review_option", args=[victim.slug, generated.pk]),
                     {"action": "edit", "text": "新的干扰项", "version": generated.version},
                     HTTP_ACCEPT="application/json")
    assert ok.status_code == 200 and ok.json()["text"] == "新的干扰项"
    refused = client.post(reverse("generation:review_option", args=[victim.slug, correct.pk]),
                          {"action": "edit", "text": "改正确答案", "version": correct.version},
                          HTTP_ACCEPT="application/json")
    assert refused.status_code == 400 and "only generated options" in refused.json()["error"]
    correct.refresh_from_db()
    assert correct.text != "改正确答案"


def test_annotator_cannot_change_the_answer_key(client, people, victim):
    killer, dead = list(victim.characters.all())[:2]
    statement = KeyStatement.objects.create(game=victim, owner_name=killer.name, character=killer, text="我在书房。")
    client.force_login(people["annotator"])
    characters = reverse("annotate:characters", args=[victim.slug])
    refused = client.post(characters, {"action": "add_kill", "killer": killer.pk, "victim": dead.pk})
    assert refused.status_code == 403 and "reviewer role" in refused.content.decode()
    assert "Nothing was changed" in refused.content.decode()
    response = client.post(reverse("annotate:key_statements", args=[victim.slug]), {"action": "delete", "id": statement.pk})
    assert response.status_code == 403
    script = client.post(reverse("annotate:character_script", args=[victim.slug, killer.pk]), {"script": "新剧本"})
    assert script.status_code == 403
    assert not Kill.objects.exists() and KeyStatement.objects.filter(pk=statement.pk).exists()
    assert not Character.objects.filter(game=victim, is_murderer=True).exists()
    assert Character.objects.get(pk=killer.pk).script != "新剧本"

    client.force_login(people["reviewer"])
    client.post(characters, {"action": "add_kill", "killer": killer.pk, "victim": dead.pk})
    assert Kill.objects.filter(game=victim, killer=killer, victim=dead).exists()
