"""The strict answer parser: JSON answer field or an unambiguous option letter, nothing else."""
from __future__ import annotations

import pytest

from evaluation.parsing import parse_answer

SINGLE = [
    ("B", "b"),
    ("b", "b"),
    ("B.", "b"),
    ("(C)", "c"),
    ("**C**", "c"),
    ("C. 被毒药毒死的", "c"),
    ("(B) he was stabbed", "b"),
    ("D：仇杀", "d"),
    ('{"reason": "王村长有作案时间", "answer": "b"}', "b"),
    ('{"reason": "...", "answer": "B"}', "b"),
    ("{'reason': '单引号的 Python 字典', 'answer': 'c'}", "c"),
    ('```json\n{"reason": "x", "answer": "d"}\n```', "d"),
    ('思考过程……\n最终输出：{"answer": "a"}', "a"),
    ('{"answer": ["b"]}', "b"),
]

MULTI = [
    ('{"reason": "两人都有动机", "answer": "a,b"}', "ab"),
    ('{"answer": "b, d"}', "bd"),
    ('{"answer": ["b", "d"]}', "bd"),
    ("A、C", "ac"),
    ("B, C", "bc"),
    ("A和C", "ac"),
    ("A\nC", "ac"),
    ("A and D.", "ad"),
]

UNPARSEABLE = [
    "",
    "   ",
    None,
    "我无法确定。",
    "I cannot determine who the killer is from the script.",
    '{"reason": "no answer key here"}',
    '{"Answer": "a"}',  # only the exact key
    '{"答案": "a"}',
    '{"choice": "a"}',
    '{"answer": "A man"}',
    '{"answer": "a"} and later {"answer": "b"}',  # two objects that disagree
    '{"id": "chatcmpl-broken", "choices": [ {"message": ',
    "The answer is C.",  # cue phrases are not read
    "选B",
    "A man killed him with a knife.",  # the English article is not option a
    "…so it was Li. A tough call.",
    '{"A": [{"B": 2}, {"C": 3}]}',
    "A, C",  # two letters for a single-choice question
]


@pytest.mark.parametrize(("reply", "expected"), SINGLE)
def test_single_answers(reply: str, expected: str) -> None:
    parsed = parse_answer(reply, n_options=4, multi=False)
    assert parsed.letters == expected, (reply, parsed)


@pytest.mark.parametrize(("reply", "expected"), MULTI)
def test_multi_answers(reply: str, expected: str) -> None:
    parsed = parse_answer(reply, n_options=4, multi=True)
    assert parsed.letters == expected, (reply, parsed)


@pytest.mark.parametrize("reply", UNPARSEABLE)
def test_unparseable_is_none_not_an_error(reply) -> None:
    assert parse_answer(reply, n_options=4).letters is None


def test_letters_beyond_the_options_do_not_count() -> None:
    assert parse_answer("E", n_options=4).letters is None
    assert parse_answer("E", n_options=5).letters == "e"
    assert parse_answer('{"answer": "e"}', n_options=4).letters is None


def test_explicit_empty_json_answer_is_kept_apart_from_unparseable() -> None:
    parsed = parse_answer('{"reason": "不确定", "answer": ""}', n_options=4)
    assert parsed.letters == "" and parsed.ok
