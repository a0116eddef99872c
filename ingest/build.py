"""Stage 5, build: sections and image clues → an interchange Game → the database.

``assemble_game`` is plain (no Django). ``save_ingest`` writes the game with the one builder
(``annotate.builder.build_game``) and, in the same transaction, the original files
(``SourceDocument``, sha256, sniffed media type) and their pages (``Page``: cleaned text, method,
OCR confidence, preview), so an ingest lands whole or not at all. ``rebuild_from_split`` re-cuts a
stored game from corrected split decisions (the split editor) using the stored pages.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from casebook import interchange as ix

from .split import (
    CHARACTER,
    CLUES,
    IGNORE,
    KINDS,
    MANUAL,
    PageRef,
    Section,
    SplitDecision,
    apply_split,
    parse_text_clues,
    split_version,
)


class DuplicateIngest(Exception):
    """The same file (sha256) or game title was already ingested; the message says what to do."""


class InvalidSplit(ValueError):
    """A corrected split refers to pages or sections that do not exist."""


class StaleSplit(InvalidSplit):
    """The split was changed by someone else after the corrector loaded it."""


def stored_split(game_row: Any) -> list[SplitDecision]:
    """The split decisions recorded on an ingested game (empty for other games)."""
    return [SplitDecision(**d) for d in (game_row.extra or {}).get("ingest", {}).get("split", [])]


@dataclass
class DocumentRecord:
    """What the build needs of one source file (plain data, also rebuilt from the DB)."""

    name: str
    sha256: str
    media_type: str
    size: int
    data: bytes = field(repr=False)
    kind: str  # pdf / image / text
    pages: list[dict[str, Any]] = field(default_factory=list)  # number, text, method, confidence, preview


def assemble_game(
    title: str,
    language: str,
    sections: list[Section],
    text_clue_sections: list[Section],
    image_clues: list[ix.Clue],
    decisions: list[SplitDecision],
    cast: list[str],
    problems: list[ix.Problem],
    ingest_extra: dict[str, Any] | None = None,
    base: ix.Game | None = None,
) -> ix.Game:
    """The interchange Game of an ingested package (or ``base`` updated from a new split).

    Characters keep their source pages in ``extra["source_pages"]``; the split decisions and
    summary are kept in ``game.extra["ingest"]``. With ``base``, characters that keep their name
    keep every field but the script (goals, murderer flags, aliases).
    """
    game = base or ix.Game(slug=title, title=title, language=language, origin=ix.Origin.INGESTED)
    previous = {ix.name_key(c.name): c for c in game.characters}
    characters = []
    for section in sections:
        if section.kind != CHARACTER:
            continue
        old = previous.get(ix.name_key(section.name))
        ch = old or ix.Character(name=section.name)
        ch.name = section.name
        ch.script = section.text
        ch.extra = {**ch.extra, "source_pages": section.pages}
        characters.append(ch)
    kept = {ix.name_key(c.name) for c in characters}
    for name, ch in previous.items():  # characters that lost their section are kept as non-players
        if name not in kept and (ch.is_victim or ch.is_murderer or not ch.playable):
            characters.append(ch)
    game.characters = characters
    manual = [s for s in sections if s.kind == MANUAL]
    game.truth = ix.TruthManual(
        text="\n\n".join(s.text for s in manual), motive=game.truth.motive if base else "",
        method=game.truth.method if base else "",
    )
    text_clues: list[ix.Clue] = []
    for section in text_clue_sections:
        text_clues.extend(parse_text_clues(section, start_index=len(text_clues) + 1))
    game.clues = text_clues + image_clues
    game.extra = {
        **game.extra,
        "ingest": {
            **(game.extra.get("ingest", {}) if base else {}),
            **(ingest_extra or {}),
            "split": [d.to_dict() for d in decisions],
            "cast": list(cast),
            "manual_pages": [p for s in manual for p in s.pages],
        },
    }
    game.report = list(problems)
    return game


def split_sections(
    pages: list[PageRef], decisions: list[SplitDecision], image_docs: set[str], language: str
) -> tuple[list[Section], list[Section], set[str]]:
    """(character/manual sections, text-clue sections, image files that are clues)."""
    image_clue_docs = {d.source for d in decisions if d.kind == CLUES and d.source in image_docs}
    text_pages = [p for p in pages if p.source not in image_clue_docs]
    text_decisions = [d for d in decisions if d.source not in image_clue_docs and d.kind != IGNORE]
    sections = apply_split(text_pages, text_decisions, language)
    return ([s for s in sections if s.kind in (CHARACTER, MANUAL)],
            [s for s in sections if s.kind == CLUES], image_clue_docs)


def validate_decisions(decisions: list[SplitDecision], pages: list[PageRef]) -> None:
    """Raise InvalidSplit with a message naming the bad row when a decision points nowhere."""
    texts = {(p.source, p.number): p.text for p in pages}
    for i, d in enumerate(decisions, start=1):
        if d.kind not in KINDS:
            raise InvalidSplit(f"row {i}: kind must be one of {', '.join(KINDS)}, not '{d.kind}'")
        if not d.section.strip():
            raise InvalidSplit(f"row {i}: the section needs a name")
        if (d.source, d.start_page) not in texts:
            raise InvalidSplit(f"row {i}: {d.source} has no page {d.start_page}")
        if not 0 <= d.start_offset <= len(texts[(d.source, d.start_page)]):
            raise InvalidSplit(f"row {i}: offset {d.start_offset} is outside page {d.start_page} of {d.source}")


# -- database ----------------------------------------------------------------------------------


def _role_of(name: str, decisions: list[SplitDecision], kind: str) -> str:
    own = [d for d in decisions if d.source == name and d.kind != IGNORE]
    if len({(d.kind, d.section) for d in own}) > 1:
        return "combined"
    if not own:
        return "unassigned"
    if own[0].kind == CLUES and kind == "image":
        return "image"
    return {CHARACTER: "script", MANUAL: "manual", CLUES: "clues"}[own[0].kind]


def check_duplicates(digests: dict[str, str], game: ix.Game, replace: bool, user: Any = None) -> Any:
    """Raise DuplicateIngest when a file (sha256 → name) or the game was ingested before, or when
    ``user`` may not replace the game this package would overwrite.

    Called before reading (fail fast, no OCR wasted) and again inside the build transaction.
    ``user=None`` is the operator at the shell (full access). Files are de-duplicated only against
    games the user can see, and messages name only those games. Returns the existing game row (or None).
    """
    from annotate import models as m
    from annotate.builder import find_existing
    from annotate.services.permissions import MANAGER, has_role, role_of, visible_games

    target = find_existing(game)
    role = role_of(user, target) if user is not None and target is not None else m.Membership.Role.MANAGER
    if target is not None and role is None:
        raise DuplicateIngest(
            f"the title '{game.title}' [{game.language}] is taken by a game you are not a member of; "
            "choose another title"
        )
    if target is not None and replace and not has_role(role, MANAGER):
        raise DuplicateIngest(
            f"replacing '{target.title}' needs the manager role in it (you are {role}); "
            "ask one of its managers, or choose another title"
        )
    earlier = m.SourceDocument.objects.filter(sha256__in=list(digests)).select_related("game")
    if user is not None:
        earlier = earlier.filter(game__in=visible_games(user))
    clashes = [doc for doc in earlier if not (replace and target is not None and doc.game_id == target.pk)]
    if clashes:
        lines = [f"{digests[doc.sha256]} was already ingested into '{doc.game.title}' "
                 f"({doc.game.slug}) on {doc.created_at:%Y-%m-%d %H:%M} as {doc.filename}" for doc in clashes]
        hint = ("use --replace (or tick 'replace') to ingest it again into that game"
                if all(target is not None and doc.game_id == target.pk for doc in clashes)
                else "remove it from the package, or ingest under that game's title with --replace")
        raise DuplicateIngest("; ".join(lines) + f" — {hint}")
    if target is not None and not replace:
        raise DuplicateIngest(
            f"a game titled '{game.title}' [{game.language}] already exists ({target.slug}); "
            "use --replace to overwrite it, or choose another title"
        )
    return target


def save_ingest(game: ix.Game, documents: list[DocumentRecord], *, replace: bool = False, user: Any = None):
    """Write game, documents and pages in one transaction; returns the builder's BuildResult.

    Raises :class:`DuplicateIngest` (nothing written) when a file was ingested before or the game
    exists, unless ``replace`` — then the game's content and documents are rewritten in place.
    """
    from django.db import transaction

    from annotate import models as m
    from annotate.builder import build_game

    with transaction.atomic():
        check_duplicates({d.sha256: d.name for d in documents}, game, replace, user)
        result = build_game(game, replace=replace, user=user)
        if result.status == "exists":
            raise DuplicateIngest("; ".join(p.message for p in result.problems) or "the game already exists")
        row = result.game
        old_files = [d.file.name for d in row.documents.all() if d.file]
        row.documents.all().delete()
        write_documents(row, documents, game.extra.get("ingest", {}).get("split", []))
        if user is not None and result.status == "created" and not getattr(user, "is_superuser", False):
            m.Membership.objects.get_or_create(user=user, game=row, defaults={"role": m.Membership.Role.MANAGER})
        link_clue_pages(row)
        storage = m.SourceDocument._meta.get_field("file").storage
        transaction.on_commit(lambda: [storage.delete(name) for name in old_files if name])
    return result


def write_documents(row: Any, documents: list[DocumentRecord], split: list[dict[str, Any]]) -> None:
    from django.core.files.base import ContentFile

    from annotate import models as m
    from casebook.security import safe_file_name

    decisions = [SplitDecision(**d) for d in split]  # the split as dicts, before it is on the row
    for doc in documents:
        source = m.SourceDocument(
            game=row, filename=doc.name, sha256=doc.sha256, media_type=doc.media_type,
            role=_role_of(doc.name, decisions, doc.kind), size=doc.size,
        )
        source.file.save(safe_file_name(PurePosixPath(doc.name).name, doc.data), ContentFile(doc.data), save=False)
        source.save()
        pages = []
        for page in doc.pages:
            row_page = m.Page(document=source, number=page["number"], text=page["text"], method=page["method"],
                              ocr_confidence=page.get("confidence"))
            if page.get("preview"):
                row_page.preview.save(f"{doc.sha256[:16]}-{page['number']}.jpg", ContentFile(page["preview"]),
                                      save=False)
            pages.append(row_page)
        m.Page.objects.bulk_create(pages)


def link_clue_pages(row: Any) -> None:
    """Point every clue at the page it came from (``extra["source_pages"]``)."""
    from annotate import models as m

    pages = {(p.document.filename, p.number): p for p in m.Page.objects.filter(document__game=row).select_related("document")}
    changed = []
    for clue in row.clues.all():
        refs = (clue.extra or {}).get("source_pages") or []
        if refs:
            page = pages.get((refs[0].get("document"), refs[0].get("first")))
            if page is not None:
                clue.page = page
                changed.append(clue)
    m.Clue.objects.bulk_update(changed, ["page"])


def stored_pages(row: Any) -> tuple[list[PageRef], set[str], dict[str, Any]]:
    """The cleaned pages of a stored game in package order, its image documents and records."""
    from annotate import models as m

    docs = list(m.SourceDocument.objects.filter(game=row).order_by("pk").prefetch_related("pages"))
    pages = [PageRef(doc.filename, p.number, p.text) for doc in docs for p in doc.pages.all()]
    images = {doc.filename for doc in docs if doc.media_type.startswith("image/")}
    return pages, images, {doc.filename: doc for doc in docs}


def rebuild_from_split(
    game_row: Any, decisions: list[SplitDecision], user: Any = None, expected_version: str | None = None
):
    """Re-cut a stored ingested game from corrected decisions and rebuild it in one transaction.

    With ``expected_version`` (the :func:`split_version` the corrector saw), the game row is locked
    and the rebuild refused with :class:`StaleSplit` when its split has changed since.

    Scripts, the manual and text clues come from the stored pages; image clues keep their stored
    images, OCR text and kind (an annotator's correction survives); an image file newly marked as
    a clue becomes one (kind from its recorded text density). Questions and other annotations are
    kept by the builder round trip (load → change → build with replace).
    """
    from django.db import transaction

    from annotate.builder import build_game
    from annotate.loader import load_game

    from .images import classify_image

    with transaction.atomic():
        if expected_version is not None:
            locked = type(game_row).objects.select_for_update().get(pk=game_row.pk)
            if split_version(stored_split(locked)) != expected_version:
                raise StaleSplit("someone changed this split after you opened it. Their version is shown below; "
                                 "make your correction again.")
        pages, image_docs, records = stored_pages(game_row)
        if not pages:
            raise InvalidSplit("this game has no stored pages (it was not ingested), so it cannot be re-split")
        validate_decisions(decisions, pages)
        base = load_game(game_row)
        sections, clue_sections, image_clue_docs = split_sections(pages, decisions, image_docs, base.language)
        densities = base.extra.get("ingest", {}).get("image_density", {})
        by_source: dict[str, ix.Clue] = {}
        embedded: list[ix.Clue] = []
        for clue in base.clues:
            if clue.kind != ix.ClueKind.IMAGE:
                continue
            refs = clue.extra.get("source_pages") or [{}]
            doc = refs[0].get("document", "")
            if doc in image_docs:
                by_source[doc] = clue
            else:
                embedded.append(clue)  # cropped from a PDF page: not affected by the split
        image_clues: list[ix.Clue] = []
        for name in sorted(image_clue_docs, key=lambda n: [p.source for p in pages].index(n)):
            if name in by_source:
                image_clues.append(by_source[name])
                continue
            record = records[name]
            page_text = next((p.text for p in pages if p.source == name), "")
            data = record.file.read() if record.file else b""
            image_clues.append(ix.Clue(
                key="", kind=ix.ClueKind.IMAGE, title=PurePosixPath(name).stem, filename=PurePosixPath(name).name,
                data=data, media_type=record.media_type, ocr_text=page_text,
                image_kind=classify_image(float(densities.get(name, 0.0))),
                extra={"source_pages": [{"document": name, "first": 1, "last": 1}]},
            ))
        image_clues += embedded
        taken = {c.key for c in image_clues if c.key}
        n = 0
        for clue in image_clues:  # existing clues keep their key (questions point at it)
            while not clue.key:
                n += 1
                key = f"img/{n}{PurePosixPath(clue.filename).suffix or '.png'}"
                if key not in taken:
                    clue.key = key
                    taken.add(key)
        game = assemble_game(base.title, base.language, sections, clue_sections, image_clues, decisions,
                             base.extra.get("ingest", {}).get("cast", []), list(base.report), base=base)
        result = build_game(game, replace=True, user=user)
        link_clue_pages(result.game)
        for doc in records.values():
            role = _role_of(doc.filename, decisions, "image" if doc.filename in image_docs else "")
            if doc.role != role:
                doc.role = role
                doc.save(update_fields=["role"])
    return result


def set_image_kinds(game_row: Any, kinds: dict[str, str]) -> int:
    """Correct the text-rich / media-rich kind of image clues (by clue key); returns rows changed."""
    from annotate import models as m

    allowed = {ix.ImageKind.TEXT_RICH.value, ix.ImageKind.MEDIA_RICH.value}
    changed = 0
    for clue in m.Clue.objects.filter(game=game_row, kind=ix.ClueKind.IMAGE, key__in=list(kinds)):
        kind = kinds[clue.key]
        if kind not in allowed:
            raise InvalidSplit(f"clue {clue.key}: kind must be text_rich or media_rich, not '{kind}'")
        if clue.image_kind != kind:
            clue.image_kind = kind
            clue.extra = {**clue.extra, "image_kind_by": "editor"}
            clue.save(update_fields=["image_kind", "extra"])
            changed += 1
    return changed
