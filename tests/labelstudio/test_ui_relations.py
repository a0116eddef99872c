"""The searchable relation label picker in Label Studio's real editor (Chromium): mark two names,
select the first, search its relation label in Chinese in the per-region Taxonomy, draw the arrow,
submit, pull; and the same relation in the old result format (labels on the arrow, projects pushed
before the Taxonomy) still comes back.

What was measured here: Label Studio 1.23.2's relation dropdown (``<Relations>``) is a Select
without ``searchable`` — typing does not filter its 164 labels — so the picker is a Taxonomy, whose
dropdown has a search box that matches the shown text (both languages).
"""
from __future__ import annotations

import pytest

from annotate.models import Relationship
from labelstudio import config
from labelstudio.client import LabelStudioClient
from labelstudio.models import LabelStudioLink, LabelStudioTask
from labelstudio.pull import pull_game
from labelstudio.push import push_game

from .conftest import ZH_SCRIPT
from .editor import click_text, drag_select, submit, task_page
from .test_bridge import _region

pytestmark = [pytest.mark.labelstudio, pytest.mark.django_db]


def _pushed_script_task(game, client: LabelStudioClient) -> tuple[LabelStudioLink, int]:
    """Push spans and relations; the project's link and the task of 美咲's script."""
    push_game(game, client, kinds="relations")
    link = LabelStudioLink.objects.get(game=game)
    mi = game.characters.get(name="𠮷田·美咲")
    return link, LabelStudioTask.objects.get(link=link, kind="script", object_id=mi.pk).task_id


@pytest.mark.browser
def test_relation_labels_are_searched_in_chinese_in_the_taxonomy_and_pulled(game, labelstudio_server):
    from playwright.sync_api import expect

    url, token = labelstudio_server
    client = LabelStudioClient(url, token)
    link, task_id = _pushed_script_task(game, client)

    with task_page(url, link.project_id, task_id) as page:
        page.get_by_text("人物", exact=True).first.wait_for(timeout=30_000)
        for quote in ("𠮷田·由纪", "父亲"):
            page.get_by_text("人物", exact=True).first.click()
            drag_select(page, quote)
        click_text(page, "𠮷田·由纪")  # select the region the arrow starts from: its Taxonomy shows
        picker = page.locator(".ant-select-selector").filter(has_text="搜索关系（中文或英文）").first
        expect(picker).to_be_visible(timeout=10_000)
        picker.click()
        search = page.get_by_placeholder("Search", exact=True).last  # the Taxonomy's own search box
        expect(search).to_be_visible()
        search.fill("妹妹")
        option = page.get_by_text("妹妹 · younger sister of x", exact=True)
        expect(option.first).to_be_visible(timeout=10_000)
        expect(page.get_by_text("哥哥 · elder brother of x", exact=True)).to_have_count(0)  # filtered out
        option.first.click()
        expect(page.get_by_text("Family relationships/younger sister of x")).to_be_visible()  # stored by its alias
        page.mouse.click(700, 700)  # close the dropdown; the region stays selected
        # the arrow: from 由纪 (selected) to 美咲, with the region's "Create Relation" button
        page.get_by_label("Create Relation").first.click()
        click_text(page, "𠮷田·美咲", nth=1)
        page.get_by_text("Relations", exact=True).first.click()
        submit(page, client, link.project_id, task_id)

    (task,) = [t for t in client.export_tasks(link.project_id) if t["id"] == task_id]
    result = task["annotations"][0]["result"]
    (picked,) = [r for r in result if r["type"] == "taxonomy"]
    assert picked["value"]["taxonomy"] == [["Family relationships", "younger sister of x"]]
    (arrow,) = [r for r in result if r["type"] == "relation" and not r.get("labels")]  # no label on the arrow itself
    assert (arrow["from_id"], arrow["direction"]) == (picked["id"], "right")
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
    link, task_id = _pushed_script_task(game, client)
    yuki, misaki = _region("n1", ZH_SCRIPT, "𠮷田·由纪", "人物"), _region("n2", ZH_SCRIPT, "𠮷田·美咲", "人物")
    picked = {"id": "n1", "from_name": config.RELATION_TAXONOMY, "to_name": config.TEXT, "type": "taxonomy",
              "value": {**yuki["value"], "taxonomy": [["Family relationships", "younger sister of x"]]}}
    old = {"from_id": "n1", "to_id": "n2", "type": "relation", "direction": "right", "labels": ["friend of x"]}
    client.create_annotation(task_id, [yuki, misaki, picked, old])
    report = pull_game(game, client)
    assert report.counts()["created"] == {"span": 2, "relation": 1}, report.as_dict()
    rel = Relationship.objects.get(game=game, target__name="𠮷田·由纪", source__name="𠮷田·美咲")
    assert rel.labels == ["friend of x", "younger sister of x"]


def test_a_project_pushed_before_the_taxonomy_takes_the_new_config_and_keeps_its_annotations(game, labelstudio_server,
                                                                                              monkeypatch):
    """Push with the config of before (no Taxonomy, no relation header in the tasks), annotate with a
    label on the arrow, then push today's config over it: Label Studio accepts it, the old annotation
    still pulls, and a second annotator's Taxonomy label on the same arrow agrees with it."""
    from labelstudio import push as push_module

    url, token = labelstudio_server
    client = LabelStudioClient(url, token)
    new_config = config.build_label_config
    monkeypatch.setattr(config, "build_label_config", lambda kinds, **kw: "\n".join(
        line for line in new_config(kinds, **kw).splitlines()
        if "Taxonomy" not in line and "<Choice " not in line and "</Choice>" not in line and "relation_header" not in line))
    monkeypatch.setattr(config, "empty_task_data", lambda kinds, _f=config.empty_task_data: {
        k: v for k, v in _f(kinds).items() if k != "relation_header"})
    monkeypatch.setattr(push_module, "script_task", lambda game, character, kinds, _f=push_module.script_task: {
        k: v for k, v in _f(game, character, kinds).items() if k != "relation_header"})
    link, task_id = _pushed_script_task(game, client)
    assert "<Taxonomy" not in client.get_project(link.project_id)["label_config"]
    yuki, misaki = _region("n1", ZH_SCRIPT, "𠮷田·由纪", "人物"), _region("n2", ZH_SCRIPT, "𠮷田·美咲", "人物")
    client.create_annotation(task_id, [yuki, misaki, {"from_id": "n1", "to_id": "n2", "type": "relation",
                                                      "direction": "right", "labels": ["younger sister of x"]}])
    monkeypatch.undo()

    report = push_game(game, client, kinds="relations")
    assert report.project == "updated" and report.tasks_updated >= 1
    assert f'<Taxonomy name="{config.RELATION_TAXONOMY}"' in client.get_project(link.project_id)["label_config"]
    picked = {"id": "n1", "from_name": config.RELATION_TAXONOMY, "to_name": config.TEXT, "type": "taxonomy",
              "value": {**yuki["value"], "taxonomy": [["Family relationships", "younger sister of x"]]}}
    client.create_annotation(task_id, [yuki, misaki, picked, {"from_id": "n1", "to_id": "n2", "type": "relation",
                                                              "direction": "right"}])
    pulled = pull_game(game, client)
    assert pulled.counts()["created"] == {"span": 2, "relation": 1} and not pulled.conflict, pulled.as_dict()
    (rel,) = Relationship.objects.filter(game=game, target__name="𠮷田·由纪", source__name="𠮷田·美咲")
    assert rel.labels == ["younger sister of x"]
