"""Offline distractors on the real Sin anchor, in Chinese and English: right type, right language,
length-matched, no duplicates, stored as heuristic options waiting for review."""
from __future__ import annotations

import re

import pytest
from django.core.management import call_command

from annotate.models import Question
from generation.distractors import GenerationError, game_pools, generate_for_question
from generation.offline import build_pools, classify_option, near_duplicate, offline_distractors

from .conftest import bare_copy

CJK = re.compile(r"[\u4e00-\u9fff]")


def _generated(question: Question) -> list[str]:
    return list(question.options.filter(origin="heuristic").order_by("position").values_list("text", flat=True))


def _bare(game, **filters) -> Question:
    return bare_copy(game.questions.filter(**filters).order_by("position").first())


def test_chinese_distractors_match_the_slot(sin_zh):
    pools = game_pools(sin_zh)
    assert "晚上9点30分" in pools.times and "卧室" in pools.places  # found in the scripts

    who = _bare(sin_zh, kind="objective")
    generate_for_question(who, 3, pools=pools)
    people = _generated(who)
    assert len(people) == 3 and set(people) <= {"张村民", "李警察", "胡调研", "张村民的父亲", "胡研究", "杀人狂", "李警察的女友"}
    assert "赵慈善" not in people  # the victim named in the stem is not a suspect

    when = _bare(sin_zh, sub_type="when")
    generate_for_question(when, 3, pools=pools)
    times = _generated(when)
    assert len(times) == 3 and all(classify_option(t, pools) == "time" for t in times), times

    where = _bare(sin_zh, sub_type="where")
    generate_for_question(where, 3, pools=pools)
    places = _generated(where)
    assert len(places) == 3 and all(p.startswith("在") and CJK.search(p) for p in places), places

    for sub_type in ("how", "why"):
        q = _bare(sin_zh, sub_type=sub_type)
        generate_for_question(q, 3, pools=pools)
        texts = _generated(q)
        answer = q.options.get(is_correct=True).text
        assert len(texts) == 3 and all(CJK.search(t) for t in texts)
        assert all(abs(len(t) - len(answer)) <= max(3, len(answer)) for t in texts), (answer, texts)
        assert not any(near_duplicate(t, answer) for t in texts)

    stored = who.options.filter(origin="heuristic")
    assert {(o.review, o.is_correct, o.model_name) for o in stored} == {("pending", False, "")}


def test_english_distractors_are_english_and_match_case(sin_en):
    pools = game_pools(sin_en)
    where = _bare(sin_en, sub_type="where")
    generate_for_question(where, 3, pools=pools)
    places = _generated(where)
    assert len(places) == 3 and not any(CJK.search(p) for p in places)
    assert all(p[0].isupper() for p in places)  # "In his own home": capitalisation is no cue

    how = _bare(sin_en, sub_type="how")
    generate_for_question(how, 3, pools=pools)
    assert len(_generated(how)) == 3 and not any(CJK.search(t) for t in _generated(how))

    who = _bare(sin_en, kind="objective")
    generate_for_question(who, 3, pools=pools)
    assert set(_generated(who)) <= {"Zhang Villager", "Officer Li", "Hu Investigate"}


def test_relation_distractors_use_other_categories(sin_zh):
    q = _bare(sin_zh, kind="relations", sub_type="two")
    generate_for_question(q, 3)
    answer = q.options.get(is_correct=True).text
    texts = _generated(q)
    subject, obj = answer.split(" is ")[0], answer.rsplit(" of ", 1)[1]
    assert len(texts) == 3 and all(t.startswith(f"{subject} is ") and t.endswith(f" of {obj}") for t in texts)


def test_only_missing_distractors_are_added_and_free_text_is_refused(sin_zh):
    full = sin_zh.questions.filter(kind="objective").first()  # published: already 3 options
    assert generate_for_question(full, 2).skipped
    q = _bare(sin_zh, kind="objective")
    generate_for_question(q, 1)
    generate_for_question(q, 3)
    assert q.options.count() == 4
    q.kind = "open_ended"
    q.save()
    with pytest.raises(GenerationError, match="free text"):
        generate_for_question(q, 3)


def test_pools_and_regexes_without_a_database():
    pools = build_pools("zh", ["甲", "乙", "丙"], ["那天晚上十点，我在书房里看书。第二天5月14日凌晨三点我在河边。"])
    assert "书房" in pools.places and "河边" in pools.places and "晚上十点" in pools.times
    assert classify_option("书房", pools) == "place" and classify_option("甲", pools) == "person"
    out = offline_distractors(stem="谁是凶手？", answer="甲", n=3, pools=pools, kind="objective")
    assert sorted(out) == ["丙", "乙"]  # only two other people exist
    with pytest.raises(ValueError, match="no correct option"):
        offline_distractors(stem="谁？", answer="", n=3, pools=pools)


def test_generate_distractors_command_without_a_key_says_it_is_offline(sin_zh, no_llm, capsys):
    bare = _bare(sin_zh, sub_type="why")
    call_command("generate_distractors", sin_zh.slug, "--question", str(bare.pk))
    out = capsys.readouterr().out
    assert "No OPENAI_API_KEY is configured: using the offline heuristics" in out
    assert "1 question(s) got distractors" in out and bare.options.count() == 4


def test_candidates_follow_what_the_question_asks_not_its_sub_type():
    pools = build_pools("en", ["Ann", "Bob", "Cid"], ["That night I was in the study; at 10 p.m. Bob was in the garden."])
    # "where from", tagged `how`: places, never causes of death
    out = offline_distractors(stem="Where did the poison come from?", answer="from the kitchen", n=3, pools=pools,
                              kind="reasoning", sub_type="how")
    assert out and all(classify_option(o, pools) == "place" or o.lower().startswith(("in ", "at ", "on ", "by ")) for o in out)
    assert not any(word in " ".join(out) for word in ("stabbed", "poisoned", "strangled"))
    objects = offline_distractors(stem="凶器是什么？", answer="一把匕首", n=3, pools=build_pools("zh", ["甲", "乙"], []),
                                  kind="reasoning", sub_type="how")
    assert set(objects) <= {"钥匙", "信封", "毒药瓶", "匕首", "怀表", "手帕", "日记本", "照片", "戒指", "绳子", "药方", "茶杯", "账本", "手枪"}
    assert "匕首" not in objects  # the answer in other words is never a distractor
    # a person question falls back on the answer's shape even under a misleading sub-type
    assert sorted(offline_distractors(stem="谁最后见过他？", answer="甲", n=3, pools=build_pools("zh", ["甲", "乙", "丙"], []),
                                      kind="reasoning", sub_type="why")) == ["丙", "乙"]


def test_no_candidates_says_what_to_do_instead():
    with pytest.raises(ValueError, match="no candidate other options.*Write the wrong options yourself"):
        offline_distractors(stem="甲的秘密是？", answer="他欠了债", n=3, pools=build_pools("zh", ["甲"], []), kind="objective")
    pools = build_pools("zh", ["甲"], [])
    with pytest.raises(ValueError) as refused:
        offline_distractors(stem="谁是凶手？", answer="甲", n=3, pools=pools, kind="objective")
    message = str(refused.value)
    assert "every candidate person option duplicates" in message and "Write the wrong options yourself" in message and "LLM" in message
