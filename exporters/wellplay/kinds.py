"""Question kinds and sub-types: WellPlay stores only the value letter (objective / reasoning /
relations), so the sub-type is inferred from the question templates of wellplay.md §5.4, and
relation options are parsed into Conan labels.
"""
from __future__ import annotations

import re

from casebook import conan
from casebook.interchange import WELLPLAY_KIND_OF_LETTER, Option, OptionOrigin, Question, QuestionKind
from exporters.wellplay.layout import BRACKETED, OPTION_LETTERS
from exporters.wellplay.rows import CsvRow


def relation_names(stem: str, names: list[str]) -> list[str]:
    """People a relation question may name: 【A】/【B】 (zh), "between A and B" (en), then ``names``."""
    found = BRACKETED.findall(stem)
    m = re.search(r"relationship between (.+?) and (.+?)\?*\s*$", stem, flags=re.IGNORECASE)
    if m:
        found += [m.group(1).strip(), m.group(2).strip()]
    return found + names


def infer_sub_type(kind: str, multi: bool, stem: str, correct_options: list[str], names: list[str]) -> str:
    """The WellPlay sub-type from the question templates of §5.4 (no column stores it)."""
    low = stem.lower()
    if kind == QuestionKind.OBJECTIVE:
        return "who_killed" if ("被谁杀" in stem or low.startswith("who killed")) else "identity"
    if kind == QuestionKind.REASONING:
        if multi and ("怀疑" in stem or "suspect" in low):
            return "suspect"
        if "凶手是被害人" in stem or low.startswith("the perpetrator is the victim"):
            return "relationship"
        if "动机" in stem or "motiv" in low:
            return "why"
        if "怎么死" in stem or re.match(r"how did .+ die", low):
            return "how"
        if "在哪里被杀" in stem or re.match(r"where (was|did) .+ (killed|die)", low):
            return "where"
        if re.search(r"(什么时候|何时)被杀", stem) or re.match(r"when (was|did) .+ (killed|die)", low):
            return "when"
        return "other"
    if kind == QuestionKind.RELATIONS:
        if "不存在的关系" in stem or "non-existent relationship" in low:
            return "non_existent"
        if len(correct_options) == 1:
            parsed = conan.parse_relation_option(correct_options[0], relation_names(stem, names))
            count = len(parsed[1]) if parsed else correct_options[0].count(" and ") + 1
            return "two" if count >= 2 else "one"
        return ""
    return ""


def question_from_row(row: CsvRow, perspective: str, file: str, names: list[str]) -> Question:
    kind = WELLPLAY_KIND_OF_LETTER[row.value]
    letters = set(row.truth)
    options = [
        Option(text=t, correct=OPTION_LETTERS[i] in letters, origin=OptionOrigin.IMPORTED)
        for i, t in enumerate(row.options)
    ]
    correct = [o.text for o in options if o.correct]
    question = Question(
        kind=kind,
        stem=row.question,
        options=options,
        answer=row.truth,
        multi=row.type == "b",
        perspective=perspective,
        provenance={"file": file, "line": row.line},
    )
    question.sub_type = infer_sub_type(kind, question.multi, row.question, correct, names)
    if kind == QuestionKind.RELATIONS:
        people = relation_names(row.question, names)
        parsed = [conan.parse_relation_option(t, people) for t in row.options]
        if any(parsed):
            question.extra["option_labels"] = [
                {"subject": p[0], "labels": p[1], "object": p[2]} if p else None for p in parsed
            ]
    return question
