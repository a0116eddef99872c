"""Offline distractors: no key, no network, and the fallback when no LLM is configured.

Candidates come from the game itself first (its characters; places and times found in the scripts
by Chinese and English patterns; killing methods mentioned in the scripts; the relationship graph),
then from a curated bilingual list (methods, motives, places, relationship roles), then, for
relation questions, from Conan labels of *other* high-level classes than the true ones, so a
distractor can never be a synonym of the answer. Candidates are in the game's language, ranked by
how close their length is to the correct answer (length must not give the answer away), and
near-duplicates of the answer or of options already present are dropped.

The same pools type options for the quality checks (:func:`classify_option`).
"""
from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rapidfuzz import fuzz

from casebook import conan
from casebook.interchange import QuestionKind, name_key
from casebook.text import CJK, compact_key, has_cjk

SLOTS = ("person", "place", "time", "method", "motive", "object", "role", "relation", "other")
SLOT_DESCRIPTIONS = {
    "person": "a person's name (one of the people in this game)",
    "place": "a place or location",
    "time": "a date and/or time of day, in the same format as the correct answer",
    "method": "a way the victim died / a method of killing",
    "motive": "a motive for the crime",
    "object": "an object or item (a weapon, a key, a letter …)",
    "role": "a relationship role or occupation relative to the victim (son, lawyer, enemy …)",
    "relation": 'a relationship statement in the template "<A> is <label> of <B>" using Conan relationship labels',
    "other": "the same type of thing as the correct answer",
}

_CN_NUM = "零〇一二两三四五六七八九十百"

# -- times ---------------------------------------------------------------------------------------
_ZH_PART_OF_DAY = ("凌晨", "清晨", "早上", "上午", "中午", "下午", "傍晚", "晚上", "深夜", "半夜", "白天", "夜里")
_EN_PART_OF_DAY = ("in the morning", "at noon", "in the afternoon", "in the evening", "at night", "at midnight", "at dawn")
ZH_TIME = re.compile(
    r"(?:\d{2,4}年)?\d{1,2}月\d{1,2}[日号](?:" + "|".join(_ZH_PART_OF_DAY) + r")?(?:[\d" + _CN_NUM + r"]{1,3}[点时](?:多|半|[\d"
    + _CN_NUM + r"]{1,3}分?|左右)?)?"
    r"|(?:" + "|".join(_ZH_PART_OF_DAY) + r")[\d" + _CN_NUM + r"]{1,3}[点时](?:多|半|[\d" + _CN_NUM + r"]{1,3}分?|左右)?"
    r"|\d{1,2}[:：]\d{2}"
)
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
EN_TIME = re.compile(
    r"\b(?:(?:around|about|at|after|before)\s+)?\d{1,2}(?::\d{2})?\s?(?:a\.?m\.?|p\.?m\.?|o'clock)(?:\s+(?:on|that)\s+\w+)?"
    r"|\b(?:" + _MONTHS + r")\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?"
    r"|\b(?:that|on the|in the|late at|early in the)\s+(?:morning|afternoon|evening|night)\b",
    re.IGNORECASE,
)

# -- places --------------------------------------------------------------------------------------
_ZH_PLACE_NOUNS = (
    "房间|卧室|书房|客厅|厨房|餐厅|浴室|卫生间|厕所|阳台|花园|院子|庭院|走廊|楼梯|地下室|阁楼|仓库|办公室|大厅|门口|"
    "家里|家中|河边|湖边|岸上|海边|桥上|树林|山上|村口|井边|甲板上|船舱|船上|酒吧|客栈|旅馆|酒店|医院|学校|教室|"
    "实验室|宿舍|喷泉|广场|车里|车库|房顶|天台|屋里|屋顶|后院|别墅|山庄|泳池|游泳池|公园|街上|小巷|巷子"
)
ZH_PLACE = re.compile(
    f"在((?:[{CJK}]{{0,6}}?的)?[{CJK}]{{0,4}}?(?:" + _ZH_PLACE_NOUNS + r"))"
)
_EN_PLACE_NOUNS = (
    "room|bedroom|study|living room|kitchen|dining room|bathroom|toilet|balcony|garden|yard|courtyard|corridor|hallway|"
    "stairs|staircase|basement|cellar|attic|warehouse|office|hall|lobby|doorway|house|home|villa|inn|hotel|riverside|"
    "river|riverbank|lake|shore|beach|bridge|woods|forest|mountain|village|well|deck|cabin|ship|boat|bar|hospital|"
    "school|classroom|laboratory|lab|dormitory|fountain|square|car|garage|roof|rooftop|pool|park|street|alley|gym|"
    "library|restaurant|shop|store|church|station"
)
EN_PLACE = re.compile(
    r"\b(?:in|at|on|near|by|inside|behind|beside|outside)\s+(?:the|his|her|their|my|a|an)\s+"
    r"(?:[a-z'-]+\s+){0,2}?(?:" + _EN_PLACE_NOUNS + r")s?\b",
    re.IGNORECASE,
)

# -- methods ---------------------------------------------------------------------------------------
ZH_METHOD = re.compile(
    f"(?:被|用)[{CJK}]{{1,5}}?(?:毒死|刺死|捅死|勒死|掐死|打死|杀死|砸死|淹死|烧死|闷死|推下|害死|割喉)"
)
EN_METHOD = re.compile(
    r"\b(?:poisoned|stabbed|strangled|shot|drowned|suffocated|smothered|bludgeoned|hanged|beaten to death|"
    r"pushed (?:off|down|from) (?:a|an|the) [a-z]+)(?:\s+(?:with|by|in)\s+(?:a|an|the|his|her)\s+[a-z]+)?",
    re.IGNORECASE,
)

# motive words: a curated motive the scripts mention is ranked before the others
ZH_MOTIVE = re.compile(r"报仇|复仇|仇杀|情杀|误杀|灭口|嫉妒|遗产|保险金|债务|勒索|自卫|争风吃醋")
EN_MOTIVE = re.compile(
    r"\b(?:revenge|jealousy|greed|blackmail(?:ed)?|inheritance|insurance money|debts?|self-defen[cs]e|grudge|"
    r"crime of passion)\b",
    re.IGNORECASE,
)

CURATED: dict[str, dict[str, tuple[str, ...]]] = {
    "method": {
        "zh": (
            "被毒药毒死的", "用刀捅死的", "被绳子勒死的", "用枪打死的", "被拳头打死的", "被推下楼摔死的", "溺水而死",
            "被钝器击打头部致死", "被火烧死的", "被枕头捂死的", "触电身亡", "被车撞死的", "服用过量安眠药而死",
            "被掐死的", "从背后被刺死的",
        ),
        "en": (
            "poisoned", "stabbed with a knife", "strangled with a rope", "shot with a gun", "beaten to death",
            "pushed from a height", "drowned", "struck on the head with a blunt object", "burned to death",
            "smothered with a pillow", "electrocuted", "run over by a car", "an overdose of sleeping pills",
            "strangled by hand", "stabbed in the back",
        ),
    },
    "motive": {
        "zh": (
            "情杀", "仇杀", "利益", "误杀", "灭口", "嫉妒", "争夺遗产", "为了保险金", "报复多年前的旧怨", "被勒索后反击",
            "为了掩盖罪行", "自卫", "为家人报仇", "债务纠纷", "争风吃醋",
        ),
        "en": (
            "crime of passion", "revenge", "money", "accidental killing", "to silence a witness", "jealousy",
            "to inherit his fortune", "for the insurance money", "an old grudge", "he was being blackmailed",
            "to cover up another crime", "self-defence", "to avenge a family member", "a dispute over debts",
            "a love rivalry",
        ),
    },
    "place": {
        "zh": ("书房", "厨房", "卧室", "客厅", "花园", "河边", "甲板上", "地下室", "阁楼", "走廊", "浴室", "仓库", "后院", "村口"),
        "en": (
            "in the study", "in the kitchen", "in the bedroom", "in the living room", "in the garden", "by the river",
            "on the deck", "in the basement", "in the attic", "in the corridor", "in the bathroom", "in the warehouse",
            "in the backyard", "at the village entrance",
        ),
    },
    "object": {
        "zh": ("钥匙", "信封", "毒药瓶", "匕首", "怀表", "手帕", "日记本", "照片", "戒指", "绳子", "药方", "茶杯", "账本", "手枪"),
        "en": (
            "a key", "an envelope", "a bottle of poison", "a dagger", "a pocket watch", "a handkerchief", "a diary",
            "a photograph", "a ring", "a rope", "a prescription", "a teacup", "a ledger", "a pistol",
        ),
    },
    "role": {
        "zh": (
            "儿子", "父亲", "律师", "仇人", "妻子", "丈夫", "朋友", "同事", "邻居", "情人", "学生", "老师", "医生", "管家",
            "陌生人", "兄弟", "女儿", "母亲", "雇主", "仆人",
        ),
        "en": (
            "son", "father", "lawyer", "enemy", "wife", "husband", "friend", "colleague", "neighbour", "lover", "student",
            "teacher", "doctor", "butler", "stranger", "brother", "daughter", "mother", "employer", "servant",
        ),
    },
}

# Concepts: a distractor must not say the same thing as the answer in other words ("Vendetta" vs
# "Revenge", "被毒药毒死的" vs "服毒"). Keywords are matched case-insensitively inside the option.
CONCEPTS: dict[str, list[tuple[str, ...]]] = {
    "method": [
        ("毒", "poison", "overdose", "安眠药", "sleeping pill"),
        ("刀", "捅", "刺", "割", "stab", "knife", "cut", "slash"),
        ("勒", "掐", "绞", "strangl", "rope", "hang"),
        ("枪", "shot", "shoot", "gun"),
        ("拳", "钝器", "砸", "打死", "beat", "blunt", "struck", "fist", "bludgeon"),
        ("推下", "摔", "坠", "push", "height", "fall"),
        ("溺", "淹", "drown"),
        ("烧", "火", "burn", "fire"),
        ("捂", "闷", "窒息", "smother", "suffocat", "pillow"),
        ("电", "electr"),
        ("车", "run over", "car"),
    ],
    "motive": [
        ("仇", "报复", "复仇", "旧怨", "revenge", "vendetta", "grudge", "aveng"),
        ("情杀", "争风吃醋", "passion", "love", "rival"),
        ("利益", "遗产", "保险", "债", "钱", "money", "interest", "inherit", "insurance", "debt", "fortune", "greed"),
        ("误杀", "accident"),
        ("灭口", "掩盖", "silence", "cover up", "witness"),
        ("嫉妒", "jealous", "envy"),
        ("自卫", "self-defen"),
        ("勒索", "blackmail"),
    ],
    "role": [
        ("儿子", "女儿", "子女", "son", "daughter", "child"),
        ("父亲", "母亲", "父母", "father", "mother", "parent"),
        ("妻子", "丈夫", "配偶", "wife", "husband", "spouse"),
        ("仇人", "敌人", "enem", "foe"),
        ("情人", "恋人", "lover", "boyfriend", "girlfriend"),
    ],
}


def concepts_of(text: str, slot: str) -> set[int]:
    """Indexes of the :data:`CONCEPTS` groups of ``slot`` that ``text`` belongs to."""
    lowered = (text or "").lower()
    return {i for i, keys in enumerate(CONCEPTS.get(slot, [])) if any(k in lowered for k in keys)}


# stem cues for the answer slot when the sub-type is not set
_STEM_CUES: list[tuple[str, re.Pattern[str]]] = [
    ("time", re.compile(r"什么时候|何时|几点|哪天|when\b|what time", re.IGNORECASE)),
    ("place", re.compile(r"哪里|哪儿|什么地方|何处|where\b", re.IGNORECASE)),
    ("motive", re.compile(r"动机|为什么|为何|why\b|motive", re.IGNORECASE)),
    ("method", re.compile(r"怎么死|如何死|怎样死|死因|how did .* die|how was .* killed|cause of death", re.IGNORECASE)),
    ("object", re.compile(r"什么东西|什么物品|哪件|凶器|用什么|拿着什么|what (?:object|item|weapon|thing)|which (?:object|item|weapon)",
                          re.IGNORECASE)),
    ("role", re.compile(r"什么人|什么关系|who is that|relation to the victim", re.IGNORECASE)),
    ("person", re.compile(r"被谁|是谁|哪个人|哪两个人|凶手是|怀疑|\bwho\b|suspect|which (?:person|people)", re.IGNORECASE)),
]
_SUB_TYPE_SLOTS = {
    "who_killed": "person", "identity": "person", "suspect": "person", "how": "method", "why": "motive",
    "where": "place", "when": "time", "relationship": "role", "motive": "motive", "method": "method",
}


_norm = compact_key


def _core(a: str, b: str) -> tuple[str, str]:
    """What two strings differ in: both with their common prefix and suffix removed."""
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    j = 0
    while j < min(len(a), len(b)) - i and a[-1 - j] == b[-1 - j]:
        j += 1
    return a[i:len(a) - j], b[i:len(b) - j]


_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


def near_duplicate(a: str, b: str, threshold: float = 90.0) -> bool:
    """Two options that say the same thing: equal but for case/spacing/punctuation, or nearly equal text
    whose differing parts are themselves alike ("2032年5月14日凌晨" vs "…白天" differ in a whole word,
    so they are distinct; "poisoned" vs "Poisoned." are not)."""
    ka, kb = _norm(a), _norm(b)
    if not ka or not kb:
        return False
    if ka == kb or _PUNCT.sub("", ka) == _PUNCT.sub("", kb):
        return True
    if fuzz.ratio(ka, kb) < threshold:
        return False
    ca, cb = _core(ka, kb)
    if any(ch.isdigit() for ch in ca + cb):
        return False  # "5月1日" vs "5月14日": another date, not a repeat
    if not _PUNCT.sub("", ca) or not _PUNCT.sub("", cb):
        return True
    return fuzz.ratio(ca, cb) >= 50


def mentions_name(text: str, names: Iterable[str]) -> bool:
    key = name_key(text)
    return any(n and (name_key(n) == key) for n in names)


def answer_slot(kind: str, sub_type: str, stem: str, answer: str, names: Iterable[str] = ()) -> str:
    """The type of thing a question asks for: the answer's own shape (a name, a time), then what the
    stem asks ("where …" is a place even when tagged ``how``), then the sub-type, else "other"."""
    if kind == QuestionKind.RELATIONS:
        return "relation"
    names = list(names)
    if answer and mentions_name(answer, names):
        return "person"
    if answer and (ZH_TIME.fullmatch(answer.strip()) or EN_TIME.fullmatch(answer.strip())):
        return "time"
    for slot, pattern in _STEM_CUES:
        if pattern.search(stem or ""):
            return slot
    return _SUB_TYPE_SLOTS.get(sub_type, "other")


# --------------------------------------------------------------------------------------------
# Pools


@dataclass
class Pools:
    """Candidate answers of each type found in one game (plus the curated lists)."""

    language: str
    names: list[str] = field(default_factory=list)  # playable characters first
    places: list[str] = field(default_factory=list)
    times: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    motives: list[str] = field(default_factory=list)  # curated motives the game's texts mention
    # (source name key, target name key) -> fine labels of the edge "target is L of source"
    relations: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def candidates(self, slot: str) -> list[tuple[str, bool]]:
        """(text, found in the game) for a slot, game-found first, deduplicated."""
        lang = "zh" if self.language == "zh" else "en"
        found: list[str] = {
            "person": self.names, "place": self.places, "time": self.times, "method": self.methods,
            "motive": self.motives,
        }.get(slot, [])
        curated = CURATED.get(slot, {}).get(lang, ())
        seen: set[str] = set()
        out: list[tuple[str, bool]] = []
        for text, in_game in [(t, True) for t in found] + [(t, False) for t in curated]:
            key = _norm(text)
            if key and key not in seen:
                seen.add(key)
                out.append((text, in_game))
        return out


def _frequent(matches: Iterable[str], limit: int = 60) -> list[str]:
    counts = Counter(m.strip(" ，,。.") for m in matches if m and m.strip())
    return [text for text, _ in counts.most_common(limit)]


def find_times(text: str, language: str) -> list[str]:
    return _frequent((ZH_TIME if language == "zh" else EN_TIME).findall(text or ""))


def find_places(text: str, language: str) -> list[str]:
    if language == "zh":
        return _frequent(ZH_PLACE.findall(text or ""))
    return _frequent(m.group(0) for m in EN_PLACE.finditer(text or "") if " of " not in m.group(0).lower())


def find_methods(text: str, language: str) -> list[str]:
    if language == "zh":
        return _frequent(ZH_METHOD.findall(text or ""))
    return _frequent(m.group(0) for m in EN_METHOD.finditer(text or ""))


def find_motives(text: str, language: str) -> list[str]:
    """The curated motives whose key word the texts mention (e.g. 仇杀 when a script speaks of 报仇)."""
    lang = "zh" if language == "zh" else "en"
    words = {w.lower() for w in (ZH_MOTIVE if lang == "zh" else EN_MOTIVE).findall(text or "")}
    out = []
    for motive in CURATED["motive"][lang]:
        lowered = motive.lower()
        if any(w in lowered or lowered in w or (lang == "zh" and w[-1:] in lowered) for w in words):
            out.append(motive)
    return out


def build_pools(language: str, names: list[str], texts: Iterable[str],
                relations: Iterable[tuple[str, str, list[str]]] = ()) -> Pools:
    """Pools from a game's character names, its texts (scripts, clues, manual) and its graph edges."""
    corpus = "\n".join(t for t in texts if t)
    pools = Pools(
        language=language,
        names=list(dict.fromkeys(n for n in names if n)),
        places=find_places(corpus, language),
        times=find_times(corpus, language),
        methods=find_methods(corpus, language),
        motives=find_motives(corpus, language),
    )
    for source, target, labels in relations:
        pools.relations.setdefault((name_key(source), name_key(target)), []).extend(labels)
    return pools


def classify_option(text: str, pools: Pools) -> str:
    """person / place / time / other — the coarse type of an option, for the wrong-type check."""
    stripped = (text or "").strip()
    if not stripped:
        return "other"
    if mentions_name(stripped, pools.names):
        return "person"
    if ZH_TIME.fullmatch(stripped) or EN_TIME.fullmatch(stripped):
        return "time"
    lowered = _norm(stripped)
    place_pool = {_norm(p) for p in pools.places} | {_norm(p) for p in CURATED["place"]["zh"] + CURATED["place"]["en"]}
    if lowered in place_pool or lowered.removeprefix("在") in place_pool:
        return "place"
    if (ZH_PLACE.fullmatch("在" + stripped.removeprefix("在")) and len(stripped) <= 12) or EN_PLACE.fullmatch(stripped):
        return "place"
    return "other"


# --------------------------------------------------------------------------------------------
# Generation


class OfflineError(ValueError):
    """No distractor can be made offline for this question; the message says why."""


_CN_DIGITS = "零一二三四五六七八九"
_ZH_HOUR = re.compile(r"([\d零一二两三四五六七八九十]{1,3})[点时]")


def _cn_to_int(text: str) -> int | None:
    """Arabic or Chinese numerals up to 99 ("九" 9, "十一" 11, "两" 2)."""
    if text.isdigit():
        return int(text)
    text = text.replace("两", "二")
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_CN_DIGITS.index(tens) if tens else 1) * 10 + (_CN_DIGITS.index(ones) if ones else 0)
    return _CN_DIGITS.index(text) if len(text) == 1 and text in _CN_DIGITS else None


def _int_to_cn(value: int) -> str:
    if value < 10:
        return _CN_DIGITS[value]
    tens, ones = divmod(value, 10)
    return ("" if tens == 1 else _CN_DIGITS[tens]) + "十" + (_CN_DIGITS[ones] if ones else "")


def _time_variants(answer: str, language: str, rng: random.Random) -> list[str]:
    """Same-format variants of a time answer: another part of the day, another day or hour."""
    by_part: list[str] = []
    parts = _ZH_PART_OF_DAY if language == "zh" else _EN_PART_OF_DAY
    hour = _ZH_HOUR.search(answer) if language == "zh" else None
    if hour is not None:  # "晚上九点多": another hour, same part of the day ("下午九点" would be nonsense)
        value = _cn_to_int(hour.group(1))
        for delta in (-2, -1, 1, 2):
            if value is not None and 1 <= value + delta <= 12:
                number = str(value + delta) if hour.group(1).isdigit() else _int_to_cn(value + delta)
                by_part.append(answer[: hour.start(1)] + number + answer[hour.end(1):])
    else:
        for part in parts:
            if part in answer:
                by_part += [answer.replace(part, other) for other in parts if other != part]
    by_number: list[str] = []
    numbers = [m for m in re.finditer(r"\d+", answer) if hour is None or m.start() != hour.start(1)]
    for m in numbers[-2:]:
        value = int(m.group(0))
        is_hour = bool(re.match(r"\s*(?:[ap]\.?m\b|:|o'clock|点|时)", answer[m.end():], re.IGNORECASE))
        is_minute = m.start() > 0 and answer[m.start() - 1] in ":："
        for delta in (-3, -1, 1, 2, 5):
            new = value + delta
            if new <= 0 or (is_hour and new > 12) or (is_minute and new > 59):
                continue
            digits = f"{new:02d}" if is_minute else str(new)
            by_number.append(answer[: m.start()] + digits + answer[m.end():])
    rng.shuffle(by_part)
    rng.shuffle(by_number)
    # alternate the two kinds, so the distractors differ from the answer in different ways
    out = [v for pair in zip(by_part, by_number, strict=False) for v in pair]
    longer = by_part if len(by_part) > len(by_number) else by_number
    return out + longer[min(len(by_part), len(by_number)):]


def _relation_candidates(answer: str, names: list[str], sub_type: str, pools: Pools,
                         rng: random.Random, existing: list[str]) -> list[tuple[str, bool]]:
    parsed = conan.parse_relation_option(answer, names)
    if parsed is None:
        raise OfflineError(f"the correct option {answer!r} is not in the relation template '<B> is <labels> of <A>'")
    subject, labels, obj = parsed
    if sub_type == "non_existent":
        # the answer is the false label; distractors must be true labels of the pair
        true = pools.relations.get((name_key(obj), name_key(subject)), [])
        present = {_norm(e) for e in existing}
        out = [(conan.render_relation_option(subject, [label], obj), True) for label in true]
        out = [c for c in out if _norm(c[0]) not in present]
        if not out:
            raise OfflineError(f"the relationship graph has no further true label for {obj} → {subject}")
        return out
    used = {conan.category_of(label) for label in labels}
    pool = [label for label in conan.all_fine_labels()
            if conan.category_of(label) not in used and conan.category_of(label) not in {"Special relationships", "Unrelated"}]
    rng.shuffle(pool)
    k = len(labels)
    out: list[tuple[str, bool]] = []
    for i in range(0, len(pool) - k + 1, k):  # disjoint label groups: no option shares a label with another
        out.append((conan.render_relation_option(subject, pool[i:i + k], obj), False))
    return out


def no_candidates_message(slot: str, *, all_taken: bool = False) -> str:
    """Why offline generation found nothing, and what to do instead."""
    what = SLOT_DESCRIPTIONS.get(slot, SLOT_DESCRIPTIONS["other"])
    reason = (f"every candidate {slot} option duplicates an existing option" if all_taken else
              f"no candidate {slot} options are known for this game")
    return (f"{reason}: the question asks for {what}, and the game's texts and the built-in lists offer nothing "
            "more. Write the wrong options yourself, or generate them with the LLM (it needs an endpoint: "
            "OPENAI_API_KEY / OPENAI_BASE_URL).")


def offline_distractors(*, stem: str, answer: str, n: int, pools: Pools, kind: str = "", sub_type: str = "",
                        existing: Iterable[str] = (), seed: int | str = 0) -> list[str]:
    """Up to ``n`` wrong options for a question; raises :class:`OfflineError` when none can be made."""
    if n <= 0:
        return []
    if not answer.strip():
        raise OfflineError("the question has no correct option to match distractors to")
    rng = random.Random(f"{seed}|{stem}|{answer}")
    existing = [e for e in existing if e]
    slot = answer_slot(kind, sub_type, stem, answer, pools.names)
    if slot == "relation":
        candidates = _relation_candidates(answer, pools.names, sub_type, pools, rng, existing)
    else:
        candidates = pools.candidates(slot)
        if slot == "time":
            variants = _time_variants(answer, pools.language, rng)
            candidates = [(t, True) for t in variants] + candidates
        if slot == "person":  # not the people the stem is about
            candidates = [(c, g) for c, g in candidates if name_key(c) not in name_key(stem) and not (
                len(c) >= 2 and _norm(c) in _norm(stem))]
        if pools.language == "zh":
            candidates = [(c, g) for c, g in candidates if has_cjk(c)]
        else:
            candidates = [(c, g) for c, g in candidates if not has_cjk(c)]
        if slot == "place" and pools.language == "zh" and answer.startswith("在"):
            candidates = [("在" + c.removeprefix("在"), g) for c, g in candidates]
        if pools.language != "zh" and slot != "person" and answer[:1].isalpha():
            # match the answer's capitalisation: case must not give the answer away
            upper = answer[:1].isupper()
            candidates = [((c[:1].upper() if upper else c[:1].lower()) + c[1:], g) for c, g in candidates]
    if not candidates:
        raise OfflineError(no_candidates_message(slot))

    taken = [answer] + existing
    target = max(1, len(answer))
    answer_concepts = concepts_of(answer, slot)

    def fits(text: str) -> bool:
        if answer_concepts & concepts_of(text, slot):
            return False  # the answer in other words
        key = _norm(text)
        for other in taken:
            other_key = _norm(other)
            if not key or near_duplicate(text, other):
                return False
            if slot not in {"person", "relation", "time"} and (key in other_key or other_key in key):
                return False
        return True

    variant_rank = {text: i for i, text in enumerate(variants)} if slot == "time" else {}
    scored = []
    for text, in_game in candidates:
        length_gap = abs(len(text) - target) / target
        # variants of the answer keep their alternating order; other candidates get a little chance
        spread = variant_rank[text] * 0.01 if text in variant_rank else rng.random() * 0.3
        scored.append((length_gap + (0.0 if in_game else 0.25) + spread, text))
    scored.sort()
    picked: list[str] = []
    for _, text in scored:
        if len(picked) == n:
            break
        if fits(text):
            picked.append(text)
            taken.append(text)
    if not picked:
        raise OfflineError(no_candidates_message(slot, all_taken=True))
    return picked
