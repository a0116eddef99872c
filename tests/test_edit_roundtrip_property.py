"""Property: any sequence of edits through the services survives export → import → export.

Hypothesis draws edit sequences (questions, options, relationships, chain nodes, spans, character
flags); after applying them, the interchange round trip (loader → builder → loader) gives back the
edited state, and a WellPlay export, re-imported with --replace and exported again, is byte for
byte the same. Each example runs inside a savepoint that is rolled back, so examples are independent.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate import models as m
from annotate.builder import build_game
from annotate.loader import load_game
from annotate.services.chains import save_node
from annotate.services.questions import QuestionInput, save_question
from annotate.services.relationships import save_relationship
from annotate.services.spans import create_span
from exporters.service import read_dataset, write_dataset
from tests.test_builder_loader import make_game

TEXT = st.text(alphabet="谁凶手林苏周伯茶馆九点债务下毒 abcXYZ？", min_size=1, max_size=12).map(str.strip).filter(bool)
EDITS = st.one_of(
    st.tuples(st.just("stem"), st.integers(0, 2), TEXT),
    st.tuples(st.just("options"), st.integers(0, 2), st.lists(TEXT, min_size=2, max_size=4, unique=True),
              st.integers(0, 3)),
    st.tuples(st.just("relationship"), st.sampled_from(["stranger to x", "wife of x", "lover of x", "creditor of x"])),
    st.tuples(st.just("node"), TEXT),
    st.tuples(st.just("span"), st.integers(0, 20), st.integers(1, 4), st.integers(0, 2)),
    st.tuples(st.just("flags"), st.sampled_from(["林掌柜", "苏·晚晴", "周伯"]), st.booleans(), st.booleans()),
)


def _question_input(q: m.Question, **changes) -> QuestionInput:
    data = QuestionInput(
        kind=q.kind, stem=q.stem, options=[(o.text, o.is_correct) for o in q.options.all()],
        perspective_id=q.perspective_id, chain_node_id=q.chain_node_id,
        evidence_ids=[e.pk for e in q.evidence.all()], status=q.status,
    )
    for key, value in changes.items():
        setattr(data, key, value)
    return data


def apply_edit(row: m.Game, edit: tuple) -> None:
    """One edit through the same service an editor view calls."""
    questions = list(row.questions.order_by("position"))
    what = edit[0]
    if what == "stem":
        q = questions[edit[1]]
        save_question(row, q, _question_input(q, stem=edit[2]), expected_version=q.version)
    elif what == "options":
        q, texts, correct = questions[edit[1]], edit[2], edit[3] % len(edit[2])
        options = [(t, i == correct) for i, t in enumerate(texts)]
        save_question(row, q, _question_input(q, options=options), expected_version=q.version)
    elif what == "relationship":
        rel = row.relationships.first()
        save_relationship(row, rel, source_id=rel.source_id, target_id=rel.target_id, labels=[edit[1]],
                          evidence_ids=[e.pk for e in rel.evidence.all()], status=rel.status)
    elif what == "node":
        node = m.ChainNode.objects.get(chain__game=row, key="c3")
        save_node(node.chain, node, kind=node.kind, text=edit[1], parent_ids=[p.pk for p in node.parents.all()],
                  span_ids=[e.pk for e in node.evidence.all()], knowledge=node.knowledge)
    elif what == "span":
        owner = row.characters.get(name="林掌柜")
        start = min(edit[1], len(owner.script) - 1)
        end = min(start + edit[2], len(owner.script))
        span = create_span(row, document="script", owner_id=owner.pk, start=start, end=end,
                           quote=owner.script[start:end])
        q = questions[edit[3]]
        ids = sorted({*[e.pk for e in q.evidence.all()], span.pk})
        save_question(row, q, _question_input(q, evidence_ids=ids), expected_version=q.version)
    elif what == "flags":
        character = row.characters.get(name=edit[1])
        character.is_victim, character.is_murderer = edit[2], edit[3]
        character.save(update_fields=["is_victim", "is_murderer"])


def _comparable(game):
    """The exported game minus what legitimately differs between two stored copies."""
    game.slug = "x"
    game.report = []
    for q in game.questions:
        q.provenance = {k: v for k, v in q.provenance.items() if k != "author"}
    return game


@pytest.mark.django_db
@settings(max_examples=6, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDITS, min_size=1, max_size=6))
def test_edits_survive_export_import_export(edits, tmp_path_factory):
    with transaction.atomic():
        row = build_game(make_game()).game
        for edit in edits:
            apply_edit(row, edit)
        edited = load_game(row)
        assert [q.stem for q in edited.questions] == list(row.questions.order_by("position").values_list("stem", flat=True))
        assert set(edited.victims) == set(row.characters.filter(is_victim=True).values_list("name", flat=True))

        copy = load_game(row)
        copy.slug = "copy"
        assert _comparable(load_game(build_game(copy).game)) == _comparable(load_game(row))

        first = tmp_path_factory.mktemp("first")
        write_dataset("wellplay", [edited], first)
        for game in read_dataset("wellplay", first).games:
            build_game(game, replace=True)
        second = tmp_path_factory.mktemp("second")
        write_dataset("wellplay", [load_game(row)], second)
        assert _files(first) == _files(second)
        transaction.set_rollback(True)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
