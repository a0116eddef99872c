"""Relation MCQs from the real G1 graphs (Sin: 1- and 2-label edges; Deadly Fountain: ≥3-label edges)."""
from __future__ import annotations

import json
from collections import Counter

from django.core.management import call_command

from annotate.models import Question
from casebook import conan
from generation.relations import Edge, plan_relation_questions, relationships_from_conan_graph

from .conftest import SIN_G1_ZH


def _generated(game):
    return list(Question.objects.filter(game=game, provenance__generator="relations").prefetch_related("options"))


def test_sin_graph_gives_balanced_shuffled_drafts(sin_zh):
    call_command("relation_questions", sin_zh.slug, "--seed", "7", verbosity=0)
    questions = _generated(sin_zh)
    # 28 edges; "same person as" edges are never asked; a pair the published set already asks (same stem and
    # perspective) is skipped
    assert 10 <= len(questions) <= 26
    letters = Counter(q.answer for q in questions)
    assert set(letters) == {"a", "b", "c", "d"} and max(letters.values()) - min(letters.values()) <= 1, letters
    assert {q.status for q in questions} == {"draft"}
    assert {q.sub_type for q in questions} == {"one", "two"}  # Sin has no pair with 3 labels
    names = [c.name for c in sin_zh.characters.all()]
    for q in questions:
        a, b = q.provenance["pair"]
        assert q.stem == f"【{a}】和【{b}】的关系是什么？"
        options = list(q.options.order_by("position"))
        assert len(options) == 4 and q.answer == "abcd"[[o.is_correct for o in options].index(True)]
        correct = next(o for o in options if o.is_correct)
        subject, labels, obj = conan.parse_relation_option(correct.text, names)
        assert (subject, obj) == (b, a)  # "B is <labels> of A"
        assert len(labels) == (2 if q.sub_type == "two" else 1)
        true_classes = {conan.category_of(label) for label in labels}
        for o in options:
            assert o.text.startswith(f"{b} is ") and o.origin == "heuristic"  # same subject: no cue
            if not o.is_correct:
                parsed = conan.parse_relation_option(o.text, names)
                assert parsed and not {conan.category_of(label) for label in parsed[1]} & true_classes
                assert o.review == "pending"
    # the edge 胡调研 → 李警察 "acquaintance of x, colleague of x" reads "李警察 is acquaintance and colleague of 胡调研"
    pair = next(q for q in questions if q.provenance["pair"] == ["胡调研", "李警察"])
    assert pair.options.get(is_correct=True).text == "李警察 is acquaintance and colleague of 胡调研"
    assert pair.perspective.name == "胡调研"  # a player end of the pair (no qa-character entry names it)
    # pairs the published set already asks are skipped, e.g. 【王村长】和【胡调研】 asked of 张村民
    assert not any(q.provenance["pair"] == ["王村长", "胡调研"] for q in questions)

    # idempotent: a second run creates nothing
    call_command("relation_questions", sin_zh.slug, "--seed", "7", verbosity=0)
    assert len(_generated(sin_zh)) == len(questions)


def test_three_labels_make_a_non_existent_question(fountain_zh):
    call_command("relation_questions", fountain_zh.slug, verbosity=0)
    non_existent = [q for q in _generated(fountain_zh) if q.sub_type == "non_existent"]
    assert non_existent
    for q in non_existent:
        a, b = q.provenance["pair"]
        assert q.stem == f"【{a}】和【{b}】不存在的关系是什么？"
        edge = next(r for r in fountain_zh.relationships.all() if (r.source.name, r.target.name) == (a, b))
        true = {conan.normalize_label(label) for label in edge.labels}
        for o in q.options.all():
            _, labels, _ = conan.parse_relation_option(o.text, [a, b])
            assert len(labels) == 1 and (labels[0] in true) != o.is_correct


def test_plan_is_seeded_and_spreads_answers_over_many_pairs(wellplay_anchor):
    graph = json.loads((wellplay_anchor / SIN_G1_ZH / "all.json").read_text(encoding="utf-8"))
    edges = [Edge(r.source, r.target, r.labels) for r in relationships_from_conan_graph(graph)] * 1
    playable = ["张村民", "王村长", "李警察", "胡调研"]
    first = plan_relation_questions(edges, language="en", playable=playable, seed=3)
    again = plan_relation_questions(edges, language="en", playable=playable, seed=3)
    other = plan_relation_questions(edges, language="en", playable=playable, seed=4)
    assert [q.options for q in first] == [q.options for q in again]
    assert [q.answer for q in first] != [q.answer for q in other]
    assert first[0].stem.startswith("What is the relationship between ")
    counts = Counter(q.answer for q in first)
    assert max(counts.values()) - min(counts.values()) <= 1
