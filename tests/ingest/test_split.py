"""Stage 3: split decisions on page texts built from the real scripts (no PDF needed)."""
from __future__ import annotations

from ingest.split import (
    CHARACTER,
    CLUES,
    IGNORE,
    MANUAL,
    PageRef,
    SplitDecision,
    apply_split,
    classify_name,
    heading_of,
    is_image_clue,
    parse_text_clues,
    plan_split,
)

from .ingest_makers import body_of


def test_heading_forms():
    cast = ["张村民", "王村长", "依琳·卡特"]
    assert heading_of("角色：张村民", cast)[:2] == (CHARACTER, "张村民")
    assert heading_of("王村长的剧本", cast)[:2] == (CHARACTER, "王村长")
    assert heading_of("王村长（剧本）", cast)[:2] == (CHARACTER, "王村长")
    assert heading_of("依琳•卡特", cast)[:2] == (CHARACTER, "依琳·卡特")  # middle-dot variant folded
    assert heading_of("Character: Officer Li", [])[:2] == (CHARACTER, "Officer Li")
    assert heading_of("Chief Wang's script", [])[:2] == (CHARACTER, "Chief Wang")
    assert heading_of("主持人手册", cast)[0] == MANUAL
    assert heading_of("复盘", cast)[0] == MANUAL
    assert heading_of("Clues", cast)[0] == CLUES
    assert heading_of("张村民走进了房间，看见了王村长。", cast) is None
    assert heading_of("角色：路人甲", cast) is None  # not a cast member


def test_file_names():
    assert classify_name("剧本/03_王村长的剧本.pdf", [])[:2] == (CHARACTER, "王村长")
    assert classify_name("主持人手册.pdf", [])[:2] == (MANUAL, "manual")
    assert classify_name("Host manual.pdf", [])[0] == MANUAL
    assert classify_name("truth.docx.pdf", [])[0] == MANUAL
    assert classify_name("线索卡.pdf", [])[0] == CLUES
    assert classify_name("scan_003.pdf", [])[0] is None
    assert classify_name("Officer Li.pdf", ["Officer Li", "Chief Wang"])[1] == "Officer Li"
    assert is_image_clue("img/7.png", []) and is_image_clue("线索3.jpg", [])
    assert not is_image_clue("张村民_page2.jpg", []) and not is_image_clue("张村民_2.jpg", ["张村民"])


def _pages_of(doc: str, text: str, per_page: int = 600) -> list[PageRef]:
    return [PageRef(doc, i // per_page + 1, text[i:i + per_page]) for i in range(0, len(text), per_page)]


def test_combined_document_with_cast_page(zh_scripts):
    names = list(zh_scripts)
    cast_page = "罪恶\n角色列表\n" + "\n".join(names) + "\n\n"
    text = cast_page
    starts = {}
    for i, name in enumerate(names):
        heading = ["角色：{}", "{}的剧本", "{}（剧本）", "{}"][i].format(name)
        starts[name] = len(text)
        text += heading + "\n" + body_of(zh_scripts[name]) + "\n"
    text += "主持人手册\n真相：张村民就是凶手。\n线索\n线索1：镰刀。\n线索2：账本。"
    pages = _pages_of("罪恶全本.pdf", text)
    decisions, cast, problems = plan_split(pages, None)
    assert cast == names  # read from the cast page
    assert not [p for p in problems if "not found" in p.message]
    kinds = [(d.kind, d.section) for d in decisions]
    assert kinds == [(IGNORE, "front matter")] + [(CHARACTER, n) for n in names] + [(MANUAL, "manual"), (CLUES, "clues")]
    for d in decisions[1:5]:  # boundaries exactly at the heading lines
        assert (d.start_page - 1) * 600 + d.start_offset == starts[d.section]
    sections = {s.name: s for s in apply_split(pages, decisions, "zh")}
    for name in names:
        assert body_of(zh_scripts[name]).replace("\n", "") in sections[name].text.replace("\n", "")
        assert names[(names.index(name) + 1) % 4] + "的剧本" not in sections[name].text
    assert "真相" in sections["manual"].text
    clues = parse_text_clues(sections["clues"])
    assert [c.text for c in clues] == ["线索1：镰刀。", "线索2：账本。"]


def test_bare_name_inside_a_script_does_not_cut_it(zh_scripts):
    names = list(zh_scripts)
    text_a = names[0] + "\n" + body_of(zh_scripts[names[0]])[:300] + "\n" + names[1] + "\n他看了你一眼。"
    pages = [PageRef("a.pdf", 1, text_a), PageRef("b.pdf", 1, names[1] + "\n" + body_of(zh_scripts[names[1]])[:300])]
    decisions, _, _ = plan_split(pages, names[:2])
    assert [(d.source, d.section, d.start_offset) for d in decisions] == [("a.pdf", names[0], 0), ("b.pdf", names[1], 0)]


def test_photos_of_pages_continue_the_section(en_scripts):
    body = body_of(en_scripts["Officer Li"])
    pages = [PageRef("IMG_0001.jpg", 1, "Officer Li\n" + body[:500]), PageRef("IMG_0002.jpg", 1, body[500:1000])]
    decisions, _, _ = plan_split(pages, ["Officer Li", "Chief Wang"], image_sources=set())
    assert [d.section for d in decisions] == ["Officer Li", "Officer Li"]
    assert "continues" in decisions[1].reason
    (section,) = apply_split(pages, decisions, "en")
    assert section.pages == [{"document": "IMG_0001.jpg", "first": 1, "last": 1},
                             {"document": "IMG_0002.jpg", "first": 1, "last": 1}]


def test_corrected_split_moves_renames_and_merges(zh_scripts):
    names = list(zh_scripts)
    text = "".join(f"{n}\n{body_of(zh_scripts[n])[:200]}\n" for n in names)
    pages = [PageRef("all.pdf", 1, text)]
    decisions, _, _ = plan_split(pages, names)
    assert len(decisions) == 4
    # merge the last two sections (drop the boundary), rename the first, move the second by a line
    second = decisions[1]
    moved = SplitDecision(second.section, CHARACTER, "all.pdf", 1, text.index("\n", second.start_offset) + 1, "moved")
    edited = [SplitDecision("张三", CHARACTER, "all.pdf", 1, 0, "renamed"), moved, decisions[2]]
    sections = apply_split(pages, edited, "zh")
    assert [s.name for s in sections] == ["张三", names[1], names[2]]
    assert sections[0].text.endswith(names[1])  # the heading line now belongs to the first section
    assert names[3] in sections[2].text
