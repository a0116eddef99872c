"""Annotation data keeps its identity through replace imports and rebuilds (issue 13, items 3, 4, 6, 7)."""
from __future__ import annotations

import pytest

from annotate import models as m
from annotate.builder import build_game
from annotate.loader import load_game
from annotate.services.questions import QuestionInput, save_question
from casebook import interchange as ix
from exporters.validate import validate_game
from exporters.wellplay.writer import character_json
from review.models import ValidationAnswer
from tests.test_builder_loader import make_game


def _edit_stem(question: m.Question, stem: str, user=None) -> m.Question:
    """An annotator's edit through the question service (options and links kept)."""
    options = [(o.text, o.is_correct) for o in question.options.all()]
    data = QuestionInput(kind=question.kind, stem=stem, options=options, perspective_id=question.perspective_id,
                         chain_node_id=question.chain_node_id, evidence_ids=[e.pk for e in question.evidence.all()],
                         status=question.status)
    return save_question(question.game, question, data, expected_version=question.version, user=user)


@pytest.mark.django_db
def test_replace_updates_rows_in_place_and_moves_spans_with_their_quote(django_user_model):
    author = django_user_model.objects.create_user("author")
    fixer = django_user_model.objects.create_user("fixer")
    row = build_game(make_game(), user=author).game
    question = row.questions.order_by("position").first()
    ids = {
        "questions": sorted(row.questions.values_list("pk", flat=True)),
        "options": sorted(m.Option.objects.filter(question__game=row).values_list("pk", flat=True)),
        "relationships": sorted(row.relationships.values_list("pk", flat=True)),
        "nodes": sorted(m.ChainNode.objects.filter(chain__game=row).values_list("pk", flat=True)),
        "characters": sorted(row.characters.values_list("pk", flat=True)),
        "spans": sorted(row.spans.values_list("pk", flat=True)),
    }
    ValidationAnswer.objects.create(question=question, validator=author, letters="a", key="a", agrees=True)
    m.Draft.objects.create(user=author, game=row, key=f"question:{question.pk}", data={"stem": "half typed"})

    corrected = load_game(row)
    script = corrected.characters[0].script
    corrected.characters[0].script = "（序）" + script  # a re-split adds text before every span
    result = build_game(corrected, replace=True, user=fixer)

    assert result.status == "replaced" and result.game.pk == row.pk
    assert ids == {
        "questions": sorted(row.questions.values_list("pk", flat=True)),
        "options": sorted(m.Option.objects.filter(question__game=row).values_list("pk", flat=True)),
        "relationships": sorted(row.relationships.values_list("pk", flat=True)),
        "nodes": sorted(m.ChainNode.objects.filter(chain__game=row).values_list("pk", flat=True)),
        "characters": sorted(row.characters.values_list("pk", flat=True)),
        "spans": sorted(row.spans.values_list("pk", flat=True)),
    }
    assert set(row.questions.values_list("author__username", flat=True)) == {"author"}
    assert ValidationAnswer.objects.filter(question=question).exists()
    assert m.Draft.objects.filter(key=f"question:{question.pk}").exists()
    new_script = m.Character.objects.get(game=row, name="林掌柜").script
    for span in row.spans.all():
        assert new_script[span.start:span.end] == span.quote == "九点"
        assert span.start == script.index("九点") + len("（序）")
    for q in corrected.questions:  # everything else comes back exactly as it was
        q.evidence = [ix.Span(e.document, e.owner, e.start + 3, e.end + 3, e.quote, e.label) for e in q.evidence]
    assert load_game(row).questions == corrected.questions


@pytest.mark.django_db
def test_a_span_whose_quote_is_gone_is_listed_and_points_nowhere():
    row = build_game(make_game(n_questions=1)).game
    corrected = load_game(row)
    corrected.characters[0].script = corrected.characters[0].script.replace("九点", "十点")
    build_game(corrected, replace=True)
    row.refresh_from_db()
    assert {(s.start, s.end, s.quote) for s in row.spans.all()} == {(0, 0, "九点")}
    listed = [p for p in row.import_report if "no longer matches" in p["message"]]
    assert len(listed) == row.spans.count() and all("span editor" in p["action"] for p in listed)


@pytest.mark.django_db
def test_replace_works_after_an_edit_and_warns_with_counts(django_user_model):
    """Item 4: the stored hash predates the edit, so it must not make --replace a no-op."""
    annotator = django_user_model.objects.create_user("ann")
    source = make_game()
    row = build_game(source).game
    question = row.questions.order_by("position").first()
    _edit_stem(question, "改过的题目？", annotator)

    assert build_game(make_game()).status == "unchanged"  # without --replace the edit is kept
    assert m.Question.objects.get(pk=question.pk).stem == "改过的题目？"

    result = build_game(make_game(), replace=True)
    assert result.status == "replaced"
    assert m.Question.objects.get(pk=question.pk).stem == source.questions[0].stem
    warnings = [p for p in result.problems if "overwrote" in p.message]
    assert len(warnings) == 1 and "1 questions" in warnings[0].message and warnings[0].severity == "warning"


@pytest.mark.django_db
def test_victim_edits_reach_the_loader_and_the_wellplay_writer():
    """Item 6: the characters' flags are the one source of truth for victims."""
    source = make_game()
    source.characters[0].extra = {"wellplay": {"victims": ["周伯"]}}  # the published own list
    row = build_game(source).game
    assert "victims" not in row.extra
    m.Character.objects.filter(game=row, name="周伯").update(is_victim=False, victim_position=None)
    m.Character.objects.filter(game=row, name="苏·晚晴").update(is_victim=True)

    game = load_game(row)
    assert game.victims == ["苏·晚晴"]
    assert character_json(game, game.characters[0])["victims"] == ["苏·晚晴"]


def test_a_point_of_view_victims_list_is_kept_while_it_names_the_same_victims():
    game = make_game()
    game.characters[0].extra = {"wellplay": {"victims": ["我的丈夫"]}}
    assert character_json(game, game.characters[0])["victims"] == ["我的丈夫"]
    game.characters[0].extra = {"wellplay": {"victims": ["苏·晚晴"]}}  # names another character: stale
    assert character_json(game, game.characters[0])["victims"] == ["周伯"]


@pytest.mark.django_db
def test_edited_published_questions_are_held_to_the_strict_rules():
    """Item 7: a published question with duplicate options is tolerated only while unedited."""
    source = make_game(n_questions=1)
    source.questions[0].options.append(ix.Option("林掌柜"))
    source.questions[0].provenance = {"file": "Sin/final_result/苏·晚晴.csv"}
    row = build_game(source).game

    def duplicate_problems() -> list[str]:
        return [p.severity for p in validate_game(load_game(row), "wellplay") if "duplicate options" in p.message]

    assert duplicate_problems() == ["warning"]
    edited = _edit_stem(row.questions.get(), "谁杀了周伯？（改）")
    assert edited.provenance["edited"] is True and edited.provenance["file"].endswith(".csv")
    assert duplicate_problems() == ["error"]


@pytest.mark.django_db
def test_a_question_on_the_second_chain_stays_on_the_second_chain(django_user_model):
    """Item 5: node keys are unique per game, so a bare key cites one node."""
    from annotate.services.chains import save_node

    row = build_game(make_game(n_questions=0)).game
    span = row.spans.first()
    second = m.ReasoningChain.objects.create(game=row, goal="motive", position=1)
    direct = save_node(second, None, kind="direct", text="债务", span_ids=[span.pk])
    inferred = save_node(second, None, kind="conclusion", text="有动机", parent_ids=[direct.pk])  # chain one has c1
    keys = list(m.ChainNode.objects.filter(chain__game=row).values_list("key", flat=True))
    assert len(keys) == len(set(keys))
    question = save_question(row, None, QuestionInput(
        kind="multi_step", stem="他为什么动手？", options=[("债务", True), ("报复", False)], chain_node_id=inferred.pk,
    ))
    assert question.level == 1

    build_game(load_game(row), replace=True)
    assert m.Question.objects.get(pk=question.pk).chain_node_id == inferred.pk
    copy = load_game(row)
    copy.slug = "copy"  # the same content imported as another game
    fresh = build_game(copy).game
    copied = fresh.questions.get(stem="他为什么动手？")
    assert copied.chain_node.chain.position == 1 and copied.chain_node.text == "有动机"


@pytest.mark.django_db
def test_imported_pool_levels_reach_the_export_of_a_new_multi_step_question(whodunitbench_anchor, tmp_path):
    """Item 5: pool statements get parents from the k-step structure; a question on 2-step exports p-2."""
    import json

    from annotate.services.chains import chain_graph
    from exporters.whodunitbench.reader import read_whodunitbench
    from exporters.whodunitbench.writer import write_whodunitbench

    source = next(g for g in read_whodunitbench(whodunitbench_anchor).games if g.slug == "DI7MI_2")
    row = build_game(source).game
    pool = row.chains.get()
    nodes, parents, levels = chain_graph(pool)
    node = next(n for n in nodes if n.key == "2-step.2")
    assert levels[node.pk] == 2 and {p.key.split(".")[0] for p in node.parents.all()} == {"1-step"}
    m.ChainNode.objects.filter(chain=pool).update(level=None)  # levels now come from the links alone
    assert chain_graph(pool)[2][node.pk] == 2

    save_question(row, None, QuestionInput(
        kind="multi_step", stem="谁在说谎？", options=[("甲", True), ("乙", False)], chain_node_id=node.pk,
    ))
    write_whodunitbench([load_game(row)], tmp_path)
    written = json.loads((tmp_path / "Dataset" / "DI7MI_2" / "env_p_all.json").read_text(encoding="utf-8"))
    item = next(q for q in written["key_clues_questions"] if q["q"].startswith("谁在说谎？"))
    assert item["source"] == "p-2"
