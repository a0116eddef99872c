"""Packages built at test time from the real anchor scripts (see ingest_makers)."""
from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from .ingest_makers import FONT, first_chars, png_bytes, text_pdf, wellplay_scripts

XIAOHUA_IMG = "XIAOHUA_example/img"


@pytest.fixture(scope="session")
def zh_scripts(wellplay_anchor: Path) -> dict[str, str]:
    return wellplay_scripts(wellplay_anchor, "zh")


@pytest.fixture(scope="session")
def en_scripts(wellplay_anchor: Path) -> dict[str, str]:
    return wellplay_scripts(wellplay_anchor, "en")


@pytest.fixture(scope="session")
def clue_card(whodunitbench_anchor: Path) -> Image.Image:
    """The XIAOHUA clue collage img/1.png (six evidence cards), as RGB."""
    return Image.open(whodunitbench_anchor / XIAOHUA_IMG / "1.png").convert("RGB")


def panel(card: Image.Image, which: str) -> Image.Image:
    """One card of the XIAOHUA collage, scaled 2x (as a 150–200 dpi crop would be)."""
    w, h = card.size
    boxes = {"autopsy": (0, h // 2, w // 3, h), "vitamin": (2 * w // 3, h // 2, w, h), "news": (w // 3, 0, 2 * w // 3, h // 2)}
    img = card.crop(boxes[which])
    return img.resize((img.width * 2, img.height * 2))


@pytest.fixture(scope="session")
def zh_package(tmp_path_factory, zh_scripts, clue_card) -> Path:
    """One text-layer PDF per character, a host manual, a clue file and a clue image (zh)."""
    root = tmp_path_factory.mktemp("zh_package")
    for name, script in zh_scripts.items():
        (root / f"{name}.pdf").write_bytes(text_pdf([(None, script)], "zh", running_header="罪恶 · 角色剧本"))
    (root / "主持人手册.pdf").write_bytes(text_pdf([("主持人手册", "真相：张村民就是南城杀人狂，他杀害了赵慈善。")], "zh"))
    (root / "线索.txt").write_text("线索1：一把带血的镰刀。\n线索2：王村长的账本。\n", encoding="utf-8")
    (root / "img").mkdir()
    (root / "img" / "7.png").write_bytes(png_bytes(panel(clue_card, "vitamin")))  # a photo: media-rich
    (root / "img" / "8.png").write_bytes(png_bytes(note_card(first_chars(zh_scripts["胡调研"].split("\n", 2)[1], 120))))
    return root


def note_card(text: str, width: int = 900) -> Image.Image:
    """A handwritten-note style clue card: Chinese text on paper (text-rich)."""
    from PIL import ImageDraw, ImageFont

    font = ImageFont.truetype(FONT, 36)
    img = Image.new("RGB", (width, 520), (246, 240, 225))
    draw = ImageDraw.Draw(img)
    per_line = (width - 80) // 38
    for i in range(0, min(len(text), per_line * 10), per_line):
        draw.text((40, 40 + (i // per_line) * 48), text[i:i + per_line], font=font, fill=(30, 30, 30))
    return img


@pytest.fixture(scope="session")
def en_combined_pdf(tmp_path_factory, en_scripts) -> tuple[Path, dict[str, str]]:
    """One combined English PDF: title and cast page, four headed scripts (parts), manual, clues."""
    names = list(en_scripts)
    parts = {n: first_chars(en_scripts[n], 1500) for n in names}
    sections = [("Sin", "Cast: " + ", ".join(names) + "\n\nA game for four players.")]
    heads = [f"Character: {names[0]}", f"{names[1]}'s script", None, f"Character: {names[3]}"]
    sections += [(h, parts[n]) for h, n in zip(heads, names, strict=True)]
    sections += [("Host manual", "The truth: Zhang Villager is the South City murderer."),
                 ("Clues", "Clue 1: a bloody sickle.\nClue 2: Chief Wang's ledger.")]
    path = tmp_path_factory.mktemp("en_combined") / "Sin.pdf"
    path.write_bytes(text_pdf(sections, "en", running_header="Sin - a murder mystery", new_page_per_section=False))
    return path, parts
