"""Stage 3, split: decide where each role script, the truth manual and the clues start.

The package is read as one stream of documents in package order. A section starts
- at a file whose name says what it is: a character's name (from ``--characters``, a cast page, or
  the file name itself), ``主持人手册``/host manual/truth/``复盘``/solution (→ manual) or
  ``线索``/clue (→ clues);
- at a heading line inside a document: ``角色：X``, ``X的剧本``, ``X（剧本）``, ``Character: X``,
  ``X's script``, or the bare name of a cast member alone on a line (its first such line only,
  so a name quoted alone later in someone's script does not cut it); manual and clue headings too.
A document with no file-name meaning and no heading continues the previous section (the second
photo of a script), or, when it is the first, is named by its first short line.

Every decision is a :class:`SplitDecision` with the reason in words; the split editor shows and
edits exactly these, and :func:`apply_split` turns any list of decisions into sections, so the
automatic and the corrected split go through the same code.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

from casebook.interchange import Clue, Problem, name_key

from .clean import display_width, join_pages

CHARACTER, MANUAL, CLUES, IGNORE = "character", "manual", "clues", "ignore"
KINDS = (CHARACTER, MANUAL, CLUES, IGNORE)
MANUAL_SECTION, CLUES_SECTION, FRONT_MATTER = "manual", "clues", "front matter"

MANUAL_WORDS_ZH = ("主持人手册", "主持人手冊", "主持人", "组织者手册", "DM手册", "真相", "复盘", "復盤", "解析", "答案")
MANUAL_WORDS_EN = ("host manual", "host's manual", "host", "gm manual", "game master", "truth", "solution", "answer key",
                   "organizer")
CLUE_WORDS_ZH = ("线索", "線索", "证物", "證物")
CLUE_WORDS_EN = ("clue", "clues", "evidence")
PAGE_WORDS = ("page", "scan", "photo", "剧本", "劇本", "script", "扫描", "掃描", "第")
GENERIC_STEM = re.compile(
    r"^(?:img|image|dsc|pxl|photo|scan|page|file|document|doc|untitled|combined|all|full|package|game|"
    r"剧本|劇本|全本|合集|扫描|掃描|script|scripts|part)?[\s_\-#]*\d*$",
    re.IGNORECASE,
)

_HEADING_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?:角色|人物|玩家角色)\s*[:：]\s*(?P<name>.+)$"), "heading '角色：X'"),
    (re.compile(r"^(?:character|role|player)\s*[:：]\s*(?P<name>.+)$", re.IGNORECASE), "heading 'Character: X'"),
    (re.compile(r"^(?P<name>.+?)\s*的(?:角色)?剧本$"), "heading 'X的剧本'"),
    (re.compile(r"^(?P<name>.+?)\s*[（(]\s*(?:角色)?剧本\s*[)）]$"), "heading 'X（剧本）'"),
    (re.compile(r"^(?P<name>.+?)[’']s\s+(?:role\s+)?script$", re.IGNORECASE), "heading \"X's script\""),
    (re.compile(r"^(?:script|剧本)\s*[:：]\s*(?P<name>.+)$", re.IGNORECASE), "heading 'Script: X'"),
]
_MANUAL_HEADING = re.compile(
    r"^(?:[一二三四五六七八九十\d]+[、.．]\s*)?(?:主持人手[册冊]|组织者手册|DM手册|案件真相|真相还原|真相|复盘(?:解析)?|"
    r"host(?:'s)?\s+manual|gm\s+manual|the\s+truth|truth|solution|what\s+really\s+happened)\s*[:：]?$",
    re.IGNORECASE,
)
_CLUE_HEADING = re.compile(
    r"^(?:[一二三四五六七八九十\d]+[、.．]\s*)?(?:公共线索|线索卡?|線索|证物|public\s+clues?|clue\s+cards?|clues?|evidence)"
    r"\s*[:：]?$",
    re.IGNORECASE,
)
_CAST_HEADING = re.compile(
    r"^(?:角色列表|人物列表|人物表|角色表|登场人物|出场人物|角色介绍|人物介绍|cast(?:\s+list)?|characters|dramatis\s+personae)"
    r"\s*[:：]?\s*(?P<rest>.*)$",
    re.IGNORECASE,
)
_CLUE_ITEM = re.compile(r"^(?:线索|線索|证物|clue|evidence)\s*[#]?\s*[\dA-Za-z一二三四五六七八九十\-–]+|^\d{1,3}\s*[.、．)]\s*\S",
                        re.IGNORECASE)
MAX_HEADING_WIDTH = 40


@dataclass
class SplitDecision:
    """Where a section starts: a page of a source document and a code-point offset in its text."""

    section: str  # character name, "manual", "clues" or "front matter"
    kind: str  # CHARACTER | MANUAL | CLUES | IGNORE
    source: str  # document (file name inside the package)
    start_page: int  # 1-based
    start_offset: int  # code points into that page's cleaned text
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def split_version(decisions: Sequence[SplitDecision]) -> str:
    """A fingerprint of a split: the editor sends back the one it showed, so a save over someone
    else's newer correction is refused instead of silently undoing it."""
    import hashlib
    import json

    payload = json.dumps([d.to_dict() for d in decisions], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


@dataclass
class Section:
    name: str
    kind: str
    text: str
    pages: list[dict[str, Any]] = field(default_factory=list)  # [{"document", "first", "last"}]


@dataclass
class PageRef:
    """What the splitter needs of a page: its document, number and cleaned text."""

    source: str
    number: int
    text: str


# -- names -------------------------------------------------------------------------------------


def _words_in(text: str, zh: tuple[str, ...], en: tuple[str, ...]) -> bool:
    low = text.casefold()
    if any(w.casefold() in low for w in zh):
        return True
    return any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", low) for w in en)


def strip_name(stem: str) -> str:
    """A character name from a file stem or heading: numbering and "script" words removed."""
    name = re.sub(r"^[\s\d]+[\s_.\-、]+", "", stem)
    name = re.sub(r"^(?:角色|人物|character|role)\s*[:：_\-]\s*", "", name, flags=re.IGNORECASE)
    for pattern, _ in _HEADING_PATTERNS[2:5]:
        m = pattern.match(name)
        if m:
            name = m.group("name")
    name = re.sub(r"[\s_\-]*(?:的?(?:角色)?剧本|劇本|[（(]剧本[)）]|script|role)$", "", name, flags=re.IGNORECASE)
    return name.strip(" _-—·")


def match_cast(candidate: str, cast: list[str]) -> str | None:
    """The cast name ``candidate`` denotes: equal by :func:`name_key`, else the longest one it contains."""
    key = name_key(candidate)
    if not key:
        return None
    for name in cast:
        if name_key(name) == key:
            return name
    containing = [n for n in cast if name_key(n) and name_key(n) in key]
    return max(containing, key=lambda n: len(name_key(n))) if containing else None


def classify_name(path: str, cast: list[str]) -> tuple[str | None, str, str]:
    """(kind, section name, reason) from a file's name; kind None when the name says nothing."""
    stem = PurePosixPath(path).stem
    folder = str(PurePosixPath(path).parent)
    found = match_cast(stem, cast) if cast else None
    if found:
        return CHARACTER, found, f"file name '{stem}' names cast member {found}"
    if _words_in(stem, MANUAL_WORDS_ZH, MANUAL_WORDS_EN):
        return MANUAL, MANUAL_SECTION, f"file name '{stem}' names the host manual / truth"
    if _words_in(stem, CLUE_WORDS_ZH, CLUE_WORDS_EN):
        return CLUES, CLUES_SECTION, f"file name '{stem}' names clues"
    if folder not in ("", "."):
        kind, name, reason = classify_name(PurePosixPath(folder).name + PurePosixPath(path).suffix, cast)
        if kind is not None:
            return kind, name, reason.replace("file name", "folder")
    if not cast:
        name = strip_name(stem)
        if name and not GENERIC_STEM.match(name) and display_width(name) <= MAX_HEADING_WIDTH:
            return CHARACTER, name, f"file name '{stem}' taken as the character's name"
    return None, "", ""


def is_image_clue(path: str, cast: list[str]) -> bool:
    """An image file is a clue unless its name or folder makes it a page of a script or manual.

    Pages: a manual name, a cast member's name, or page/scan/photo/script words (``张村民_2.jpg``,
    ``scan_03.png``); everything else (``autopsy.png``, ``img/7.png``, ``线索3.jpg``) is a clue.
    """
    kind, _, _ = classify_name(path, cast)
    if kind == CLUES:
        return True
    if kind == MANUAL or (kind == CHARACTER and cast):
        return False
    return not _words_in(path, PAGE_WORDS, ("page", "scan", "photo", "script"))


# -- cast page ---------------------------------------------------------------------------------


def _split_names(text: str) -> list[str]:
    parts = re.split(r"[、,，/／;；|]|\s{2,}", text)
    return [p.strip(" ·:：") for p in parts if p.strip(" ·:：")]


def find_cast(pages: list[PageRef]) -> tuple[list[str], set[tuple[str, int, int]]]:
    """Names listed on a cast page, and the (source, page, line offset) of those lines to skip.

    A cast block is a "角色列表"/"Cast"/"Characters" heading followed by names, one per line or
    separated by 、/commas, up to the first blank line.
    """
    names: list[str] = []
    lines_used: set[tuple[str, int, int]] = set()
    for page in pages:
        lines = _lines_with_offsets(page.text)
        i = 0
        while i < len(lines):
            offset, line = lines[i]
            m = _CAST_HEADING.match(line.strip())
            if not m:
                i += 1
                continue
            lines_used.add((page.source, page.number, offset))
            block = _split_names(m.group("rest"))
            j = i + 1
            while j < len(lines) and lines[j][1].strip():
                candidate = lines[j][1].strip()
                if (display_width(candidate) > (3 * MAX_HEADING_WIDTH if "," in candidate or "、" in candidate
                                                 or "，" in candidate else 24)
                        or candidate[-1] in "。.!?！？" or heading_of(candidate, []) is not None):
                    break
                block.extend(_split_names(re.sub(r"\s*[（(].*?[)）]\s*$|\s*[-—:：].*$", "", candidate)))
                lines_used.add((page.source, page.number, lines[j][0]))
                j += 1
            names.extend(n for n in block if display_width(n) <= MAX_HEADING_WIDTH and n not in names)
            i = j
    return names, lines_used


# -- headings ----------------------------------------------------------------------------------


def _lines_with_offsets(text: str) -> list[tuple[int, str]]:
    out, offset = [], 0
    for line in text.split("\n"):
        out.append((offset, line))
        offset += len(line) + 1
    return out


@dataclass
class Heading:
    page: int
    offset: int
    kind: str
    name: str
    reason: str
    explicit: bool  # a marked heading (not a bare name)


def heading_of(line: str, cast: list[str]) -> tuple[str, str, str, bool] | None:
    """(kind, name, reason, explicit) when ``line`` is a section heading."""
    text = line.strip().strip("#*=【】[]").strip()
    if not text or display_width(text) > MAX_HEADING_WIDTH:
        return None
    if _MANUAL_HEADING.match(text):
        return MANUAL, MANUAL_SECTION, f"heading '{text}'", True
    if _CLUE_HEADING.match(text):
        return CLUES, CLUES_SECTION, f"heading '{text}'", True
    for pattern, reason in _HEADING_PATTERNS:
        m = pattern.match(text)
        if m:
            raw = m.group("name").strip()
            name = match_cast(raw, cast) if cast else None
            if cast and name is None:
                continue  # "角色：" followed by something that is not a cast member
            return CHARACTER, name or raw, f"{reason} for {name or raw}", True
    if cast:
        for name in cast:
            if name_key(text) == name_key(name):
                return CHARACTER, name, f"cast member {name} alone on a line", False
    return None


def find_headings(pages: list[PageRef], cast: list[str], skip: set[tuple[str, int, int]]) -> list[Heading]:
    found = []
    for page in pages:
        for offset, line in _lines_with_offsets(page.text):
            if (page.source, page.number, offset) in skip:
                continue
            hit = heading_of(line, cast)
            if hit:
                kind, name, reason, explicit = hit
                found.append(Heading(page.number, offset, kind, name, reason, explicit))
    return found


# -- planning ----------------------------------------------------------------------------------


def plan_split(
    pages: list[PageRef], cast: list[str] | None = None, image_sources: set[str] | None = None
) -> tuple[list[SplitDecision], list[str], list[Problem]]:
    """Decide the sections of a package; returns decisions, the cast used and problems.

    ``pages`` are in package order; ``image_sources`` names the documents that are image files:
    those that :func:`is_image_clue` accepts get a ``clues`` decision of their own (an image
    clue) and do not interrupt the section around them.
    """
    problems: list[Problem] = []
    cast_given = [c.strip() for c in cast or [] if c.strip()]
    page_cast, cast_lines = find_cast(pages)
    cast_used = cast_given or page_cast
    by_doc: dict[str, list[PageRef]] = {}
    for page in pages:
        by_doc.setdefault(page.source, []).append(page)
    empty = [source for source, doc_pages in by_doc.items()
             if not any(p.text.strip() for p in doc_pages) and not (image_sources and source in image_sources)]
    for source in empty:  # blank or unreadable: reported by the read stage, nothing to split
        del by_doc[source]

    # Names claimed by a stronger signal anywhere in the package (a file name, a marked heading, a
    # name opening a document): a bare mention of such a name inside another text is not a heading.
    claimed: set[str] = set()
    doc_start: set[tuple[str, int, int]] = set()
    for source, doc_pages in by_doc.items():
        kind, name, _ = classify_name(source, cast_used)
        if kind == CHARACTER:
            claimed.add(name_key(name))
        for h in find_headings(doc_pages, cast_used, cast_lines):
            at_start = not _text_before(doc_pages, h.page, h.offset).strip()
            if at_start:
                doc_start.add((source, h.page, h.offset))
            if h.kind == CHARACTER and (h.explicit or at_start):
                claimed.add(name_key(h.name))

    decisions: list[SplitDecision] = []
    started: set[str] = set()  # name keys of characters whose section has begun
    current: SplitDecision | None = None

    def start(section: str, kind: str, source: str, page: int, offset: int, reason: str) -> None:
        nonlocal current
        decision = SplitDecision(section, kind, source, page, offset, reason)
        decisions.append(decision)
        current = decision
        if kind == CHARACTER:
            started.add(name_key(section))

    for source, doc_pages in by_doc.items():
        first_page = doc_pages[0].number
        if image_sources and source in image_sources and is_image_clue(source, cast_used):
            decisions.append(SplitDecision(PurePosixPath(source).name, CLUES, source, first_page, 0,
                                           "image file: an image clue"))
            continue
        file_kind, file_name, file_reason = classify_name(source, cast_used)
        headings = find_headings(doc_pages, cast_used, cast_lines)
        # the first bare mention of a name is its heading; later bare mentions are text
        usable: list[Heading] = []
        seen_here: set[str] = set()
        for h in headings:
            key = name_key(h.name)
            if h.kind == CHARACTER and not h.explicit and (key in started or key in seen_here):
                continue
            if (h.kind == CHARACTER and not h.explicit and key in claimed
                    and (source, h.page, h.offset) not in doc_start):
                continue  # the name has its own file or heading elsewhere: this is a mention
            if h.kind == CHARACTER and h.explicit and key in seen_here:
                continue
            if h.kind == CHARACTER:
                seen_here.add(key)
            usable.append(h)
        char_names = {name_key(h.name) for h in usable if h.kind == CHARACTER}
        other_names = char_names - ({name_key(file_name)} if file_kind == CHARACTER else set())
        combined = len(char_names) >= 2 or (len(char_names) == 1 and len({h.kind for h in usable}) > 1)

        if file_kind in (MANUAL, CLUES) and not (combined and len(char_names) >= 2):
            start(file_name, file_kind, source, first_page, 0, file_reason)
            continue
        if file_kind == CHARACTER and not other_names:
            start(file_name, CHARACTER, source, first_page, 0, file_reason)
            continue
        if usable:
            first = usable[0]
            before = _text_before(doc_pages, first.page, first.offset)
            if before.strip():
                if current is not None and not combined:
                    pass  # continuation of the previous section: no decision needed
                elif combined or current is None:
                    start(FRONT_MATTER, IGNORE, source, first_page, 0,
                          "text before the first section heading (title, cast list, contents)")
            for h in usable:
                start(h.name, h.kind, source, h.page, h.offset, h.reason)
            continue
        if current is None:
            name = _first_short_line(doc_pages)
            if name:
                matched = match_cast(name, cast_used) if cast_used else None
                start(matched or strip_name(name), CHARACTER, source, first_page, 0,
                      f"first line '{name}' taken as the character's name")
            else:
                start(FRONT_MATTER, IGNORE, source, first_page, 0, "no heading and no name found")
                problems.append(Problem(source, "no character, manual or clue heading found",
                                        "not assigned; fix it in the split editor"))
            continue
        # no heading, no meaningful name: the previous section goes on (next photo of a script)
        decisions.append(SplitDecision(current.section, current.kind, source, first_page, 0,
                                       f"no heading: continues {current.section} from the previous file"))

    found = {name_key(d.section) for d in decisions if d.kind == CHARACTER}
    for name in cast_used:
        if name_key(name) not in found:
            problems.append(Problem("package", f"character {name} of the cast was not found",
                                    "add a boundary for it in the split editor"))
    return decisions, cast_used, problems


def _text_before(pages: list[PageRef], page_number: int, offset: int) -> str:
    out = []
    for page in pages:
        if page.number < page_number:
            out.append(page.text)
        elif page.number == page_number:
            out.append(page.text[:offset])
    return "".join(out)


def _first_short_line(pages: list[PageRef]) -> str:
    for page in pages:
        for line in page.text.split("\n"):
            text = line.strip().strip("#*=【】[]").strip()
            if not text:
                continue
            if display_width(text) <= 24 and text[-1] not in "。.!?！？，,":
                return text
            return ""
    return ""


# -- applying ----------------------------------------------------------------------------------


def apply_split(pages: list[PageRef], decisions: list[SplitDecision], language: str) -> list[Section]:
    """Cut the pages at the decisions; sections of the same kind and name are merged in order.

    A section runs from its decision to the next decision in the same document (or the end of
    the document). Pages before a document's first decision belong to nobody.
    """
    by_doc: dict[str, list[PageRef]] = {}
    for page in pages:
        by_doc.setdefault(page.source, []).append(page)
    starts: dict[str, list[SplitDecision]] = {}
    for d in decisions:
        starts.setdefault(d.source, []).append(d)
    order: list[tuple[str, str]] = []
    pieces: dict[tuple[str, str], list[str]] = {}
    refs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for source, doc_pages in by_doc.items():
        doc_decisions = sorted(starts.get(source, []), key=lambda d: (d.start_page, d.start_offset))
        for i, d in enumerate(doc_decisions):
            end = doc_decisions[i + 1] if i + 1 < len(doc_decisions) else None
            texts, numbers = [], []
            for page in doc_pages:
                lo = d.start_offset if page.number == d.start_page else 0
                if page.number < d.start_page or (end and page.number > end.start_page):
                    continue
                hi = end.start_offset if end and page.number == end.start_page else len(page.text)
                piece = page.text[lo:hi]
                if piece.strip():
                    texts.append(piece)
                    numbers.append(page.number)
            key = (d.kind, name_key(d.section))
            if key not in pieces:
                order.append(key)
                pieces[key] = []
                refs[key] = []
                refs[key].append({"name": d.section})
            pieces[key].extend(texts)
            if numbers:
                refs[key].append({"document": source, "first": numbers[0], "last": numbers[-1]})
    sections = []
    for key in order:
        name = refs[key][0]["name"]
        sections.append(Section(name, key[0], join_pages(pieces[key], language).strip(), refs[key][1:]))
    return sections


def parse_text_clues(section: Section, start_index: int = 1) -> list[Clue]:
    """Split a clue section into clues at "线索3" / "Clue 3" / "3." lines; else one clue."""
    lines = section.text.split("\n")
    chunks: list[list[str]] = []
    for line in lines:
        if _CLUE_HEADING.match(line.strip().strip("#*【】[]")) and not chunks:
            continue  # the section heading itself
        if _CLUE_ITEM.match(line.strip()) or not chunks:
            chunks.append([line])
        else:
            chunks[-1].append(line)
    clues = []
    for chunk in chunks:
        text = "\n".join(chunk).strip()
        if not text:
            continue
        n = start_index + len(clues)
        title = chunk[0].strip()[:80]
        clues.append(Clue(key=f"clue-{n}", title=title, text=text, extra={"source_pages": section.pages}))
    return clues
