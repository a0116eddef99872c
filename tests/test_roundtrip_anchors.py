"""Real published data through the whole foundation: import → DB → export equals the original.

- WhodunitBench: env_p_all.json equal after JSON parsing (and byte-identical), images identical.
- WellPlay: every per-character CSV row equal after normalisation (strip, BOM, shifted truth),
  character JSON equal in content, per-category counts as in the spec.
"""
from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command

from annotate import models as m

pytestmark = pytest.mark.django_db

WELLPLAY_COUNTS = {  # wellplay.md §10: Objective / Reasoning / Relations
    "罪恶（4人封闭）": (3, 20, 21),
    "致命喷泉（4人封闭）": (3, 21, 12),
    "Sin (4 people closed)": (3, 20, 21),
    "Deadly Fountain (4 people closed)": (3, 21, 12),
}
AGGREGATES = {"GM.csv", "FSA.csv"}


def normalised_rows(path: Path) -> list[list[str]]:
    """Rows as the spec compares them: BOM dropped, cells stripped, shifted truth moved back."""
    rows = []
    text = path.read_text(encoding="utf-8-sig")
    for row in list(csv.reader(io.StringIO(text)))[1:]:
        if not row:
            continue
        cells = [c.strip() for c in row]
        while len(cells) > 9 and cells[-1] == "":
            cells.pop()
        cells += [""] * (9 - len(cells))
        options, truth = cells[3:8], cells[8]
        last = max((i for i, c in enumerate(options) if c), default=None)
        if not truth and last is not None and len(options[last]) == 1 and options[last].lower() in "abcde":
            truth, options[last] = options[last].lower(), ""
        rows.append(cells[:3] + options + [truth])
    return rows


def normalised_json(path: Path) -> dict:
    def fix(value):
        if isinstance(value, str):
            return value.replace("\\ n", "\n").replace("\\n", "\n")
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    return {k: fix(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def wellplay_game_dirs(root: Path) -> list[Path]:
    return sorted(p for lang in ("chinese", "english") for p in (root / lang).iterdir() if p.is_dir())


def test_wellplay_anchors_round_trip_through_the_database(wellplay_anchor: Path, tmp_path: Path):
    call_command("import_dataset", str(wellplay_anchor), format="wellplay", verbosity=0)
    assert m.Game.objects.count() == 4
    out = tmp_path / "export"
    call_command("export", format="wellplay", out=out, verbosity=0)
    for original in wellplay_game_dirs(wellplay_anchor):
        exported = out / original.parent.name / original.name
        assert exported.is_dir(), f"{exported} not written"
        for csv_file in sorted((original / "final_result").glob("*.csv")):
            if csv_file.name in AGGREGATES:
                continue
            assert normalised_rows(exported / "final_result" / csv_file.name) == normalised_rows(csv_file), csv_file
        for json_file in sorted((original / "json").glob("*.json")):
            assert normalised_json(exported / "json" / json_file.name) == normalised_json(json_file), json_file
        # the aggregate is the concatenation of the per-character files (as a multiset)
        per_char = [r for f in (original / "final_result").glob("*.csv") if f.name not in AGGREGATES
                    for r in normalised_rows(f)]
        for name in ("GM.csv", "FSA.csv"):
            assert Counter(map(tuple, normalised_rows(exported / "final_result" / name))) == Counter(map(tuple, per_char))
        game = m.Game.objects.get(source_id=original.name)
        counts = tuple(game.questions.filter(kind=k).count() for k in ("objective", "reasoning", "relations"))
        assert counts == WELLPLAY_COUNTS[original.name]


def test_wellplay_languages_are_linked_and_reimport_is_idempotent(wellplay_anchor: Path):
    call_command("import_dataset", str(wellplay_anchor), format="wellplay", verbosity=0)
    sin_zh = m.Game.objects.get(source_id="罪恶（4人封闭）")
    assert sin_zh.counterpart.source_id == "Sin (4 people closed)"
    assert m.Game.objects.get(source_id="Sin (4 people closed)").counterpart == sin_zh
    before = (m.Question.objects.count(), m.Option.objects.count(), m.Character.objects.count())
    out = io.StringIO()
    call_command("import_dataset", str(wellplay_anchor), format="wellplay", stdout=out, verbosity=0)
    assert out.getvalue().count("unchanged") == 4
    assert (m.Question.objects.count(), m.Option.objects.count(), m.Character.objects.count()) == before
    # the per-file report is stored with the game
    assert isinstance(sin_zh.import_report, list)


def test_wellplay_legacy_layout_imports_the_relationship_graph(wellplay_anchor: Path):
    call_command("import_dataset", str(wellplay_anchor / "legacy-195be0c"), format="wellplay", verbosity=0)
    sin = m.Game.objects.get(source_id="罪恶（4人封闭）")
    graph = json.loads((wellplay_anchor / "legacy-195be0c/chinese/131-罪恶（4人封闭）/all.json").read_text("utf-8"))
    assert sin.relationships.count() == sum(len(edges) for edges in graph.values())
    edge = sin.relationships.get(source__name="王村长", target__name="赵慈善")
    assert edge.labels == ["victim of x", "hate of x"]
    assert tuple(sin.questions.filter(kind=k).count() for k in ("objective", "reasoning", "relations")) == (3, 20, 21)


@pytest.mark.parametrize("folder", ["XIAOHUA_example", "DI7MI_2", "Pu"])
def test_whodunitbench_anchor_round_trips_byte_for_byte(whodunitbench_anchor: Path, tmp_path: Path, folder: str):
    call_command("import_dataset", str(whodunitbench_anchor / folder), format="whodunitbench", verbosity=0)
    out = tmp_path / "export"
    call_command("export", format="whodunitbench", out=out, verbosity=0)
    original = whodunitbench_anchor / folder / "env_p_all.json"
    exported = out / "Dataset" / folder / "env_p_all.json"
    assert json.loads(exported.read_bytes()) == json.loads(original.read_bytes())
    assert exported.read_bytes() == original.read_bytes()
    for image in sorted((whodunitbench_anchor / folder / "img").iterdir()):
        assert (out / "Dataset" / folder / "img" / image.name).read_bytes() == image.read_bytes()


def test_whodunitbench_dataset_keeps_levels_key_roles_and_murderer(whodunitbench_anchor: Path):
    call_command("import_dataset", str(whodunitbench_anchor), format="whodunitbench", verbosity=0)
    xiaohua = m.Game.objects.get(source_id="XIAOHUA_example")
    assert xiaohua.characters.get(is_murderer=True).name == "白老师"
    assert sorted(xiaohua.characters.filter(key_role=True).values_list("name", flat=True)) == ["鬼学姐", "鸥学妹"]
    kinds = Counter(xiaohua.questions.values_list("kind", flat=True))
    assert kinds["text_image"] == 21 and kinds["media_image"] == 17 and kinds["multi_step"] == 66
    assert kinds["long_script"] == 250
    assert xiaohua.clues.filter(kind="image").count() == 11
    pu = m.Game.objects.get(source_id="Pu")
    assert pu.characters.get(name="唐·何塞").key_role  # published as 唐•何塞 (U+2022)
    assert pu.questions.filter(kind="multi_step", level=7).exists()
    # the mislabelled .png files are JPEG: the sniffed media type says so
    assert set(pu.clues.values_list("media_type", flat=True)) == {"image/jpeg"}
