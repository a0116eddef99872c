"""In real headless Chromium: a reviewer rejects a question from the keyboard (j, r, reason,
Ctrl+Enter) and the annotator then sees the reason on their own queue and on the item."""
from __future__ import annotations

import pytest

from annotate.models import Question
from casebook.interchange import Status

from .conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REASON = "选项C与剧本矛盾：Alice 十点在花园 (option C contradicts the script)"


def login(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def test_reviewer_rejects_with_reason_and_annotator_sees_it(browser, live_server, game, users):
    qs = list(game.questions.order_by("position")[:2])
    Question.objects.filter(pk__in=[q.pk for q in qs]).update(status=Status.SUBMITTED, author=users["anna"])
    target = qs[1]

    reviewer = browser.new_context(locale="zh-CN")
    page = reviewer.new_page()
    page.set_default_timeout(10_000)
    login(page, live_server, "rita")
    page.goto(f"{live_server.url}/review/?game={game.slug}")
    rows = page.locator("tr[data-row]")
    assert rows.count() == 2
    page.keyboard.press("j")
    page.keyboard.press("j")  # cursor on the second row
    assert "cursor" in (rows.nth(1).get_attribute("class") or "")
    page.keyboard.press("?")
    assert page.locator("#help").is_visible() and "reject it with a reason" in page.locator("#help").inner_text()
    page.keyboard.press("Escape")
    page.keyboard.press("r")
    dialog = page.locator("#reject-dialog")
    assert dialog.is_visible()
    page.fill("#reject-reason", REASON)
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert "Rejected" in page.locator(".messages").inner_text()
    target.refresh_from_db()
    assert (target.status, target.reject_reason, target.reviewer) == (Status.REJECTED, REASON, users["rita"])
    assert Question.objects.get(pk=qs[0].pk).status == Status.SUBMITTED  # the other row is untouched
    assert page.locator("tr[data-row]").count() == 1
    reviewer.close()

    annotator = browser.new_context(locale="zh-CN")
    page = annotator.new_page()
    page.set_default_timeout(10_000)
    login(page, live_server, "anna")
    page.goto(f"{live_server.url}/review/mine/")
    rejected = page.locator("#rejected")
    assert REASON in rejected.inner_text()
    rejected.get_by_role("link", name=target.stem[:20]).click()
    page.wait_for_load_state()
    assert REASON in page.locator("#reject-reason-shown").inner_text()
    assert page.locator("#item-status").inner_text() == "rejected"
    with page.expect_navigation():
        page.locator("button[data-action=submit]").click()  # resubmit after fixing
    assert page.locator("#item-status").inner_text() == "submitted"
    target.refresh_from_db()
    assert target.status == Status.SUBMITTED and target.reject_reason == ""
    annotator.close()


def test_reviewer_resolves_a_span_label_conflict_from_the_queue(browser, live_server, game, users, span_conflict):
    """Two annotators labelled one span differently: the reviewer opens it from the queue, sees who
    said what, and picks the label; the span carries it and the conflict leaves the queue."""
    from playwright.sync_api import expect

    span = span_conflict.span

    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    page.set_default_timeout(10_000)
    login(page, live_server, "rita")
    page.goto(f"{live_server.url}/review/?game={game.slug}&type=spanlabelconflict")
    page.get_by_role("link", name="“书房”: clue (ann@ls) / place (ben@ls)").click()
    expect(page.locator("#span-quote")).to_have_text("“书房”")
    expect(page.locator("#span-candidates")).to_contain_text("place — ben@ls")
    form = page.locator("#resolve-span-label")
    form.get_by_label("地点 / place").check()
    with page.expect_navigation():
        form.locator("button[data-resolve]").click()
    expect(page.locator("#item-status")).to_have_text("approved")
    expect(page.locator("#span-label")).to_have_text("place")
    span.refresh_from_db()
    assert (span.label, span.state) == ("place", "live")
    page.goto(f"{live_server.url}/review/?game={game.slug}&type=spanlabelconflict")
    expect(page.locator("tr[data-row]")).to_have_count(0)
    context.close()
