"""Evidence spans: code-point offsets [start, end) into a stored text, with the quote verified.

Browsers count string positions in UTF-16 code units, so a character outside the Basic
Multilingual Plane (e.g. 𠮷 U+20BB7) counts 2 there and 1 here; :func:`utf16_to_codepoint`
converts, and :func:`create_span` re-checks the quote against the stored text so that a span can
never point at text other than what the annotator selected.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotate.models import Character, Clue, EvidenceSpan, Game
from annotate.services import audit
from casebook.interchange import SpanDocument


class SpanError(ValueError):
    """The span cannot be created; the message is meant for the annotator."""


def utf16_to_codepoint(text: str, offset: int) -> int:
    """Convert a UTF-16 code-unit offset into ``text`` to a code-point offset."""
    if offset < 0:
        raise SpanError("Offsets cannot be negative.")
    units = 0
    for index, char in enumerate(text):
        if units >= offset:
            if units > offset:
                raise SpanError("The offset falls inside a surrogate pair.")
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    if units == offset:
        return len(text)
    if units > offset:
        raise SpanError("The offset falls inside a surrogate pair.")
    raise SpanError("The offset is past the end of the text.")


def codepoint_to_utf16(text: str, offset: int) -> int:
    """Inverse of :func:`utf16_to_codepoint` (used by the reader to place highlights)."""
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text[:offset])


@dataclass
class Target:
    """The stored text a span points into."""

    document: str
    character: Character | None = None
    clue: Clue | None = None

    def text(self, game: Game) -> str:
        if self.document == SpanDocument.SCRIPT:
            return self.character.script
        if self.document == SpanDocument.GOALS:
            return "\n".join(self.character.goals or [])
        if self.document == SpanDocument.CLUE:
            return self.clue.text or self.clue.ocr_text
        if self.document == SpanDocument.MANUAL:
            return game.truth_text
        if self.document == SpanDocument.PUBLIC:
            return game.public_clue_text
        raise SpanError(f"Unknown document kind {self.document!r}.")


def resolve_target(game: Game, document: str, owner_id: int | None) -> Target:
    """Look up the character or clue that owns the text, refusing ids from another game."""
    if document in (SpanDocument.SCRIPT, SpanDocument.GOALS):
        character = Character.objects.filter(game=game, pk=owner_id).first() if owner_id else None
        if character is None:
            raise SpanError("Pick the character whose script the span is in.")
        return Target(document, character=character)
    if document == SpanDocument.CLUE:
        clue = Clue.objects.filter(game=game, pk=owner_id).first() if owner_id else None
        if clue is None:
            raise SpanError("Pick the clue the span is in.")
        return Target(document, clue=clue)
    if document in (SpanDocument.MANUAL, SpanDocument.PUBLIC):
        return Target(document)
    raise SpanError(f"Unknown document kind {document!r}.")


def create_span(
    game: Game, *, document: str, owner_id: int | None, start: int, end: int, quote: str, user=None,
    unit: str = "codepoint",
) -> EvidenceSpan:
    """Create a span after checking the offsets and that ``quote`` is exactly the text there.

    ``unit="utf16"`` accepts browser offsets and converts them. An identical existing span is
    returned instead of a duplicate.
    """
    target = resolve_target(game, document, owner_id)
    text = target.text(game)
    try:
        start, end = int(start), int(end)
    except (TypeError, ValueError) as exc:
        raise SpanError("Offsets must be whole numbers.") from exc
    if unit == "utf16":
        start, end = utf16_to_codepoint(text, start), utf16_to_codepoint(text, end)
    if not 0 <= start < end <= len(text):
        raise SpanError(f"Offsets {start}–{end} are outside the text (length {len(text)}) or empty.")
    stored = text[start:end]
    if stored != quote:
        raise SpanError(
            f"The selected text does not match the stored text at {start}–{end} "
            f"(expected {stored[:40]!r}, got {quote[:40]!r}). Reload the page and select again."
        )
    existing = EvidenceSpan.objects.filter(
        game=game, document=document, character=target.character, clue=target.clue, start=start, end=end
    ).first()
    if existing:
        return existing
    span = EvidenceSpan.objects.create(
        game=game, document=document, character=target.character, clue=target.clue,
        start=start, end=end, quote=stored, created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    audit.record(game, user, span, "create", None, audit.snapshot(span))
    return span


def span_label(span: EvidenceSpan) -> str:
    """Short human label: where the span is and its quote."""
    where = span.document
    if span.character_id and span.character:
        where = f"{span.character.name} ({span.document})"
    elif span.clue_id and span.clue:
        where = f"clue {span.clue}"
    quote = span.quote if len(span.quote) <= 40 else span.quote[:39] + "…"
    return f"{where} [{span.start}:{span.end}] “{quote}”"


def segments(text: str, spans: list[EvidenceSpan]) -> list[tuple[str, list[int]]]:
    """Split ``text`` into runs with the ids of the spans covering each run (for highlighting).

    The number of runs grows with the number of spans, never with the text length.
    """
    cuts = {0, len(text)}
    for s in spans:
        cuts.update((max(0, min(s.start, len(text))), max(0, min(s.end, len(text)))))
    points = sorted(cuts)
    runs = []
    for a, b in zip(points, points[1:], strict=False):
        if a == b:
            continue
        ids = [s.pk for s in spans if s.start <= a and s.end >= b]
        runs.append((text[a:b], ids))
    return runs
