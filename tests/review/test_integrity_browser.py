"""In real headless Chromium (issue 13 items 1, 2, 8): the one conflict screen for relationships and
chains (the user's version kept, differences marked, a second save never silently overwrites a
newer one), and the review page showing what the export writes after distractors were generated."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import Option, Question, ReasoningChain, Relationship
from generation.distractors import store_options
from generation.review import review_option

from .conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _tab(context, live_server, username: str):
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}{reverse('login')}")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    return page


def _save(tab, field: str, text: str, button: str) -> None:
    """Type ``text`` into ``field`` and submit with ``button``, waiting for the answer page."""
    tab.fill(field, text)
    with tab.expect_navigation():
        tab.click(button)


def _conflict(browser, live_server, url: str, field: str, button: str, theirs: str, mine: str):
    """The set-up every conflict test shares: one user, two tabs on the same editor; the first saves
    ``theirs``, then the second (loaded before that save) saves ``mine`` and meets the conflict screen."""
    context = browser.new_context(locale="zh-CN")
    first, second = _tab(context, live_server, "mia"), context.new_page()
    first.goto(url)
    second.goto(url)
    _save(first, field, theirs, button)
    _save(second, field, mine, button)
    return context, first, second


def test_relationship_conflict_keeps_mine_and_never_overwrites_silently(browser, live_server, game, users):
    rel = game.relationships.get()
    url = live_server.url + reverse("annotate:relationship_edit", args=[game.slug, rel.pk])
    note = "textarea[name=note]"
    context, first, second = _conflict(browser, live_server, url, note, "#rel-save", "第一个标签页的备注", "second tab's note")
    conflict = second.locator("#conflict")
    assert conflict.is_visible()
    note_row = conflict.locator("tr[data-field=note]")
    assert "differs" in note_row.get_attribute("class")
    assert "第一个标签页的备注" in note_row.locator(".saved").inner_text()
    assert "second tab's note" in note_row.locator(".mine").inner_text()
    assert "differs" not in (conflict.locator("tr[data-field=labels]").get_attribute("class") or "")
    assert second.input_value(note) == "second tab's note"  # my version kept
    assert Relationship.objects.get(pk=rel.pk).note == "第一个标签页的备注"  # theirs not overwritten

    # The first tab, still at its version, saves again: it is now the stale one and gets the screen.
    _save(first, note, "第一个标签页又改了", "#rel-save")
    assert first.locator("#conflict").is_visible() is False  # first was current: its save went through
    with second.expect_navigation():
        second.click("#rel-save")  # "Save mine over version N" — but N is no longer the newest
    assert second.locator("#conflict").is_visible()
    assert Relationship.objects.get(pk=rel.pk).note == "第一个标签页又改了"
    with second.expect_navigation():
        second.click("#rel-save")  # knowingly, over the version now shown
    assert Relationship.objects.get(pk=rel.pk).note == "second tab's note"
    context.close()


def test_chain_title_conflict_screen(browser, live_server, game, users):
    chain = ReasoningChain.objects.get(game=game)
    url = live_server.url + reverse("annotate:chain_detail", args=[game.slug, chain.pk])
    title = "#chainform input[name=title]"
    context, _, second = _conflict(browser, live_server, url, title, "#chainform button[type=submit]",
                                   "管家的不在场证明", "The butler's alibi")
    assert "differs" in second.locator("#conflict tr[data-field=title]").get_attribute("class")
    assert second.input_value(title) == "The butler's alibi"
    assert ReasoningChain.objects.get(pk=chain.pk).title == "管家的不在场证明"
    context.close()


def test_review_page_shows_export_letters_after_generation(browser, live_server, game, users):
    question = game.questions.order_by("position").first()
    pending, rejected = store_options(question, ["厨师", "园丁"], origin="heuristic", user=users["anna"])
    review_option(rejected, "reject", user=users["mia"])
    Question.objects.filter(pk=question.pk).update(status="submitted", author=users["anna"])
    context = browser.new_context(locale="zh-CN")
    page = _tab(context, live_server, "rita")
    response = page.goto(live_server.url + reverse("review:item", args=[game.slug, "question", question.pk]))
    assert response.status == 200
    assert page.locator("#options li").all_inner_texts()[0].startswith("a. 林管家")
    assert [t.split(".")[0] for t in page.locator("#options li").all_inner_texts()] == ["a", "b", "c"]
    held = page.locator("#held-back").inner_text()
    assert "厨师" in held and "园丁" in held
    assert page.locator("#export-answer").inner_text() == "a"
    assert "generate-heuristic" in page.locator("table.history").inner_text()
    context.close()


def test_keyboard_option_review_sends_the_version(browser, live_server, game, users):
    """(Waits use locator expectations: the page's Content-Security-Policy forbids evaluated strings.) The distractor review page's keyboard actions carry the option's version: two actions on the
    same row in a row both succeed (the page keeps the new version), a stale one is refused."""
    from playwright.sync_api import expect

    question = game.questions.order_by("position").first()
    (option,) = store_options(question, ["厨师"], origin="heuristic", user=users["anna"])
    context = browser.new_context(locale="zh-CN")
    page = _tab(context, live_server, "mia")
    page.goto(live_server.url + reverse("generation:review", args=[game.slug]))
    row = page.locator("[data-review-row]").first
    page.keyboard.press("a")
    expect(row.locator("[data-review]")).to_have_text("accepted")
    page.keyboard.press("k")
    page.keyboard.press("r")
    expect(row.locator("[data-review]")).to_have_text("rejected")
    assert Option.objects.get(pk=option.pk).review == "rejected"
    review_option(Option.objects.get(pk=option.pk), "accept", user=users["rita"])  # someone else, meanwhile
    page.keyboard.press("r")
    error = page.locator("[data-review-error]")
    error.wait_for(state="visible")
    assert "someone reviewed this option meanwhile" in error.inner_text()
    assert Option.objects.get(pk=option.pk).review == "accepted"
    assert row.get_attribute("data-version") == str(Option.objects.get(pk=option.pk).version - 1)
    context.close()
