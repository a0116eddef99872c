"""The review page in real headless Chromium: j/k to move, a/e/r to accept, edit, reject; the job page
polls its JSON status until the job is done."""
from __future__ import annotations

import pytest

from annotate.models import Membership
from generation.distractors import generate_for_question

from .conftest import bare_copy

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

@pytest.fixture
def page(browser, live_server, sin_zh, django_user_model):
    user = django_user_model.objects.create_user("rita", password="pw-12345678")
    Membership.objects.create(user=user, game=sin_zh, role=Membership.Role.REVIEWER)
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    p = context.new_page()
    p.set_default_timeout(10_000)
    p.goto(f"{live_server.url}/accounts/login/")
    p.fill("input[name=username]", "rita")
    p.fill("input[name=password]", "pw-12345678")
    p.click("button[type=submit]")
    p.wait_for_load_state()
    yield p
    context.close()


def test_keyboard_review(page, live_server, sin_zh):
    q = bare_copy(sin_zh.questions.filter(sub_type="why").first())
    generate_for_question(q, 3)
    first, second, third = q.options.filter(origin="heuristic").order_by("position")
    page.goto(f"{live_server.url}/g/{sin_zh.slug}/generate/review/")
    page.wait_for_selector("tr.gen-cursor")
    page.keyboard.press("a")  # accept the first generated option, cursor moves on
    page.wait_for_selector("tr[data-review-row].rv-accepted")
    page.keyboard.press("r")  # reject the second
    page.wait_for_selector("tr.rv-rejected")
    page.keyboard.press("e")  # edit the third
    page.keyboard.press("Control+a")
    page.keyboard.type("为了报复")
    page.keyboard.press("Enter")
    page.wait_for_selector("tr.rv-edited")
    page.keyboard.press("k")
    page.keyboard.press("k")
    assert page.locator("tr.gen-cursor [data-text]").inner_text() == first.text
    letters = page.locator("tr.rv-edited [data-letter]").text_content()
    assert letters == "c"  # the rejected option no longer takes a letter
    reviews = dict(q.options.values_list("pk", "review"))
    assert (reviews[first.pk], reviews[second.pk], reviews[third.pk]) == ("accepted", "rejected", "edited")
    third.refresh_from_db()
    assert third.text == "为了报复"


def test_job_page_shows_progress(page, live_server, sin_zh, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.OPENAI_API_KEY = ""
    q = bare_copy(sin_zh.questions.filter(sub_type="where").first())
    page.goto(f"{live_server.url}/g/{sin_zh.slug}/generate/")
    page.click(f"button[name=only][value='{q.pk}']")
    page.wait_for_selector("[data-field=state]:text('done')")
    assert page.locator("[data-field=progress]").inner_text() == "1 / 1"
    assert q.options.filter(origin="heuristic").count() == 3
