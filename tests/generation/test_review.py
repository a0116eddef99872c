"""Accept / edit / reject of generated options: review states, answer letters, raw and version."""
from __future__ import annotations

import pytest

from annotate.loader import load_game
from generation.distractors import generate_for_question
from generation.review import ReviewError, pending_options, review_option

from .conftest import bare_copy


@pytest.fixture
def generated(sin_zh):
    q = bare_copy(sin_zh.questions.filter(kind="reasoning", sub_type="why").first())
    generate_for_question(q, 3)
    return q


def test_accept_edit_reject(sin_zh, generated):
    q = generated
    options = list(q.options.order_by("position"))
    assert [o.review for o in options] == ["accepted", "pending", "pending", "pending"]
    assert pending_options(sin_zh).count() == 3
    q.refresh_from_db()
    version = q.version

    review_option(options[1], "accept")
    review_option(options[2], "edit", text="  为了 报复  ")
    review_option(options[3], "reject")
    states = list(q.options.order_by("position").values_list("review", "text"))
    assert states[1][0] == "accepted" and states[2] == ("edited", "为了 报复") and states[3][0] == "rejected"
    q.refresh_from_db()
    assert q.version == version + 3 and q.raw == "" and q.answer == "a"
    assert pending_options(sin_zh).count() == 0
    # each review is in the question's history, with the options before and after
    from review.history import history
    rows = history(sin_zh, "question", q.pk)
    assert [r.entry.action for r in rows][:3] == ["option-reject", "option-edit", "option-accept"]
    edit = rows[1].entry
    assert edit.after["_option"]["text"] == "为了 报复" and [o["text"] for o in edit.after["options"]][2] == "为了 报复"
    assert [o["text"] for o in edit.before["options"]][2] != "为了 报复"

    # rejected options stay in the database but not in what the loader hands to exporters
    loaded = next(x for x in load_game(sin_zh).questions if x.stem == q.stem and len(x.options) == 3)
    assert [o.text for o in loaded.options][2] == "为了 报复"


def test_rejecting_before_the_answer_shifts_its_letter(sin_zh):
    q = bare_copy(sin_zh.questions.filter(kind="objective").first())
    generate_for_question(q, 3)
    correct = q.options.get(is_correct=True)
    correct.position = 10  # the answer after the distractors: letter d
    correct.save()
    review_option(q.options.filter(is_correct=False).order_by("position").first(), "reject")
    q.refresh_from_db()
    assert q.answer == "c"


def test_bad_review_actions_are_explained(generated):
    options = list(generated.options.order_by("position"))
    with pytest.raises(ReviewError, match="empty"):
        review_option(options[1], "edit", text="   ")
    with pytest.raises(ReviewError, match="repeats another option"):
        review_option(options[1], "edit", text=options[0].text)
    with pytest.raises(ReviewError, match="correct option"):
        review_option(options[0], "reject")
    with pytest.raises(ReviewError, match="unknown action"):
        review_option(options[1], "delete")
    assert options[1].__class__.objects.get(pk=options[1].pk).review == "pending"
