"""The loader's query count does not grow with the game (issue 13, item 11): private clues used to
cost one query each for their owner's name."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.builder import build_game
from annotate.loader import load_game
from casebook import interchange as ix


def _game(slug: str, n_clues: int, private: bool) -> ix.Game:
    owners = ["林掌柜", "苏晚晴"]
    return ix.Game(
        slug=slug, title="茶馆疑案", language="zh",
        characters=[ix.Character(name, script=f"我是{name}。") for name in owners],
        clues=[ix.Clue(key=f"c{i}", title=f"线索{i}", text=f"第{i}条线索", owner=owners[i % 2] if private else "")
               for i in range(n_clues)],
    )


@pytest.mark.django_db
def test_private_clues_cost_no_query_each():
    counts = {}
    for slug, n, private in [("public-20", 20, False), ("private-2", 2, True), ("private-20", 20, True)]:
        game = build_game(_game(slug, n, private)).game
        with CaptureQueriesContext(connection) as ctx:
            loaded = load_game(game)
        counts[slug] = len(ctx.captured_queries)
        assert [c.owner for c in loaded.clues] == [("林掌柜", "苏晚晴")[i % 2] if private else "" for i in range(n)]
    assert counts["private-20"] == counts["private-2"] == counts["public-20"], counts
