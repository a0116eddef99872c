"""The plain logic modules: spans (UTF-16 ↔ code points), chains (cycles, hop levels), questions
(version check, raw cleared, audit), relationships, progress."""
from __future__ import annotations

import pytest

from annotate.models import ChainNode, Character, EvidenceSpan, Question, ReasoningChain
from annotate.services import chains, questions, spans
from annotate.services.progress import parse_targets, progress_for
from annotate.services.relationships import RelationshipError, save_relationship
from casebook.interchange import NodeKind, QuestionKind
from casebook.models import AuditEntry

from .conftest import SCRIPT_ZH


def js_len(text: str) -> int:
    """What JavaScript's String.length gives: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def test_utf16_offsets_round_trip_on_astral_characters():
    text = SCRIPT_ZH
    for cp in range(len(text) + 1):
        u16 = spans.codepoint_to_utf16(text, cp)
        assert u16 == js_len(text[:cp])
        assert spans.utf16_to_codepoint(text, u16) == cp
    with pytest.raises(spans.SpanError, match="surrogate"):
        spans.utf16_to_codepoint("𠮷", 1)


@pytest.mark.django_db
def test_create_span_from_browser_offsets_after_an_astral_character(game, annotator):
    char = game.characters.get(name="林管家")
    quote = "管家拿着一把钥匙"
    cp_start = char.script.index(quote)
    assert char.script[:cp_start].count("𠮷") == 1  # the astral character shifts UTF-16 by one
    u16_start = js_len(char.script[:cp_start])
    span = spans.create_span(game, document="script", owner_id=char.pk, start=u16_start, end=u16_start + js_len(quote),
                             quote=quote, unit="utf16", user=annotator)
    assert (span.start, span.end, span.quote) == (cp_start, cp_start + len(quote), quote)
    assert char.script[span.start:span.end] == quote
    assert span.created_by == annotator
    # the same selection again gives the same span, not a duplicate
    again = spans.create_span(game, document="script", owner_id=char.pk, start=cp_start, end=cp_start + len(quote), quote=quote)
    assert again.pk == span.pk
    astral = spans.create_span(game, document="script", owner_id=char.pk, start=2, end=3, quote="𠮷")
    assert astral.quote == "𠮷"
    assert AuditEntry.objects.filter(item_type="evidencespan", action="create").count() == 2


@pytest.mark.django_db
def test_span_with_wrong_quote_or_foreign_owner_is_refused(game, outsider):
    char = game.characters.first()
    with pytest.raises(spans.SpanError, match="does not match"):
        spans.create_span(game, document="script", owner_id=char.pk, start=0, end=2, quote="不是")
    with pytest.raises(spans.SpanError, match="outside"):
        spans.create_span(game, document="script", owner_id=char.pk, start=0, end=10_000, quote="x")
    from .conftest import make_game

    other = make_game("other")
    with pytest.raises(spans.SpanError, match="Pick the character"):
        spans.create_span(other, document="script", owner_id=char.pk, start=0, end=1, quote=char.script[0])
    manual = spans.create_span(game, document="manual", owner_id=None, start=0, end=2, quote="真相")
    assert manual.document == "manual"
    assert EvidenceSpan.objects.count() == 1


def test_hop_levels_are_longest_paths_and_cycles_are_found():
    kinds = {1: "direct", 2: "direct", 3: "inferred", 4: "inferred", 5: "conclusion", 6: "inferred"}
    parents = {3: [1], 4: [3, 2], 5: [4, 1], 6: []}
    assert chains.hop_levels(kinds, parents) == {1: 0, 2: 0, 3: 1, 4: 2, 5: 3, 6: None}
    assert chains.find_cycle(parents) is None
    assert set(chains.find_cycle({**parents, 3: [1, 5]})) >= {3, 4, 5}
    assert chains.level_label(0) == "p" and chains.level_label(2) == "2-step"


@pytest.mark.django_db
def test_chain_refuses_cycles_and_direct_nodes_without_evidence(game, annotator):
    chain = ReasoningChain.objects.create(game=game, goal="murderer", title="谁是凶手")
    char = game.characters.first()
    span = spans.create_span(game, document="script", owner_id=char.pk, start=0, end=2, quote=char.script[:2])
    with pytest.raises(chains.ChainError, match="must cite"):
        chains.save_node(chain, None, kind=NodeKind.DIRECT, text="管家有钥匙")
    d1 = chains.save_node(chain, None, kind="direct", text="管家有钥匙", span_ids=[span.pk], user=annotator)
    i1 = chains.save_node(chain, None, kind="inferred", text="管家能进书房", parent_ids=[d1.pk], knowledge="钥匙开门")
    c1 = chains.save_node(chain, None, kind="conclusion", text="管家是凶手", parent_ids=[i1.pk])
    _, _, levels = chains.chain_graph(chain)
    assert [levels[n.pk] for n in (d1, i1, c1)] == [0, 1, 2]
    with pytest.raises(chains.ChainError, match="cycle"):
        chains.save_node(chain, i1, kind="inferred", text="管家能进书房", parent_ids=[d1.pk, c1.pk])
    assert set(ChainNode.objects.get(pk=i1.pk).parents.values_list("pk", flat=True)) == {d1.pk}  # unchanged
    with pytest.raises(chains.ChainError, match="at least one parent"):
        chains.save_node(chain, None, kind="inferred", text="孤立")
    assert AuditEntry.objects.filter(item_type="chainnode").count() == 3


@pytest.mark.django_db
def test_question_version_check_clears_raw_and_audits(game, annotator):
    q = game.questions.first()
    assert q.raw
    data = questions.QuestionInput(kind=QuestionKind.REASONING, sub_type="how", stem="林管家是怎么死的？",
                                   options=[("毒死", False), ("刺死", True), ("  ", False), ("摔死", False)])
    saved = questions.save_question(game, q, data, expected_version=q.version, user=annotator)
    assert saved.version == 2 and saved.raw == "" and saved.answer == "b"
    assert [o.text for o in saved.options.all()] == ["毒死", "刺死", "摔死"]
    stale = Question.objects.get(pk=q.pk)
    stale.version = 1
    with pytest.raises(questions.VersionConflict) as info:
        questions.save_question(game, stale, questions.QuestionInput(kind="reasoning", stem="覆盖？", options=[("a", True), ("b", False)]),
                                expected_version=1, user=annotator)
    assert info.value.current.version == 2 and info.value.current.stem == "林管家是怎么死的？"
    assert Question.objects.get(pk=q.pk).stem == "林管家是怎么死的？"
    entry = AuditEntry.objects.get(item_type="question", item_id=q.pk)
    assert entry.before["stem"].startswith("问题") and entry.after["stem"] == "林管家是怎么死的？"
    assert entry.user == annotator


@pytest.mark.django_db
def test_question_rules_per_kind(game, annotator):
    char = game.characters.first()
    make = lambda **kw: questions.save_question(game, None, questions.QuestionInput(**kw), user=annotator)  # noqa: E731
    with pytest.raises(questions.QuestionError, match="exactly one"):
        make(kind="long_script", stem="?", options=[("a", True), ("b", True)])
    with pytest.raises(questions.QuestionError, match="image clue"):
        make(kind="media_image", stem="图中是什么？", options=[("a", True), ("b", False)])
    with pytest.raises(questions.QuestionError, match="chain node"):
        make(kind="multi_step", stem="?", options=[("a", True), ("b", False)])
    with pytest.raises(questions.QuestionError, match="source span"):
        make(kind="factual", stem="几点？", answer="十点")
    span = spans.create_span(game, document="script", owner_id=char.pk, start=0, end=2, quote=char.script[:2])
    fact = make(kind="factual", stem="几点？", answer="十点", evidence_ids=[span.pk])
    assert fact.answer == "十点" and list(fact.evidence.all()) == [span] and fact.author == annotator
    inf = make(kind="inferential", stem="谁？", answer="管家", premises=["有钥匙", "", "在十点"])
    assert inf.extra["premises"] == ["有钥匙", "在十点"]
    wp = make(kind="objective", stem="谁杀了甲？", options=[("乙", True), ("丙", True)], weight=7)
    assert wp.answer == "ab" and questions.effective_weight(wp) == 7
    assert questions.effective_weight(make(kind="relations", stem="?", options=[("x", True), ("y", False)])) == 2
    chain = ReasoningChain.objects.create(game=game)
    d = chains.save_node(chain, None, kind="direct", text="线索", span_ids=[span.pk])
    i = chains.save_node(chain, None, kind="inferred", text="推理", parent_ids=[d.pk])
    ms = make(kind="multi_step", stem="推理？", options=[("a", True), ("b", False)], chain_node_id=i.pk)
    assert ms.level == 1


@pytest.mark.django_db
def test_relationship_validation(game, annotator):
    a, b = list(game.characters.all()[:2])
    with pytest.raises(RelationshipError, match="at least one"):
        save_relationship(game, None, source_id=a.pk, target_id=b.pk, labels=[" "], user=annotator)
    with pytest.raises(RelationshipError, match="two different"):
        save_relationship(game, None, source_id=a.pk, target_id=a.pk, labels=["friend of x"], user=annotator)
    rel = save_relationship(game, None, source_id=a.pk, target_id=b.pk, labels=["Father of X", "father of x"], user=annotator)
    assert rel.labels == ["father of x"] and rel.author == annotator
    with pytest.raises(RelationshipError, match="Not a Conan label"):
        save_relationship(game, rel, source_id=a.pk, target_id=b.pk, labels=["sworn nemesis of x"], user=annotator)
    rel.labels = ["sworn nemesis of x"]  # as published in an imported graph
    rel.save()
    kept = save_relationship(game, rel, source_id=a.pk, target_id=b.pk, labels=["sworn nemesis of x", "friend of x"])
    assert kept.labels == ["sworn nemesis of x", "friend of x"] and kept.version == 2


@pytest.mark.django_db
def test_progress_counts_against_targets(game):
    game.targets = parse_targets({"target_objective": "4", "target_reasoning": "", "target_factual": "0"})
    game.save()
    assert game.targets == {"objective": 4}
    items = {p.kind: p for p in progress_for([game])[game.pk]}
    assert items["objective"].count == 1 and items["objective"].target == 4 and items["objective"].percent == 25
    assert "factual" not in items
    with pytest.raises(ValueError, match="whole number"):
        parse_targets({"target_objective": "many"})
    assert Character.objects.filter(game=game).count() == 3
