"""Real headless Chromium: annotate one turn with the keyboard only and see the heat map follow."""
from __future__ import annotations

import pytest

from playlogs.models import TurnAnnotation

from .conftest import PASSWORD, load

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_annotate_one_turn_with_the_keyboard(page, live_server, django_user_model, settings):
    settings.OPENAI_API_KEY = ""
    from annotate.models import Membership

    session = load("transcript.csv", "csv")
    user = django_user_model.objects.create_user("anna", password=PASSWORD)
    Membership.objects.create(user=user, game=session.game, role=Membership.Role.ANNOTATOR)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "anna")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/g/{session.game.slug}/sessions/{session.pk}/")
    assert "林管家" in page.inner_text("#pl-text")
    heat = "#pl-heat tr:nth-child(3) td:nth-child(2)"  # row 小红, column 林管家
    assert page.inner_text(heat) == "0.33"
    page.keyboard.press("ArrowRight")
    assert "小红: 我怀疑林管家" in page.inner_text("#pl-text")
    for key in ("2", "1", "f", "6", "t", "3", "s", "2", "1"):  # suspect→林管家, face fear, tone neutral, 小红 suspects 林管家
        page.keyboard.press(key)
    assert page.inner_text("#pl-triplets") .startswith("小红 · suspect · 林管家")
    assert page.inner_text(heat) == "1.00"  # the heat map follows the form before saving
    assert page.locator("#pl-chart polyline").count() == 3
    page.keyboard.press("Control+s")
    page.wait_for_selector("#pl-msg:has-text('Saved.')")
    saved = TurnAnnotation.objects.get(annotator__username="anna")
    assert saved.turn.index == 1 and saved.triplets == [["小红", "suspect", "林管家"]]
    assert (saved.face, saved.tone, saved.suspicions) == ("fear", "neutral", {"小红": ["林管家"]})
    page.keyboard.press("ArrowRight")
    page.keyboard.press("a")  # offline suggestion for Alice's turn
    page.wait_for_selector("#pl-msg:has-text('heuristic')")
    assert "Alice · support · 小红" in page.inner_text("#pl-triplets")
    assert page.inner_text(heat) == "1.00"  # 小红's suspicion carries forward to later turns


def test_reviewer_approves_a_submitted_turn_annotation(browser, live_server, django_user_model):
    from annotate.models import Membership
    from playlogs import services

    session = load("transcript.csv", "csv")
    anna = django_user_model.objects.create_user("anna", password=PASSWORD)
    rita = django_user_model.objects.create_user("rita", password=PASSWORD)
    Membership.objects.create(user=anna, game=session.game, role=Membership.Role.ANNOTATOR)
    Membership.objects.create(user=rita, game=session.game, role=Membership.Role.REVIEWER)
    turn = session.turns.get(index=1)
    mine = services.save_annotation(turn, anna, {"triplets": [["小红", "suspect", "林管家"]]}, expected_version=None)
    services.transition(mine, "submit", anna)
    context = browser.new_context(locale="en-US")
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "rita")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/g/{session.game.slug}/sessions/{session.pk}/")
    assert page.locator("#pl-review").is_hidden()  # turn 1 has nothing to review
    page.keyboard.press("ArrowRight")
    assert "anna · submitted" in page.inner_text("#pl-others")
    page.click("#pl-others button[data-action=approve]")
    page.wait_for_selector("#pl-others:has-text('anna · approved')")
    context.close()
    mine.refresh_from_db()
    assert mine.status == "approved" and mine.reviewer == rita
