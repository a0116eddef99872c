"""Chinese span offsets through Label Studio's real editor: select text with the mouse in Chromium,
submit, pull, and check the EvidenceSpan offsets against the stored script (astral 𠮷 before them).

Label Studio 1.23.2's editor records code points (the unit Casebook stores), so no repair is needed;
test_bridge.py covers the UTF-16 offsets older editors recorded.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotate.models import EvidenceSpan
from labelstudio.client import LabelStudioClient
from labelstudio.models import LabelStudioLink, LabelStudioTask
from labelstudio.pull import pull_game
from labelstudio.push import push_game
from tests.conftest import missing

from .conftest import ZH_SCRIPT

pytestmark = [pytest.mark.labelstudio, pytest.mark.browser, pytest.mark.django_db]

CHROMIUM = "/usr/bin/chromium"
# LS user created by scripts/labelstudio_server.sh (override when reusing another server)
LS_USER = os.environ.get("CASEBOOK_LABELSTUDIO_USER", "admin@example.com")
LS_PASSWORD = os.environ.get("CASEBOOK_LABELSTUDIO_PASSWORD", "casebook-admin-pass")

# the rectangle of a quote inside the labeling area (the task list on the left shows the text too)
FIND = """([quote]) => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const i = node.data.indexOf(quote);
    if (i < 0) continue;
    const range = document.createRange();
    range.setStart(node, i); range.setEnd(node, i + quote.length);
    const rects = range.getClientRects();
    const a = rects[0], z = rects[rects.length - 1];
    if (!a || a.left < 270) continue;
    // a grid cell scrolled under the editor is laid out there too: take only text that is on top
    const top = document.elementFromPoint(a.left + 1, (a.top + a.bottom) / 2);
    if (!top || !(top === node.parentElement || top.contains(node.parentElement) || node.parentElement.contains(top))) continue;
    return [a.left + 1, (a.top + a.bottom) / 2, z.right - 1, (z.top + z.bottom) / 2];
  }
  return null;
}"""


def test_spans_selected_in_the_label_studio_editor_come_back_at_the_right_code_points(game, labelstudio_server):
    if not Path(CHROMIUM).exists():
        missing(f"{CHROMIUM} not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    url, token = labelstudio_server
    client = LabelStudioClient(url, token)
    push_game(game, client, kinds="spans")
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
        # the span buttons come from the task data, in the game's language (地点 = place, 人物 = person)
        page.get_by_text("地点", exact=True).first.wait_for(timeout=30_000)
        for quote, label in (("书房", "地点"), ("𠮷田·由纪", "人物")):
            page.get_by_text(label, exact=True).first.click()
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
        page.locator('[data-testid="bottombar-submit-button"]').first.click(timeout=10_000)
        for _ in range(40):
            if any(t["id"] == task_id and t["annotations"] for t in client.export_tasks(link.project_id)):
                break
            page.wait_for_timeout(250)
        browser.close()

    report = pull_game(game, client)
    assert report.counts()["created"] == {"span": 2}, report.as_dict()
    assert not any("repaired" in item["detail"] for item in report.created)
    for quote in ("书房", "𠮷田·由纪"):
        span = EvidenceSpan.objects.get(game=game, quote=quote)
        start = ZH_SCRIPT.index(quote)
        assert (span.start, span.end) == (start, start + len(quote))
        assert mi.script[span.start:span.end] == quote
        assert (span.label, span.state) == ({"书房": "place"}.get(quote, "person"), "draft")
