"""Checks run before any export is written.

Errors stop an export (unless ``--force``); warnings are reported and written. Published data
that was imported unedited keeps its known irregularities (duplicate options in WellPlay, a
free-text answer in WhodunitBench Monv, ``bb``/``ac`` truths) — those are warnings, so the real
datasets still export; the same defects in items written or edited in Casebook are errors.
"""
from __future__ import annotations

from collections import Counter

from casebook import interchange as ix

FORMAT_KINDS: dict[str, tuple[str, ...]] = {
    "wellplay": ix.WELLPLAY_KINDS,
    "whodunitbench": ix.WHODUNITBENCH_KINDS,
}
MAX_OPTIONS = {"wellplay": 5, "whodunitbench": 4}
MCQ_KINDS = set(ix.QuestionKind) - {ix.QuestionKind.OPEN_ENDED, ix.QuestionKind.FACTUAL, ix.QuestionKind.INFERENTIAL}


def is_published_unedited(q: ix.Question) -> bool:
    """Imported from a published file and not edited since (editors clear ``raw``/provenance)."""
    return bool(q.raw) or (bool(q.provenance.get("file")) and not q.provenance.get("edited"))


def validate_games(games: list[ix.Game], fmt: str) -> list[ix.Problem]:
    problems: list[ix.Problem] = []
    for game in games:
        problems.extend(validate_game(game, fmt))
    return problems


def validate_game(game: ix.Game, fmt: str) -> list[ix.Problem]:
    out: list[ix.Problem] = []

    def add(message: str, location: str = "", severity: str = "error") -> None:
        out.append(ix.Problem(file=game.slug, location=location, message=message, severity=severity))

    if not game.slug.strip():
        add("game has no id (slug)")
    if not game.title.strip():
        add("game has no title")
    names = [ix.name_key(c.name) for c in game.characters]
    for name, n in Counter(names).items():
        if n > 1:
            add(f"character name '{name}' is used {n} times")
    if fmt in FORMAT_KINDS:
        _validate_format(game, fmt, add)
    for i, q in enumerate(game.questions):
        if fmt in FORMAT_KINDS and q.kind not in FORMAT_KINDS[fmt]:
            continue
        out.extend(_validate_question(game, q, f"question {i + 1} ({q.kind})", fmt))
    return out


def _validate_format(game: ix.Game, fmt: str, add) -> None:
    """Format-level checks, reported through ``add``."""
    if fmt == "wellplay":
        if not game.playable:
            add("no playable characters: WellPlay needs one json/<name>.json per character")
        for q in game.questions_of(*ix.WELLPLAY_KINDS):
            if not q.perspective:
                add(f"WellPlay question without a perspective character: '{q.stem[:40]}'")
            elif (ch := game.character(q.perspective)) is None or not ch.playable:
                add(f"perspective '{q.perspective}' is not a playable character: '{q.stem[:40]}'")
    if fmt == "whodunitbench":
        murderers = [c.name for c in game.playable if c.is_murderer]
        if len(murderers) != 1:
            add(f"WhodunitBench needs exactly one murderer among the roles, found {len(murderers)}: {murderers}")
        for q in game.questions_of(ix.QuestionKind.LONG_SCRIPT):
            if not q.perspective or game.character(q.perspective) is None:
                add(f"long-script question without its role: '{q.stem[:40]}'")
        for ks in game.key_statements:
            if game.character(ks.owner) is None:
                add(f"key statement owner '{ks.owner}' is not a role", severity="warning")


def _validate_question(game: ix.Game, q: ix.Question, where: str, fmt: str) -> list[ix.Problem]:
    out: list[ix.Problem] = []
    published = is_published_unedited(q)

    def add(message: str, tolerated: bool = False) -> None:
        severity = "warning" if tolerated and published else "error"
        out.append(ix.Problem(file=game.slug, location=where, message=message, severity=severity))

    if not q.stem.strip() and not q.raw.strip():
        add("empty question text", tolerated=True)
    if q.kind not in MCQ_KINDS:
        if not q.answer.strip():
            add("open question without a ground-truth answer")
        return out
    texts = [o.text.strip() for o in q.options]
    if len(texts) < 2:
        add(f"needs at least 2 options, has {len(texts)}")
    limit = MAX_OPTIONS.get(fmt, len(ix.LETTERS))
    if len(texts) > limit:
        add(f"has {len(texts)} options; the {fmt} format holds at most {limit}")
    option_labels = q.extra.get("option_labels") or []
    for i, text in enumerate(texts):
        entry = option_labels[i] if i < len(option_labels) else None
        rendered_from_labels = q.kind == ix.QuestionKind.RELATIONS and entry and entry.get("labels")
        if not text and not rendered_from_labels:
            add(f"option {ix.LETTERS[i]} is empty")
    dupes = [t for t, n in Counter(texts).items() if n > 1 and t]
    if dupes:
        add(f"duplicate options: {dupes}", tolerated=True)
    letters = q.answer.strip().lower()
    if not letters:
        add("no correct answer")
    elif not set(letters) <= set(ix.LETTERS):
        add(f"answer '{q.answer[:40]}' is not option letters", tolerated=True)
    else:
        beyond = sorted({ch for ch in letters if ix.LETTERS.index(ch) >= len(texts)})
        if beyond:
            add(f"answer letter(s) {beyond} out of range for {len(texts)} options", tolerated=True)
        if len(set(letters)) > 1 and not q.multi:
            add(f"several answers '{letters}' on a single-answer question", tolerated=True)
        if len(letters) != len(set(letters)):
            add(f"answer '{letters}' repeats a letter", tolerated=True)
        marked = q.answer_letters
        if q.options and marked and set(marked) != set(letters):
            add(f"answer '{letters}' disagrees with the options marked correct '{marked}'")
    if q.image_clue and game.clue(q.image_clue) is None:
        add(f"linked image clue '{q.image_clue}' does not exist")
    return out


def errors(problems: list[ix.Problem]) -> list[ix.Problem]:
    return [p for p in problems if p.severity == "error"]
