"""The Conan relation taxonomy and the WellPlay relation-option template, checked on the anchors."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from casebook import conan


def test_taxonomy_sizes() -> None:
    assert len(conan.canonical_labels()) == 54
    fine = conan.all_fine_labels()
    assert len(fine) == 164 == len(set(fine))
    assert all(label == label.lower() and re.search(r"(?<![a-z])x(?![a-z])", label) for label in fine)
    # every canonical label is in a high-level class; "host of x" is in two
    for label in conan.canonical_labels():
        assert conan.category_of(label), label
    assert sum("host of x" in members for members in conan.CATEGORIES.values()) == 2
    assert len(conan.CATEGORIES["Antagonistic relationships"]) == 13


def test_taxonomy_matches_published_equivalent_relation_json(wellplay_anchor: Path) -> None:
    data = json.loads((wellplay_anchor / "legacy-195be0c" / "equivalent_relation.json").read_text("utf-8"))
    published = {
        conan.normalize_label(k): sorted(conan.normalize_label(v) for v in vs)
        for k, vs in data["equivalent relations"].items()
    }
    assert published == {k: sorted(v) for k, v in conan.TAXONOMY.items()}


def test_lookups() -> None:
    assert conan.canonical_of("Son of X") == "child of x"
    assert conan.canonical_of("son") == "child of x"  # short form used inside options
    assert conan.canonical_of("killed by x") == "victim of x"
    assert conan.category_of("concubine of x") == "Romantic relationships"
    assert conan.category_of("same person as x (different reference)") == "Special relationships"
    assert conan.category_of("stranger to x") == "Unrelated"
    assert conan.canonical_of("best friend forever of x") is None
    assert conan.validate_labels(["hate of x", "Dislike of X", "frenemy of x"]) == ["frenemy of x"]


def test_search_labels_for_the_picker() -> None:
    hits = conan.search_labels("FATHER")
    labels = [h.label for h in hits]
    assert labels[0] == "father of x"
    assert {"father in law of x", "step-father of x", "biological father of x", "grandfather of x"} <= set(labels)
    assert all(h.canonical == conan.canonical_of(h.label) for h in hits)
    # a class name finds its members too, after direct hits
    assert "husband of x" in [h.label for h in conan.search_labels("romantic")]
    assert conan.search_labels("zzz") == []


@pytest.mark.parametrize(
    ("subject", "labels", "obj", "expected"),
    [
        ("李警察", ["attempted murderer of x", "dislike of x"], "赵慈善", "李警察 is attempted murderer and dislike of 赵慈善"),
        ("王村长", ["killed by x"], "张村民", "王村长 is killed by 张村民"),
        ("王村长", ["rebellion against x"], "张村民", "王村长 is rebellion against 张村民"),
        ("Chief Wang", ["adoptive daughter of x", "authority over x"], "Hu Investigate",
         "Chief Wang is adoptive daughter and authority over x of Hu Investigate"),
        ("Mu Bei", ["romantic relationships with x"], "Li Guofu", "Mu Bei is romantic relationships with Li Guofu"),
        ("张村民", ["acquaintance of x"], "王村长", "张村民 is acquaintance of 王村长"),
    ],
)
def test_render_reproduces_anchor_options(
    wellplay_anchor: Path, subject: str, labels: list[str], obj: str, expected: str
) -> None:
    assert conan.render_relation_option(subject, labels, obj) == expected
    assert conan.parse_relation_option(expected, [subject, obj]) == (subject, labels, obj)
    published = "\n".join(p.read_text("utf-8-sig") for p in wellplay_anchor.glob("*/*/final_result/*.csv"))
    assert expected in published  # a real option string, not one made up for the test


def test_render_rejects_empty_labels() -> None:
    with pytest.raises(ValueError, match="at least one label"):
        conan.render_relation_option("A", [], "B")


def _relation_options(root: Path) -> list[tuple[str, list[str]]]:
    out = []
    for path in sorted(root.glob("**/final_result/*.csv")):
        with path.open(encoding="utf-8-sig", newline="") as fh:
            for row in csv.reader(fh):
                if row and row[0] == "c":
                    names = re.findall(r"【(.*?)】", row[2])
                    m = re.match(r"What is the (?:non-existent )?relationship between (.+) and (.+)\?", row[2])
                    names += list(m.groups()) if m else []
                    out += [(cell.strip(), names) for cell in row[3:8] if cell.strip()]
    return out


def test_parse_then_render_is_identity_on_anchor_options(wellplay_anchor: Path) -> None:
    options = _relation_options(wellplay_anchor)
    parsed = [(text, conan.parse_relation_option(text, names)) for text, names in options]
    ok = [(text, p) for text, p in parsed if p is not None]
    failed = [text for text, p in parsed if p is None]
    assert len(options) > 1000
    for text, (subject, labels, obj) in ok:
        assert conan.validate_labels(labels) == []
        assert conan.render_relation_option(subject, labels, obj) == text
    # only the machine-translated options that name "his father" fall outside the template
    assert len(failed) <= 8
    assert all("father" in text for text in failed), failed


def test_label_search_is_bilingual_and_puts_the_exact_label_first() -> None:
    # "lover" + Enter once saved "secret lover of x": the exact label now ranks first
    assert [h.label for h in conan.search_labels("lover")] == ["lover of x", "secret lover of x"]
    assert conan.search_labels("lover")[0].exact and not conan.search_labels("lov")[0].exact
    assert conan.search_labels("lover of X")[0].label == "lover of x"
    assert conan.search_labels("恋人")[0].label == "lover of x" and conan.search_labels("恋人")[0].zh == "恋人"
    assert conan.search_labels("上司")[0].label == "superior of x"
    assert conan.search_labels("岳父")[0].label == "father in law of x"  # one of the names "岳父/公公"
    assert "secret lover of x" in [h.label for h in conan.search_labels("情人")]
    assert "husband of x" in [h.label for h in conan.search_labels("恋爱关系")]  # the class, in Chinese
    assert all(conan.zh_name(label) for label in conan.all_fine_labels())  # every label has a Chinese name
    assert conan.search_labels("") == []
