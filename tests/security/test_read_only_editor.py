"""#15 "Editing something you may not edit": an annotator opening an approved question sees it read
only with "request reopening"; a refused save keeps their text (form and server draft) and is
never a bare 403 page; the request reaches the reviewer queue."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import Draft, Question

pytestmark = pytest.mark.django_db


@pytest.fixture
def approved(victim) -> Question:
    Question.objects.filter(game=victim).update(status="approved")
    return victim.questions.first()


def test_approved_question_is_read_only_for_an_annotator(client, people, victim, approved):
    client.force_login(people["annotator"])
    page = client.get(reverse("annotate:question_edit", args=[victim.slug, approved.pk])).content.decode()
    assert "<fieldset disabled" in page and "Request reopening" in page and "approved" in page
    assert "Delete question" not in page
    client.force_login(people["reviewer"])
    page = client.get(reverse("annotate:question_edit", args=[victim.slug, approved.pk])).content.decode()
    assert "<fieldset disabled" not in page and "Delete question" in page


def test_refused_save_keeps_the_text_and_the_request_reaches_the_queue(client, people, victim, approved):
    before = (approved.version, approved.stem)
    client.force_login(people["annotator"])
    url = reverse("annotate:question_edit", args=[victim.slug, approved.pk])
    response = client.post(url, {"version": approved.version, "kind": approved.kind, "stem": "我改写的题干：谁在十点进了书房？",
                                 "option_row": ["0", "1"], "option_text_0": "林管家", "option_correct_0": "on",
                                 "option_text_1": "园丁"})
    html = response.content.decode()
    assert response.status_code == 403 and "<html" in html.lower()  # a page, not a bare 403
    assert "我改写的题干" in html and "Ask a reviewer to reopen" in html
    draft = Draft.objects.get(user=people["annotator"], game=victim, key=f"question:{approved.pk}")
    assert draft.data["fields"]["stem"].startswith("我改写的题干") and draft.data["options"][0] == ["林管家", True]
    approved.refresh_from_db()
    assert (approved.version, approved.stem) == before

    client.post(reverse("review:comment", args=[victim.slug, "question", approved.pk]),
                {"reopen": "1", "text": "题干有错字"})
    client.force_login(people["reviewer"])
    queue = client.get(reverse("review:queue")).content.decode()
    assert "Reopening requested" in queue and "题干有错字" in queue and f"question {approved.pk}" in queue
