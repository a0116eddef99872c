"""Evidence spans: code-point offsets [start, end) into a stored text, with the quote verified.

Browsers count string positions in UTF-16 code units, so a character outside the Basic
Multilingual Plane (e.g. 𠮷 U+20BB7) counts 2 there and 1 here; :func:`utf16_to_codepoint`
converts, and :func:`create_span` re-checks the quote against the stored text so that a span can
never point at text other than what the annotator selected.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from annotate.models import ChainNode, Character, Clue, EvidenceSpan, Game, Membership
from annotate.services.permissions import ROLE_RANK
from casebook import audit
from casebook.interchange import DEFAULT_SPAN_LABELS, SpanDocument, Status
from casebook.models import AuditEntry


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
    return len(text[:offset].encode("utf-16-le", "surrogatepass")) // 2  # C speed: the reader converts whole scripts


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


def span_labels(game: Game) -> dict[str, tuple[str, str]]:
    """The game's span label set, value -> (zh, en): ``game.extra["span_labels"]`` or the default set."""
    configured = (game.extra or {}).get("span_labels")
    if isinstance(configured, dict) and configured:
        return {str(k): (str(v[0]), str(v[1])) for k, v in configured.items()}
    return dict(DEFAULT_SPAN_LABELS)


def parse_span_labels(text: str) -> dict[str, tuple[str, str]]:
    """Read a label set written one per line as ``value = 中文 / English`` (the manager's form)."""
    labels: dict[str, tuple[str, str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        value, sep, names = line.partition("=")
        zh, slash, en = names.partition("/")
        value = value.strip()
        if not sep or not slash or not value or not zh.strip() or not en.strip():
            raise SpanError(f"Line {number} should read “value = 中文 / English”, e.g. “clue = 线索 / clue”.")
        if len(value) > 40:
            raise SpanError(f"Line {number}: the value “{value[:40]}…” is longer than 40 characters.")
        labels[value] = (zh.strip(), en.strip())
    if not labels:
        raise SpanError("Give at least one label.")
    return labels


def set_span_labels(game: Game, labels: dict[str, tuple[str, str]], user=None) -> None:
    """Store the game's label set; spans whose label left the set keep it (it is still exported)."""
    before = {"span_labels": (game.extra or {}).get("span_labels")}
    stored = {k: list(v) for k, v in labels.items()}
    game.extra = {**(game.extra or {}), "span_labels": stored}
    game.save(update_fields=["extra", "updated_at"])
    audit.record(game, user, game, "span_labels", before, {"span_labels": stored})


def _check_label(game: Game, label: str) -> str:
    label = (label or "").strip()
    if label and label not in span_labels(game):
        known = ", ".join(span_labels(game))
        raise SpanError(f"“{label}” is not one of this game's span labels ({known}).")
    return label


def _offsets(text: str, start, end, unit: str) -> tuple[int, int]:
    """Validated code-point offsets of a non-empty range of ``text``."""
    try:
        start, end = int(start), int(end)
    except (TypeError, ValueError) as exc:
        raise SpanError("Offsets must be whole numbers.") from exc
    if unit == "utf16":
        start, end = utf16_to_codepoint(text, start), utf16_to_codepoint(text, end)
    if not 0 <= start < end <= len(text):
        raise SpanError(f"Offsets {start}–{end} are outside the text (length {len(text)}) or empty.")
    return start, end


def _target_of(span: EvidenceSpan) -> Target:
    return Target(span.document, character=span.character, clue=span.clue)


def create_span(
    game: Game, *, document: str, owner_id: int | None, start: int, end: int, quote: str, user=None,
    unit: str = "codepoint", label: str = "",
) -> EvidenceSpan:
    """Create a span after checking the offsets and that ``quote`` is exactly the text there.

    ``unit="utf16"`` accepts browser offsets and converts them. An identical existing span is
    returned instead of a duplicate (with its label set when it had none).
    """
    target = resolve_target(game, document, owner_id)
    text = target.text(game)
    label = _check_label(game, label)
    start, end = _offsets(text, start, end, unit)
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
        if label and not existing.label:
            return update_span(game, existing.pk, label=label, user=user)
        return existing
    span = EvidenceSpan.objects.create(
        game=game, document=document, character=target.character, clue=target.clue, label=label,
        start=start, end=end, quote=stored, created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    audit.record(game, user, span, "create", None, audit.snapshot(span))
    return span


class SpanNotFound(SpanError):
    """No such span (or deletion to undo) in this game; ids of other games are treated alike."""


def get_span(game: Game, span_id) -> EvidenceSpan:
    """The span of this game (ids of other games are refused like unknown ones)."""
    span = EvidenceSpan.objects.select_related("character", "clue").filter(game=game, pk=span_id).first()
    if span is None:
        raise SpanNotFound("This span no longer exists; reload the page.")
    return span


@dataclass
class Citation:
    """Something that cites a span: a question, a relationship or a chain node."""

    kind: str
    pk: int
    title: str
    status: str
    url_name: str
    url_args: tuple


def citations(spans: list[EvidenceSpan]) -> dict[int, list[Citation]]:
    """What cites each span (three queries, whatever the number of spans)."""
    ids = [s.pk for s in spans]
    cited: dict[int, list[Citation]] = {pk: [] for pk in ids}
    through = EvidenceSpan.questions.through.objects.filter(evidencespan_id__in=ids).select_related("question")
    for row in through:
        q = row.question
        cited[row.evidencespan_id].append(Citation("question", q.pk, q.stem[:60] or f"question {q.pk}", q.status,
                                                   "annotate:question_edit", (q.pk,)))
    through = EvidenceSpan.relationships.through.objects.filter(evidencespan_id__in=ids).select_related(
        "relationship__source", "relationship__target")
    for row in through:
        r = row.relationship
        title = f"{r.source.name} → {r.target.name}: {', '.join(r.labels)}"
        cited[row.evidencespan_id].append(Citation("relationship", r.pk, title, r.status,
                                                   "annotate:relationship_edit", (r.pk,)))
    through = EvidenceSpan.chain_nodes.through.objects.filter(evidencespan_id__in=ids).select_related("chainnode__chain")
    for row in through:
        n = row.chainnode
        cited[row.evidencespan_id].append(Citation("chain node", n.pk, f"{n.chain.title}: {n.text[:50]}", n.chain.status,
                                                   "annotate:node_edit", (n.chain_id, n.pk)))
    return cited


def locked_by(cited: list[Citation], role: str | None) -> Citation | None:
    """The approved work that makes a span read-only for this role (annotators), else ``None``."""
    if ROLE_RANK.get(role or "", 0) >= ROLE_RANK[Membership.Role.REVIEWER]:
        return None
    return next((c for c in cited if c.status == Status.APPROVED), None)


def _may_change(span: EvidenceSpan, cited: list[Citation], role: str | None) -> None:
    """Annotators may not change a span that approved work cites (a reviewer must, after reopening)."""
    approved = locked_by(cited, role)
    if approved is not None:
        raise SpanError(f"Approved work cites this span ({approved.kind} “{approved.title}”); "
                        "only a reviewer or manager may change it. Ask for the approved item to be reopened.")


def update_span(game: Game, span_id, *, start=None, end=None, label: str | None = None, unit: str = "codepoint",
                user=None, role: str | None = Membership.Role.MANAGER) -> EvidenceSpan:
    """Move a span's boundaries and/or change its label; the quote is re-read from the stored text."""
    with transaction.atomic():
        EvidenceSpan.objects.select_for_update().filter(game=game, pk=span_id).first()  # serialise edits of this span
        span = get_span(game, span_id)
        _may_change(span, citations([span])[span.pk], role)
        before = audit.snapshot(span)
        if (start is None) != (end is None):
            raise SpanError("Give both the new start and the new end.")
        if start is not None:
            text = _target_of(span).text(game)
            new_start, new_end = _offsets(text, start, end, unit)
            clash = EvidenceSpan.objects.filter(game=game, document=span.document, character=span.character,
                                                clue=span.clue, start=new_start, end=new_end).exclude(pk=span.pk).first()
            if clash:
                raise SpanError(f"Another span already covers exactly {new_start}–{new_end} (“{clash.quote[:30]}”).")
            span.start, span.end, span.quote = new_start, new_end, text[new_start:new_end]
        if label is not None:
            span.label = _check_label(game, label)
        span.save(update_fields=["start", "end", "quote", "label"])
        audit.record(game, user, span, "update", before, audit.snapshot(span))
    return span


class SpanCited(SpanError):
    """Deleting needs confirmation: the message says what cites the span."""

    def __init__(self, cited: list[Citation]):
        self.cited = cited
        names = "; ".join(f"{c.kind} “{c.title}”" for c in cited[:5]) + (" …" if len(cited) > 5 else "")
        super().__init__(f"This span is cited by {len(cited)} item(s): {names}. Deleting it removes it from them.")


def delete_span(game: Game, span_id, *, confirmed: bool = False, user=None,
                role: str | None = Membership.Role.MANAGER) -> AuditEntry:
    """Delete a span; a cited span only when ``confirmed``. Returns the audit entry that undo reads.

    The entry's ``before`` snapshot keeps the ids of everything that cited the span, so
    :func:`undo_delete` can put the citations back.
    """
    with transaction.atomic():
        EvidenceSpan.objects.select_for_update().filter(game=game, pk=span_id).first()
        span = get_span(game, span_id)
        cited = citations([span])[span.pk]
        _may_change(span, cited, role)
        if cited and not confirmed:
            raise SpanCited(cited)
        before = audit.snapshot(span, cited_by={kind: [c.pk for c in cited if c.kind == kind]
                                                for kind in ("question", "relationship", "chain node")})
        entry = audit.record(game, user, span, "delete", before, None)
        span.delete()
    return entry


def undo_delete(game: Game, entry_id, *, user=None) -> EvidenceSpan:
    """Recreate a deleted span from its audit entry, with the citations that still exist."""
    with transaction.atomic():
        entry = AuditEntry.objects.select_for_update().filter(
            game=game, pk=entry_id, item_type="evidencespan", action="delete").first()
        if entry is None or not entry.before:
            raise SpanNotFound("There is nothing to undo.")
        if (entry.after or {}).get("undone"):
            raise SpanError("This deletion was already undone.")
        data = entry.before
        try:
            target = resolve_target(game, data["document"], data["character_id"] or data["clue_id"])
        except SpanError as exc:
            raise SpanError("The document of the deleted span is gone; nothing to restore.") from exc
        text = target.text(game)
        if text[data["start"]:data["end"]] != data["quote"]:
            raise SpanError("The text changed since the span was deleted; select it again.")
        span = EvidenceSpan.objects.create(
            game=game, document=data["document"], character=target.character, clue=target.clue, start=data["start"],
            end=data["end"], quote=data["quote"], label=data.get("label", ""), created_by_id=data.get("created_by_id"))
        cited = data.get("cited_by", {})
        span.questions.set(game.questions.filter(pk__in=cited.get("question", [])))
        span.relationships.set(game.relationships.filter(pk__in=cited.get("relationship", [])))
        span.chain_nodes.set(ChainNode.objects.filter(chain__game=game, pk__in=cited.get("chain node", [])))
        entry.after = {"undone": True, "restored_as": span.pk}
        entry.save(update_fields=["after"])
        audit.record(game, user, span, "undo delete", None, audit.snapshot(span))
    return get_span(game, span.pk)
