"""Annotator ergonomics in real headless Chromium. Spans: create with a label, the same selection
twice, an overlap drawn stacked, hover/click details, boundaries moved by keys and by dragging a
handle, delete of a cited span (asked first) and undo. Relation labels: exact match first, Chinese. Export and import from the browser; layout at 800 px."""
from __future__ import annotations

import pytest
from django.db import OperationalError
from playwright.sync_api import expect

from annotate.models import Character, EvidenceSpan, Membership, Relationship

from .conftest import make_game
from .test_browser import SELECT_JS, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The viewport point of a UTF-16 offset inside the first reader <pre> (for dragging a handle there).
POINT_JS = """(offset) => {
  const doc = document.querySelector('.doc');
  const walker = document.createTreeWalker(doc, NodeFilter.SHOW_TEXT);
  let node, seen = 0;
  while ((node = walker.nextNode())) {
    if (seen + node.data.length >= offset) {
      const r = document.createRange(); r.setStart(node, offset - seen); r.setEnd(node, offset - seen + 1);
      const box = r.getBoundingClientRect(); return [box.left + 1, box.top + box.height / 2];
    }
    seen += node.data.length;
  }
  return null;
}"""


def _select_and_press_e(page, needle: str) -> None:
    assert page.evaluate(SELECT_JS, [needle, 0])
    page.wait_for_selector("#selbar:not([hidden])")
    page.keyboard.press("e")


def _wait_for(predicate, page, what: str) -> None:
    """Poll the database while the live server writes. SQLite's in-memory test database is one
    shared-cache connection pair, where a read during the server thread's write fails at once with
    "table is locked" (shared-cache locks ignore the busy timeout): that only means "not yet"."""
    for _ in range(150):  # 15 s: the machine may be busy
        try:
            if predicate():
                return
        except OperationalError as exc:
            if "locked" not in str(exc):
                raise
        page.wait_for_timeout(100)
    raise AssertionError(f"timed out waiting for {what}")


def test_span_create_label_overlap_adjust_delete_and_undo(page, live_server, django_user_model, tmp_path):
    game = make_game("spans")
    user = django_user_model.objects.create_user("ann", password="correct horse battery")
    Membership.objects.create(user=user, game=game, role="annotator")
    lin = Character.objects.get(game=game, name="林管家")
    login(page, live_server, user)
    page.goto(f"{live_server.url}/g/{game.slug}/read/?left=c{lin.pk}")

    # create with a label: highlighted at once, in the label's colour, listed once
    page.select_option("#span-label", "method")
    _select_and_press_e(page, "管家拿着一把钥匙")
    page.wait_for_selector("#span-list li.new")
    first = EvidenceSpan.objects.get(game=game)
    assert (first.quote, first.label) == ("管家拿着一把钥匙", "method")
    assert page.locator("mark.span[data-label=method]").inner_text() == "管家拿着一把钥匙"

    # the same selection again: still one span, listed once
    _select_and_press_e(page, "管家拿着一把钥匙")
    page.wait_for_timeout(300)
    assert EvidenceSpan.objects.filter(game=game).count() == 1 and page.locator("#span-list li").count() == 1

    # an overlapping span: the shared part is drawn one level deeper, each span's ends have a border
    page.select_option("#span-label", "place")
    _select_and_press_e(page, "钥匙走进书房")
    expect(page.locator("#span-list li")).to_have_count(2, timeout=10_000)
    second = EvidenceSpan.objects.get(game=game, quote="钥匙走进书房")
    assert second.label == "place"
    stacked = page.locator("mark.span.d2")
    assert stacked.inner_text() == "钥匙"
    assert sorted(map(int, stacked.get_attribute("data-spans").split())) == sorted([first.pk, second.pk])
    assert page.locator("mark.span.bs").count() == 2 and page.locator("mark.span.be").count() == 2
    title = stacked.get_attribute("title")
    assert "手法 · method" in title and "地点 · place" in title and "not cited yet" in title
    page.screenshot(path=str(tmp_path / "overlap.png"))

    # click the first span's own part: the detail shows its label and what cites it
    question = game.questions.first()
    question.evidence.add(first)
    page.reload()
    page.locator("mark.span", has_text="管家拿着一把").first.click()
    page.wait_for_selector("#span-detail:not([hidden])")
    assert page.input_value("#detail-label") == "method"
    assert question.stem[:10] in page.inner_text("#detail-cited")

    # keyboard: → moves the end one character, Shift+← moves the start one character; quick presses
    # queue up (each move starts from the server's answer to the previous one)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    _wait_for(lambda: EvidenceSpan.objects.get(pk=first.pk).quote == "管家拿着一把钥匙走", page, "the end to move")
    page.keyboard.press("Shift+ArrowLeft")
    _wait_for(lambda: EvidenceSpan.objects.get(pk=first.pk).quote == "见管家拿着一把钥匙走", page, "the start to move")
    page.wait_for_selector("#span-detail .quote:has-text('见管家拿着一把钥匙走')")

    # drag the end handle onto the start of “书房”: the span ends right before it
    handle = page.locator(".handle.end").bounding_box()
    script_u16 = len(lin.script.encode("utf-16-le")) // 2
    target_offset = lin.script.index("书房") + 1  # one “𠮷” before: code points + 1 = browser units
    assert target_offset < script_u16
    x, y = page.evaluate(POINT_JS, target_offset)
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(x, y, steps=8)
    page.mouse.up()
    _wait_for(lambda: EvidenceSpan.objects.get(pk=first.pk).quote == "见管家拿着一把钥匙走进", page, "the drag to land")

    # change the label from the detail panel
    page.select_option("#detail-label", "clue")
    _wait_for(lambda: EvidenceSpan.objects.get(pk=first.pk).label == "clue", page, "the label change")

    # delete: the question cites it, so the browser asks first and names it
    asked = []
    page.once("dialog", lambda d: (asked.append(d.message), d.accept()))
    page.keyboard.press("Delete")
    page.wait_for_selector("#undo-bar:not([hidden])")
    assert "question" in asked[0] and "cited by 1" in asked[0]
    assert not EvidenceSpan.objects.filter(pk=first.pk).exists() and page.locator("#span-list li").count() == 1

    # undo (Ctrl+Z): back with its label, its boundaries and its citation
    page.keyboard.press("Control+z")
    expect(page.locator("#span-list li")).to_have_count(2, timeout=10_000)
    restored = EvidenceSpan.objects.get(game=game, quote="见管家拿着一把钥匙走进")
    assert restored.label == "clue" and list(question.evidence.all()) == [restored]
    assert page.locator("mark.span[data-label=clue]").count() >= 1


def test_relation_label_search_takes_the_exact_label_and_finds_chinese(page, live_server, django_user_model):
    game = make_game("labels")
    user = django_user_model.objects.create_user("ann", password="correct horse battery")
    Membership.objects.create(user=user, game=game, role="annotator")
    lin, other = list(game.characters.all())[:2]
    login(page, live_server, user)
    page.goto(f"{live_server.url}/g/{game.slug}/relationships/")
    page.select_option("#rel-source", str(lin.pk))
    page.select_option("#rel-target", str(other.pk))
    page.type("#label-search", "lover", delay=0)
    page.press("#label-search", "Enter")  # at once: no waiting for the list
    page.wait_for_selector("#chosen-labels li")
    assert page.inner_text("#chosen-labels li").startswith("lover of x · 恋人")
    page.fill("#label-search", "上司")
    page.wait_for_selector("#label-results li.exact")
    assert page.inner_text("#label-results li.cursor").startswith("superior of x 上司")
    page.press("#label-search", "Enter")
    page.click("#rel-save")
    page.wait_for_selector("text=Relationship saved.")
    assert Relationship.objects.get(game=game).labels == ["lover of x", "superior of x"]
    assert "lover of x（恋人）, superior of x（上司）" in page.content()


def test_a_manager_exports_from_the_browser_and_downloads_the_zip(page, live_server, django_user_model, settings, tmp_path):
    import zipfile

    from exporters.generic.reader import read_jsonl

    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.DATA_DIR = tmp_path / "data"
    game = make_game("exported")
    game.questions.update(status="approved")
    span = EvidenceSpan.objects.create(game=game, document="manual", start=0, end=2, quote=game.truth_text[:2], label="clue")
    game.questions.first().evidence.add(span)
    boss = django_user_model.objects.create_user("boss", password="correct horse battery")
    Membership.objects.create(user=boss, game=game, role="manager")
    login(page, live_server, boss)
    page.goto(f"{live_server.url}/g/{game.slug}/")
    page.click("nav.tabs >> text=Export")
    page.select_option("#export-format", "jsonl")
    page.click("#export-start")
    page.wait_for_selector("#job-download:not([hidden])")
    assert page.inner_text("#job-state") == "done"
    with page.expect_download() as info:
        page.click("#download-link")
    with zipfile.ZipFile(info.value.path()) as archive:
        archive.extractall(tmp_path / "out")
    records = read_jsonl(tmp_path / "out" / "questions.jsonl")
    assert len(records) == game.questions.count()
    assert [e["label"] for r in records for e in r["evidence"]] == ["clue"]


def test_a_draft_with_only_the_key_gets_its_wrong_options_from_inside_the_editor(page, live_server, django_user_model,
                                                                                 settings):
    from annotate.models import Question

    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.OPENAI_API_KEY = ""
    game = make_game("distract", questions=0)
    user = django_user_model.objects.create_user("ann", password="correct horse battery")
    Membership.objects.create(user=user, game=game, role="annotator")
    login(page, live_server, user)
    page.goto(f"{live_server.url}/g/{game.slug}/questions/new/?kind=reasoning")
    page.fill("#stem", "凶器是什么？")
    page.fill("#sub_type", "how")  # tagged "how", but it asks for an object: no causes of death
    page.fill("#options li:nth-child(1) input.grow", "一把匕首")
    page.check("#options li:nth-child(1) input[type=checkbox]")
    page.click("#save")
    page.wait_for_selector("text=Saved question")
    question = Question.objects.get(game=game)
    assert question.status == "draft" and [o.text for o in question.options.all()] == ["一把匕首"]

    page.click("#gen-box [data-gen=offline]")
    # generated options await review: listed apart, without a letter, until accepted (as the export has them)
    expect(page.locator("#held-back li")).to_have_count(3, timeout=10_000)
    expect(page.locator("#options li")).to_have_count(1)
    options = list(question.options.order_by("position"))
    assert [o.origin for o in options[1:]] == ["heuristic"] * 3 and all(o.review == "pending" for o in options[1:])
    assert not any(word in o.text for o in options[1:] for word in ("死", "刺", "毒药毒"))
    held = page.locator("#held-back li").all_inner_texts()
    assert [text.split(" ", 1)[1].strip() for text in held] == [o.text for o in options[1:]]

    # unsaved changes are never thrown away by a generation: it asks to save first
    page.fill("#stem", "凶器到底是什么？")
    page.click("#gen-box [data-gen=llm]")
    page.wait_for_selector("#gen-status.error")
    assert "Save your changes first" in page.inner_text("#gen-status") and page.input_value("#stem") == "凶器到底是什么？"


def test_layout_at_800_px_favicon_and_marked_correct_options(browser, live_server, django_user_model, tmp_path):
    game = make_game("narrow")
    lin = Character.objects.get(game=game, name="林管家")
    boss = django_user_model.objects.create_user("boss", password="correct horse battery")
    Membership.objects.create(user=boss, game=game, role="manager")
    context = browser.new_context(viewport={"width": 800, "height": 900}, locale="zh-CN")
    page = context.new_page()
    try:
        login(page, live_server, boss)
        page.goto(f"{live_server.url}/g/{game.slug}/read/?left=c{lin.pk}&right=manual")
        # every tab is on screen (they wrap), none hidden behind a sideways scroll
        assert page.evaluate("(() => { const t = document.querySelector('nav.tabs'); return t.scrollWidth <= t.clientWidth; })()")
        for name in ("Generate", "Review", "Export", "Label Studio"):
            box = page.locator("nav.tabs a", has_text=name).bounding_box()
            assert box and box["x"] + box["width"] <= 800, name
        assert page.locator("header.topbar").bounding_box()["height"] < 60  # one line
        widths = [page.locator(".pane").nth(i).bounding_box()["width"] for i in range(2)]
        assert min(widths) > 480  # panes stack beside the span panel instead of three ~200 px columns
        assert page.locator("aside.spans").bounding_box()["y"] < 300  # the span panel stays beside the text
        page.screenshot(path=str(tmp_path / "reader-800.png"))
        # /favicon.ico answers (a redirect to the static icon), no 404 on every page
        icon = page.request.get(f"{live_server.url}/favicon.ico")
        assert icon.status == 200 and icon.headers["content-type"] in ("image/x-icon", "image/vnd.microsoft.icon")
        # correct options stand out in Chinese text too (weight, underline, a tick)
        page.goto(f"{live_server.url}/g/{game.slug}/questions/")
        style = page.evaluate("""(() => { const li = document.querySelector('.opts li.correct'); const s = getComputedStyle(li);
            return [s.fontWeight, s.textDecorationLine, getComputedStyle(li, '::after').content]; })()""")
        assert style == ["700", "underline", '" ✓"']
    finally:
        context.close()


def test_a_manager_imports_a_zipped_wellplay_game_from_the_browser(page, live_server, django_user_model, settings,
                                                                   tmp_path, wellplay_anchor):
    import zipfile

    from annotate.models import Game

    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.DATA_DIR = tmp_path / "data"
    folder = next((wellplay_anchor / "chinese").iterdir())
    archive = tmp_path / "game.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out.write(path, f"{folder.name}/{path.relative_to(folder).as_posix()}")
    existing = make_game("mine")
    boss = django_user_model.objects.create_user("boss", password="correct horse battery")
    Membership.objects.create(user=boss, game=existing, role="manager")
    login(page, live_server, boss)
    page.click("header >> text=Import")
    page.select_option("#import-format", "wellplay")
    page.set_input_files("#import-archive", str(archive))
    page.click("#import-form button[type=submit]")
    page.wait_for_selector("#job-games:not([hidden])")
    assert page.inner_text("#job-state") == "done" and "created" in page.inner_text("#games-list")
    game = Game.objects.get(source_id=folder.name)
    page.click("#games-list a")
    page.wait_for_selector("h2:has-text('Progress')")
    from urllib.parse import unquote
    assert unquote(page.url).endswith(f"/g/{game.slug}/")  # a Chinese slug, percent-encoded in the URL
    assert Membership.objects.get(user=boss, game=game).role == "manager"
