"""Fixtures of the review-workflow tests: a small bilingual game built through the real builder,
the real WellPlay anchor game, one user per role, and a real headless Chromium (Playwright)."""
from __future__ import annotations

import pytest

from annotate.builder import build_game
from annotate.models import Game, Membership, Question
from casebook import interchange as ix
from casebook.interchange import QuestionKind, Status

PASSWORD = "review pass 2026"
ROLES = {"anna": "annotator", "bob": "annotator", "rita": "reviewer", "rex": "reviewer", "mia": "manager"}


def small_game(slug: str = "manor") -> ix.Game:
    """Three characters, a relationship, a chain and four MCQs (Chinese and English text)."""
    chars = [ix.Character("林管家", script="我是管家。十点我在书房。"), ix.Character("王·小明", script="我是侄子。"),
             ix.Character("Alice Smith", script="I am the guest.")]
    questions = [
        ix.Question(kind=QuestionKind.OBJECTIVE, stem=f"问题{i}：谁在十点进了书房？", perspective="林管家",
                    options=[ix.Option("林管家", correct=True), ix.Option("王小明"), ix.Option("Alice Smith")],
                    answer="a", status=Status.DRAFT)
        for i in range(4)
    ]
    return ix.Game(
        slug=slug, title="庄园谜案 Manor", language="zh", characters=chars, questions=questions,
        relationships=[ix.Relationship("林管家", "王·小明", ["nephew"], status=Status.DRAFT)],
        chains=[ix.ReasoningChain(title="谁是凶手", nodes=[ix.ChainNode("n1", text="管家十点在书房")], status=Status.DRAFT)],
    )


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    """PBKDF2 costs ~0.5 s a user on this shared 2-core machine; tests need no real hashing."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def game(db) -> Game:
    return build_game(small_game()).game


@pytest.fixture
def users(db, django_user_model, game) -> dict:
    """anna, bob (annotators), rita, rex (reviewers), mia (manager), otto (outsider), root (superuser)."""
    out = {}
    for name, role in ROLES.items():
        out[name] = django_user_model.objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=out[name], game=game, role=role)
    out["otto"] = django_user_model.objects.create_user("otto", password=PASSWORD)
    out["root"] = django_user_model.objects.create_superuser("root", password=PASSWORD)
    return out


@pytest.fixture
def anna_question(game, users) -> Question:
    """A draft MCQ written by anna."""
    q = game.questions.order_by("position").first()
    q.author = users["anna"]
    q.save()
    return q


@pytest.fixture
def wellplay_game(db, wellplay_anchor) -> Game:
    """The real WellPlay game 罪恶 (Chinese, first published layout: it carries the relation files),
    read from the anchors and built into the DB: 44 approved questions, 28 relationships."""
    from exporters.wellplay.reader import read_game_dir

    game, _ = read_game_dir(wellplay_anchor / "legacy-195be0c" / "chinese" / "131-罪恶（4人封闭）", wellplay_anchor)
    return build_game(game).game




@pytest.fixture
def span_conflict(game):
    """A draft span of 林管家's script ("书房") that two Label Studio annotators labelled clue and
    place, flagged into the review queue the way a pull does."""
    from annotate.models import EvidenceSpan, SpanLabelConflict
    from annotate.services import states
    from casebook.interchange import SpanDocument

    butler = game.characters.get(name="林管家")
    at = butler.script.index("书房")
    span = EvidenceSpan.objects.create(game=game, document=SpanDocument.SCRIPT, character=butler, start=at, end=at + 2,
                                       quote="书房", label="clue", state="draft")
    conflict = SpanLabelConflict.objects.create(game=game, span=span, candidates=[
        {"who": "ann@ls", "label": "clue"}, {"who": "ben@ls", "label": "place"}])
    return states.flag_conflict(conflict, None, "ann@ls says clue, ben@ls says place")
