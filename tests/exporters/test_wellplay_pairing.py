"""Pairing the Chinese and English versions of a WellPlay game from the data (the anchors, both
layouts), with the published pairs table only as the last resort."""
from __future__ import annotations

import shutil
from pathlib import Path

from exporters.wellplay.pairing import PUBLISHED_PAIRS, link_counterparts
from exporters.wellplay.reader import read_game_dir

PAIRS = {"罪恶（4人封闭）": "Sin (4 people closed)", "致命喷泉（4人封闭）": "Deadly Fountain (4 people closed)"}


def _read(dirs: list[Path]) -> tuple[list, dict]:
    games, signatures = [], {}
    for game_dir in dirs:
        game, sig = read_game_dir(game_dir)
        games.append(game)
        signatures[id(game)] = sig
    return games, signatures


def _links(games) -> dict[str, str]:
    return {g.slug: g.counterpart for g in games if g.language == "zh"}


def test_the_data_alone_pairs_both_anchor_layouts(wellplay_anchor: Path) -> None:
    for root, evidence in ((wellplay_anchor, "question sequence"), (wellplay_anchor / "legacy-195be0c", "same G1 id")):
        games, signatures = _read(sorted(p for lang in ("chinese", "english") for p in (root / lang).iterdir()))
        link_counterparts(games, signatures, known_pairs={})
        assert _links(games) == PAIRS
        notes = [p.message for g in games for p in g.report if p.action == "counterpart set"]
        assert len(notes) == 4 and all(evidence in n for n in notes), notes


def test_renamed_folders_still_pair_and_the_table_settles_only_what_the_data_cannot(wellplay_anchor: Path,
                                                                                  tmp_path: Path) -> None:
    zh = shutil.copytree(wellplay_anchor / "chinese" / "罪恶（4人封闭）", tmp_path / "chinese" / "罪恶 重印版")
    en = shutil.copytree(wellplay_anchor / "english" / "Sin (4 people closed)", tmp_path / "english" / "Sin reprint")
    games, signatures = _read([zh, en])
    link_counterparts(games, signatures)  # no table entry names these folders
    assert _links(games) == {"罪恶 重印版": "Sin reprint"}

    # two Chinese copies with the same questions: the data cannot choose, the published table can
    twin = shutil.copytree(zh, tmp_path / "chinese" / "罪恶（4人封闭）")
    games, signatures = _read([zh, twin, en.rename(tmp_path / "english" / "Sin (4 people closed)")])
    link_counterparts(games, signatures, known_pairs={})
    assert not any(g.counterpart for g in games)
    link_counterparts(games, signatures)
    assert _links(games) == {"罪恶 重印版": "", "罪恶（4人封闭）": "Sin (4 people closed)"}
    assert PUBLISHED_PAIRS["罪恶（4人封闭）"] == "Sin (4 people closed)"
    assert "pairs table" in next(p.message for g in games if g.slug == "罪恶（4人封闭）" for p in g.report
                                 if p.action == "counterpart set")
