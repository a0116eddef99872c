"""The synthesis pipeline end to end over HTTP against the scripted OpenAI-compatible test server."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotate import models as m
from casebook.interchange import Origin, Status
from casebook.llm import LLMClient, LLMSettings
from casebook.openai_test_server import OpenAITestServer
from synthesis.models import StageRecord, SynthesisRun
from synthesis.pipeline import SynthesisSettings, rerun_stage, run_synthesis
from synthesis.replies import parse_reply

from . import scripted

pytestmark = pytest.mark.django_db


def client_for(server: OpenAITestServer) -> LLMClient:
    return LLMClient(LLMSettings(api_key="test", base_url=server.base_url, model="scripted", attempts=2))


def synthesize(overrides=None, **options):
    settings = SynthesisSettings(**{"players": 3, "language": "en", "critic_rounds": 1, "per_script": 1,
                                    "per_image": 1, **options})
    with OpenAITestServer(responder=scripted.responder(overrides)) as server:
        run = run_synthesis(settings, client=client_for(server))
        return run, server


def test_good_replies_become_a_reviewable_draft_game():
    user = get_user_model().objects.create_user("author", password="x")
    settings = SynthesisSettings(players=3, language="en", critic_rounds=1, per_script=1, per_image=1)
    steps = []
    with OpenAITestServer(responder=scripted.responder()) as server:
        run = run_synthesis(settings, client=client_for(server), user=user, progress=lambda *a: steps.append(a))
    assert run.state == SynthesisRun.State.DONE, run.failure
    game = run.game
    assert game.origin == Origin.SYNTHETIC and game.title == "Foxglove Manor"
    assert m.Membership.objects.get(game=game, user=user).role == m.Membership.Role.MANAGER
    chars = {c.name: c for c in game.characters.all()}
    assert [n for n, c in chars.items() if c.is_murderer] == ["Basil Hume"]
    assert chars["Lord Wynn"].is_victim and not chars["Lord Wynn"].playable
    assert game.kills.get().killer.name == "Basil Hume"
    # Bracketed picture descriptions became image-clue placeholders, typed by the clue stage.
    images = {c.key: c for c in game.clues.filter(kind="image")}
    assert images["img-1"].text.startswith("a torn train ticket") and images["img-1"].image_kind == "text_rich"
    assert images["img-2"].image_kind == "media_rich" and not images["img-2"].image
    # Direct clues are evidence spans found in their sources; levels follow the parents.
    chain = game.chains.get()
    assert chain.status == Status.DRAFT
    nodes = {n.key: n for n in chain.nodes.all()}
    d1 = nodes["d1"].evidence.get()
    assert d1.character.name == "Basil Hume" and chars["Basil Hume"].script[d1.start:d1.end] == d1.quote
    assert nodes["d2"].evidence.get().clue.key == "public-2"
    assert {k: n.level for k, n in nodes.items() if n.kind != "direct"} == {"i1": 1, "i2": 2, "c1": 3}
    # Every question is a draft; kinds of WhodunitBench; multi-hop linked to its node with its level.
    questions = list(game.questions.all())
    assert {q.status for q in questions} == {Status.DRAFT}
    assert sorted({q.kind for q in questions}) == ["long_script", "media_image", "multi_step", "open_ended", "text_image"]
    c1 = next(q for q in questions if q.kind == "multi_step" and q.chain_node.key == "c1")
    assert c1.level == 3 and c1.answer == "b" and c1.options.get(is_correct=True).text == "Basil Hume"
    assert all(o.origin == "llm" and o.model_name == "scripted" for o in c1.options.all())
    assert game.truth_motive.startswith("He was to be dismissed")
    # Provenance: one record per request with prompt, reply and usage; critic scores per round.
    records = StageRecord.objects.filter(run=run)
    expected = 1 + 3 + (1 + 1 + 3) + 1 + (1 + 3 + 2 + 1 + 1)
    assert records.count() == server.count == expected
    assert all(r.ok and r.reply and r.messages and r.usage.get("completion_tokens") for r in records)
    assert run.usage["requests"] == expected and run.usage["prompt_tokens"] > 0
    assert run.critic_rounds[0]["scores"]["logical_consistency"] == 8
    assert game.extra["synthesis"]["critic"][0]["round"] == 1
    assert [c for c in run.checks if c["severity"] == "error"] == []
    assert steps[-1][1] == steps[-1][2]  # progress ends at its total


def test_truncated_json_is_repaired_and_the_repair_recorded():
    broken_pool = json.dumps({**scripted.POOL, "conclusions": scripted.POOL["conclusions"] * 2})
    cut = broken_pool[: broken_pool.rindex('{"id": "c1"')] + '{"id": "c1", "goal": "murd'  # max_tokens hit
    run, _ = synthesize({"pool": cut})
    assert run.state == SynthesisRun.State.DONE, run.failure
    record = StageRecord.objects.get(run=run, stage="pool")
    assert any("cut off" in p for p in record.problems)
    assert run.game.chains.get().nodes.filter(kind="conclusion").count() == 1


def test_parse_reply_repairs_only_what_is_safe():
    assert parse_reply('{"a": [1, 2,], }').value == {"a": [1, 2]}
    assert parse_reply('```json\n{"a": 1}\n```').value == {"a": 1}
    assert parse_reply('{"a": [1, 2], "b": "unfinish').value == {"a": [1, 2]}
    with pytest.raises(ValueError):
        parse_reply("I cannot write that story.")


def test_wrong_schema_fails_the_stage_with_the_reply_and_writes_no_game():
    games_before = m.Game.objects.count()
    run, server = synthesize({"clues": {"clue_list": ["no such field"]}})
    assert run.state == SynthesisRun.State.FAILED and run.game is None
    assert run.failure["stage"] == "clues" and "$.public_clues" in run.failure["message"]
    assert "clue_list" in run.failure["reply"]
    assert m.Game.objects.count() == games_before
    failed = StageRecord.objects.get(run=run, ok=False)
    assert failed.stage == "clues" and "clue_list" in failed.reply
    assert "outline" in run.outputs and "qa" not in run.outputs  # what was done is kept on the run


def test_checks_flag_planted_defects():
    two_murderers = {"name": "Cora Wynn", "back": scripted.SCRIPTS["Cora Wynn"], "m": 1}
    outline = {**scripted.OUTLINE, "timeline": [*scripted.OUTLINE["timeline"],
                                                {"time": "9:30 PM", "character": "Doctor Nobody", "action": "arrives"}]}
    clues = {**scripted.CLUES, "public_clues": ["Basil Hume was seen in the greenhouse.", "A quiet night."]}
    pool = json.loads(json.dumps(scripted.POOL))
    pool["direct"][2]["quote"] = "a sentence that is in no script"
    pool["inferred"][1]["hops"] = 5
    multi = {"questions": [scripted.mcq("Who?", ["Ada", "Ada", "Basil", "Cora"], "c", node="i2"),
                           scripted.mcq("Where?", ["a", "b", "c", "d"], "z", node="i1"),
                           scripted.mcq("What?", ["w", "x", "y", "z"], "a", node="i9")]}

    def characters(request, n):
        return json.dumps(two_murderers if "## Character to write\nCora Wynn" in request["messages"][1]["content"]
                          else scripted.default_reply("character", request))

    overrides = {"outline": outline, "refine": outline, "clues": clues, "pool": pool, "multi_hop": multi}
    settings = SynthesisSettings(players=3, language="en", critic_rounds=0, per_script=1, per_image=1)
    base = scripted.responder(overrides)
    with OpenAITestServer(responder=lambda r, n: characters(r, n) if scripted.stage_of(r) == "character" else base(r, n)) as s:
        run = run_synthesis(settings, client=client_for(s))
    found = {(c["check"], c["severity"]) for c in run.checks}
    assert ("one_murderer", "error") in found
    assert ("timeline_character", "error") in found
    assert ("clue_names_murderer", "error") in found
    assert ("direct_source", "warning") in found
    assert ("hop_count", "warning") in found
    assert ("distinct_options", "error") in found
    assert ("one_key", "error") in found
    assert ("multi_hop_level", "error") in found
    assert run.game.extra["synthesis"]["checks"] == run.checks  # shown with the game


def test_rerun_clues_keeps_the_game_and_the_rest():
    run, _ = synthesize()
    game_pk, scripts = run.game.pk, dict(run.game.characters.values_list("name", "script"))
    new_clues = {**scripted.CLUES, "public_clues": ["The study window was latched from inside."]}
    with OpenAITestServer(responder=scripted.responder({"clues": new_clues})) as server:
        run = rerun_stage(run, "clues", client=client_for(server))
        assert server.count == 1  # only the clue stage was asked again
    run.refresh_from_db()
    assert run.game.pk == game_pk and m.Game.objects.filter(origin=Origin.SYNTHETIC).count() == 1
    assert list(run.game.clues.filter(kind="text").values_list("text", flat=True)) == [
        "The study window was latched from inside."]
    assert dict(run.game.characters.values_list("name", "script")) == scripts
    assert run.game.questions.count() > 0
    with pytest.raises(ValueError, match="new run"):
        rerun_stage(run, "outline")


def test_command_against_a_keyless_local_server(capsys):
    with OpenAITestServer(responder=scripted.responder()) as server:
        call_command("synthesize", "--players", "3", "--critic-rounds", "0", "--per-script", "1", "--per-image", "1",
                     "--base-url", server.base_url, "--model", "tiny", verbosity=1)
    out = capsys.readouterr().out
    assert "draft game 'Foxglove Manor'" in out and "checks: 0 error(s)" in out
    with OpenAITestServer(responder=scripted.responder({"outline": "Once upon a time…"})) as server, \
            pytest.raises(CommandError, match="stage outline failed"):
        call_command("synthesize", "--players", "3", "--base-url", server.base_url, verbosity=0)


def test_without_an_endpoint_the_command_says_what_to_set(settings):
    settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL = "", ""
    with pytest.raises(CommandError, match="OPENAI_API_KEY"):
        call_command("synthesize", verbosity=0)
    with pytest.raises(CommandError, match="players"):
        call_command("synthesize", "--players", "1", "--base-url", "http://127.0.0.1:9/v1", verbosity=0)


def test_a_draft_is_reviewed_and_exported_like_any_other_game(tmp_path, django_user_model):
    from annotate.services.states import transition

    writer = django_user_model.objects.create_user("writer", password="x")
    reviewer = django_user_model.objects.create_user("reviewer", password="x")
    run, _ = synthesize(critic_rounds=0)
    game = run.game
    m.Membership.objects.create(user=writer, game=game, role="annotator")
    m.Membership.objects.create(user=reviewer, game=game, role="reviewer")
    out = tmp_path / "nothing-approved"
    call_command("export", "--format", "whodunitbench", "--out", str(out), "--game", game.slug, verbosity=0)
    drafted = next(out.rglob("env_p_all.json")).read_text()
    assert "Who killed Lord Wynn?" not in drafted  # drafts never reach an export on their own
    question = game.questions.get(kind="multi_step", chain_node__key="c1")
    m.Question.objects.filter(pk=question.pk).update(author=writer)
    question.refresh_from_db()
    transition(question, "submit", writer)
    transition(question, "approve", reviewer)
    out = tmp_path / "approved"
    call_command("export", "--format", "whodunitbench", "--out", str(out), "--game", game.slug, verbosity=0)
    exported = json.loads(next(out.rglob("env_p_all.json")).read_text())
    assert "Who killed Lord Wynn?" in json.dumps(exported, ensure_ascii=False)


def test_chinese_quotes_are_found_across_width_and_spacing():
    from synthesis.assemble import answer_index, locate
    from synthesis.prompts import build

    script = "我是管家。晚上８点50分，我在书房给老爷倒了白兰地（Brandy）。"
    start, end = locate(script, "晚上8点50分, 我在书房给老爷倒了白兰地")
    assert script[start:end] == "晚上８点50分，我在书房给老爷倒了白兰地"
    assert locate(script, "我在厨房") is None
    assert answer_index("B.", ["a. 书房", "b. 厨房"]) == 1 and answer_index("厨房", ["书房", "厨房"]) == 1
    messages = build("character", "zh", [("outline", {"title": "松风"}), ("character", "许可")])
    assert "第一人称" in messages[0]["content"] and "## 要写的角色\n许可" in messages[1]["content"]


def test_bracketed_pictures_in_both_languages():
    from synthesis.stages import bracketed_pictures

    found = bracketed_pictures([{"name": "许可", "back": "我烧掉了收据【药铺收据：生草乌三十克】。然后[a floor plan of the inn]走了。"}])
    assert [(p["index"], p["owner"], p["description"]) for p in found] == [
        (1, "许可", "药铺收据：生草乌三十克"), (2, "许可", "a floor plan of the inn")]


def test_rerun_qa_keeps_reviewed_questions_and_replaces_the_rest(django_user_model):
    from annotate.services.states import transition

    writer = django_user_model.objects.create_user("writer", password="x")
    reviewer = django_user_model.objects.create_user("reviewer", password="x")
    run, _ = synthesize(critic_rounds=0)
    game = run.game
    m.Membership.objects.create(user=writer, game=game, role="annotator")
    m.Membership.objects.create(user=reviewer, game=game, role="reviewer")
    approved = game.questions.get(kind="long_script", perspective__name="Basil Hume")
    m.Question.objects.filter(pk=approved.pk).update(author=writer)
    approved.refresh_from_db()
    transition(approved, "submit", writer)
    transition(approved, "approve", reviewer)
    untouched = game.questions.get(kind="long_script", perspective__name="Ada Crane")
    new_long = {"questions": [scripted.mcq("Regenerated: what did the gardener water?",
                                           ["Roses", "Tulips", "Lilies", "Ferns"], "a", quote="I watered the roses")]}
    with OpenAITestServer(responder=scripted.responder({"long_script": new_long})) as server:
        run = rerun_stage(run, "qa", client=client_for(server))
    assert run.state == SynthesisRun.State.DONE, run.failure
    approved.refresh_from_db()
    assert approved.status == Status.APPROVED and approved.stem == "When did the butler pour the brandy?"
    stems = list(game.questions.filter(kind="long_script").values_list("stem", flat=True))
    # three regenerated questions: two in the untouched places, one after the kept question
    assert stems.count("Regenerated: what did the gardener water?") == 3 and len(stems) == 4
    assert not m.Question.objects.filter(pk=untouched.pk, stem=untouched.stem).exists()
    assert any(c["check"] == "rerun" and "kept 1 question" in c["message"] for c in run.checks)
