"""Offline parts of the bridge: the labeling config, offset repair, kinds, game lookup."""
from __future__ import annotations

import pytest
from label_studio_sdk.label_interface import LabelInterface

from casebook import conan
from labelstudio import config
from labelstudio.client import LabelStudioClient, LabelStudioError
from labelstudio.offsets import OffsetError, place
from labelstudio.service import GameNotFound, find_game

TEXT = "我是𠮷田·美咲。昨晚十点，我在书房。𠮷𠮷书房"


def test_config_has_span_labels_conan_relations_and_mcq_controls():
    xml = config.build_label_config(list(config.KINDS))
    li = LabelInterface(xml)
    # span labels are dynamic: a script task carries them in the game's language, an MCQ task none
    assert 'value="$span_labels"' in xml and li.get_control(config.SPAN_LABELS) is not None
    assert [c["value"] for c in config.span_label_choices("zh")][:3] == ["线索", "不在场证明", "动机"]
    assert [c["value"] for c in config.span_label_choices("en")][:3] == ["clue", "alibi", "motive"]
    assert config.span_label_key("不在场证明") == config.span_label_key("alibi") == "alibi"
    assert config.span_label_key("alibi (不在场证明)") is None
    assert {"clue", "alibi", "motive", "method", "time", "place"} <= set(config.SPAN_LABELS_ALL)
    assert all(li.get_control(name) is not None for name in (config.CORRECT, config.CORRECT_MULTI, config.REJECT))
    assert 'name="correct" toName="stem" value="$options_single" choice="single-radio"' in xml
    assert 'name="correct_multi" toName="stem" value="$options_multi" choice="multiple"' in xml
    assert xml.count("<Relation ") == len(conan.all_fine_labels()) == 164
    assert '<Relations choice="multiple">' in xml  # a relation may carry several labels, as in Casebook
    relations = [line.split('"')[1] for line in xml.splitlines() if "<Relation " in line]
    categories = [conan.category_of(label) for label in relations]
    assert categories == sorted(categories, key=lambda c: c or "")  # grouped by Conan category
    assert "value=\"replaced x's identity\"" in xml  # quotes in labels are escaped, not broken
    only_q = config.build_label_config(["questions"])
    assert "<Labels" not in only_q and "<Relations" not in only_q and set(config.empty_task_data(["questions"])) >= {"stem", "options"}


def test_relation_taxonomy_is_bilingual_grouped_and_read_back_by_alias():
    zh, en = config.build_label_config(list(config.KINDS), language="zh"), config.build_label_config(list(config.KINDS))
    li = LabelInterface(zh)
    assert li.get_control(config.RELATION_TAXONOMY).tag == "Taxonomy"
    assert f'<Taxonomy name="{config.RELATION_TAXONOMY}" toName="text" perRegion="true" leafsOnly="true"' in zh
    # every Conan label once, stored by its English alias, shown in the game's language first
    aliases = [line.split('alias="')[1].split('"')[0] for line in zh.splitlines() if "<Choice " in line and "/>" in line]
    assert sorted(aliases) == sorted(conan.all_fine_labels()) and len(aliases) == 164
    assert '<Choice value="妹妹 · younger sister of x" alias="younger sister of x"/>' in zh
    assert '<Choice value="younger sister of x · 妹妹" alias="younger sister of x"/>' in en
    assert '<Choice value="家庭关系 · Family relationships" alias="Family relationships">' in zh
    assert " / " not in "".join(line for line in zh.splitlines() if "<Choice " in line)  # the path separator
    assert config.relation_labels_of({"taxonomy": [["Family relationships", "younger sister of x"],
                                                   ["Allies", "friend of x"], ["Allies", "friend of x"]]}) == \
        ["younger sister of x", "friend of x"]
    assert config.relation_labels_of({}) == [] and "<Taxonomy" not in config.build_label_config(["spans", "questions"])


def test_kinds_are_checked_and_relations_bring_spans():
    assert config.normalise_kinds("relations") == ["spans", "relations"]
    assert config.normalise_kinds(" questions , spans ") == ["spans", "questions"]
    assert config.normalise_kinds(None) == list(config.KINDS)
    with pytest.raises(ValueError, match="unknown kind 'clues'"):
        config.normalise_kinds("spans,clues")


def test_offsets_exact_utf16_searched_and_impossible():
    start = TEXT.index("书房")
    assert place(TEXT, start, start + 2, "书房").how == "exact"
    # JavaScript counts 𠮷 as two UTF-16 units: one 𠮷 before the span shifts it by one
    utf16 = place(TEXT, start + 1, start + 3, "书房")
    assert (utf16.start, utf16.end, utf16.how) == (start, start + 2, "utf16")
    # off by more than UTF-16 explains: the occurrence nearest to the given offset wins
    last = TEXT.rindex("书房")
    searched = place(TEXT, last + 7, last + 9, "书房")
    assert (searched.start, searched.how) == (last, "searched")
    with pytest.raises(OffsetError, match="does not occur"):
        place(TEXT, 0, 3, "氰化钾")
    assert place(TEXT, 0, 2, None).quote == "我是"
    with pytest.raises(OffsetError):
        place(TEXT, 5, 500, "")


def test_client_refuses_bad_url_and_missing_token():
    with pytest.raises(LabelStudioError, match="must start with http"):
        LabelStudioClient("127.0.0.1:8089", "t")
    with pytest.raises(LabelStudioError, match="token is required"):
        LabelStudioClient("http://127.0.0.1:8089", " ")


@pytest.mark.django_db
def test_find_game_by_slug_or_source_id(game):
    assert find_game(game.slug) == game
    game.source_id = "G3/杏仁"
    game.save()
    assert find_game("G3/杏仁") == game
    with pytest.raises(GameNotFound, match="no game"):
        find_game("nope")


def test_a_url_that_is_not_label_studio_is_reported(tmp_path):
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(LabelStudioError, match="is not a Label Studio server"):
            LabelStudioClient(f"http://127.0.0.1:{server.server_port}", "t" * 40).check()
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.django_db
def test_labels_pulled_before_spans_had_a_label_move_onto_the_spans(game):
    import importlib

    from django.apps import apps

    from annotate.models import EvidenceSpan
    from labelstudio.models import LabelStudioLink, PulledItem

    migration = importlib.import_module("labelstudio.migrations.0003_span_labels_onto_spans")
    mi = game.characters.get(name="𠮷田·美咲")
    bare = EvidenceSpan.objects.create(game=game, document="script", character=mi, start=0, end=2, quote="我是")
    labelled = EvidenceSpan.objects.create(game=game, document="script", character=mi, start=2, end=3, quote="𠮷", label="clue")
    link = LabelStudioLink.objects.create(game=game, url="http://127.0.0.1:1", project_id=1)
    for n, span in enumerate((bare, labelled)):
        PulledItem.objects.create(link=link, task_id=1, annotation_id=1, key=f"r{n}", kind="span", label="motive",
                                  span=span, fingerprint="x")
    migration.copy_labels(apps, None)
    bare.refresh_from_db()
    labelled.refresh_from_db()
    assert (bare.label, labelled.label) == ("motive", "clue")
