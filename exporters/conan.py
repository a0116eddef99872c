"""The Conan relationship taxonomy used by WellPlay relation questions and `all.json` graphs.

54 canonical labels, 110 variants (164 fine labels in all), grouped into high-level classes
(Conan's copy, which has the Special and Unrelated classes; see shared/formats/wellplay.md §6).
Labels are stored lowercase with ``x`` for the other person: ``target`` is ``<label>`` of
``source`` reads "B is son of x" with x = A.

Also the English option template of WellPlay relation questions (§5.5):
``<subject> is <L1>[ and <L2>] of <object>``, where a label "… of x" loses its "of x", a label
with x elsewhere keeps a literal ``x`` inside a combination and takes the object's name when alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# canonical label -> its fine variants (Conan / PLAYER equivalent_relation.json, lowercased)
TAXONOMY: dict[str, tuple[str, ...]] = {
    "same person as x (different reference)": (),
    "same person as x (different identity)": (),
    "replaced x's identity": (),
    "stranger to x": (),
    "wife of x": ("concubine of x",),
    "husband of x": (),
    "extramarital affair with x": ("secret lover of x",),
    "romantic relationships with x": ("lover of x", "boyfriend of x", "girlfriend of x"),
    "ex-romantic relationships with x": ("ex-boyfriend of x", "ex-girlfriend of x", "ex-wife of x", "ex-husband of x"),
    "admirer of x": ("secret admirer of x", "fondness of x"),
    "admired by x": ("liked by x", "secret crush of x"),
    "fiance of x": (),
    "fiancee of x": (),
    "co-wives of x": (),
    "father of x": (
        "father in law of x", "adoptive father of x", "future father in law of x", "step-father of x",
        "biological father of x",
    ),
    "mother of x": (
        "mother in law of x", "adoptive mother of x", "future mother in law of x", "step-mother of x",
        "biological mother of x",
    ),
    "child of x": (
        "son of x", "son in law of x", "future son in law of x", "adoptive son of x", "step-son of x",
        "biological son of x", "daughter of x", "daughter in law of x", "future daughter in law of x",
        "adoptive daughter of x", "step-daughter of x", "biological daughter of x",
    ),
    "sibling of x": (
        "brother of x", "half brother of x", "adoptive brother of x", "step-brother of x", "elder brother of x",
        "younger brother of x", "twin brother of x", "sister of x", "half sister of x", "adoptive sister of x",
        "step-sister of x", "elder sister of x", "younger sister of x", "twin sister of x",
    ),
    "grandparent of x": ("grandfather of x", "grandmother of x"),
    "grandchild of x": ("grandson of x", "granddaughter of x"),
    "relative of x": (
        "sister in law of x", "brother in law of x", "nephew of x", "aunt of x", "uncle of x", "niece of x",
        "cousin of x", "future relative of x",
    ),
    "possibly family of x": (),
    "friend of x": ("sworn brother of x",),
    "mentor of x": ("teacher of x",),
    "student of x": (),
    "informant of x": (),
    "information receiver from x": (),
    "acquaintance of x": ("classmate of x", "schoolmate of x", "neighbour of x"),
    "helper of x": ("saviour of x",),
    "helped by x": ("seeker of help from x", "saved by x"),
    "quest companion of x": ("crime partner of x",),
    "guest of x": (),
    "host of x": (),
    "perpetrator of x": ("bully of x", "murderer of x"),
    "attempted perpetrator of x": ("attempted murderer of x",),
    "victim of x": ("killed by x",),
    "dislike of x": ("jealous of x", "unsuccessful helper of x", "suspect to x"),
    "disliked by x": ("jealous by x",),
    "subject of investigation for x": (),
    "deceiver of x": ("thief of x", "betrayer of x", "spy of x"),
    "deceived by x": ("betrayed by x",),
    "suspected by x": ("suspicious of x", "suspect of x"),
    "adversary of x": (
        "enemy of x", "hate of x", "hated by x", "rebellion against x", "rival of x", "rival in love of x",
        "x's victim's family", "x's enemy's family", "perpetrator of x's family", "in the lawsuit against x",
    ),
    "manipulator of x": (),
    "manipulated by x": (),
    "superior of x": ("authority over x", "employer of x", "master of x"),
    "subordinate of x": ("employee of x", "servant of x", "guard of x", "tour guide of x", "minion of x"),
    "debtor of x": (),
    "creditor of x": (),
    "colleague of x": (),
    "business partner of x": (),
    "customer of x": ("buyer of x", "tenant of x", "patient of x"),
    "product provider of x": ("seller of x", "landlord of x"),
    "service provider of x": ("lawyer of x", "messenger of x", "doctor of x"),
}

# high-level class -> canonical labels (Conan's copy). "host of x" is in two classes; Conan also lists
# "accidental perpetrator of x", which has no entry in the fine list (so it is not a label here).
CATEGORIES: dict[str, tuple[str, ...]] = {
    "Special relationships": (
        "same person as x (different reference)", "same person as x (different identity)", "replaced x's identity",
    ),
    "Unrelated": ("stranger to x",),
    "Romantic relationships": (
        "wife of x", "husband of x", "extramarital affair with x", "romantic relationships with x",
        "ex-romantic relationships with x", "admirer of x", "admired by x", "fiance of x", "fiancee of x",
        "co-wives of x",
    ),
    "Family relationships": (
        "father of x", "mother of x", "child of x", "sibling of x", "grandparent of x", "grandchild of x",
        "relative of x", "possibly family of x",
    ),
    "Allies": (
        "friend of x", "mentor of x", "student of x", "informant of x", "information receiver from x",
        "acquaintance of x", "helper of x", "helped by x", "quest companion of x", "guest of x", "host of x",
    ),
    "Antagonistic relationships": (
        "perpetrator of x", "attempted perpetrator of x", "accidental perpetrator of x", "victim of x",
        "dislike of x", "disliked by x", "subject of investigation for x", "deceiver of x", "deceived by x",
        "suspected by x", "adversary of x", "manipulator of x", "manipulated by x",
    ),
    "Business relationships": (
        "superior of x", "subordinate of x", "debtor of x", "creditor of x", "colleague of x",
        "business partner of x", "customer of x", "product provider of x", "service provider of x", "host of x",
    ),
}

_CANONICAL_OF: dict[str, str] = {}
for _canonical, _variants in TAXONOMY.items():
    _CANONICAL_OF[_canonical] = _canonical
    for _variant in _variants:
        _CANONICAL_OF[_variant] = _canonical
_CATEGORY_OF: dict[str, str] = {}
for _category, _members in CATEGORIES.items():
    for _member in _members:
        _CATEGORY_OF.setdefault(_member, _category)

_X = re.compile(r"(?<![a-z])x(?![a-z])")


@dataclass(frozen=True)
class LabelMatch:
    """One hit of :func:`search_labels`: a fine label, its canonical label and high-level class."""

    label: str
    canonical: str
    category: str
    is_canonical: bool


def normalize_label(label: str) -> str:
    """Lowercase, single spaces, and the other person written ``x`` (the file data mixes X/x)."""
    return " ".join((label or "").split()).lower()


def _resolve(label: str) -> str | None:
    """The fine label for ``label``, accepting the short forms used in options ("son" = "son of x")."""
    key = normalize_label(label)
    if key in _CANONICAL_OF:
        return key
    if f"{key} of x" in _CANONICAL_OF:
        return f"{key} of x"
    return None


def canonical_of(label: str) -> str | None:
    """The canonical (one of 54) label of a fine label, or None if unknown."""
    fine = _resolve(label)
    return _CANONICAL_OF[fine] if fine else None


def category_of(label: str) -> str | None:
    """The high-level class of a fine or canonical label (first class for "host of x")."""
    canonical = canonical_of(label)
    return _CATEGORY_OF.get(canonical) if canonical else None


def all_fine_labels() -> list[str]:
    """All 164 labels (canonical ones included), in taxonomy order."""
    return list(_CANONICAL_OF)


def canonical_labels() -> list[str]:
    return list(TAXONOMY)


def search_labels(query: str) -> list[LabelMatch]:
    """Labels whose text, canonical label or class contains ``query`` (case-insensitive).

    Direct hits on the label come first, then hits through its canonical label or class, so a
    picker typing "father" shows "father of x" and its variants before unrelated family labels.
    """
    q = normalize_label(query)
    direct: list[LabelMatch] = []
    related: list[LabelMatch] = []
    for label, canonical in _CANONICAL_OF.items():
        match = LabelMatch(label, canonical, _CATEGORY_OF.get(canonical, ""), label == canonical)
        if q in label:
            direct.append(match)
        elif q and (q in canonical or q in match.category.lower()):
            related.append(match)
    return direct + related


def validate_labels(labels: list[str]) -> list[str]:
    """The labels of ``labels`` that are not in the taxonomy (as given)."""
    return [label for label in labels if _resolve(label) is None]


def _has_x_elsewhere(label: str) -> bool:
    return not label.endswith(" of x") and bool(_X.search(label))


def render_relation_option(subject: str, labels: list[str], obj: str) -> str:
    """The WellPlay option text "<subject> is <L1>[ and <L2>] of <object>" (§5.5)."""
    fine = [_resolve(label) or normalize_label(label) for label in labels]
    if not fine:
        raise ValueError("a relation option needs at least one label")
    if len(fine) == 1 and _has_x_elsewhere(fine[0]):
        return f"{subject} is {_X.sub(lambda _m: obj, fine[0])}"
    parts = [label[: -len(" of x")] if label.endswith(" of x") else label for label in fine]
    return f"{subject} is {' and '.join(parts)} of {obj}"


# labels with x elsewhere, as patterns matching "<label with the object's name in place of x>"
_X_PATTERNS = [
    (label, re.compile("^" + _X.sub(lambda _m: "(?P<obj>.+)", re.escape(label)) + "$", flags=re.IGNORECASE))
    for label in _CANONICAL_OF
    if _has_x_elsewhere(label)
]


def _labels_of_body(body: str) -> list[str] | None:
    """Split "L1 and L2" (short forms) into fine labels, or None if a part is unknown."""
    labels = []
    for part in body.split(" and "):
        fine = f"{part} of x" if f"{part} of x" in _CANONICAL_OF else part
        if fine not in _CANONICAL_OF:
            return None
        labels.append(fine)
    return labels


def parse_relation_option(text: str, names: list[str]) -> tuple[str, list[str], str] | None:
    """Best-effort inverse of :func:`render_relation_option`: (subject, fine labels, object).

    ``names`` are the people the option may mention (longest match wins); when the text names
    someone not in the list, the first " is " and the last " of " split it. None when the labels
    are not in the taxonomy (e.g. machine-translated options such as "is received by his father").
    """
    text = " ".join((text or "").split())
    known = {n for n in names if n}
    by_length = sorted(known, key=len, reverse=True)
    subjects = [n for n in by_length if text.startswith(f"{n} is ")]
    if " is " in text and text.split(" is ", 1)[0] not in subjects:
        subjects.append(text.split(" is ", 1)[0])
    candidates: list[tuple[str, list[str], str]] = []
    for subject in subjects:
        body = text[len(subject) + len(" is ") :]
        # 1) "L1 and L2 of <object>"
        objects = [n for n in by_length if body.endswith(f" of {n}")]
        if " of " in body:
            objects.append(body.rsplit(" of ", 1)[1])
        for obj in objects:
            labels = _labels_of_body(normalize_label(body[: -len(f" of {obj}")]))
            if labels:
                candidates.append((subject, labels, obj))
        # 2) one label with x elsewhere, x replaced by the object's name
        for label, pattern in _X_PATTERNS:
            m = pattern.match(body)
            if m:
                candidates.append((subject, [label], m.group("obj")))
    if not candidates:
        return None
    # prefer parses whose ends are known names; among equals, the first (chains before single labels)
    return max(candidates, key=lambda c: (c[0] in known) + (c[2] in known))
