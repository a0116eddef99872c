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

# fine label -> Chinese name (what B is to A: “B 是 A 的<名称>”), for the bilingual label picker.
# The published WellPlay data writes these labels in English in both languages (its Chinese
# relation options are English too), so the Chinese names are Casebook's own.
ZH_NAMES: dict[str, str] = {
    "same person as x (different reference)": "同一人（不同称呼）",
    "same person as x (different identity)": "同一人（不同身份）",
    "replaced x's identity": "冒名顶替",
    "stranger to x": "陌生人",
    "wife of x": "妻子",
    "concubine of x": "妾",
    "husband of x": "丈夫",
    "extramarital affair with x": "婚外情",
    "secret lover of x": "情人",
    "romantic relationships with x": "恋爱关系",
    "lover of x": "恋人",
    "boyfriend of x": "男朋友",
    "girlfriend of x": "女朋友",
    "ex-romantic relationships with x": "前任恋爱关系",
    "ex-boyfriend of x": "前男友",
    "ex-girlfriend of x": "前女友",
    "ex-wife of x": "前妻",
    "ex-husband of x": "前夫",
    "admirer of x": "爱慕者",
    "secret admirer of x": "暗恋者",
    "fondness of x": "有好感",
    "admired by x": "被爱慕",
    "liked by x": "被喜欢",
    "secret crush of x": "被暗恋",
    "fiance of x": "未婚夫",
    "fiancee of x": "未婚妻",
    "co-wives of x": "共侍一夫",
    "father of x": "父亲",
    "father in law of x": "岳父/公公",
    "adoptive father of x": "养父",
    "future father in law of x": "准岳父/准公公",
    "step-father of x": "继父",
    "biological father of x": "生父",
    "mother of x": "母亲",
    "mother in law of x": "岳母/婆婆",
    "adoptive mother of x": "养母",
    "future mother in law of x": "准岳母/准婆婆",
    "step-mother of x": "继母",
    "biological mother of x": "生母",
    "child of x": "子女",
    "son of x": "儿子",
    "son in law of x": "女婿",
    "future son in law of x": "准女婿",
    "adoptive son of x": "养子",
    "step-son of x": "继子",
    "biological son of x": "亲生儿子",
    "daughter of x": "女儿",
    "daughter in law of x": "儿媳",
    "future daughter in law of x": "准儿媳",
    "adoptive daughter of x": "养女",
    "step-daughter of x": "继女",
    "biological daughter of x": "亲生女儿",
    "sibling of x": "兄弟姐妹",
    "brother of x": "兄弟",
    "half brother of x": "同父异母/同母异父的兄弟",
    "adoptive brother of x": "养兄弟",
    "step-brother of x": "继兄弟",
    "elder brother of x": "哥哥",
    "younger brother of x": "弟弟",
    "twin brother of x": "双胞胎兄弟",
    "sister of x": "姐妹",
    "half sister of x": "同父异母/同母异父的姐妹",
    "adoptive sister of x": "养姐妹",
    "step-sister of x": "继姐妹",
    "elder sister of x": "姐姐",
    "younger sister of x": "妹妹",
    "twin sister of x": "双胞胎姐妹",
    "grandparent of x": "祖父母",
    "grandfather of x": "祖父/外祖父",
    "grandmother of x": "祖母/外祖母",
    "grandchild of x": "孙辈",
    "grandson of x": "孙子/外孙",
    "granddaughter of x": "孙女/外孙女",
    "relative of x": "亲戚",
    "sister in law of x": "嫂子/弟媳/姑子/姨子",
    "brother in law of x": "姐夫/妹夫/大伯子/小舅子",
    "nephew of x": "侄子/外甥",
    "aunt of x": "姑姑/姨妈/婶婶",
    "uncle of x": "叔叔/伯伯/舅舅",
    "niece of x": "侄女/外甥女",
    "cousin of x": "堂/表兄弟姐妹",
    "future relative of x": "未来的亲戚",
    "possibly family of x": "可能的家人",
    "friend of x": "朋友",
    "sworn brother of x": "结拜兄弟",
    "mentor of x": "导师",
    "teacher of x": "老师",
    "student of x": "学生",
    "informant of x": "线人",
    "information receiver from x": "消息接收者",
    "acquaintance of x": "熟人",
    "classmate of x": "同班同学",
    "schoolmate of x": "校友",
    "neighbour of x": "邻居",
    "helper of x": "帮助者",
    "saviour of x": "救命恩人",
    "helped by x": "受其帮助",
    "seeker of help from x": "求助者",
    "saved by x": "被其所救",
    "quest companion of x": "同伴",
    "crime partner of x": "同谋",
    "guest of x": "客人",
    "host of x": "主人",
    "perpetrator of x": "加害者",
    "bully of x": "欺凌者",
    "murderer of x": "凶手",
    "attempted perpetrator of x": "未遂加害者",
    "attempted murderer of x": "谋杀未遂者",
    "victim of x": "受害者",
    "killed by x": "被其杀害",
    "dislike of x": "厌恶",
    "jealous of x": "嫉妒",
    "unsuccessful helper of x": "帮忙未果者",
    "suspect to x": "怀疑对象",
    "disliked by x": "被厌恶",
    "jealous by x": "被嫉妒",
    "subject of investigation for x": "调查对象",
    "deceiver of x": "欺骗者",
    "thief of x": "小偷",
    "betrayer of x": "背叛者",
    "spy of x": "间谍",
    "deceived by x": "被欺骗",
    "betrayed by x": "被背叛",
    "suspected by x": "被怀疑",
    "suspicious of x": "怀疑",
    "suspect of x": "嫌疑人",
    "adversary of x": "对手",
    "enemy of x": "敌人",
    "hate of x": "仇恨",
    "hated by x": "被仇恨",
    "rebellion against x": "反抗",
    "rival of x": "竞争对手",
    "rival in love of x": "情敌",
    "x's victim's family": "其受害者的家属",
    "x's enemy's family": "其仇人的家属",
    "perpetrator of x's family": "其家人的加害者",
    "in the lawsuit against x": "诉讼对手",
    "manipulator of x": "操纵者",
    "manipulated by x": "被操纵",
    "superior of x": "上司",
    "authority over x": "上级",
    "employer of x": "雇主",
    "master of x": "主人（主仆）",
    "subordinate of x": "下属",
    "employee of x": "雇员",
    "servant of x": "仆人",
    "guard of x": "护卫",
    "tour guide of x": "导游",
    "minion of x": "手下",
    "debtor of x": "债务人",
    "creditor of x": "债主",
    "colleague of x": "同事",
    "business partner of x": "生意伙伴",
    "customer of x": "顾客",
    "buyer of x": "买家",
    "tenant of x": "租客",
    "patient of x": "病人",
    "product provider of x": "供货商",
    "seller of x": "卖家",
    "landlord of x": "房东",
    "service provider of x": "服务提供者",
    "lawyer of x": "律师",
    "messenger of x": "信使",
    "doctor of x": "医生",
}
CATEGORY_ZH: dict[str, str] = {
    "Special relationships": "特殊关系",
    "Unrelated": "无关",
    "Romantic relationships": "恋爱关系",
    "Family relationships": "家庭关系",
    "Allies": "盟友",
    "Antagonistic relationships": "敌对关系",
    "Business relationships": "商业关系",
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
    """One hit of :func:`search_labels`: a fine label, its canonical label and high-level class,
    with their Chinese names; ``exact`` when the query is the label itself (English or Chinese)."""

    label: str
    canonical: str
    category: str
    is_canonical: bool
    zh: str = ""
    category_zh: str = ""
    exact: bool = False


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


def zh_name(label: str) -> str:
    """The Chinese name of a fine label ("" when unknown)."""
    fine = _resolve(label)
    return ZH_NAMES.get(fine, "") if fine else ""


def search_labels(query: str) -> list[LabelMatch]:
    """Labels matching ``query`` in English or Chinese, best first.

    Order: the exact label ("lover", "lover of x" or "恋人" → "lover of x"), then labels starting
    with the query, then labels containing it, then hits through the canonical label or class; so
    Enter on the first hit never takes "secret lover of x" over "lover of x".
    """
    q = normalize_label(query)
    if not q:
        return []
    exact_label = _resolve(q)
    ranked: list[tuple[int, int, LabelMatch]] = []
    for order, (label, canonical) in enumerate(_CANONICAL_OF.items()):
        category = _CATEGORY_OF.get(canonical, "")
        zh, category_zh = ZH_NAMES.get(label, ""), CATEGORY_ZH.get(category, "")
        names = [label] + [part for part in zh.split("/") if part]
        if label == exact_label or q in zh.split("/"):
            rank = 0
        elif any(name.startswith(q) for name in names):
            rank = 1
        elif any(q in name for name in names):
            rank = 2
        elif q in canonical or q in category.lower() or q in ZH_NAMES.get(canonical, "") or q in category_zh:
            rank = 3
        else:
            continue
        match = LabelMatch(label, canonical, category, label == canonical, zh, category_zh, rank == 0)
        ranked.append((rank, order, match))
    return [m for _, _, m in sorted(ranked, key=lambda r: (r[0], r[1]))]


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
