"""Issue 13: edit → rebuild from a corrected split → export → re-import → export loses nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from annotate import models as m
from annotate.builder import build_game
from annotate.loader import load_game
from annotate.services.questions import QuestionInput, save_question
from annotate.services.relationships import save_relationship
from annotate.services.spans import create_span
from casebook.models import AuditEntry
from exporters.service import read_dataset, write_dataset
from ingest.build import rebuild_from_split
from ingest.pipeline import IngestOptions, run_ingest
from ingest.split import SplitDecision
from review.models import Comment, LabelJudgement, ValidationAnswer

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_edit_rebuild_reimport_export_cycle_loses_nothing(en_combined_pdf, en_scripts, django_user_model, tmp_path):
    path, _ = en_combined_pdf
    author = django_user_model.objects.create_user("author", password="pw-12345678")
    corrector = django_user_model.objects.create_user("corrector", password="pw-12345678")
    game = m.Game.objects.get(slug=run_ingest([path], IngestOptions("Sin", "en"), user=author).game_slug)
    names = list(en_scripts)
    last = game.characters.get(name=names[3])
    quote = last.script[40:70]
    span = create_span(game, document="script", owner_id=last.pk, start=40, end=70, quote=quote, user=author)
    question = save_question(game, None, QuestionInput(
        kind="objective", stem=f"What does {names[3]} say?", options=[(quote, True), ("Nothing", False)],
        perspective_id=last.pk, evidence_ids=[span.pk], status="approved",
    ), user=author)
    first = game.characters.get(name=names[0])
    relationship = save_relationship(game, None, source_id=first.pk, target_id=last.pk, labels=["stranger to x"],
                                     evidence_ids=[span.pk], user=author)
    ValidationAnswer.objects.create(question=question, validator=author, letters="a", key="a", agrees=True)
    Comment.objects.create(game=game, item_type="question", item_id=question.pk, author=author, text="check the quote")
    LabelJudgement.objects.create(game=game, annotator=author, source=first, target=last, labels=["stranger to x"])
    audit_before = AuditEntry.objects.filter(game=game).count()

    # the corrector moves the start of the last script 10 characters earlier: every offset shifts
    decisions = [SplitDecision(**d) for d in game.extra["ingest"]["split"]]
    moved = next(d for d in decisions if d.section == names[3])
    assert moved.start_offset >= 10
    moved.start_offset -= 10
    rebuild_from_split(game, decisions, user=corrector)

    question.refresh_from_db()
    span.refresh_from_db()
    script = m.Character.objects.get(pk=last.pk).script
    assert script[span.start:span.end] == quote and span.start != 40
    assert (question.author, question.status, question.evidence.get().pk) == (author, "approved", span.pk)
    assert m.Relationship.objects.get(pk=relationship.pk).evidence.get().pk == span.pk
    assert ValidationAnswer.objects.filter(question=question).count() == 1
    assert Comment.objects.filter(item_type="question", item_id=question.pk).count() == 1
    assert LabelJudgement.objects.filter(source=first, target=last).count() == 1  # characters keep their ids
    assert AuditEntry.objects.filter(game=game).count() >= audit_before
    assert not [p for p in game.import_report if "no longer matches" in p["message"]]

    exported = tmp_path / "first"
    write_dataset("wellplay", [load_game(game)], exported)
    for read in read_dataset("wellplay", exported).games:
        read.origin = game.origin  # a replace finds games of its own origin only (never another origin silently)
        assert build_game(read, replace=True, user=corrector).game.pk == game.pk
    again = tmp_path / "again"
    write_dataset("wellplay", [load_game(game)], again)
    assert _files(exported) == _files(again)
    assert m.Question.objects.get(pk=question.pk).stem == f"What does {names[3]} say?"
    assert ValidationAnswer.objects.filter(question=question).count() == 1
