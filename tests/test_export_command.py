"""`manage.py export`: validation first, generic JSONL/CSV, drafts, determinism, atomic writes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate import models as m
from annotate.builder import build_game
from casebook import interchange as ix
from exporters.generic.reader import read_csv, read_jsonl
from exporters.validate import validate_game
from tests.test_builder_loader import make_game


def test_validator_lists_every_problem_of_a_bad_question():
    game = make_game()
    game.questions = [
        ix.Question(kind="objective", stem="谁？", answer="e", perspective="林掌柜",
                    options=[ix.Option("甲"), ix.Option("甲"), ix.Option("")]),
        ix.Question(kind="reasoning", stem="为什么？", answer="", perspective="林掌柜",
                    options=[ix.Option("a"), ix.Option("b")]),
        ix.Question(kind="relations", stem="关系？", answer="a", perspective="无名氏",
                    options=[ix.Option("x", correct=True), ix.Option("y")]),
    ]
    messages = [p.message for p in validate_game(game, "wellplay") if p.severity == "error"]
    assert any("option c is empty" in msg for msg in messages)
    assert any("duplicate options" in msg for msg in messages)
    assert any("out of range" in msg for msg in messages)
    assert any("no correct answer" in msg for msg in messages)
    assert any("'无名氏' is not a playable character" in msg for msg in messages)


def test_published_irregularities_are_warnings_not_errors():
    game = make_game()
    q = game.questions[0]
    q.options = [ix.Option("甲", correct=True), ix.Option("甲")]
    q.provenance = {"file": "final_result/苏·晚晴.csv", "line": 3}
    assert [p.severity for p in validate_game(game, "wellplay")] == ["warning"] * len(game.questions[:1])
    q.provenance["edited"] = True
    assert "error" in [p.severity for p in validate_game(game, "wellplay")]


@pytest.mark.django_db
def test_jsonl_and_csv_exports_carry_everything_and_are_deterministic(tmp_path: Path):
    build_game(make_game())
    for fmt in ("jsonl", "csv"):
        call_command("export", format=fmt, out=tmp_path / f"{fmt}1", verbosity=0)
        call_command("export", format=fmt, out=tmp_path / f"{fmt}2", verbosity=0)
    first = (tmp_path / "jsonl1" / "questions.jsonl").read_bytes()
    assert first == (tmp_path / "jsonl2" / "questions.jsonl").read_bytes()
    assert (tmp_path / "csv1" / "questions.csv").read_bytes() == (tmp_path / "csv2" / "questions.csv").read_bytes()
    records = read_jsonl(tmp_path / "jsonl1" / "questions.jsonl")
    assert len(records) == 3
    rec = records[0]
    assert rec["stem"] == "谁杀了周伯？0" and rec["language"] == "zh" and rec["benchmark"] == "wellplay"
    assert rec["options"] == ["林掌柜", "苏晚晴"] and rec["answer"] == "a" and rec["answer_texts"] == ["林掌柜"]
    assert rec["weight"] == 10 and rec["perspective"] == "苏·晚晴"
    assert rec["evidence"][0]["quote"] == "九点" and rec["premises"] == []
    assert read_csv(tmp_path / "csv1" / "questions.csv")[0]["options"] == ["林掌柜", "苏晚晴"]


@pytest.mark.django_db
def test_only_approved_items_unless_drafts_are_included(tmp_path: Path):
    built = build_game(make_game())
    m.Question.objects.filter(game=built.game, stem__endswith="1").update(status=ix.Status.DRAFT)
    call_command("export", format="jsonl", out=tmp_path / "a", verbosity=0)
    call_command("export", format="jsonl", out=tmp_path / "b", include_drafts=True, verbosity=0)
    assert len(read_jsonl(tmp_path / "a" / "questions.jsonl")) == 2
    assert len(read_jsonl(tmp_path / "b" / "questions.jsonl")) == 3


@pytest.mark.django_db
def test_invalid_data_is_refused_with_the_list_and_nothing_written(tmp_path: Path, capsys):
    built = build_game(make_game())
    question = m.Question.objects.filter(game=built.game).first()
    question.options.update(is_correct=False)
    m.Question.objects.filter(pk=question.pk).update(answer="")
    out = tmp_path / "refused"
    with pytest.raises(CommandError, match="export refused"):
        call_command("export", format="jsonl", out=out, verbosity=0)
    assert "no correct answer" in capsys.readouterr().err
    assert not out.exists()
    call_command("export", format="jsonl", out=out, force=True, verbosity=0)
    assert "no correct answer" in (out / "export_problems.txt").read_text(encoding="utf-8")
    assert len(read_jsonl(out / "questions.jsonl")) == 3


@pytest.mark.django_db
def test_unknown_game_is_a_clear_error(tmp_path: Path):
    with pytest.raises(CommandError, match="no game 'nope'"):
        call_command("export", format="jsonl", out=tmp_path, games=["nope"], verbosity=0)


@pytest.mark.django_db
def test_import_of_a_missing_path_is_a_clear_error(tmp_path: Path):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("import_dataset", str(tmp_path / "missing"), format="wellplay", verbosity=0)


def test_jsonl_reader_names_the_bad_line(tmp_path: Path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"a": 1}) + "\n{broken\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        read_jsonl(path)


@pytest.mark.django_db
def test_jsonl_provenance_records_who_wrote_and_who_approved(tmp_path: Path, django_user_model):
    from django.db import transaction

    from annotate.services.states import transition

    author = django_user_model.objects.create_user("writer", password="x")
    reviewer = django_user_model.objects.create_user("checker", password="x")
    built = build_game(make_game(n_questions=1))
    m.Membership.objects.create(user=author, game=built.game, role="annotator")
    m.Membership.objects.create(user=reviewer, game=built.game, role="reviewer")
    question = m.Question.objects.get(game=built.game)
    m.Question.objects.filter(pk=question.pk).update(status=ix.Status.SUBMITTED, author=author)
    question.refresh_from_db()
    with transaction.atomic():
        transition(question, "approve", reviewer)
    call_command("export", format="jsonl", out=tmp_path, verbosity=0)
    (record,) = read_jsonl(tmp_path / "questions.jsonl")
    assert record["status"] == "approved"
    assert record["provenance"]["author"] == "writer"
    assert record["provenance"]["approved_by"] == "checker"
    assert record["provenance"]["approved_at"].startswith("20")


@pytest.mark.django_db
def test_export_as_a_user_requires_the_manager_role(tmp_path: Path, django_user_model):
    built = build_game(make_game(n_questions=1))
    annotator = django_user_model.objects.create_user("anna", password="x")
    m.Membership.objects.create(user=annotator, game=built.game, role="annotator")
    with pytest.raises(CommandError, match="manager"):
        call_command("export", format="jsonl", out=tmp_path / "a", as_user="anna", verbosity=0)
    assert not (tmp_path / "a").exists()
    with pytest.raises(CommandError, match="not a member"):
        django_user_model.objects.create_user("stranger", password="x")
        call_command("export", format="jsonl", out=tmp_path / "b", as_user="stranger", verbosity=0)
    m.Membership.objects.filter(user=annotator).update(role="manager")
    call_command("export", format="jsonl", out=tmp_path / "c", as_user="anna", verbosity=0)
    assert len(read_jsonl(tmp_path / "c" / "questions.jsonl")) == 1


@pytest.mark.django_db
def test_inferential_questions_export_premises_and_conclusion(tmp_path: Path):
    game = make_game(n_questions=0)
    game.questions = [ix.Question(kind="inferential", stem="林掌柜为何在场？", answer="他就是凶手",
                                  extra={"premises": ["九点有闷响", "收据在后院"]})]
    build_game(game)
    call_command("export", format="jsonl", out=tmp_path, verbosity=0)
    (record,) = read_jsonl(tmp_path / "questions.jsonl")
    assert (record["kind"], record["premises"], record["answer"]) == (
        "inferential", ["九点有闷响", "收据在后院"], "他就是凶手")
