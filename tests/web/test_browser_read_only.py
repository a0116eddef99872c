"""Issue 15, "editing something you may not edit", in real headless Chromium: approved relationships,
chains/nodes and the spans approved work cites are shown read only with "Request reopening"; a save
refused because the item was approved meanwhile keeps the text; the request reaches the reviewer's
queue, the reviewer reopens, and the annotator gets the editor (and their kept text) back."""
from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotate.models import ChainNode, Character, Membership, Question, ReasoningChain, Relationship
from annotate.services import spans, states

from .conftest import PASSWORD, make_game

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _login(browser, live_server, user, width: int = 1400):
    context = browser.new_context(viewport={"width": width, "height": 900}, locale="zh-CN")
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    tab.goto(live_server.url + reverse("login"))
    tab.fill("input[name=username]", user.username)
    tab.fill("input[name=password]", PASSWORD)
    with tab.expect_navigation():
        tab.click("button[type=submit]")
    return context, tab


@pytest.fixture
def team(db, django_user_model) -> dict:
    game = make_game("read-only")
    ann = django_user_model.objects.create_user("ann", password=PASSWORD)
    rita = django_user_model.objects.create_user("rita", password=PASSWORD)
    Membership.objects.create(user=ann, game=game, role="annotator")
    Membership.objects.create(user=rita, game=game, role="reviewer")
    return {"game": game, "ann": ann, "rita": rita}


def _reviewer_reopens(browser, live_server, rita, reason_seen: str, why: str) -> None:
    """The reviewer finds the request under "Reopening requested" on /review/ and reopens the item."""
    context, tab = _login(browser, live_server, rita)
    tab.goto(live_server.url + reverse("review:queue"))
    requests = tab.locator("#reopen-requests")
    expect(requests).to_contain_text(reason_seen)
    with tab.expect_navigation():
        requests.locator("a").first.click()
    tab.fill("input[data-reason-for=reopen]", why)
    with tab.expect_navigation():
        tab.click("button[data-action=reopen]")
    expect(tab.locator(".status").first).to_have_text("submitted")
    tab.goto(live_server.url + reverse("review:queue"))  # handled: no longer listed as an open request
    expect(tab.locator("body")).not_to_contain_text(reason_seen)
    context.close()


def test_relationship_approved_while_editing_keeps_the_text_and_comes_back_after_reopening(browser, live_server, team):
    game, ann, rita = team["game"], team["ann"], team["rita"]
    a, b = list(Character.objects.filter(game=game))[:2]
    rel = Relationship.objects.create(game=game, source=a, target=b, labels=["friend of x"], author=ann)
    url = live_server.url + reverse("annotate:relationship_edit", args=[game.slug, rel.pk])
    context, tab = _login(browser, live_server, ann, width=800)  # the narrow layout too
    tab.goto(url)
    expect(tab.locator("#locked")).to_have_count(0)

    # Meanwhile it is submitted and approved; the annotator's save is refused but nothing is lost.
    states.transition(rel, "submit", ann)
    states.transition(Relationship.objects.get(pk=rel.pk), "approve", rita)
    tab.fill("textarea[name=note]", "他们其实是表兄弟")
    with tab.expect_navigation():
        tab.click("#rel-save")
    expect(tab.locator("#rel-error")).to_contain_text("approved")
    expect(tab.locator("#kept-text")).to_contain_text("他们其实是表兄弟")
    expect(tab.locator("textarea[name=note]")).to_be_disabled()
    expect(tab.locator("textarea[name=note]")).to_have_value("他们其实是表兄弟")
    expect(tab.locator("#rel-save")).to_be_disabled()
    assert Relationship.objects.get(pk=rel.pk).note == ""
    assert tab.evaluate("() => document.documentElement.scrollWidth") <= 800  # nothing pushed off-screen
    tab.goto(url)  # (a reload would post the refused form again)
    expect(tab.locator("#kept-text")).to_contain_text("他们其实是表兄弟")  # still kept after a reload
    expect(tab.locator("#locked")).to_contain_text("relationship is approved")

    tab.fill("#reopen-form input[name=text]", "备注要补充：表兄弟")
    with tab.expect_navigation():
        tab.click("#reopen-form button[type=submit]")
    expect(tab.locator("body")).to_contain_text("Reopening requested: 备注要补充：表兄弟")

    _reviewer_reopens(browser, live_server, rita, "备注要补充：表兄弟", "请作者补充备注")

    # Back to the author: withdraw to draft, and the editor (with the kept text beside it) is back.
    tab.goto(live_server.url + reverse("review:item", args=[game.slug, "relationship", rel.pk]))
    with tab.expect_navigation():
        tab.click("button[data-action=withdraw]")
    tab.goto(url)
    expect(tab.locator("#locked")).to_have_count(0)
    expect(tab.locator("#kept-text")).to_contain_text("他们其实是表兄弟")
    tab.fill("textarea[name=note]", "他们其实是表兄弟")
    with tab.expect_navigation():
        tab.click("#rel-save")
    expect(tab.locator("#kept-text")).to_have_count(0)
    assert Relationship.objects.get(pk=rel.pk).note == "他们其实是表兄弟"
    context.close()


def test_approved_chain_node_is_read_only_until_a_reviewer_reopens_it(browser, live_server, team):
    game, ann, rita = team["game"], team["ann"], team["rita"]
    chain = ReasoningChain.objects.create(game=game, title="谁下的毒", goal="murderer", status="approved")
    image = game.clues.get(key="img/1.png")
    node = ChainNode.objects.create(chain=chain, key="c1", text="茶是冷的", image_clue=image)
    url = live_server.url + reverse("annotate:node_edit", args=[game.slug, chain.pk, node.pk])
    context, tab = _login(browser, live_server, ann)
    tab.goto(url)
    expect(tab.locator("#locked")).to_contain_text("chain is approved")
    expect(tab.locator("#nodeform textarea[name=text]")).to_be_disabled()
    expect(tab.locator("#chainform input[name=title]")).to_be_disabled()
    expect(tab.get_by_role("button", name="Delete node")).to_have_count(0)
    tab.fill("#reopen-form input[name=text]", "c1 应该是热茶")
    with tab.expect_navigation():
        tab.click("#reopen-form button[type=submit]")
    context.close()

    _reviewer_reopens(browser, live_server, rita, "c1 应该是热茶", "按标注员的意见修改 c1")
    assert ReasoningChain.objects.get(pk=chain.pk).status == "submitted"
    # The reviewer now edits the node in the browser (reviewers edit anything not approved).
    context, tab = _login(browser, live_server, rita)
    tab.goto(url)
    expect(tab.locator("#locked")).to_have_count(0)
    tab.fill("#nodeform textarea[name=text]", "茶是热的")
    with tab.expect_navigation():
        tab.click("#nodeform button[type=submit]")
    assert ChainNode.objects.get(pk=node.pk).text == "茶是热的"
    context.close()


def test_reader_shows_a_span_approved_work_cites_read_only(browser, live_server, team):
    game, ann = team["game"], team["ann"]
    lin = Character.objects.get(game=game, name="林管家")
    start = lin.script.index("管家拿着一把钥匙")
    span = spans.create_span(game, document="script", owner_id=lin.pk, start=start, end=start + 8, quote="管家拿着一把钥匙")
    question = game.questions.first()
    question.evidence.add(span)
    Question.objects.filter(pk=question.pk).update(status="approved")
    context, tab = _login(browser, live_server, ann)
    tab.goto(live_server.url + reverse("annotate:reader", args=[game.slug]) + f"?left=c{lin.pk}")
    tab.locator("mark.span").first.click()
    expect(tab.locator("#detail-locked")).to_be_visible()
    expect(tab.locator("#delete-span")).to_be_hidden()
    expect(tab.locator("#detail-label")).to_be_disabled()
    expect(tab.locator(".handle")).to_have_count(0)
    expect(tab.locator("#detail-cited")).to_contain_text("approved")
    tab.keyboard.press("Delete")
    tab.keyboard.press("ArrowRight")
    expect(tab.locator("#span-error")).to_be_hidden()  # nothing was even tried
    assert (spans.get_span(game, span.pk).start, spans.get_span(game, span.pk).end) == (start, start + 8)
    context.close()
