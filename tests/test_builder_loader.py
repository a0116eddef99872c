"""The builder writes an interchange Game to the DB; the loader reads back the same Game."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate import models as m
from annotate.builder import build_game
from annotate.loader import load_game
from casebook import interchange as ix

PNG_1PX = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa75\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82"
)


def make_game(n_questions: int = 3, slug: str = "茶馆疑案", language: str = "zh") -> ix.Game:
    script = "我是林掌柜。那晚九点，我在茶馆后院听见𠮷祥楼方向一声闷响。"
    start = script.index("九点")
    return ix.Game(
        slug=slug, title="茶馆疑案", language=language, origin=ix.Origin.SYNTHETIC,
        characters=[
            ix.Character(name="林掌柜", script=script, goals=["找出凶手"], is_murderer=True, aliases=["林老板"]),
            ix.Character(name="苏·晚晴", script="我是苏晚晴。", key_role=True),
            ix.Character(name="周伯", playable=False, is_victim=True),
        ],
        victims=["周伯"],
        kills=[ix.Kill("林老板", "周伯")],
        clues=[ix.Clue(key="img/1.png", kind="image", filename="1.png", data=PNG_1PX, media_type="image/png",
                       image_kind=ix.ImageKind.TEXT_RICH, ocr_text="收据")],
        relationships=[ix.Relationship("林掌柜", "苏•晚晴", ["creditor of x", "acquaintance of x"],
                                       evidence=[ix.Span("script", "林掌柜", start, start + 2, "九点")])],
        chains=[ix.ReasoningChain(goal="murderer", nodes=[
            ix.ChainNode("c1", text="九点有闷响", evidence=[ix.Span("script", "林掌柜", start, start + 2, "九点")]),
            ix.ChainNode("c2", text="收据", image_clue="img/1.png"),
            ix.ChainNode("c3", kind="inferred", text="林掌柜在场", parents=["c1", "c2"], knowledge="常识"),
        ])],
        key_statements=[ix.KeyStatement(owner="苏•晚晴", text="我看见他了", node="c1")],
        questions=[
            ix.Question(kind="objective", stem=f"谁杀了周伯？{i}", answer="a", perspective="苏·晚晴",
                        options=[ix.Option("林掌柜", correct=True), ix.Option("苏晚晴")], chain_node="c3",
                        evidence=[ix.Span("script", "林掌柜", start, start + 2, "九点")])
            for i in range(n_questions)
        ],
        truth=ix.TruthManual(text="动机：债务\n手法：下毒", motive="债务", method="下毒"),
        task_prompts={"civilian": "找出凶手", "murderer": "隐藏身份"},
        extra={"note": "kept"},
    )


@pytest.mark.django_db
def test_build_then_load_gives_back_the_same_game():
    game = make_game()
    result = build_game(game)
    assert result.status == "created"
    loaded = load_game(result.game)
    assert [c.name for c in loaded.characters] == ["林掌柜", "苏·晚晴", "周伯"]
    assert loaded.kills == [ix.Kill("林掌柜", "周伯")]  # alias resolved to the character
    assert loaded.relationships[0].target == "苏·晚晴"  # middle-dot variant folded
    assert loaded.relationships[0].evidence == game.relationships[0].evidence
    assert loaded.chains[0].nodes[2].parents == ["c1", "c2"]
    assert loaded.chains[0].nodes[1].image_clue == "img/1.png"
    assert loaded.key_statements == [ix.KeyStatement("苏•晚晴", "我看见他了", "c1")]
    assert loaded.clues[0].data == PNG_1PX
    assert loaded.questions[0].chain_node == "c3"
    assert loaded.questions[0].options[0].correct
    assert loaded.truth == game.truth and loaded.task_prompts == game.task_prompts
    assert loaded.extra == {"note": "kept"} and loaded.victims == ["周伯"]
    assert m.KeyStatement.objects.get().character.name == "苏·晚晴"


@pytest.mark.django_db
def test_reimport_is_idempotent_and_replace_keeps_the_game_row():
    first = build_game(make_game())
    assert build_game(make_game()).status == "unchanged"
    changed = make_game()
    changed.questions[0].stem = "改过的题目？"
    refused = build_game(changed)
    assert refused.status == "exists" and refused.problems[0].severity == "error"
    assert m.Question.objects.filter(stem="改过的题目？").count() == 0  # nothing overwritten
    replaced = build_game(changed, replace=True)
    assert replaced.status == "replaced" and replaced.game.pk == first.game.pk
    assert m.Question.objects.filter(game=first.game).count() == 3
    assert m.Question.objects.filter(stem="改过的题目？").count() == 1


@pytest.mark.django_db
def test_unknown_names_become_non_players_with_a_report_line():
    game = make_game()
    game.relationships.append(ix.Relationship("林掌柜", "神秘人", ["enemy of x"]))
    result = build_game(game)
    mystery = m.Character.objects.get(name="神秘人")
    assert not mystery.playable
    assert any("神秘人" in p.message and "non-player" in p.action for p in result.problems)
    assert any("神秘人" in p["message"] for p in result.game.import_report)


@pytest.mark.django_db
def test_counterparts_are_linked_both_ways():
    zh = make_game(slug="茶馆疑案")
    en = make_game(slug="Teahouse", language="en")
    zh.counterpart, en.counterpart = "Teahouse", "茶馆疑案"
    build_game(zh)
    build_game(en)
    g_zh, g_en = m.Game.objects.get(language="zh"), m.Game.objects.get(language="en")
    assert g_zh.counterpart == g_en and g_en.counterpart == g_zh


@pytest.mark.django_db
def test_load_costs_constant_queries_and_build_only_grows_by_bulk_batches():
    def count(n: int) -> tuple[int, int]:
        m.Game.objects.all().delete()
        with CaptureQueriesContext(connection) as build_ctx:
            result = build_game(make_game(n_questions=n))
        with CaptureQueriesContext(connection) as load_ctx:
            load_game(result.game)
        return len(build_ctx.captured_queries), len(load_ctx.captured_queries)

    (build_small, load_small), (build_large, load_large) = count(2), count(200)
    assert load_small == load_large
    # 100x the questions costs only a few more bulk-insert batches (SQLite caps parameters per query).
    assert build_large <= build_small + 10, (build_small, build_large)


@pytest.mark.django_db
def test_rejected_and_unreviewed_generated_options_stay_out_of_exports():
    game = make_game(n_questions=1)
    game.questions[0].options = [
        ix.Option("错的", origin=ix.OptionOrigin.LLM, review=ix.OptionReview.REJECTED),
        ix.Option("待审", origin=ix.OptionOrigin.LLM, review=ix.OptionReview.PENDING),
        ix.Option("林掌柜", correct=True),
    ]
    game.questions[0].answer = "c"
    game.questions[0].raw = "谁？a. 错的 b. 待审 c. 林掌柜"
    built = build_game(game)
    approved_only = load_game(built.game, statuses=(ix.Status.APPROVED,)).questions[0]
    assert [o.text for o in approved_only.options] == ["林掌柜"]
    assert approved_only.answer == "a" and approved_only.raw == ""
    with_drafts = load_game(built.game).questions[0]
    assert [o.text for o in with_drafts.options] == ["待审", "林掌柜"] and with_drafts.answer == "b"


@pytest.mark.django_db
def test_long_open_ended_answers_are_stored_whole():
    """WhodunitBench `reason` runs to 1,721 characters; PostgreSQL must not truncate or refuse it."""
    game = make_game(n_questions=0)
    method = "凶手先在茶里下了乌头碱，" * 200
    game.questions = [ix.Question(kind="open_ended", sub_type="method", stem="作案手法？", answer=method)]
    loaded = load_game(build_game(game).game)
    assert loaded.questions[0].answer == method and len(method) == 2400


def test_key_order_survives_packing_whatever_the_database_does_to_it():
    original = {"旅人": [60, 66], "唐•何塞": [68, 70], "p": [1, 59], "nested": [{"b": 1, "a": 2}]}
    packed = ix.pack_key_order(original)
    # PostgreSQL's jsonb hands objects back with their keys sorted (shorter first): simulate that.
    def shuffle(value):
        if isinstance(value, dict):
            return {k: shuffle(value[k]) for k in sorted(value, key=lambda k: (len(k), k))}
        return [shuffle(v) for v in value] if isinstance(value, list) else value
    restored = ix.unpack_key_order(shuffle(packed))
    assert list(restored) == ["旅人", "唐•何塞", "p", "nested"] and restored == original
    assert list(restored["nested"][0]) == ["b", "a"]
    assert ix.unpack_key_order({"z": 1, "a": 2}) == {"z": 1, "a": 2}  # edited in the app: left as is


@pytest.mark.django_db
def test_extra_dicts_come_back_in_their_published_key_order():
    game = make_game(n_questions=1)
    game.extra = {"whodunitbench": {"role_q": {"旅人": [60, 66], "p": [1, 59]}}}
    game.questions[0].extra = {"zeta": 1, "alpha": 2}
    loaded = load_game(build_game(game).game)
    assert list(loaded.extra["whodunitbench"]["role_q"]) == ["旅人", "p"]
    assert list(loaded.questions[0].extra) == ["zeta", "alpha"]
