"""Quality checks for multiple-choice questions, per question and per set; each finding explains itself.

Per question:
- ``structure``: no correct option, fewer than two options;
- ``duplicate_options``: options equal but for case/space/punctuation (error), near-equal (warning), or a
  distractor naming the answer's method/motive/role in other words (warning);
- ``answer_in_stem``: the correct option appears word for word in the stem (and no distractor does);
- ``answer_length``: the correct option is markedly longer or shorter than every distractor;
- ``wrong_type``: an option of another type than the rest (a place among people, a time among places).

Per set (all questions of a kind, and each sub-type within it):
- ``answer_position``: the letters of the correct options against a uniform spread (chi-square);
- ``answerable_without_context``: blind strategies that see only the stem and the options (longest
  option, odd one out, most typical option, most overlap with the stem — and, when an LLM is
  configured and asked for, the model itself) beat chance by far (one-sided binomial test).

Plain data in (:class:`Item`), plain findings out, so the checks run on the DB, on an export or in
tests; :func:`check_game` adapts a game in the database.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from rapidfuzz import fuzz

from casebook.interchange import LETTERS, QuestionKind
from casebook.text import CJK, cjk_count, compact_key

from .offline import CONCEPTS, Pools, answer_slot, classify_option, concepts_of, near_duplicate

ERROR, WARNING, INFO = "error", "warning", "info"
MIN_SET = 5  # fewer questions than this say nothing about a set
FREE_TEXT_KINDS = {QuestionKind.OPEN_ENDED, QuestionKind.FACTUAL, QuestionKind.INFERENTIAL}


@dataclass
class Item:
    """One multiple-choice question as the checks see it (options that will be exported, in order)."""

    id: int | str
    kind: str
    stem: str
    options: list[str]
    correct: list[int]
    sub_type: str = ""
    multi: bool = False

    @property
    def label(self) -> str:
        stem = self.stem if len(self.stem) <= 40 else self.stem[:39] + "…"
        return f"#{self.id} {stem}"


@dataclass
class Finding:
    check: str
    severity: str
    message: str
    question: int | str | None = None  # None for a set finding
    scope: str = ""  # the set, e.g. "relations" or "relations/one"
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Report:
    items: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    def per_question(self) -> dict[int | str, list[Finding]]:
        out: dict[int | str, list[Finding]] = defaultdict(list)
        for f in self.findings:
            if f.question is not None:
                out[f.question].append(f)
        return dict(out)

    def per_set(self) -> list[Finding]:
        return [f for f in self.findings if f.question is None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions_checked": self.items,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [asdict(f) for f in self.findings],
        }


# --------------------------------------------------------------------------------------------
# Statistics (no scipy here: closed forms are enough)


def chi2_sf(x: float, dof: int) -> float:
    """P(X >= x) for a chi-square variable with integer ``dof`` degrees of freedom."""
    if x <= 0:
        return 1.0
    half = x / 2
    if dof % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, dof // 2):
            term *= half / i
            total += term
        return min(1.0, math.exp(-half) * total)
    total = math.erfc(math.sqrt(half))
    for i in range(1, (dof - 1) // 2 + 1):
        total += math.exp((i - 0.5) * math.log(half) - half - math.lgamma(i + 0.5))
    return min(1.0, total)


def binomial_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    return min(1.0, sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1)))


def _p(value: float) -> str:
    return f"{value:.2g}" if value >= 1e-4 else f"{value:.1e}"


# --------------------------------------------------------------------------------------------
# Per question


_norm = compact_key


def check_structure(item: Item) -> list[Finding]:
    out = []
    if len(item.options) < 2:
        out.append(Finding("structure", ERROR, f"only {len(item.options)} option(s): a multiple-choice question needs at "
                           "least two", item.id))
    if not item.correct:
        out.append(Finding("structure", ERROR, "no option is marked correct, so the question cannot be scored", item.id))
    return out


def check_duplicates(item: Item) -> list[Finding]:
    out = []
    for i in range(len(item.options)):
        for j in range(i + 1, len(item.options)):
            a, b = item.options[i], item.options[j]
            if _norm(a) == _norm(b):
                out.append(Finding("duplicate_options", ERROR,
                                   f"options {LETTERS[i]} and {LETTERS[j]} are the same text ({a!r}): a model cannot "
                                   "tell them apart and one of them is a wasted slot", item.id,
                                   data={"options": [LETTERS[i], LETTERS[j]]}))
            elif near_duplicate(a, b):
                score = fuzz.ratio(_norm(a), _norm(b))
                out.append(Finding("duplicate_options", WARNING,
                                   f"options {LETTERS[i]} {a!r} and {LETTERS[j]} {b!r} are near-duplicates (similarity "
                                   f"{score:.0f}/100): they say the same thing, so either both are right or both wrong",
                                   item.id, data={"options": [LETTERS[i], LETTERS[j]], "similarity": round(score, 1)}))
    return out


def check_same_concept(item: Item) -> list[Finding]:
    """A distractor that names the answer's concept in other words ("Revenge" for "Vendetta")."""
    slot = answer_slot(item.kind, item.sub_type, item.stem, "")
    if slot not in CONCEPTS or not item.correct:
        return []
    out = []
    for c in item.correct:
        if c >= len(item.options):
            continue
        answer = concepts_of(item.options[c], slot)
        for i, option in enumerate(item.options):
            if i in item.correct or not answer & concepts_of(option, slot):
                continue
            out.append(Finding("duplicate_options", WARNING,
                               f"option {LETTERS[i]} ({option!r}) names the same {slot} as the correct option "
                               f"{LETTERS[c]} ({item.options[c]!r}): a reader who knows the answer may pick either",
                               item.id, data={"options": [LETTERS[c], LETTERS[i]], "slot": slot}))
    return out


def _substantial(text: str) -> bool:
    key = _norm(text)
    cjk = cjk_count(key)
    return cjk >= 2 or len(key) >= 4


def check_answer_in_stem(item: Item) -> list[Finding]:
    stem = _norm(item.stem)
    wrong = [o for i, o in enumerate(item.options) if i not in item.correct]
    if any(_substantial(o) and _norm(o) in stem for o in wrong):
        return []  # the stem names distractors too: no cue
    out = []
    for i in item.correct:
        if i < len(item.options) and _substantial(item.options[i]) and _norm(item.options[i]) in stem:
            out.append(Finding("answer_in_stem", WARNING,
                               f"the correct option {LETTERS[i]} ({item.options[i]!r}) appears word for word in the stem "
                               "and no distractor does: the stem gives the answer away", item.id))
    return out


def check_answer_length(item: Item, ratio: float = 1.5, min_gap: int = 3) -> list[Finding]:
    if len(item.correct) != 1 or len(item.options) < 3:
        return []
    index = item.correct[0]
    if index >= len(item.options):
        return []
    answer = len(item.options[index].strip())
    others = [len(o.strip()) for i, o in enumerate(item.options) if i != index]
    mean = sum(others) / len(others)
    if answer >= max(others) + min_gap and answer >= ratio * mean:
        return [Finding("answer_length", WARNING,
                        f"the correct option {LETTERS[index]} is {answer} characters long, the distractors {min(others)}–"
                        f"{max(others)} (mean {mean:.0f}): picking the longest option finds the answer; write "
                        "distractors of similar length", item.id, data={"answer": answer, "distractors": others})]
    if answer + min_gap <= min(others) and answer * ratio <= mean:
        return [Finding("answer_length", WARNING,
                        f"the correct option {LETTERS[index]} is {answer} characters long, the distractors {min(others)}–"
                        f"{max(others)} (mean {mean:.0f}): picking the shortest option finds the answer", item.id,
                        data={"answer": answer, "distractors": others})]
    return []


def check_wrong_type(item: Item, pools: Pools | None) -> list[Finding]:
    if pools is None or item.kind == QuestionKind.RELATIONS or len(item.options) < 3:
        return []
    types = [classify_option(o, pools) for o in item.options]
    counts = Counter(t for t in types if t != "other")
    if not counts:
        return []
    major, count = counts.most_common(1)[0]
    if count < 2 or count * 2 < len(types) or count == len(types):
        return []
    out = []
    for i, kind in enumerate(types):
        if kind not in {"other", major}:
            examples = ", ".join(o for o, t in zip(item.options, types, strict=True) if t == major)
            out.append(Finding("wrong_type", WARNING,
                               f"option {LETTERS[i]} ({item.options[i]!r}) looks like a {kind}, but {count} of "
                               f"{len(types)} options are {'people' if major == 'person' else major + 's'} ({examples}): "
                               "an option of another type is easy to rule out", item.id,
                               data={"option": LETTERS[i], "type": kind, "majority": major}))
    return out


# --------------------------------------------------------------------------------------------
# Per set


def set_groups(items: list[Item]) -> dict[str, list[Item]]:
    """Sets to judge: each kind, and each sub-type within a kind (inferred for relations when missing)."""
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        groups[item.kind].append(item)
        sub = item.sub_type
        if not sub and item.kind == QuestionKind.RELATIONS:
            sub = "non_existent" if ("不存在" in item.stem or "non-existent" in item.stem.lower()) else "relationship"
        if sub:
            groups[f"{item.kind}/{sub}"].append(item)
    return dict(groups)


def check_answer_positions(items: list[Item], scope: str) -> list[Finding]:
    """Chi-square of the correct letters against uniform, per option count."""
    by_k: dict[int, list[Item]] = defaultdict(list)
    for item in items:
        if item.correct and len(item.options) >= 2:
            by_k[len(item.options)].append(item)
    out = []
    for k, group in sorted(by_k.items()):
        counts = Counter(i for item in group for i in item.correct if i < k)
        n = sum(counts.values())
        if n < max(MIN_SET, 2 * k):
            continue
        expected = n / k
        chi2 = sum((counts.get(i, 0) - expected) ** 2 / expected for i in range(k))
        p = chi2_sf(chi2, k - 1)
        spread = ", ".join(f"{LETTERS[i]}: {counts.get(i, 0)}" for i in range(k))
        top, top_n = counts.most_common(1)[0]
        data = {"options": k, "counts": {LETTERS[i]: counts.get(i, 0) for i in range(k)}, "chi2": round(chi2, 2),
                "p": p, "n": n}
        if p < 0.05:
            severity = ERROR if p < 0.001 else WARNING
            lead = (f"every correct answer is at letter {LETTERS[top]}" if top_n == n
                    else f"the correct answers crowd at letter {LETTERS[top]}")
            out.append(Finding("answer_position", severity,
                               f"{scope}: {lead} ({spread}; {n} answers over {k} options, about {expected:.1f} per letter "
                               f"if spread evenly). χ²={chi2:.1f}, df={k - 1}, p={_p(p)}: always answering "
                               f"'{LETTERS[top]}' scores {top_n / n:.0%} instead of {1 / k:.0%}. Shuffle the options.",
                               scope=scope, data=data))
        else:
            out.append(Finding("answer_position", INFO,
                               f"{scope}: correct letters are spread evenly enough ({spread}; χ²={chi2:.1f}, "
                               f"p={_p(p)})", scope=scope, data=data))
    return out


def _lengths(item: Item) -> list[float]:
    return [len(o.strip()) for o in item.options]


def _similarity(item: Item) -> list[float]:
    scores = []
    for i, a in enumerate(item.options):
        others = [fuzz.token_set_ratio(a, b) for j, b in enumerate(item.options) if j != i]
        scores.append(sum(others) / max(1, len(others)))
    return scores


_TERM = re.compile(f"[A-Za-z]{{3,}}|[{CJK}]")


def _stem_overlap(item: Item) -> list[float]:
    def grams(text: str) -> set[str]:
        chars = _TERM.findall(text.lower())
        return set(chars) | {a + b for a, b in zip(chars, chars[1:], strict=False)}

    stem = grams(item.stem)
    return [len(grams(o) & stem) for o in item.options]


# name -> (scores per option, higher = picked); explanation of the strategy
BLIND_STRATEGIES: dict[str, tuple[Callable[[Item], list[float]], str]] = {
    "longest option": (_lengths, "picks the longest option"),
    "odd one out": (lambda item: [-s for s in _similarity(item)], "picks the option least like the others"),
    "most typical option": (_similarity, "picks the option most like the others"),
    "stem overlap": (_stem_overlap, "picks the option sharing most words with the stem"),
}


def blind_accuracy(items: list[Item], scorer: Callable[[Item], list[float]]) -> tuple[float, float, int]:
    """(expected hits, chance hits, n) of a strategy that picks the best-scored option (ties split)."""
    hits = chance = 0.0
    n = 0
    for item in items:
        if not item.correct or len(item.options) < 2:
            continue
        scores = scorer(item)
        best = max(scores)
        tied = [i for i, s in enumerate(scores) if s == best]
        hits += sum(1 for i in tied if i in item.correct) / len(tied)
        chance += len(item.correct) / len(item.options)
        n += 1
    return hits, chance, n


def _blind_finding(name: str, how: str, hits: float, chance: float, n: int, scope: str) -> Finding | None:
    if n < MIN_SET:
        return None
    p0 = chance / n
    k = int(round(hits))
    p = binomial_sf(k, n, p0)
    accuracy = hits / n
    data = {"strategy": name, "accuracy": round(accuracy, 3), "chance": round(p0, 3), "n": n, "p": p}
    if p < 0.01 and accuracy >= p0 + 0.2:
        return Finding("answerable_without_context", WARNING,
                       f"{scope}: a blind strategy that {how} (seeing only stem and options, no script) is right on "
                       f"{hits:.0f} of {n} ({accuracy:.0%}) where chance is {p0:.0%} (binomial p={_p(p)}): these "
                       "questions can be answered without reading the game. Make distractors look like the answer.",
                       scope=scope, data=data)
    return None


def check_blind(items: list[Item], scope: str) -> list[Finding]:
    out = []
    for name, (scorer, how) in BLIND_STRATEGIES.items():
        finding = _blind_finding(name, how, *blind_accuracy(items, scorer), scope)
        if finding:
            out.append(finding)
    return out


def check_llm_blind(items: list[Item], scope: str, answers: dict[int | str, str]) -> list[Finding]:
    """The same test for an LLM that saw only stem and options; ``answers`` maps item id → letters."""
    scored = [item for item in items if item.id in answers and item.correct]
    hits = sum(1.0 for item in scored if set(answers[item.id]) & {LETTERS[i] for i in item.correct})
    chance = sum(len(item.correct) / len(item.options) for item in scored)
    finding = _blind_finding("llm without context", "asks the LLM", hits, chance, len(scored), scope)
    return [finding] if finding else []


def blind_llm_answers(items: list[Item], client) -> tuple[dict[int | str, str], list[str]]:
    """Ask the LLM each question with stem and options only; returns (answers, failure messages)."""
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
              "additionalProperties": False}

    def ask(item: Item) -> str:
        options = "\n".join(f"{LETTERS[i].upper()}: {o}" for i, o in enumerate(item.options))
        messages = [
            {"role": "system", "content": "Answer the multiple-choice question with the letter of the best option. "
                                          'Reply as JSON: {"answer": "a"}.'},
            {"role": "user", "content": f"{item.stem}\n{options}"},
        ]
        reply = client.chat_json(messages, schema, name="answer")
        letters = str(reply.get("answer", "") if isinstance(reply, dict) else reply).lower()
        return "".join(ch for ch in letters if ch in LETTERS[:len(item.options)])[:2]

    answers: dict[int | str, str] = {}
    failures: list[str] = []
    for item, answer, error in client.map(ask, items):
        if error is not None:
            failures.append(f"{item.label}: {error}")
        elif answer:
            answers[item.id] = answer
    return answers, failures


# --------------------------------------------------------------------------------------------
# Running everything


def check_items(items: list[Item], pools: Pools | None = None, *, llm_answers: dict[int | str, str] | None = None
                ) -> Report:
    """All per-question and per-set checks over plain items."""
    report = Report(items=len(items))
    for item in items:
        report.findings += check_structure(item)
        report.findings += check_duplicates(item)
        report.findings += check_same_concept(item)
        report.findings += check_answer_in_stem(item)
        report.findings += check_answer_length(item)
        report.findings += check_wrong_type(item, pools)
    for scope, group in sorted(set_groups(items).items()):
        report.findings += check_answer_positions(group, scope)
        report.findings += check_blind(group, scope)
        if llm_answers is not None:
            report.findings += check_llm_blind(group, scope, llm_answers)
    return report


def items_from_questions(questions: Iterable[Any]) -> list[Item]:
    """Items from ``annotate.models.Question`` rows (options prefetched), rejected options left out."""
    items = []
    for q in questions:
        if q.kind in FREE_TEXT_KINDS:
            continue
        options = [o for o in q.options.all() if o.review != "rejected"]
        items.append(Item(id=q.pk, kind=q.kind, stem=q.stem, sub_type=q.sub_type, multi=q.multi,
                          options=[o.text for o in options], correct=[i for i, o in enumerate(options) if o.is_correct]))
    return items


def check_game(game, *, kinds: Iterable[str] | None = None, client=None) -> Report:
    """Check a game's multiple-choice questions in the database; ``client`` adds the blind-LLM test."""
    from .distractors import game_pools

    questions = game.questions.prefetch_related("options").order_by("position", "id")
    if kinds:
        questions = questions.filter(kind__in=list(kinds))
    items = items_from_questions(questions)
    llm_answers = None
    failures: list[str] = []
    if client is not None and items:
        llm_answers, failures = blind_llm_answers(items, client)
    report = check_items(items, game_pools(game), llm_answers=llm_answers)
    if failures:
        report.findings.append(Finding("answerable_without_context", INFO,
                                       f"the blind LLM test could not ask {len(failures)} question(s): {failures[0]}",
                                       scope="all", data={"failures": failures}))
    return report
