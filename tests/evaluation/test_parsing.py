"""The lenient answer parser on a table of real-looking replies."""
from __future__ import annotations

import pytest

from evaluation.parsing import parse_answer

SINGLE = [
    ("B", "b"),
    ("b", "b"),
    ("B.", "b"),
    ("(C)", "c"),
    ("C. 被毒药毒死的", "c"),
    ("选B", "b"),
    ("我选C。", "c"),
    ("答案：B", "b"),
    ("答案是 D，因为凶手是他的仇人。", "d"),
    ("经过分析，正确答案为：A", "a"),
    ('{"reason": "王村长有作案时间", "answer": "b"}', "b"),
    ('{"reason": "...", "answer": "B"}', "b"),
    ("{'reason': '单引号的 Python 字典', 'answer': 'c'}", "c"),
    ('```json\n{"reason": "x", "answer": "d"}\n```', "d"),
    ('思考过程……\n最终输出：{"answer": "a"}', "a"),
    ("The answer is C.", "c"),
    ("Answer: (d) because of the poison", "d"),
    ("I would choose option B: he was stabbed.", "b"),
    ("**C. 生活日用品**", "c"),
    ('{"answer": ["b"]}', "b"),
]

MULTI = [
    ('{"reason": "两人都有动机", "answer": "a,b"}', "ab"),
    ('{"answer": "b, d"}', "bd"),
    ("选B和C", "bc"),
    ("答案：A、C", "ac"),
    ("B, C", "bc"),
    ("I suspect A and D.", "ad"),
]

UNPARSEABLE = [
    "",
    "   ",
    None,
    "我无法确定。",
    "I cannot determine who the killer is from the script.",
    '{"reason": "no answer key here"}',
    '{"id": "chatcmpl-broken", "choices": [ {"message": ',
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


def test_explicit_empty_json_answer_is_kept_apart_from_unparseable() -> None:
    parsed = parse_answer('{"reason": "不确定", "answer": ""}', n_options=4)
    assert parsed.letters == "" and parsed.raw == "" and parsed.ok


def test_raw_answer_kept_for_compatible_scoring() -> None:
    # The WellPlay code compares the answer string as written (order-sensitive substring rules).
    assert parse_answer('{"answer": "a,d"}', n_options=4, multi=True).raw == "a,d"
    assert parse_answer('{"answer": "AC"}', n_options=4).raw == "ac"
