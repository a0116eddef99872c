"""Chinese span offsets through Label Studio's real editor: select text with the mouse in Chromium,
submit, pull, and check the EvidenceSpan offsets against the stored script (astral 𠮷 before them).

Label Studio 1.23.2's editor records code points (the unit Casebook stores), so no repair is needed;
test_bridge.py covers the UTF-16 offsets older editors recorded.
"""
from __future__ import annotations

import pytest

from annotate.models import EvidenceSpan
from labelstudio.client import LabelStudioClient
from labelstudio.models import LabelStudioLink, LabelStudioTask
from labelstudio.pull import pull_game
from labelstudio.push import push_game

from .conftest import ZH_SCRIPT
from .editor import drag_select, submit, task_page

pytestmark = [pytest.mark.labelstudio, pytest.mark.browser, pytest.mark.django_db]


def test_spans_selected_in_the_label_studio_editor_come_back_at_the_right_code_points(game, labelstudio_server):
    url, token = labelstudio_server
    client = LabelStudioClient(url, token)
    push_game(game, client, kinds="spans")
    link = LabelStudioLink.objects.get(game=game)
    mi = game.characters.get(name="𠮷田·美咲")
    task_id = LabelStudioTask.objects.get(link=link, kind="script", object_id=mi.pk).task_id

    with task_page(url, link.project_id, task_id) as page:
        # the span buttons come from the task data, in the game's language (地点 = place, 人物 = person)
        page.get_by_text("地点", exact=True).first.wait_for(timeout=30_000)
        for quote, label in (("书房", "地点"), ("𠮷田·由纪", "人物")):
            page.get_by_text(label, exact=True).first.click()
            drag_select(page, quote)
        submit(page, client, link.project_id, task_id)

    report = pull_game(game, client)
    assert report.counts()["created"] == {"span": 2}, report.as_dict()
    assert not any("repaired" in item["detail"] for item in report.created)
    for quote in ("书房", "𠮷田·由纪"):
        span = EvidenceSpan.objects.get(game=game, quote=quote)
        start = ZH_SCRIPT.index(quote)
        assert (span.start, span.end) == (start, start + len(quote))
        assert mi.script[span.start:span.end] == quote
        assert (span.label, span.state) == ({"书房": "place"}.get(quote, "person"), "draft")
