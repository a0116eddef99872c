"""Stage 2: cleaning, on real text (the WhodunitBench script with its published OCR spacing)."""
from __future__ import annotations

import json
import re

from ingest.clean import clean_text, join_pages, punctuation_zh, remove_cjk_spaces, usual_width

from .ingest_makers import body_of


def test_removes_the_published_cjk_spacing(whodunitbench_anchor):
    data = json.loads((whodunitbench_anchor / "XIAOHUA_example" / "env_p_all.json").read_text(encoding="utf-8"))
    spaced = [t for t in re.findall(r"[^\"]{0,40}", json.dumps(data, ensure_ascii=False))
              if re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", t)]
    assert spaced, "the anchor has CJK runs with inserted spaces"
    for text in spaced[:50]:
        assert not re.search(r"[\u4e00-\u9fff] +[\u4e00-\u9fff]", remove_cjk_spaces(text))


def test_punctuation_widths_and_spacing():
    assert clean_text("全都该死 ! 张 村 民 说 : 好的. 2015 年(春)", "zh") == "全都该死！张村民说：好的。2015年（春）"
    assert punctuation_zh('他说"你好"') == "他说\u201c你好\u201d"
    assert clean_text("He said， “yes”；then left。", "en") == "He said, “yes”;then left."
    assert clean_text("版本 1.5 很好", "zh") == "版本1.5很好"  # decimal points stay


def test_joins_wrapped_lines_and_dehyphenates(en_scripts, zh_scripts):
    body = body_of(en_scripts["Chief Wang"])[:600]
    words = body.split(" ")
    lines, line = [], ""
    for w in words:  # wrap at ~70 columns like a page would
        if len(line) + len(w) > 70:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    lines.append(line)
    assert clean_text("\n".join(lines), "en") == " ".join(body.split())
    assert clean_text("a fine exam-\nple of this", "en") == "a fine example of this"
    zh = body_of(zh_scripts["张村民"]).split("\n")[0]
    wrapped = "\n".join(zh[i:i + 38] for i in range(0, len(zh), 38))
    assert clean_text(wrapped, "zh") == zh


def test_short_lines_and_headings_are_kept():
    text = "角色列表\n张村民\n王村长\n\n第一幕\n正文。"
    assert clean_text(text, "zh") == "角色列表\n张村民\n王村长\n\n第一幕\n正文。"


def test_idempotent(zh_scripts):
    once = clean_text(zh_scripts["王村长"], "zh")
    assert clean_text(once, "zh") == once


def test_join_pages_inside_a_sentence():
    assert join_pages(["他走进了", "房间。\n第二段"], "zh") == "他走进了房间。\n第二段"
    assert join_pages(["It was a dark and", "stormy night."], "en") == "It was a dark and stormy night."
    assert join_pages(["End.", "Next page."], "en") == "End.\nNext page."


def test_brackets_around_latin_inside_chinese_take_the_full_width():
    ocr = "角色 : 何 老 六 (He Laoliu) 、 慕 北 (Mu Bei) 。 时间 (21:00) 见 面"
    assert clean_text(ocr, "zh") == "角色：何老六（He Laoliu）、慕北（Mu Bei）。时间（21:00）见面"
    assert clean_text("张洁（Zhang Jie) 和 慕北 (Mu Bei）", "zh") == "张洁（Zhang Jie）和慕北（Mu Bei）"
    assert clean_text("He said (quietly) no.", "en") == "He said (quietly) no."


def test_wrapped_lines_of_spaced_ocr_output_are_joined(zh_scripts):
    """``chi_sim`` puts a space between most characters; widths are measured without them."""
    paragraph = body_of(zh_scripts["王村长"]).split("\n")[0][:200]
    lines = [" ".join(paragraph[i:i + 40]) for i in range(0, len(paragraph), 40)]
    spaced = "\n".join(lines)
    assert clean_text(spaced, "zh", usual_width(spaced)) == paragraph
