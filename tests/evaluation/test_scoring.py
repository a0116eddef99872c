"""Scoring rules (repository quirks vs strict) and the aggregation arithmetic."""
from __future__ import annotations

import math

import pytest

from casebook.interchange import Game, Option, Question
from evaluation.engine import Answer, Item, score_items
from evaluation.repository import is_right_repository
from evaluation.scoring import ResultRow, aggregate, is_right_strict, mean_std


@pytest.mark.parametrize(
    ("answer", "truth", "multi", "repository", "strict"),
    [
        ("b", "b", False, True, True),
        ("c", "b", False, False, False),
        # truth "ac" on a single-choice row: two accepted answers in the repo, both letters in strict mode
        ("a", "ac", False, True, False),
        ("c", "ac", False, True, False),
        ("ac", "ac", False, True, True),
        # truth "bb" (a typo for b)
        ("b", "bb", False, True, True),
        # an explicitly empty answer is a substring of every truth: right in repository mode (repo bug)
        ("", "b", False, True, False),
        # empty / missing truth: always wrong
        ("a", "", False, False, False),
        ("", "", False, False, False),
        # two-suspect questions (type b): truth is the culprit, right if contained in the answer
        ("a,b", "b", True, True, False),
        ("b", "b", True, True, True),
        ("a,c", "b", True, False, False),
        ("a,b,c,d", "d", True, True, False),
        # multi-letter truth is order-sensitive in the repo: "ac" is not a substring of "a,c"
        ("a,c", "ac", True, False, True),
        # unparseable reply
        (None, "b", False, False, False),
    ],
)
def test_rules(answer, truth, multi, repository, strict) -> None:
    letters = None if answer is None else "".join(sorted({c for c in answer if c.isalpha()}))
    assert is_right_repository(answer, truth, multi) is repository
    assert is_right_strict(letters, truth) is strict


def _game() -> Game:
    def q(kind: str, answer: str, multi: bool = False, who: str = "甲") -> Question:
        return Question(kind=kind, stem="谁？", options=[Option("甲"), Option("乙"), Option("丙"), Option("丁")],
                        answer=answer, multi=multi, perspective=who)

    return Game(slug="g", title="g", language="zh", questions=[
        q("objective", "b"), q("reasoning", "ac"), q("reasoning", "bb", who="乙"), q("reasoning", "b", True),
        q("relations", ""), q("relations", "a", who="乙"),
    ])


def test_score_items_with_the_quirks_of_hand_built_rows() -> None:
    game = _game()
    items = [Item(f"g#{i}", game, q, str(q.kind), [], character=q.perspective) for i, q in enumerate(game.questions)]
    replies = ['{"answer": ""}', "C", '{"answer": "b"}', '{"answer": "a,b"}', "A", "unsure"]
    rows = score_items([Answer(item, 0, reply) for item, reply in zip(items, replies, strict=True)])
    got = [(r.right["repository"], r.right["strict"]) for r in rows]
    # "C" is no JSON: the repository reads nothing from it (wrong), strict reads c (wrong: truth ac)
    assert got == [(1.0, 0.0), (0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 0.0), (0.0, 0.0)]
    assert [r.status for r in rows] == ["answered"] * 5 + ["unparseable"]
    assert rows[5].answer is None  # the unparseable reply is a wrong answer, not an error

    summary = aggregate(rows, 1, ["objective", "reasoning", "relations"])
    assert summary["by_category"]["objective"]["repository"] == 1.0
    assert summary["by_category"]["reasoning"]["strict"] == pytest.approx(1 / 3)
    assert summary["by_category"]["relations"]["repository"] == 0.0
    # weights 10/5/2: total 10 + 3*5 + 2*2 = 29; repository points 10 + 10 = 20 (one file); strict points 5
    assert summary["overall"]["repository"]["weighted"] == pytest.approx(20 / 29)
    assert summary["overall"]["strict"]["weighted"] == pytest.approx(5 / 29)
    assert summary["overall"]["strict"]["accuracy"] == pytest.approx(1 / 6)
    assert summary["by_character"]["g"]["乙"]["overall"]["strict"]["accuracy"] == pytest.approx(1 / 2)


def test_mean_and_sample_std_over_runs() -> None:
    rows = []
    for run, rights in enumerate([[1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0]]):
        for i, right in enumerate(rights):
            rows.append(ResultRow(run=run, game="g", question_id=f"q{i}", category="reasoning", weight=5, truth="a",
                                  right={"strict": float(right), "repository": float(right)}))
    summary = aggregate(rows, 3, ["reasoning"])
    assert summary["by_category"]["reasoning"]["strict"] == pytest.approx(0.5)
    assert summary["by_category"]["reasoning"]["std"]["strict"] == pytest.approx(0.25)  # stdev(.5,.75,.25)
    assert summary["overall"]["strict"]["accuracy_runs"] == [0.5, 0.75, 0.25]
    assert summary["runs"] == 3
    assert mean_std([0.5]) == (0.5, 0.0)
    mean, std = mean_std([None, float("nan")])
    assert mean is None and std is None
    assert not math.isnan(mean_std([0.1, 0.3])[1])
