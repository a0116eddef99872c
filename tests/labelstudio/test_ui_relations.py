"""The searchable relation label picker in Label Studio's real editor (Chromium): mark two names,
select the first, search its relation label in Chinese in the per-region Taxonomy, draw the arrow,
submit, pull; and the same relation in the old result format (labels on the arrow, projects pushed
before the Taxonomy) still comes back.

What was measured here: Label Studio 1.23.2's relation dropdown (``<Relations>``) is a Select
without ``searchable`` — typing does not filter its 164 labels — so the picker is a Taxonomy, whose
dropdown has a search box that matches the shown text (both languages).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from annotate.models import Relationship
from labelstudio import config
from labelstudio.client import LabelStudioClient
from labelstudio.models import LabelStudioLink, LabelStudioTask
from labelstudio.pull import pull_game
from labelstudio.push import push_game
from tests.conftest import missing

from .conftest import ZH_SCRIPT
from .test_bridge import _region
from .test_ui_offsets import CHROMIUM, FIND, LS_PASSWORD, LS_USER

pytestmark = [pytest.mark.labelstudio, pytest.mark.browser, pytest.mark.django_db]
# the nth match on screen (the task's heading also names 𠮷田·美咲)
FIND_NTH = FIND.replace("([quote]) =>", "([quote, nth]) =>").replace("    return [a.left", "    if (nth-- > 0) continue;\n    return [a.left")


def _select(page, quote: str) -> None:
    box = None
    for _ in range(20):
        box = page.evaluate(FIND, [quote])
        if box:
            break
        page.wait_for_timeout(250)
    assert box, f"{quote} not shown in the editor"
    page.mouse.move(box[0], box[1])
    page.mouse.down()
    page.mouse.move(box[2], box[3], steps=5)
    page.mouse.up()
    page.wait_for_timeout(300)


def _click(page, quote: str, nth: int = 0) -> None:
    box = page.evaluate(FIND_NTH, [quote, nth])
    assert box, f"{quote} not shown in the editor"
    page.mouse.click((box[0] + box[2]) / 2, box[1])
    page.wait_for_timeout(300)


def test_relation_labels_are_searched_in_chinese_in_the_taxonomy_and_pulled(game, labelstudio_server):
    if not Path(CHROMIUM).exists():
        missing(f"{CHROMIUM} not installed (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    url, token = labelstudio_server
    client = LabelStudioClient(url, token)
    push_game(game, client, kinds="relations")
    link = LabelStudioLink.objects.get(game=game)
    mi = game.characters.get(name="𠮷田·美咲")
    task_id = LabelStudioTask.objects.get(link=link, kind="script", object_id=mi.pk).task_id

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.goto(f"{url}/user/login/")
        page.fill("input[name=email]", LS_USER)
        page.fill("input[name=password]", LS_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")
        if "/user/login" in page.url:
            browser.close()
            missing(f"cannot log in to the Label Studio UI as {LS_USER} (set CASEBOOK_LABELSTUDIO_USER/_PASSWORD)")
        page.goto(f"{url}/projects/{link.project_id}/data?task={task_id}")
        page.get_by_text("人物", exact=True).first.wait_for(timeout=30_000)
        for quote in ("𠮷田·由纪", "父亲"):
            page.get_by_text("人物", exact=True).first.click()
            _select(page, quote)
        page.screenshot(path="/tmp/h7-ls-1.png")
        _click(page, "𠮷田·由纪")  # select the region the arrow starts from: its Taxonomy shows
        picker = page.locator(".ant-select-selector").filter(has_text="搜索关系（中文或英文）").first
        expect(picker).to_be_visible(timeout=10_000)
        picker.click()
        search = page.get_by_placeholder("Search", exact=True).last  # the Taxonomy's own search box
        expect(search).to_be_visible()
        search.fill("妹妹")
        page.screenshot(path="/tmp/h7-ls-2.png")
        option = page.get_by_text("妹妹 · younger sister of x", exact=True)
        expect(option.first).to_be_visible(timeout=10_000)
        expect(page.get_by_text("哥哥 · elder brother of x", exact=True)).to_have_count(0)  # filtered out
        option.first.click()
        expect(page.get_by_text("Family relationships/younger sister of x")).to_be_visible()  # stored by its alias
        page.mouse.click(700, 700)  # close the dropdown; the region stays selected
        # the arrow: from 由纪 (selected) to 美咲, with the region's "Create Relation" button
        page.get_by_label("Create Relation").first.click()
        _click(page, "𠮷田·美咲", nth=1)
        page.get_by_text("Relations", exact=True).first.click()
        page.screenshot(path="/tmp/h7-ls-3.png")
        page.locator('[data-testid="bottombar-submit-button"]').first.click(timeout=10_000)
        for _ in range(40):
            if any(t["id"] == task_id and t["annotations"] for t in client.export_tasks(link.project_id)):
                break
            page.wait_for_timeout(250)
        browser.close()

    (task,) = [t for t in client.export_tasks(link.project_id) if t["id"] == task_id]
    result = task["annotations"][0]["result"]
    assert [r["value"]["taxonomy"] for r in result if r["type"] == "taxonomy"] == [[["Family relationships", "younger sister of x"]]]
    (arrow,) = [r for r in result if r["type"] == "relation" and not r.get("labels")]
    report = pull_game(game, client)
    assert report.counts()["created"].get("relation") == 1, report.as_dict()
    rel = Relationship.objects.get(game=game, target__name="𠮷田·由纪", source__name="𠮷田·美咲")
    assert (rel.labels, rel.status) == (["younger sister of x"], "draft")
    assert {s.quote for s in rel.evidence.all()} == {"𠮷田·由纪", "𠮷田·美咲"}
    assert not pull_game(game, client).changed  # pulling again changes nothing


def test_relation_labels_in_both_result_formats(game, labelstudio_server):
    """A project pushed before the Taxonomy sends labels on the arrow; the new one sends them as a
    Taxonomy path on the arrow's first region; both at once are merged."""
    url, token = labelstudio_server
    client = LabelStudioClient(url, token)
    push_game(game, client, kinds="relations")
    link = LabelStudioLink.objects.get(game=game)
    mi = game.characters.get(name="𠮷田·美咲")
    task_id = LabelStudioTask.objects.get(link=link, kind="script", object_id=mi.pk).task_id
    yuki, misaki = _region("n1", ZH_SCRIPT, "𠮷田·由纪", "人物"), _region("n2", ZH_SCRIPT, "𠮷田·美咲", "人物")
    picked = {"id": "n1", "from_name": config.RELATION_TAXONOMY, "to_name": config.TEXT, "type": "taxonomy",
              "value": {**yuki["value"], "taxonomy": [["Family relationships", "younger sister of x"]]}}
    old = {"from_id": "n1", "to_id": "n2", "type": "relation", "direction": "right", "labels": ["friend of x"]}
    client.create_annotation(task_id, [yuki, misaki, picked, old])
    report = pull_game(game, client)
    assert report.counts()["created"] == {"span": 2, "relation": 1}, report.as_dict()
    rel = Relationship.objects.get(game=game, target__name="𠮷田·由纪", source__name="𠮷田·美咲")
    assert rel.labels == ["friend of x", "younger sister of x"]
