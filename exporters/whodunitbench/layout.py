"""What the WhodunitBench format fixes (shared/formats/whodunitbench.md §2): the game file, its
top-level key order, the key clue pool's level keys, ``source`` level codes and the labelled
``reason`` text. Owned by the format, read by the reader and the writer alike, so the writer never
depends on the reader.
"""
from __future__ import annotations

import re

__all__ = [
    "GAME_FILE",
    "KNOWN_ALIASES",
    "POOL_CHAIN_TITLE",
    "TOP_LEVEL_KEYS",
    "parse_source_level",
    "pool_key_level",
    "split_reason",
]

GAME_FILE = "env_p_all.json"
POOL_CHAIN_TITLE = "Key clue pool"
# The order of the 14 keys in 14 of the 16 published folders (whodunitbench.md §2).
TOP_LEVEL_KEYS = [
    "key_clues_pool", "role-q", "public_clue", "key_clues_questions", "role", "key_clue_q", "ei_q",
    "cxi_q", "ju_name", "task_nm", "task_m", "key_role", "murder", "reason",
]
# Per-game name aliases seen in the published data (folder -> {published name: role name}).
KNOWN_ALIASES: dict[str, dict[str, str]] = {"DI7MI_2": {"达文西": "萨拉"}}

_LEVEL_KEY = re.compile(r"^(?:p|(\d+)-step)$")
_SOURCE_LEVEL = re.compile(r"^(.+?)-(\d+|n)$")


def pool_key_level(key: str) -> int | None:
    """Level of a ``key_clues_pool`` key: ``p`` -> 0, ``<k>-step`` -> k, a role key -> None."""
    match = _LEVEL_KEY.match(key)
    if not match:
        return None
    return int(match.group(1)) if match.group(1) else 0


def parse_source_level(source: str) -> tuple[str, int | None]:
    """(owner codes, level) from a ``source`` code: no suffix -> 0, ``-k`` -> k, ``-n`` -> None."""
    match = _SOURCE_LEVEL.match(source.strip())
    if not match:
        return source.strip(), 0
    owners, level = match.groups()
    return owners, (None if level == "n" else int(level))


_MOTIVE = "作案动机："
_METHOD = "作案手法："


def split_reason(text: str) -> tuple[str, str, bool]:
    """(motive, method, labelled) from a ``reason`` text split on 作案动机：/作案手法： (either order)."""
    text = text or ""
    i_mot, i_met = text.find(_MOTIVE), text.find(_METHOD)
    if i_mot < 0 and i_met < 0:
        return "", "", False
    motive = method = ""
    if i_mot >= 0:
        end = i_met if i_met > i_mot else len(text)
        motive = text[i_mot + len(_MOTIVE):end].strip()
    if i_met >= 0:
        end = i_mot if i_mot > i_met else len(text)
        method = text[i_met + len(_METHOD):end].strip()
    return motive, method, True
