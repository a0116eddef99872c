"""The one CJK definition covers every ideograph block; name keys fold what the datasets vary."""
from __future__ import annotations

import pytest

from casebook.text import CJK_RUN_RE, cjk_count, compact_key, has_cjk, is_cjk, name_key


@pytest.mark.parametrize("ch, block", [
    ("\u3400", "Extension A"), ("凶", "unified"), ("\uf900", "compatibility"), ("\U00020000", "Extension B"),
    ("\U0002a700", "Extension C"), ("\U0002b740", "Extension D"), ("\U0002b820", "Extension E"),
    ("\U0002ceb0", "Extension F"), ("\U0002ebf0", "Extension I"), ("\U0002f800", "compatibility supplement"),
    ("\U00030000", "Extension G"), ("\U00031350", "Extension H"),
])
def test_every_ideograph_block_is_cjk(ch: str, block: str) -> None:
    assert is_cjk(ch), block


@pytest.mark.parametrize("ch", ["a", "1", "。", "，", "\u3000", "・", "ア", "한", "\U0001f600"])
def test_punctuation_kana_hangul_and_emoji_are_not_ideographs(ch: str) -> None:
    assert not is_cjk(ch)


def test_counts_and_runs_include_supplementary_plane_names() -> None:
    text = "死者是\U00020bb7先生 (Mr. X)。"  # 𠮷 (Extension B), as in 𠮷野家
    assert has_cjk(text) and not has_cjk("Mr. X") and not has_cjk(None)
    assert cjk_count(text) == 6
    assert CJK_RUN_RE.findall(text) == ["死者是\U00020bb7先生"]


def test_name_keys_fold_middle_dots_width_space_and_case() -> None:
    assert name_key("约翰・史密斯") == name_key("约翰·史密斯") == name_key("约翰 • 史密斯") == name_key("约翰･史密斯")
    assert name_key("ＪＯＨＮ  Smith") == name_key("john smith")
    assert name_key("张三") != name_key("张四")
    assert compact_key(" The  Kitchen ") == "thekitchen" and compact_key(None) == ""
