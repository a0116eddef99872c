"""Which games are the Chinese and English versions of one game, derived from the data.

Evidence, strongest first: the same G1 id prefix (``131-罪恶（4人封闭）`` / ``131-Sin (4 people
closed)``); else the same number of players and a question file whose value/type/truth sequence is
identical in both languages (wellplay.md §2.1: true of 10 published games, Ghost Revenge apart from
its 2 defective rows, and Death Wears White with its blocks in another order — per-file sequences
are compared, so order does not matter). Measured on the anchors (G1 and G3 layouts, 2 games × 2
languages): both pairs are found from the data alone. The table of the 12 published directory
names is consulted last, for a pair the data leaves ambiguous; each link says in the game's report
which evidence made it.
"""
from __future__ import annotations

from collections.abc import Callable

from casebook.interchange import Game, Problem, name_key

Signatures = dict[str, list[tuple]]

# The 12 published games: Chinese directory -> English directory (wellplay.md §2.1); the last resort.
PUBLISHED_PAIRS: dict[str, str] = {
    "死穿白（8人开放）": "Death Wears White (open to 8 people)",
    "幽灵复仇（7人)": "Ghost Revenge (7 people)",
    "丹水山庄（7人）": "Danshui Villa (7 people)",
    "未完结的爱（7人开放）": "Unfinished Love (open to 7 people)",
    "东方之星号游轮事件（5人开放）": "Oriental Star Cruise Incident (open to 5 people)",
    "罪恶（4人封闭）": "Sin (4 people closed)",
    "致命喷泉（4人封闭）": "Deadly Fountain (4 people closed)",
    "校园不思议事件（5人）": "Unbelievable Incident (5 people)",
    "绝命阳光号（4人封闭）": "Desperate Sunshine (4 people closed)",
    "江湖客栈（4人封闭）": "Riverside Inn (4 people closed)",
    "孤舟萤（6人）": "Solitary Boat Firefly (6 people)",
    "曼娜（6人）": "Manna (6 people)",
}


def _link(z: Game, e: Game, evidence: str) -> None:
    z.counterpart, e.counterpart = e.slug, z.slug
    for game, other in ((z, e), (e, z)):
        game.report.append(Problem(file=game.slug, message=f"linked to {other.slug!r} ({evidence})",
                                   action="counterpart set", severity="info"))


def _g1_id(game: Game) -> str:
    return str(game.extra.get("wellplay", {}).get("g1_id") or "")


def _same_questions(z: Game, e: Game, signatures: dict[int, Signatures]) -> bool:
    ours = {tuple(s) for s in signatures.get(id(z), {}).values() if s}
    theirs = {tuple(s) for s in signatures.get(id(e), {}).values() if s}
    return len(z.playable) == len(e.playable) and bool(ours & theirs)


def _link_unambiguous(zh: list[Game], en: list[Game], same: Callable[[Game, Game], bool], evidence: str) -> None:
    """Link each unlinked pair that the test matches with no other unlinked game on either side."""
    zh = [g for g in zh if not g.counterpart]
    en = [g for g in en if not g.counterpart]
    matches = {id(z): [e for e in en if same(z, e)] for z in zh}
    for z in zh:
        if len(matches[id(z)]) != 1:
            continue
        e = matches[id(z)][0]
        if sum(1 for other in zh if e in matches[id(other)]) == 1:
            _link(z, e, evidence)


def link_counterparts(games: list[Game], signatures: dict[int, Signatures],
                      known_pairs: dict[str, str] | None = None) -> None:
    """Set ``counterpart`` on the zh/en versions of one game (see the module doc for the evidence)."""
    zh = [g for g in games if g.language == "zh"]
    en = [g for g in games if g.language == "en"]
    _link_unambiguous(zh, en, lambda z, e: bool(_g1_id(z)) and _g1_id(z) == _g1_id(e), "same G1 id")
    _link_unambiguous(zh, en, lambda z, e: _same_questions(z, e, signatures),
                      "same characters count and question sequence")
    table = {name_key(k): name_key(v) for k, v in (PUBLISHED_PAIRS if known_pairs is None else known_pairs).items()}
    _link_unambiguous(zh, en, lambda z, e: table.get(name_key(z.slug)) == name_key(e.slug),
                      "the published pairs table of wellplay.md §2.1")
