"""The Casebook format: export → import into an empty database → export is byte-identical.

Run on the demo game (after annotating it: spans with labels and states, a free span, a rejected
generated option, reviewed and rejected items, a played session with annotations, a synthesis
run) and on every real anchor game; the documents validate against the committed JSON Schema;
damaged folders are refused with a clear message and nothing changes.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotate import models as m
from casebook.models import AuditEntry
from exporters.casebook_format.schema import GAME_SCHEMA, schema_problems
from playlogs.models import Session, TurnAnnotation
from synthesis.models import SynthesisRun

pytestmark = pytest.mark.django_db

ZH = "demo-pine-wind-teahouse-zh"
DOMAIN = ("characters", "clues", "spans", "relationships", "chains", "questions", "options", "key_statements")


@pytest.fixture
def media(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    settings.MEDIA_ROOT = tmp_path / "data" / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return tmp_path


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def export(out: Path, *args: str) -> dict[str, bytes]:
    call_command("export", "--format", "casebook", "--out", str(out), *args, verbosity=0)
    return tree(out)


def table_counts() -> dict[str, int]:
    return {
        "games": m.Game.objects.count(), "characters": m.Character.objects.count(), "clues": m.Clue.objects.count(),
        "spans": m.EvidenceSpan.objects.count(), "relationships": m.Relationship.objects.count(),
        "chains": m.ReasoningChain.objects.count(), "nodes": m.ChainNode.objects.count(),
        "questions": m.Question.objects.count(), "options": m.Option.objects.count(),
        "key_statements": m.KeyStatement.objects.count(), "sessions": Session.objects.count(),
        "annotations": TurnAnnotation.objects.count(), "synthesis": SynthesisRun.objects.count(),
        "audit": AuditEntry.objects.count(),
    }


def wipe(*, users: bool) -> None:
    """Back to an empty database (the games and, optionally, every account)."""
    SynthesisRun.objects.all().delete()
    m.Game.objects.all().delete()
    if users:
        get_user_model().objects.all().delete()
    assert m.EvidenceSpan.objects.count() == 0 and Session.objects.count() == 0


def annotate_demo() -> None:
    """Work a team would have done on the demo game, touching every part of the document."""
    User = get_user_model()
    alice = User.objects.create_user("alice", password="x")
    bob = User.objects.create_user("bob", password="x")
    game = m.Game.objects.get(source_id=ZH)
    char = game.characters.exclude(script="").first()
    free = m.EvidenceSpan.objects.create(game=game, document="script", character=char, start=0, end=4,
                                         quote=char.script[:4], label="alibi", state="draft", created_by=alice)
    # The same quote twice, cited by different items: ids must follow the citations, not creation order.
    twin = m.EvidenceSpan.objects.create(game=game, document="script", character=char, start=0, end=4,
                                         quote=char.script[:4], label="alibi", state="draft", created_by=bob)
    q = game.questions.order_by("position").first()
    q.evidence.add(twin)
    q.status, q.author, q.reviewer, q.reject_reason = "rejected", alice, bob, "stem gives the answer away"
    q.save()
    m.Option.objects.create(question=q, position=9, text="a generated wrong answer", origin="llm",
                            model_name="gpt-test", review="rejected")
    rel = game.relationships.first()
    rel.status, rel.author, rel.reviewer = "submitted", bob, alice
    rel.save()
    AuditEntry.objects.create(game=game, user=alice, item_type="question", item_id=q.pk, action="approve",
                                before={}, after={})
    session = Session.objects.create(game=game, title="table 1", session_type="jubensha", source_format="jsonl",
                                     source_name="t1.jsonl", extra={"note": "茶社"})
    from playlogs.models import Player, Turn

    p1 = Player.objects.create(session=session, name="P1", character=char, true_role="murderer", position=0)
    turn = Turn.objects.create(session=session, index=0, speaker=p1, speaker_label="P1", text="我怀疑掌柜。",
                               phase="discussion", visible_to=[], timestamp=123, extra={"thought": "hm"})
    TurnAnnotation.objects.create(game=game, turn=turn, annotator=alice, source="human",
                                  triplets=[["P1", "suspect", "P2"]], face="neutral", tone="anger",
                                  suspicions={"P1": ["P2"]}, status="approved", author=alice, reviewer=bob)
    run = SynthesisRun.objects.create(game=game, user=bob, state="done", settings={"players": 4},
                                      outputs={"outline": {"title": "x"}}, critic_rounds=[{"score": 3}],
                                      checks=[{"ok": True}], usage={"prompt_tokens": 10})
    from review.models import Comment, LabelJudgement, ValidationAnswer

    Comment.objects.create(game=game, item_type="question", item_id=q.pk, author=bob, text="答案太明显了")
    Comment.objects.create(game=game, item_type="relationship", item_id=rel.pk, author=None, text="validator", system=True)
    ValidationAnswer.objects.create(question=q, validator=bob, letters="b", key="a", agrees=False)
    ValidationAnswer.objects.create(question=q, validator=alice, letters="a", key="a", agrees=True)
    LabelJudgement.objects.create(game=game, annotator=alice, source=rel.source, target=rel.target, labels=["lover of x"])
    run.records.create(stage="outline", messages=[{"role": "user", "content": "write"}], model="m", params={},
                       reply="{}", parsed={}, problems=[], usage={"prompt_tokens": 10}, cost=0.5, seconds=1.25)
    assert free.pk


def test_demo_round_trip_is_byte_identical_with_and_without_accounts(media):
    call_command("load_demo", verbosity=0)
    annotate_demo()
    first = export(media / "a")
    before = table_counts()
    document = json.loads(first[f"{ZH}/game.json"])
    assert schema_problems(document) == []
    # The document carries what the interchange model alone would drop.
    q1 = document["questions"][0]
    assert q1["review"] == {"status": "rejected", "author": "alice", "reviewer": "bob",
                            "reject_reason": "stem gives the answer away", "approved_at": q1["review"]["approved_at"]}
    assert q1["review"]["approved_at"].startswith("20")
    assert {"text": "a generated wrong answer", "correct": False, "origin": "llm", "model": "gpt-test",
            "review": "rejected"} in q1["options"]
    drafts = [s for s in document["spans"] if s["state"] == "draft"]
    assert [s["created_by"] for s in drafts] == ["alice", "bob"] and drafts[1]["id"] in q1["evidence"]
    assert document["sessions"][0]["turns"][0]["annotations"][0]["annotator"] == "alice"
    assert document["synthesis"][0]["records"][0]["cost"] == 0.5
    workflow = document["workflow"]
    assert [(c["item"], c["author"], c["system"]) for c in workflow["comments"]] == [("q1", "bob", False),
                                                                                     ("r1", "", True)]
    assert [(v["validator"], v["agrees"]) for v in workflow["validations"]] == [("alice", True), ("bob", False)]
    assert workflow["label_judgements"][0]["labels"] == ["lover of x"]
    assert document["audit"]["by_action"]["approve"] == 1 and document["audit"]["by_user"]["alice"] == 1
    manifest = json.loads(first[f"{ZH}/manifest.json"])
    assert manifest["counts"]["questions"] == len(document["questions"]) == 60
    assert manifest["counts"]["images"] == len({c["image"] for c in document["clues"] if c["image"]}) >= 3
    for entry in manifest["files"]:
        assert hashlib.sha256(first[f"{ZH}/{entry['path']}"]).hexdigest() == entry["sha256"]

    # Into an empty database where the same people have accounts: authors link to them.
    wipe(users=False)
    call_command("import_dataset", "--format", "casebook", str(media / "a"), verbosity=0)
    assert m.Question.objects.get(game__source_id=ZH, position=0).author.username == "alice"
    assert export(media / "b") == first
    # Into an empty database with no accounts at all: names are kept as recorded and come back.
    wipe(users=True)
    call_command("import_dataset", "--format", "casebook", str(media / "b"), verbosity=0)
    assert m.Question.objects.get(game__source_id=ZH, position=0).author is None
    from review.models import ValidationAnswer

    assert ValidationAnswer.objects.count() == 0  # no validator has an account: kept in the import record
    assert export(media / "c") == first
    counts = table_counts()
    assert {k: counts[k] for k in counts if k != "audit"} == {k: before[k] for k in before if k != "audit"}


def test_export_again_is_identical_and_reimport_is_unchanged(media):
    call_command("load_demo", verbosity=0)
    first = export(media / "a")
    assert export(media / "a") == first  # an earlier export is replaced by the same bytes
    before = table_counts()
    call_command("import_dataset", "--format", "casebook", str(media / "a"), verbosity=0)
    assert table_counts() == before  # same content: "unchanged", nothing written


def corrupt_cases():
    def flip_byte(folder: Path) -> None:
        path = folder / "game.json"
        path.write_text(path.read_text(encoding="utf-8").replace("松风茶社", "松风荼社", 1), encoding="utf-8")

    def future_version(folder: Path) -> None:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        manifest["version"] = 99
        (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    def broken_manifest(folder: Path) -> None:
        (folder / "manifest.json").write_text('{"format": "casebook-game", "version": 1, "files": [', encoding="utf-8")

    def extra_file(folder: Path) -> None:
        (folder / "images" / "smuggled.png").write_bytes(b"\x89PNG")

    def missing_image(folder: Path) -> None:
        next((folder / "images").iterdir()).unlink()

    def schema_breach(folder: Path) -> None:
        """A document edited consistently (manifest re-hashed) but no longer of the schema."""
        data = json.loads((folder / "game.json").read_text(encoding="utf-8"))
        data["questions"][0]["kind"] = "riddle"
        body = (json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode()
        (folder / "game.json").write_bytes(body)
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        for entry in manifest["files"]:
            if entry["path"] == "game.json":
                entry["sha256"], entry["bytes"] = hashlib.sha256(body).hexdigest(), len(body)
        (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    return [
        (flip_byte, "game.json: checksum mismatch"),
        (future_version, "format version 99 is not supported"),
        (broken_manifest, "manifest.json is not valid JSON"),
        (extra_file, "files not in the manifest: images/smuggled.png"),
        (missing_image, "files in the manifest are missing"),
        (schema_breach, "does not match the schema: at $.questions[0].kind"),
    ]


@pytest.mark.parametrize(("damage", "message"), corrupt_cases(), ids=lambda v: getattr(v, "__name__", ""))
def test_damaged_folders_are_refused_and_nothing_changes(media, damage, message):
    call_command("load_demo", verbosity=0)
    export(media / "a")
    m.Game.objects.filter(source_id=ZH).delete()  # the zh game would be re-created
    shutil.copytree(media / "a", media / "bad")
    damage(media / "bad" / ZH)
    before = table_counts()
    with pytest.raises(CommandError, match="not imported") as refused:
        call_command("import_dataset", "--format", "casebook", str(media / "bad"), verbosity=0)
    assert message in str(refused.value)
    assert table_counts() == before


def test_an_existing_game_with_other_content_fails_the_whole_import(media):
    call_command("load_demo", verbosity=0)
    annotate_demo()
    first = export(media / "a")
    zh = m.Game.objects.get(source_id=ZH)
    zh.title = "改过的标题"
    zh.save()
    question_ids = list(zh.questions.order_by("position").values_list("pk", flat=True))
    m.Game.objects.exclude(pk=zh.pk).delete()  # the other game would be created …
    before = table_counts()
    with pytest.raises(CommandError, match="exists"):
        call_command("import_dataset", "--format", "casebook", str(media / "a"), verbosity=0)
    assert table_counts() == before  # … but is rolled back with the refused one
    call_command("import_dataset", "--format", "casebook", str(media / "a"), "--replace", verbosity=0)
    assert m.Game.objects.get(pk=zh.pk).title == "松风茶社"  # replaced in place: same row, same question ids
    assert list(zh.questions.order_by("position").values_list("pk", flat=True)) == question_ids
    assert export(media / "b") == first  # and equal to the document again


def test_schema_file_is_a_valid_schema_and_rejects_bad_documents():
    from jsonschema import Draft202012Validator

    schema = json.loads(GAME_SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema_problems({"format": "casebook-game", "version": 2})  # wrong version, missing parts
    assert any("is a required property" in p for p in schema_problems({"format": "casebook-game", "version": 1}))


def test_anchor_round_trips_are_byte_identical(media, wellplay_anchor, whodunitbench_anchor):
    call_command("import_dataset", "--format", "wellplay", str(wellplay_anchor), verbosity=0)
    call_command("import_dataset", "--format", "whodunitbench", str(whodunitbench_anchor), verbosity=0)
    first = export(media / "a")
    before = table_counts()
    games = {name.split("/")[0] for name in first if "/" in name}
    assert len(games) == before["games"] >= 6
    for name, body in first.items():
        if name.endswith("/game.json"):
            assert schema_problems(json.loads(body)) == [], name
    wipe(users=True)
    call_command("import_dataset", "--format", "casebook", str(media / "a"), verbosity=0)
    assert export(media / "b") == first
    after = table_counts()
    assert {k: after[k] for k in DOMAIN if k in after} == {k: before[k] for k in DOMAIN if k in before}


def ids_of_game(game: m.Game) -> dict[str, list[int]]:
    """Every id of the game's rows that a --replace must keep (Label Studio links and audit entries point at them)."""
    from review.models import Comment, LabelJudgement, ValidationAnswer

    def ids(qs) -> list[int]:
        return sorted(qs.values_list("pk", flat=True))

    return {
        "characters": ids(game.characters), "clues": ids(game.clues), "spans": ids(game.spans),
        "questions": ids(game.questions), "chains": ids(m.ReasoningChain.objects.filter(game=game)),
        "comments": ids(Comment.objects.filter(game=game)),
        "validations": ids(ValidationAnswer.objects.filter(question__game=game)),
        "label_judgements": ids(LabelJudgement.objects.filter(game=game)),
    }


def test_replace_from_the_games_own_export_keeps_every_identity(media):

    call_command("load_demo", verbosity=0)
    annotate_demo()
    first = export(media / "a")
    zh = m.Game.objects.get(source_id=ZH)
    before = ids_of_game(zh)
    assert all(before[k] for k in ("spans", "comments", "validations", "label_judgements")), before
    span = zh.spans.order_by("pk").first()
    audit = AuditEntry.objects.create(game=zh, item_type="span", item_id=span.pk, action="edit")
    zh.title = "改过的标题"
    zh.save()
    call_command("import_dataset", "--format", "casebook", str(media / "a"), "--replace", verbosity=0)
    assert ids_of_game(zh) == before  # no row of the game was re-created
    audit.refresh_from_db()
    assert m.EvidenceSpan.objects.get(pk=audit.item_id).quote == span.quote  # the entry still names that span
    audit.delete()
    assert export(media / "b") == first


def test_replace_updates_changed_workflow_rows_in_place_and_drops_only_what_is_gone(media):
    from review.models import Comment, LabelJudgement, ValidationAnswer

    call_command("load_demo", verbosity=0)
    annotate_demo()
    first = export(media / "a")
    zh = m.Game.objects.get(source_id=ZH)
    answer = ValidationAnswer.objects.filter(question__game=zh).first()
    label = LabelJudgement.objects.filter(game=zh).first()
    kept_comment = Comment.objects.filter(game=zh, system=False).first()
    ValidationAnswer.objects.filter(pk=answer.pk).update(letters="zz", agrees=True)
    LabelJudgement.objects.filter(pk=label.pk).update(labels=["something-else"])
    extra = Comment.objects.create(game=zh, item_type=kept_comment.item_type, item_id=kept_comment.item_id,
                                   author=None, text="not in the document")
    call_command("import_dataset", "--format", "casebook", str(media / "a"), "--replace", verbosity=0)
    answer_after = ValidationAnswer.objects.get(pk=answer.pk)  # same row, document's values
    assert (answer_after.letters, answer_after.agrees) == (answer.letters, answer.agrees)
    assert LabelJudgement.objects.get(pk=label.pk).labels == label.labels
    assert Comment.objects.filter(pk=kept_comment.pk).exists()
    assert not Comment.objects.filter(pk=extra.pk).exists()
    assert export(media / "b") == first
