"""Fixtures of the web-app tests: games built with the ORM, users with roles, and a real headless
Chromium driven by Playwright (session-scoped browser, one context per test)."""
from __future__ import annotations

import pytest

from annotate.models import Character, Clue, EvidenceSpan, Game, Membership, Option, Question
from casebook.interchange import ClueKind, QuestionKind

PASSWORD = "correct horse battery"

SCRIPT_ZH = "我叫𠮷田，是【林管家】的远房侄子。那天晚上十点，我看见管家拿着一把钥匙走进书房。𠮷祥如意！\n第二段：花园里有脚印。"


def make_game(slug: str = "test-game", *, questions: int = 3, script_chars: int = 0, characters: int = 3,
              spans: int = 0) -> Game:
    """A game with characters, scripts, clues and questions, built straight through the ORM."""
    game = Game.objects.create(slug=slug, title=f"测试剧本 {slug}", language="zh", truth_text="真相：管家在十点下毒。",
                               public_clue_text="公开线索：书房的门是锁着的。")
    chars = []
    for i in range(characters):
        script = SCRIPT_ZH
        if script_chars:
            script = (SCRIPT_ZH * (script_chars // len(SCRIPT_ZH) + 1))[:script_chars]
        chars.append(Character(game=game, name=f"角色{i}·甲" if i else "林管家", position=i, script=script, playable=i < 3))
    Character.objects.bulk_create(chars)
    chars = list(game.characters.all())
    Clue.objects.create(game=game, key="public-1", kind=ClueKind.TEXT, title="书房", text="书房里有一杯冷掉的茶。")
    Clue.objects.create(game=game, key="img/1.png", kind=ClueKind.IMAGE, title="平面图", ocr_text="负三层平面图")
    kinds = [QuestionKind.OBJECTIVE, QuestionKind.REASONING, QuestionKind.RELATIONS, QuestionKind.LONG_SCRIPT]
    qs = [Question(game=game, kind=kinds[i % len(kinds)], stem=f"问题{i}：谁是凶手？", answer="a", position=i,
                   perspective=chars[i % len(chars)] if chars else None, raw=f"问题{i}？a. 甲 b. 乙") for i in range(questions)]
    Question.objects.bulk_create(qs, batch_size=500)
    opts = [Option(question=q, position=j, text=f"选项{j}", is_correct=j == 0) for q in game.questions.all() for j in range(4)]
    Option.objects.bulk_create(opts, batch_size=2000)
    if chars and spans:
        EvidenceSpan.objects.bulk_create([
            EvidenceSpan(game=game, document="script", character=chars[0], start=i, end=i + 2,
                         quote=chars[0].script[i:i + 2]) for i in range(spans)
        ])
    return game


@pytest.fixture
def game(db) -> Game:
    return make_game()


@pytest.fixture
def annotator(db, django_user_model, game):
    user = django_user_model.objects.create_user("anna", password=PASSWORD)
    Membership.objects.create(user=user, game=game, role=Membership.Role.ANNOTATOR)
    return user


@pytest.fixture
def outsider(db, django_user_model):
    return django_user_model.objects.create_user("otto", password=PASSWORD)


@pytest.fixture
def anna_client(client, annotator):
    client.force_login(annotator)
    return client


