"""Token counting and fitting long role scripts to a budget."""
from __future__ import annotations

from casebook.interchange import Character, Game, Option, Question
from evaluation.prompts import build_messages, count_tokens, fit_to_budget, question_terms


def test_count_tokens_cjk_chars_plus_words_over_0_75() -> None:
    assert count_tokens("赵慈善被谁杀死的") == 8
    assert count_tokens("Who killed Zhao Cishan") == 6  # 4 words / 0.75 = 5.33 -> 6
    assert count_tokens("张村民 said hello") == 3 + 3  # 3 CJK + ceil(2 / 0.75)
    assert count_tokens("") == 0


def test_fit_keeps_the_start_and_the_relevant_paragraph_within_budget() -> None:
    opening = "我叫张村民，是村里的渔民。"
    filler = [f"第{i}段：今天天气很好，我在河边钓鱼，什么也没有发生。" for i in range(200)]
    clue = "那天晚上九点，我看见王村长拿着一把刀从赵慈善家里出来。"
    text = "\n".join([opening, *filler[:120], clue, *filler[120:]])
    question = Question(kind="objective", stem="【赵慈善】被谁杀死的？", options=[Option("王村长"), Option("李警察")])
    fitted = fit_to_budget(text, 400, question_terms(question), "zh")
    assert count_tokens(fitted) <= 400 + 20  # omission markers are small
    assert fitted.startswith(opening)
    assert clue in fitted
    assert "（中间省略）" in fitted
    assert fit_to_budget("短文本", 400) == "短文本"


def test_messages_carry_the_options_and_the_json_instruction() -> None:
    game = Game(slug="g", title="g", language="en", characters=[Character("Li", script="I am Officer Li.")])
    q = Question(kind="reasoning", stem="Please select the two people you most suspect", multi=True,
                 options=[Option("Li"), Option("Wang"), Option("Zhang")], perspective="Li")
    messages = build_messages(game, q, "own")
    text = messages[-1]["content"]
    assert "I am Officer Li." in text and "A: Li\nB: Wang\nC: Zhang" in text and "Choose two options" in text
    with_images = build_messages(game, q, "none", images=["data:image/png;base64,AAAA"])
    parts = with_images[-1]["content"]
    assert parts[0]["type"] == "text" and "Officer Li" not in parts[0]["text"]
    assert parts[1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
