"""The ingest pipeline: collect → read → clean → split → image clues → build.

``prepare`` runs every stage up to the interchange Game without touching the database (tests,
dry runs); ``run_ingest`` adds the build. Both the ``ingest`` management command and the upload
job call ``run_ingest``; progress goes to a ``progress(stage, done, total)`` callback.
"""
from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from casebook.interchange import Game, Origin, Problem

from . import ocr
from .build import DocumentRecord, assemble_game, check_duplicates, save_ingest, split_sections
from .clean import clean_text, usual_width
from .images import candidates, deduplicate, to_clues
from .read import MAX_TEXT_CHARS, Document, IngestError, SourceFile, collect_sources, read_sources
from .split import CHARACTER, PageRef, plan_split

Progress = Callable[[str, int, int], None]


@dataclass
class IngestOptions:
    title: str
    language: str  # "zh" | "en"
    characters: list[str] = field(default_factory=list)
    traditional: bool = False
    replace: bool = False
    workers: int | None = None  # OCR processes; default: all cores
    ocr_steps: tuple[str, ...] = ocr.DEFAULT_STEPS
    ocr_cache_dir: str = ""  # keeps finished OCR pages, so a resumed job starts at the first page not done
    ocr_cache: ocr.PageCache | None = None  # pages already read elsewhere (page batches of a fanned-out job)

    def check(self) -> None:
        if self.language not in ("zh", "en"):
            raise IngestError(f"language must be 'zh' or 'en', not '{self.language}'")
        if not self.title.strip():
            raise IngestError("the game needs a title (--game)")


@dataclass
class IngestSummary:
    title: str
    language: str
    status: str = "prepared"  # builder status once saved: created / replaced / unchanged
    game_slug: str = ""
    files: int = 0
    pages: int = 0
    pages_by_method: dict[str, int] = field(default_factory=dict)
    blank_pages: int = 0
    characters: list[str] = field(default_factory=list)
    manual_chars: int = 0
    text_clues: int = 0
    image_clues: dict[str, int] = field(default_factory=dict)  # image kind → count
    mean_ocr_confidence: float | None = None
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        methods = ", ".join(f"{n} {k}" for k, n in sorted(self.pages_by_method.items())) or "none"
        conf = f"{self.mean_ocr_confidence:.1f}" if self.mean_ocr_confidence is not None else "n/a (no OCR)"
        images = ", ".join(f"{n} {k or 'unknown'}" for k, n in sorted(self.image_clues.items())) or "0"
        out = [
            f"game: {self.title} [{self.language}] {self.game_slug} ({self.status})",
            f"files: {self.files}   pages: {self.pages} ({methods}; {self.blank_pages} blank)",
            f"characters found: {len(self.characters)}: {', '.join(self.characters) or '-'}",
            f"truth manual: {self.manual_chars} characters   text clues: {self.text_clues}   image clues: {images}",
            f"mean OCR confidence: {conf}   time: {self.seconds:.1f} s",
        ]
        out += [f"error: {e}" for e in self.errors]
        out += [f"warning: {w}" for w in self.warnings]
        return out


@dataclass
class Prepared:
    game: Game
    records: list[DocumentRecord]
    documents: list[Document]
    summary: IngestSummary


def clean_documents(documents: list[Document], language: str) -> None:
    """Stage 2 over every page (in place); line-wrap detection uses the document's usual width."""
    for doc in documents:
        width = usual_width("\n".join(p.text for p in doc.pages if p.method != "plain"))
        for page in doc.pages:
            page.text = clean_text(page.text, language, width if page.method != "plain" else None)


def page_refs(documents: list[Document]) -> list[PageRef]:
    return [PageRef(doc.name, page.number, page.text) for doc in documents for page in doc.pages]


def _records(documents: list[Document]) -> list[DocumentRecord]:
    return [
        DocumentRecord(
            doc.name, doc.source.sha256, doc.source.media_type, doc.source.size, doc.source.path.read_bytes(),
            doc.source.kind,
            [{"number": p.number, "text": p.text, "method": p.method, "confidence": p.confidence,
              "preview": p.preview} for p in doc.pages],
        )
        for doc in documents
    ]


def prepare(
    paths: Sequence[str | Path],
    options: IngestOptions,
    progress: Progress | None = None,
    precheck: Callable[[list[SourceFile]], None] | None = None,
) -> Prepared:
    """Every stage but the database write. Raises IngestError when nothing at all is usable.

    ``precheck`` sees the collected files before any reading (``run_ingest`` refuses duplicates
    there, before minutes of OCR are spent).
    """
    options.check()
    started = time.monotonic()
    problems: list[Problem] = []
    workdir = Path(tempfile.mkdtemp(prefix="casebook-ingest-"))
    try:
        sources, problems = collect_sources(paths, workdir)
        if not sources:
            detail = "; ".join(str(p) for p in problems) or "no files given"
            raise IngestError(f"nothing to ingest: {detail}")
        if precheck:
            precheck(sources)
        lang = ocr.ocr_language(options.language, options.traditional)

        def read_progress(done: int, total: int, message: str) -> None:
            if progress:
                progress("OCR" if message == "OCR" else "read", done, total)

        cache = options.ocr_cache or (ocr.PageCache(options.ocr_cache_dir) if options.ocr_cache_dir else None)
        documents = read_sources(sources, lang, problems, progress=read_progress, workers=options.workers,
                                 ocr_steps=options.ocr_steps, ocr_cache=cache)
        if not documents:
            raise IngestError("no file of the package could be read: " + "; ".join(str(p) for p in problems))
        text_chars = sum(len(page.text) for d in documents for page in d.pages)
        if text_chars > MAX_TEXT_CHARS:
            raise IngestError(f"the package holds {text_chars:,} characters of text, more than the limit of "
                              f"{MAX_TEXT_CHARS:,}; split it into games or remove what is not part of one. Nothing was saved.")
        if not any(page.text.strip() and not page.blank for doc in documents for page in doc.pages):
            total = sum(len(doc.pages) for doc in documents)
            raise IngestError(f"nothing to ingest: all {total} page(s) of the {len(documents)} file(s) are blank; "
                              "no game was created")
        if progress:
            progress("clean", 0, 1)
        clean_documents(documents, options.language)
        pages = page_refs(documents)
        image_docs = {d.name for d in documents if d.source.kind == "image"}
        if progress:
            progress("split", 0, 1)
        decisions, cast, split_problems = plan_split(pages, options.characters, image_docs)
        problems += split_problems
        sections, clue_sections, image_clue_docs = split_sections(pages, decisions, image_docs, options.language)
        if progress:
            progress("images", 0, 1)
        items = deduplicate(candidates(documents, image_clue_docs), problems)
        image_clues = to_clues(items, options.language)
        density = {
            d.name: round(d.pages[0].text_area, 4) for d in documents if d.name in image_docs and d.pages
        }
        ocr_pages = [p for d in documents for p in d.pages if p.method == "ocr" and p.confidence is not None]
        summary = IngestSummary(options.title, options.language)
        summary.files = len(documents)
        summary.pages = sum(len(d.pages) for d in documents if d.name not in image_clue_docs)
        summary.pages_by_method = dict(Counter(
            p.method for d in documents if d.name not in image_clue_docs for p in d.pages if not p.blank
        ))
        summary.blank_pages = sum(1 for d in documents for p in d.pages if p.blank)
        summary.characters = [s.name for s in sections if s.kind == CHARACTER]
        summary.manual_chars = sum(len(s.text) for s in sections if s.kind == "manual")
        summary.image_clues = dict(Counter(str(c.image_kind) for c in image_clues))
        summary.mean_ocr_confidence = (
            round(statistics.fmean(p.confidence for p in ocr_pages), 1) if ocr_pages else None
        )
        game = assemble_game(
            options.title, options.language, sections, clue_sections, image_clues, decisions, cast, problems,
            ingest_extra={"image_density": density, "ocr_language": lang, "ocr_steps": list(options.ocr_steps)},
        )
        summary.text_clues = sum(1 for c in game.clues if c.kind == "text")
        summary.errors = [str(p) for p in problems if p.severity == "error"]
        summary.warnings = [str(p) for p in problems if p.severity == "warning"]
        game.extra["ingest"]["summary"] = {
            k: v for k, v in summary.to_dict().items() if k not in ("status", "game_slug", "seconds")
        }
        records = _records(documents)
        summary.seconds = time.monotonic() - started
        return Prepared(game, records, documents, summary)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def duplicate_check(options: IngestOptions, user: Any) -> Callable[[list[SourceFile]], None]:
    """Refuse files already ingested into another game (before minutes of OCR are spent)."""
    probe = Game(slug=options.title, title=options.title, language=options.language, origin=Origin.INGESTED)

    def precheck(sources: list[SourceFile]) -> None:
        check_duplicates({s.sha256: s.name for s in sources}, probe, options.replace, user)

    return precheck


def run_ingest(
    paths: Sequence[str | Path], options: IngestOptions, *, user: Any = None, progress: Progress | None = None
) -> IngestSummary:
    """Ingest a package into the database; raises IngestError / DuplicateIngest with a clear message."""
    started = time.monotonic()
    prepared = prepare(paths, options, progress, precheck=duplicate_check(options, user))
    if progress:
        progress("build", 0, 1)
    result = save_ingest(prepared.game, prepared.records, replace=options.replace, user=user)
    summary = prepared.summary
    summary.status = result.status
    summary.game_slug = result.game.slug
    summary.seconds = time.monotonic() - started
    if progress:
        progress("build", 1, 1)
    return summary
