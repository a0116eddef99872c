"""End-to-end in real headless Chromium: log in, open imported anchor games, select a span, create a
relationship, build a three-node chain, write an image MCQ, edit an imported question, export and
find the changes in the exported files."""
from __future__ import annotations

import csv
import json

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotate.models import ChainNode, Character, EvidenceSpan, Game, Membership, Question, ReasoningChain, Relationship

from .conftest import PASSWORD, make_game

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Select the first occurrence of `needle` inside the reader's <pre> (walking its text nodes).
SELECT_JS = """([needle, index]) => {
  const doc = document.querySelectorAll('.doc')[index];
  const walker = document.createTreeWalker(doc, NodeFilter.SHOW_TEXT);
  let node, text = '', nodes = [];
  while ((node = walker.nextNode())) { nodes.push([node, text.length]); text += node.data; }
  const at = text.indexOf(needle);
  if (at < 0) return false;
  const locate = (pos) => { for (let i = nodes.length - 1; i >= 0; i--) if (nodes[i][1] <= pos) return [nodes[i][0], pos - nodes[i][1]]; };
  const range = document.createRange();
  range.setStart(...locate(at)); range.setEnd(...locate(at + needle.length));
  const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
  return true;
}"""


def login(page, live_server, user) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def make_span(page, needle: str, pane: int = 0) -> EvidenceSpan:
    before = EvidenceSpan.objects.count()
    assert page.evaluate(SELECT_JS, [needle, pane])
    page.wait_for_selector("#selbar:not([hidden])")
    page.keyboard.press("e")
    page.wait_for_selector("#span-list li.new")
    assert EvidenceSpan.objects.count() == before + 1
    return EvidenceSpan.objects.latest("pk")


@pytest.fixture
def manager(django_user_model):
    return django_user_model.objects.create_user("mia", password=PASSWORD)


def test_non_member_gets_404_in_the_browser(page, live_server, manager):
    game = make_game("secret")
    login(page, live_server, manager)
    assert "secret" not in page.content()
    response = page.goto(f"{live_server.url}/g/{game.slug}/read/")
    assert response.status == 404


def test_span_offsets_after_an_astral_character_round_trip(page, live_server, manager):
    game = make_game("astral")
    Membership.objects.create(user=manager, game=game, role="annotator")
    char = Character.objects.get(game=game, name="林管家")
    login(page, live_server, manager)
    page.goto(f"{live_server.url}/g/{game.slug}/read/?left=c{char.pk}")
    span = make_span(page, "管家拿着一把钥匙")
    start = char.script.index("管家拿着一把钥匙")
    assert char.script[:start].count("𠮷") == 1
    assert (span.start, span.end, span.quote) == (start, start + 8, "管家拿着一把钥匙")
    page.reload()
    assert page.locator("mark.span").first.inner_text() == "管家拿着一把钥匙"
    astral = make_span(page, "𠮷祥如意")
    assert char.script[astral.start:astral.end] == "𠮷祥如意"


def test_annotate_an_imported_whodunitbench_game_and_export_it(page, live_server, manager, whodunitbench_anchor, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("import_dataset", str(whodunitbench_anchor / "Pu"), format="whodunitbench", quiet_report=True, verbosity=0)
    game = Game.objects.get(source_id__icontains="Pu") if Game.objects.filter(source_id__icontains="Pu").exists() else Game.objects.get()
    Membership.objects.create(user=manager, game=game, role="manager")
    traveller, mirio = Character.objects.get(game=game, name="旅人"), Character.objects.get(game=game, name="米里奥")
    login(page, live_server, manager)
    page.click(f"text={game.title}")
    page.wait_for_selector("h2:has-text('Progress')")

    # 1. a span in the traveller's script, two panes side by side
    page.goto(f"{live_server.url}/g/{game.slug}/read/?left=c{traveller.pk}&right=c{mirio.pk}")
    needle = traveller.script[200:214]
    span = make_span(page, needle)
    assert span.character == traveller and span.quote == needle and traveller.script[span.start:span.end] == needle
    page.screenshot(path=str(tmp_path / "reader.png"))

    # 2. a relationship, label picked from the Conan search, citing the span
    page.goto(f"{live_server.url}/g/{game.slug}/relationships/?evidence={span.pk}")
    page.select_option("#rel-source", str(traveller.pk))
    page.select_option("#rel-target", str(mirio.pk))
    page.fill("#label-search", "romantic")
    page.wait_for_selector("#label-results li")
    page.press("#label-search", "Enter")
    page.wait_for_selector("#chosen-labels li")
    page.click("#rel-save")
    page.wait_for_selector("text=Relationship saved.")
    rel = Relationship.objects.get(game=game)
    assert rel.labels[0].startswith("romantic") and list(rel.evidence.all()) == [span] and rel.author == manager
    page.click(f"svg a.edge[data-id='{rel.pk}'] text")  # click the edge's label in the drawn graph to edit it
    page.wait_for_url(f"**/relationships/{rel.pk}/")

    # 3. a three-node chain: direct (span) -> inferred -> conclusion
    page.goto(f"{live_server.url}/g/{game.slug}/chains/")
    page.select_option("select[name=goal]", "motive")
    page.fill("input[name=title]", "卡门之死的动机")
    page.click("text=Create chain")
    chain = ReasoningChain.objects.get(game=game, title="卡门之死的动机")
    page.wait_for_url(f"**/chains/{chain.pk}/")
    page.fill("textarea[name=text]", "旅人曾被卡门所救")
    page.check(f"input[name=evidence][value='{span.pk}']")
    page.click("text=Save node")
    page.wait_for_selector("text=Saved node d1")
    d1 = ChainNode.objects.get(chain=chain, key="d1")
    for kind, text, parent in (("inferred", "旅人欠卡门一条命", d1), ("conclusion", "旅人想帮卡门解脱", None)):
        page.select_option("#node-kind", kind)
        page.fill("textarea[name=text]", text)
        parent = parent or ChainNode.objects.get(chain=chain, kind="inferred")
        page.check(f"input[name=parents][value='{parent.pk}']")
        page.click("text=Save node")
        page.wait_for_selector(f"td:has-text('{text}')")
    assert page.locator("svg.chain a.node").count() == 3
    assert "2-step" in page.inner_text("table.nodes")
    page.screenshot(path=str(tmp_path / "chain.png"), full_page=True)

    # 4. an MCQ about an image clue, written with the keyboard
    image = game.clues.filter(kind="image").order_by("position").first()
    page.goto(f"{live_server.url}/g/{game.slug}/questions/new/?kind=media_image")
    page.fill("#stem", "图中的地图指向哪里？")
    for i, text in enumerate(["塞维利亚", "沙漠", "河流的源头", "斗牛场"]):
        page.locator(".option input.grow").nth(i).fill(text)
    page.keyboard.press("Alt+3")  # option c is correct
    page.select_option("#image_clue", str(image.pk))
    page.keyboard.press("Control+s")  # a new question is a draft until the review workflow approves it
    page.wait_for_selector("text=Saved question")
    q = Question.objects.get(game=game, stem="图中的地图指向哪里？")
    assert (q.kind, q.answer, q.image_clue, q.author, q.raw) == ("media_image", "c", image, manager, "")

    out = tmp_path / "export"
    call_command("export", format="whodunitbench", out=str(out), games=[game.slug], include_drafts=True, verbosity=0)
    exported = json.loads(next(out.rglob("env_p_all.json")).read_text(encoding="utf-8"))
    media_questions = json.dumps(exported["cxi_q"], ensure_ascii=False)  # WhodunitBench's media-rich image MCQs
    assert "图中的地图指向哪里？" in media_questions and "c. 河流的源头" in media_questions


def test_edit_an_imported_wellplay_question_and_export_it(page, live_server, manager, wellplay_anchor, tmp_path):
    call_command("import_dataset", str(wellplay_anchor / "chinese" / "罪恶（4人封闭）"), format="wellplay",
                 quiet_report=True, verbosity=0)
    game = Game.objects.get()
    # Published (imported) items are not anybody's draft: fixing them is a reviewer's job.
    Membership.objects.create(user=manager, game=game, role="reviewer")
    q = Question.objects.filter(game=game, kind="objective").exclude(perspective=None).first()
    login(page, live_server, manager)
    page.goto(f"{live_server.url}/g/{game.slug}/questions/")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url("**/questions/*/")
    page.goto(f"{live_server.url}/g/{game.slug}/questions/{q.pk}/")
    page.fill("#stem", "【赵慈善】究竟是被谁杀死的？")
    page.click("#add-option")
    page.locator(".option input.grow").last.fill("自杀")
    third = page.locator(".option input.grow").nth(2).input_value()
    page.locator(".option").last.locator("[data-move='-1']").click()  # move it up one place: it becomes c
    assert page.locator(".option .letter").nth(2).inner_text() == "c"
    page.click("#save")
    page.wait_for_selector("text=Saved question")
    q.refresh_from_db()
    assert q.stem == "【赵慈善】究竟是被谁杀死的？" and q.raw == "" and q.options.count() == 4

    out = tmp_path / "export"
    call_command("export", format="wellplay", out=str(out), games=[game.slug], verbosity=0)
    rows = []
    for path in out.rglob(f"{q.perspective.name}.csv"):
        with path.open(encoding="utf-8-sig", newline="") as fh:
            rows += list(csv.DictReader(fh))
    edited = [r for r in rows if r["question"] == "【赵慈善】究竟是被谁杀死的？"]
    assert edited and edited[0]["c"] == "自杀" and edited[0]["d"] == third and edited[0]["value"] == "a"


def test_drafts_survive_a_reload_and_help_overlay_opens(page, live_server, manager):
    game = make_game("drafts")
    Membership.objects.create(user=manager, game=game, role="annotator")
    login(page, live_server, manager)
    page.goto(f"{live_server.url}/g/{game.slug}/questions/")
    page.keyboard.press("?")
    assert page.is_visible("#help")
    page.keyboard.press("Escape")
    assert not page.is_visible("#help")
    page.keyboard.press("n")
    page.wait_for_url("**/questions/new/**")
    page.fill("#stem", "还没保存的问题？")
    page.locator(".option input.grow").first.fill("林管家")
    expect(page.locator("#autosave")).to_contain_text("server", timeout=10_000)
    from annotate.models import Draft

    assert Draft.objects.get(user=manager, game=game).data["fields"]["stem"] == "还没保存的问题？"
    page.reload()
    page.wait_for_selector("#draft-banner:not([hidden])")
    page.click("#draft-restore")
    assert page.input_value("#stem") == "还没保存的问题？"
    assert page.locator(".option input.grow").first.input_value() == "林管家"
