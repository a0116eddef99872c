"""Golden tests of the ``repository`` scoring mode: the WellPlay repository's extraction
(``json_format`` / ``repair_json``), matching (``Game.evaluate``) and aggregation
(``save_evaluate_history`` + ``save_all_evaluate``), on replies of every shape it handles.

Each expected value was derived by hand from the repository's code (alickzhu/PLAYER, HEAD), rule by
rule as documented in :mod:`evaluation.repository`.
"""
from __future__ import annotations

import pytest

from evaluation.parsing import parse_answer
from evaluation.repository import is_right_repository, json_format, repository_answer
from evaluation.scoring import ResultRow, aggregate

GOLDEN = [
    # (reply, extracted answer, why)
    ('{"reason": "x", "answer": "b"}', "b", "plain JSON (eval succeeds)"),
    ("{'reason': 'x', 'answer': 'B'}", "b", "Python literal, lowercased"),
    ("{'answer': 'a', 'reason': None}", "a", "Python literal with None"),
    ('{"reason": "x", "answer": "c", "sure": true}', "c", "eval fails on true, repair parses the JSON"),
    ('Sure! {"reason": "x", "answer": "c"} hope this helps', "c", "prose around: repair from the last {"),
    ('{"reason": "because", "answer": "d"', "d", "truncated: a } is appended"),
    ('{"reason": "because the butler', None, "truncated before the answer: only '{' + '}' parses → {}"),
    ('answer: {"answer": "c"', "c", "text before a truncated object"),
    ('{"reason": "line1\nline2", "answer": "a"}', "a", "raw newline inside a string: newlines removed"),
    ('```json\n{"reason": "r", "answer": "b"}\n```', "b", "fenced JSON: repair finds it"),
    ("```python\n{'answer': 'a'}\n```", None, "fenced Python literal: json.loads cannot read single quotes"),
    ('{"answer": "a"} {"answer": "b"}', "b", "two objects: the last { wins"),
    ('{"answer": "a", "detail": {"ok": true}}', None, "the inner object (last {) parses first and has no answer"),
    ('{"answer": "a", "detail": {"ok": 1}}', "a", "a Python literal evaluates whole"),
    ('{"A": [{"B": 2}, {"C": 3}]}', None, "evaluates to a dict without 'answer'"),
    ('{"Answer": "a"}', None, "key must be exactly 'answer'"),
    ('{"答案": "a"}', None, "key must be exactly 'answer'"),
    ('{"answer": ["a"]}', None, "a list has no .lower()"),
    ('{"answer": 2}', None, "a number has no .lower()"),
    ('[{"answer": "a"}]', None, "a list is not indexable by 'answer'"),
    ('{"answer": ""}', "", "an explicit empty answer"),
    ('{"answer": " b"}', " b", "not stripped"),
    ("The answer is C", None, "no object at all → {}"),
    ("C", None, "a bare letter is not read"),
    ("A man killed him.", None, "prose"),
    ("", None, "empty reply"),
]


@pytest.mark.parametrize(("reply", "expected", "why"), GOLDEN, ids=[g[2] for g in GOLDEN])
def test_extraction(reply: str, expected: str | None, why: str) -> None:
    assert repository_answer(reply) == expected, why


@pytest.mark.parametrize(
    ("answer", "truth", "multi", "right"),
    [
        ("b", "b", False, True),
        ("c", "b", False, False),
        ("a", "ac", False, True),  # truth "ac" on a single-choice row accepts a, c and ac
        ("c", "ac", False, True),
        ("b", "bb", False, True),  # the typo truth "bb"
        ("", "b", False, True),  # the empty answer is a substring of every truth (repository bug)
        (" b", "b", False, False),  # no stripping
        ("a", "", False, False),  # missing truth
        ("a,b", "b", True, True),  # pick two: truth contained in the answer
        ("a,b,c,d", "d", True, True),  # every letter is always right
        ("a,c", "b", True, False),
        ("a,c", "ac", True, False),  # order-sensitive
        (None, "b", False, False),  # nothing extracted
    ],
)
def test_matching(answer, truth, multi, right) -> None:
    assert is_right_repository(answer, truth, multi) is right


def test_newline_removal_is_everywhere() -> None:
    # json_format removes every newline before anything else, even inside values
    assert json_format('{"answer": "a\nb"}') == {"answer": "ab"}
    assert json_format("not json") == {}


def test_strict_parser_differs_where_the_issue_says() -> None:
    """The cases of issue #14 item 2: strict no longer reads them as letters."""
    assert parse_answer("A man killed him with a knife.", 4).letters is None
    assert parse_answer("…so it was Li. A tough call.", 4).letters is None
    assert parse_answer('{"A":[{"B":2},{"C":3}]}', 4).letters is None
    assert parse_answer("A\nC", 4, multi=True).letters == "ac"  # pick two on two lines keeps both
    # raw newlines in a JSON string: the repository repairs them, strict does not read them
    assert parse_answer('{"reason": "x\ny", "answer": "a"}', 4).letters is None
    assert repository_answer('{"reason": "x\ny", "answer": "a"}') == "a"


def _row(game: str, run: int, category: str, weight: int, right: int) -> ResultRow:
    return ResultRow(run=run, game=game, question_id=f"{game}#{category}{weight}{right}", category=category,
                     weight=weight, truth="a", right={"strict": float(right), "repository": float(right)})


def test_aggregation_per_file_then_mean() -> None:
    """Game g1: 1 objective (right) + 1 relations (wrong) = 10/12; game g2: 4 reasoning rows, 1 right = 5/20.

    Repository: mean over files (g1, g2) = (10/12 + 5/20) / 2; strict pools the run: 15/32.
    """
    rows = [_row("g1", 0, "objective", 10, 1), _row("g1", 0, "relations", 2, 0)]
    rows += [_row("g2", 0, "reasoning", 5, r) for r in (1, 0, 0, 0)]
    summary = aggregate(rows, 1, ["objective", "reasoning", "relations"])
    assert summary["overall"]["repository"]["weighted"] == pytest.approx((10 / 12 + 5 / 20) / 2)
    assert summary["overall"]["strict"]["weighted"] == pytest.approx(15 / 32)
    # category accuracy: mean over the files that have the category (pandas skips NaN)
    assert summary["by_category"]["reasoning"]["repository"] == pytest.approx(0.25)
    assert "per file" in summary["scoring"]["repository"]["aggregation"]
    assert summary["scoring"]["repository"]["aliases"] == ["compatible"]


def test_failed_rows_are_never_scored() -> None:
    rows = [_row("g", 0, "objective", 10, 1),
            ResultRow(run=0, game="g", question_id="g#2", category="objective", weight=10, truth="a", reply=None,
                      status="failed", failure="context")]
    summary = aggregate(rows, 1, ["objective"])
    assert summary["by_category"]["objective"]["strict"] == 1.0
    assert summary["by_category"]["objective"]["n"] == 1
    assert summary["outcomes"] == {"answered": 1, "unparseable": 0, "failed": 1, "failed_by_reason": {"context": 1}}
