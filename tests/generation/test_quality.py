"""Quality checks on crafted bad questions (each must explain itself) and on the real Sin anchor."""
from __future__ import annotations

import json
import random

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from generation.offline import build_pools
from generation.quality import (
    Item,
    binomial_sf,
    check_answer_in_stem,
    check_answer_length,
    check_answer_positions,
    check_blind,
    check_duplicates,
    check_items,
    check_structure,
    check_wrong_type,
    chi2_sf,
)

POOLS = build_pools("zh", ["张村民", "王村长", "李警察", "胡调研"], ["那天晚上九点，他在河边。我在书房里。"])


def item(options, correct=0, stem="赵慈善被谁杀死的？", kind="objective", i=1, sub_type=""):
    return Item(id=i, kind=kind, stem=stem, options=options, correct=[correct] if correct is not None else [],
                sub_type=sub_type)


def test_statistics_match_known_values():
    assert chi2_sf(7.815, 3) == pytest.approx(0.05, abs=1e-4)
    assert chi2_sf(5.991, 2) == pytest.approx(0.05, abs=1e-4)
    assert chi2_sf(3.841, 1) == pytest.approx(0.05, abs=1e-4)
    assert binomial_sf(3, 3, 0.5) == pytest.approx(0.125)


def test_duplicates_exact_and_near():
    findings = check_duplicates(item(["王村长", "张村民", "张村民 ", "Poisoned"]))
    assert [f.severity for f in findings] == ["error"]
    assert "options b and c are the same text" in findings[0].message
    near = check_duplicates(item(["poisoned with arsenic", "Poisoned with arsenic.", "shot", "drowned"]))
    assert near[0].severity == "warning" and "near-duplicates" in near[0].message
    # same template, different words: not duplicates
    assert check_duplicates(item(["2032年5月14日凌晨", "2032年5月14日白天", "2032年5月1日白天"])) == []


def test_answer_in_stem():
    bad = check_answer_in_stem(item(["王村长", "张村民", "李警察"], stem="王村长是不是杀死赵慈善的人？"))
    assert bad and "appears word for word in the stem" in bad[0].message
    assert check_answer_in_stem(item(["王村长", "张村民", "李警察"])) == []


def test_answer_length():
    long = check_answer_length(item(["在他自己家里靠窗的那张旧书桌旁边", "河边", "岸上", "甲板上"], stem="在哪里？"))
    assert long and "picking the longest option finds the answer" in long[0].message
    short = check_answer_length(item(["毒", "被人用刀从背后捅死", "被绳子从背后勒死", "被人推下楼梯摔死"]))
    assert short and "shortest" in short[0].message
    assert check_answer_length(item(["被毒死的", "被刀捅死", "被勒死的", "被枪打死"])) == []


def test_wrong_type_place_among_people():
    findings = check_wrong_type(item(["王村长", "张村民", "河边", "胡调研"]), POOLS)
    assert len(findings) == 1 and findings[0].data["option"] == "c"
    assert "looks like a place, but 3 of 4 options are people" in findings[0].message
    assert check_wrong_type(item(["王村长", "张村民", "自杀", "胡调研"]), POOLS) == []  # "other" is not flagged


def test_structure():
    assert "no option is marked correct" in check_structure(item(["a", "b"], correct=None))[0].message
    assert "only 1 option" in check_structure(item(["a"]))[0].message


def test_answer_position_bias_and_a_fair_set():
    biased = [item(["x", "y", "z", "w"], correct=0, i=i) for i in range(12)]
    findings = check_answer_positions(biased, "relations")
    assert findings[0].severity == "error" and "every correct answer is at letter a" in findings[0].message
    assert "χ²=36.0, df=3" in findings[0].message and "scores 100% instead of 25%" in findings[0].message
    fair = [item(["x", "y", "z", "w"], correct=i % 4, i=i) for i in range(12)]
    assert check_answer_positions(fair, "relations")[0].severity == "info"


def test_answerable_without_context_by_a_blind_strategy():
    rng = random.Random(1)
    items = []
    for i in range(12):
        options = ["短", "也短", "还是短"]
        answer = "这个选项明显比其他选项都长得多"
        k = rng.randrange(4)
        options.insert(k, answer)
        items.append(item(options, correct=k, i=i, stem=f"问题{i}？"))
    findings = check_blind(items, "reasoning")
    assert any(f.data["strategy"] == "longest option" for f in findings)
    longest = next(f for f in findings if f.data["strategy"] == "longest option")
    assert "right on 12 of 12 (100%) where chance is 25%" in longest.message
    assert "seeing only stem and options" in longest.message


def test_check_items_collects_per_question_and_per_set():
    items = [item(["王村长", "张村民", "张村民", "河边"], i=i) for i in range(8)]
    report = check_items(items, POOLS)
    checks = {f.check for f in report.findings}
    assert {"duplicate_options", "wrong_type", "answer_position"} <= checks
    assert report.errors and set(report.per_question()) == set(range(8))


def test_check_questions_flags_the_published_relation_bias(sin_zh, capsys):
    with pytest.raises(CommandError) as raised:
        call_command("check_questions", sin_zh.slug, "--kind", "relations")
    assert raised.value.returncode == 1
    out = capsys.readouterr().out
    assert "relations: every correct answer is at letter a (a: 21, b: 0, c: 0, d: 0" in out
    assert "Shuffle the options" in out

    with pytest.raises(CommandError):
        call_command("check_questions", sin_zh.slug, "--json")
    data = json.loads(capsys.readouterr().out)
    position = [f for f in data[0]["findings"] if f["check"] == "answer_position" and f["severity"] == "error"]
    assert {f["scope"] for f in position} >= {"relations", "relations/two"}
    assert data[0]["questions_checked"] == 44


def test_non_existent_bias_at_d_is_flagged(fountain_zh, capsys):
    with pytest.raises(CommandError):
        call_command("check_questions", fountain_zh.slug, "--kind", "relations")
    out = capsys.readouterr().out
    assert "relations/non_existent: every correct answer is at letter d (a: 0, b: 0, c: 0, d: 8" in out


def test_generated_relation_questions_pass_the_position_check(sin_zh, capsys):
    sin_zh.questions.filter(kind="relations").delete()
    call_command("relation_questions", sin_zh.slug, verbosity=0)
    call_command("check_questions", sin_zh.slug, "--kind", "relations", "--info")  # no error: no exit code 1
    out = capsys.readouterr().out
    assert "correct letters are spread evenly enough" in out and "0 error(s)" in out


def test_blind_llm_that_always_says_a_is_flagged_on_the_published_relations(sin_zh, llm_server, capsys):
    llm_server.responder = lambda request, n: '{"answer": "a"}'
    with pytest.raises(CommandError):
        call_command("check_questions", sin_zh.slug, "--kind", "relations", "--llm")
    out = capsys.readouterr().out
    assert "a blind strategy that asks the LLM (seeing only stem and options, no script) is right on 21 of 21" in out
    prompts = [r["messages"][-1]["content"] for r in llm_server.requests]
    assert len(prompts) == 21 and all("A: " in p and "脚本" not in p for p in prompts)


def test_a_distractor_saying_the_answer_in_other_words():
    from generation.quality import check_same_concept

    findings = check_same_concept(item(["Vendetta", "Money", "Revenge for his father", "Accident"],
                                       kind="reasoning", sub_type="why", stem="What was the motive?"))
    assert len(findings) == 1 and "names the same motive as the correct option a" in findings[0].message
    assert check_same_concept(item(["被毒药毒死的", "用刀捅死的", "被勒死的", "用枪打死的"], kind="reasoning",
                                   sub_type="how")) == []
