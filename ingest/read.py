"""Stage 1, read: package files → pages of text (text layer, OCR or plain) and embedded images.

Collecting the package (files, folders, ZIPs) is here too, because that is where bad input is
met first: every problem is reported against the file (and page) it concerns, and the rest of the
package carries on.
"""
from __future__ import annotations

import hashlib
import io
import re
import shutil
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from casebook.images import (
    ImageTooLarge,
    UnsupportedImage,
    numeric_sort_key,
    open_image_safely,
    sniff_image,
)
from casebook.interchange import Problem

from . import ocr

MAX_FILE_BYTES = 300 * 1024 * 1024  # one file of a package
MAX_PACKAGE_BYTES = 1024 * 1024 * 1024  # everything unpacked from a package
MAX_ZIP_MEMBERS = 5000
# A game's scripts, manual and clues are a few MB of text at most; far more is an accident or a
# decompression bomb, refused before it is decoded (decoding multiplies its memory several times).
MAX_TEXT_BYTES = 30 * 1024 * 1024  # TXT/Markdown files of one package together
MAX_TEXT_CHARS = 20_000_000  # text extracted from the whole package (text layers, OCR, TXT)
MAX_IMAGE_PIXELS = 100_000_000  # a 20,000×20,000 image is refused before it is decoded
MIN_TEXT_LAYER_CHARS = 20  # fewer visible characters: the page is a scan (or blank)
SCAN_COVERAGE = 0.8  # an image covering this much of a page is the page itself, not a clue
MIN_CLUE_IMAGE_PT = 40  # embedded images smaller than this (points) are ornaments
CLUE_IMAGE_DPI = 200  # embedded images are cropped from a render at this resolution (≥150)

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".text"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp", ".gif"}
IGNORED_NAMES = {".ds_store", "thumbs.db", "desktop.ini"}


class IngestError(Exception):
    """A problem that stops the whole ingest (nothing usable); the message is for the user."""


# -- data --------------------------------------------------------------------------------------


@dataclass
class SourceFile:
    """One file of the package, staged on disk."""

    name: str  # path inside the package, "/"-separated (what the user recognises)
    path: Path
    sha256: str
    size: int
    media_type: str
    kind: str  # "pdf" | "image" | "text"


@dataclass
class PageText:
    number: int  # 1-based
    text: str
    method: str  # "text-layer" | "ocr" | "plain"
    confidence: float | None = None
    preview: bytes = field(default=b"", repr=False)
    text_area: float = 0.0  # OCR'd pages: fraction of the image covered by text
    blank: bool = False


@dataclass
class EmbeddedImage:
    """An image found on a PDF page, cropped at its bounding box from a render."""

    source: str
    page: int
    bbox: tuple[float, float, float, float]  # x0, top, x1, bottom in points
    png: bytes = field(repr=False)
    ocr_text: str = ""
    confidence: float | None = None
    text_area: float = 0.0


@dataclass
class Document:
    source: SourceFile
    pages: list[PageText] = field(default_factory=list)
    images: list[EmbeddedImage] = field(default_factory=list)
    removed_lines: int = 0  # repeated headers / footers / page numbers dropped

    @property
    def name(self) -> str:
        return self.source.name


# -- collect -----------------------------------------------------------------------------------


def _kind_of(name: str, head: bytes) -> tuple[str, str]:
    """(kind, media type) sniffed from the bytes, the suffix only deciding plain text."""
    if head.startswith(b"%PDF-"):
        return "pdf", "application/pdf"
    try:
        media_type, _ = sniff_image(head)
        return "image", media_type
    except UnsupportedImage:
        pass
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in TEXT_SUFFIXES:
        return "text", "text/markdown" if suffix in {".md", ".markdown"} else "text/plain"
    if suffix == ".pdf":
        raise UnsupportedImage("named .pdf but is not a PDF (no %PDF- header): corrupt or mislabelled")
    raise UnsupportedImage(f"unsupported file type '{suffix or 'no extension'}' (PDF, image, TXT or Markdown expected)")


def _stage(name: str, data: bytes, workdir: Path, sources: list[SourceFile], problems: list[Problem]) -> None:
    if PurePosixPath(name).name.casefold() in IGNORED_NAMES or PurePosixPath(name).name.startswith("._"):
        return
    if not data:
        problems.append(Problem(name, "empty file (0 bytes)", "skipped", severity="error"))
        return
    try:
        kind, media_type = _kind_of(name, data[:64])
    except UnsupportedImage as exc:
        problems.append(Problem(name, str(exc), "skipped", severity="error"))
        return
    if kind == "text" and sum(s.size for s in sources if s.kind == "text") + len(data) > MAX_TEXT_BYTES:
        raise IngestError(
            f"{name}: the package's text files add up to more than {MAX_TEXT_BYTES // 2**20} MB "
            "(the limit; a game's scripts are far smaller). Nothing was saved."
        )
    digest = hashlib.sha256(data).hexdigest()
    if any(s.sha256 == digest for s in sources):
        problems.append(Problem(name, "same bytes as another file of the package", "skipped the copy"))
        return
    target = workdir / f"{len(sources):04d}{PurePosixPath(name).suffix.lower()}"
    target.write_bytes(data)
    sources.append(SourceFile(name, target, digest, len(data), media_type, kind))


def _safe_member(name: str) -> str | None:
    """The member path if it stays inside the archive (zip-slip guard), else None."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    return str(path)


def _read_zip(zip_path: Path, label: str, workdir: Path, sources: list[SourceFile], problems: list[Problem]) -> None:
    try:
        archive = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as exc:
        problems.append(Problem(label, f"not a readable ZIP archive: {exc}", "skipped", severity="error"))
        return
    with archive:
        members = [i for i in archive.infolist() if not i.is_dir()]
        if len(members) > MAX_ZIP_MEMBERS:
            problems.append(Problem(label, f"{len(members)} files in the archive (limit {MAX_ZIP_MEMBERS})",
                                    "skipped the archive", severity="error"))
            return
        for info in sorted(members, key=lambda i: numeric_sort_key(i.filename)):
            inner = _safe_member(info.filename)
            where = f"{label}!{info.filename}"
            if inner is None:
                problems.append(Problem(where, "path escapes the archive (zip-slip)", "skipped", severity="error"))
                continue
            if info.file_size > MAX_FILE_BYTES:
                problems.append(Problem(where, f"{info.file_size:,} bytes unpacked (limit {MAX_FILE_BYTES:,})",
                                        "skipped", severity="error"))
                continue
            if sum(s.size for s in sources) + info.file_size > MAX_PACKAGE_BYTES:  # the whole package, not one archive
                problems.append(Problem(where, f"the package unpacks to over {MAX_PACKAGE_BYTES:,} bytes",
                                        "skipped the rest of the archive", severity="error"))
                return
            try:
                with archive.open(info) as fh:
                    data = fh.read(MAX_FILE_BYTES + 1)
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as exc:
                problems.append(Problem(where, f"cannot extract: {exc}", "skipped", severity="error"))
                continue
            if len(data) > MAX_FILE_BYTES:  # the header lied about the size
                problems.append(Problem(where, "member larger than declared", "skipped", severity="error"))
                continue
            _stage(inner, data, workdir, sources, problems)


def collect_sources(paths: Sequence[str | Path], workdir: Path) -> tuple[list[SourceFile], list[Problem]]:
    """Stage every file of the package (files, folders, ZIPs) into ``workdir``.

    Names are kept relative to the folder or archive they came from, in numeric order
    (``page_2`` before ``page_10``).
    """
    sources: list[SourceFile] = []
    problems: list[Problem] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            problems.append(Problem(str(raw), "no such file or folder", "skipped", severity="error"))
            continue
        if path.is_dir():
            files = sorted((p for p in path.rglob("*") if p.is_file()), key=lambda p: numeric_sort_key(str(p)))
            entries = [(p, p.relative_to(path).as_posix()) for p in files]
        else:
            entries = [(path, path.name)]
        for file_path, label in entries:
            size = file_path.stat().st_size
            if size > MAX_FILE_BYTES:
                problems.append(Problem(label, f"{size:,} bytes (limit {MAX_FILE_BYTES:,})", "skipped", severity="error"))
                continue
            if file_path.suffix.lower() == ".zip":  # (.docx/.epub are ZIPs too: those are refused as unsupported)
                _read_zip(file_path, label, workdir, sources, problems)
                continue
            _stage(label, file_path.read_bytes(), workdir, sources, problems)
    return sources, problems


# -- text layer --------------------------------------------------------------------------------

_PAGE_NUMBER = re.compile(
    r"^\s*(?:[-–—·•]?\s*\d{1,4}\s*[-–—·•]?|第\s*\d{1,4}\s*页(?:\s*[/／共]\s*\d{1,4}\s*页?)?"
    r"|(?:page|p\.)\s*\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?|\d{1,4}\s*/\s*\d{1,4})\s*$",
    re.IGNORECASE,
)
MARGIN_LINES = 2  # lines at the top and bottom of a page checked for running headers/footers


def _margin_key(line: str) -> str:
    return re.sub(r"\d+", "#", "".join(line.split()))


def drop_repeated_margins(pages: list[list[str]]) -> tuple[list[list[str]], int]:
    """Drop running headers/footers and page numbers from the top and bottom lines of pages.

    A margin line goes when its digit-blind form recurs on at least half of the pages (and at
    least 2), or when it is a bare page number ("12", "- 12 -", "第3页", "Page 3 of 9") in a
    document of several pages. Returns the pages and the number of lines removed.
    """
    if len(pages) < 2:
        return pages, 0
    counts: Counter[str] = Counter()
    for lines in pages:
        margin = set(lines[:MARGIN_LINES] + lines[-MARGIN_LINES:])
        counts.update({_margin_key(line) for line in margin if line.strip()})
    threshold = max(2, (len(pages) + 1) // 2)
    repeated = {key for key, n in counts.items() if n >= threshold}
    removed = 0
    out: list[list[str]] = []
    for lines in pages:
        keep = list(lines)
        for positions in (range(min(MARGIN_LINES, len(keep))), range(len(keep) - 1, max(len(keep) - 1 - MARGIN_LINES, -1), -1)):
            for i in positions:
                if i >= len(keep) or keep[i] is None:
                    continue
                line = keep[i]
                if line.strip() and (_margin_key(line) in repeated or _PAGE_NUMBER.match(line)):
                    keep[i] = None  # type: ignore[call-overload]
                    removed += 1
        out.append([line for line in keep if line is not None])
    return out, removed


def _usable_text(text: str) -> bool:
    visible = sum(1 for ch in text if not ch.isspace())
    if visible < MIN_TEXT_LAYER_CHARS:
        return False
    return text.count("(cid:") * 6 < visible * 0.2  # unmapped glyphs: the text layer is garbage


def _render_preview(pdf, index: int) -> bytes:  # pdf: pypdfium2.PdfDocument
    page = pdf[index]
    try:
        width = page.get_width() or 595
        img = page.render(scale=ocr.PREVIEW_WIDTH / width, grayscale=True).to_pil()
    finally:
        page.close()
    return ocr.preview_image(img)


def _crop_images(pdf, index: int, boxes: list[tuple]) -> list[bytes]:
    """Render the page once at CLUE_IMAGE_DPI and crop every bounding box (top-left origin, points)."""
    page = pdf[index]
    try:
        scale = CLUE_IMAGE_DPI / 72
        img = page.render(scale=scale).to_pil()
    finally:
        page.close()
    crops = []
    for x0, top, x1, bottom in boxes:
        box = (max(0, round(x0 * scale)), max(0, round(top * scale)),
               min(img.width, round(x1 * scale)), min(img.height, round(bottom * scale)))
        buf = io.BytesIO()
        img.crop(box).save(buf, "PNG")
        crops.append(buf.getvalue())
    return crops


@dataclass
class _PendingOcr:
    document: Document
    page_index: int  # index into document.pages (-1: an embedded image)
    image_index: int = -1


def read_pdf(source: SourceFile, problems: list[Problem], want_previews: bool = True) -> tuple[Document, list[int]]:
    """Read a PDF's text layer; returns the document and the 0-based pages that need OCR.

    Pages without a usable text layer get an empty placeholder (filled by :func:`run_ocr`); their
    embedded images are the scan itself and are not extracted.
    """
    import pdfplumber
    import pypdfium2 as pdfium

    doc = Document(source)
    try:
        pdf = pdfium.PdfDocument(str(source.path))
    except pdfium.PdfiumError as exc:
        reason = str(exc)
        if "password" in reason.lower():
            reason = "the PDF is encrypted (password protected); remove the password and upload it again"
        else:
            reason = f"cannot open the PDF (corrupt or truncated): {reason}"
        problems.append(Problem(source.name, reason, "skipped the file", severity="error"))
        return doc, []
    needs_ocr: list[int] = []
    page_lines: list[list[str]] = []
    try:
        with pdfplumber.open(str(source.path)) as plumber:
            for index, page in enumerate(plumber.pages):
                try:
                    text = page.extract_text(layout=False) or ""
                except Exception as exc:  # pdfminer raises many types on damaged content streams
                    problems.append(Problem(source.name, f"text layer unreadable: {exc}", "OCR instead",
                                            location=f"page {index + 1}"))
                    text = ""
                if _usable_text(text):
                    page_lines.append(text.splitlines())
                    doc.pages.append(PageText(index + 1, "", "text-layer"))
                    boxes = [
                        (float(im["x0"]), float(im["top"]), float(im["x1"]), float(im["bottom"]))
                        for im in page.images
                        if (float(im["x1"]) - float(im["x0"])) >= MIN_CLUE_IMAGE_PT
                        and (float(im["bottom"]) - float(im["top"])) >= MIN_CLUE_IMAGE_PT
                        and (float(im["x1"]) - float(im["x0"])) * (float(im["bottom"]) - float(im["top"]))
                        < SCAN_COVERAGE * float(page.width) * float(page.height)
                    ]
                    if boxes:
                        for box, png in zip(boxes, _crop_images(pdf, index, boxes),
                                            strict=True):
                            doc.images.append(EmbeddedImage(source.name, index + 1, box, png))
                else:
                    page_lines.append([])
                    doc.pages.append(PageText(index + 1, "", "ocr"))
                    if text.strip() or page.images:
                        needs_ocr.append(index)
                    else:
                        doc.pages[-1].blank = True
                if want_previews and doc.pages[-1].method == "text-layer":
                    doc.pages[-1].preview = _render_preview(pdf, index)
                page.close()  # frees pdfminer's parsed objects: long packages stay in bounded memory
    except Exception as exc:  # pdfminer: PDFSyntaxError, PSEOF, ...
        problems.append(Problem(source.name, f"cannot read the PDF: {exc.__class__.__name__}: {exc}",
                                "skipped the rest of the file", location=f"page {len(doc.pages) + 1}",
                                severity="error"))
    finally:
        pdf.close()
    cleaned, doc.removed_lines = drop_repeated_margins(page_lines)
    for page, lines in zip(doc.pages, cleaned, strict=True):
        if page.method == "text-layer":
            page.text = "\n".join(lines)
    return doc, needs_ocr


def read_text_file(source: SourceFile, problems: list[Problem]) -> Document:
    """TXT/Markdown as is (UTF-8, UTF-16 with BOM or GB18030); form feeds separate pages."""
    data = source.path.read_bytes()
    for encoding in ("utf-8-sig", "utf-16", "gb18030"):
        if encoding == "utf-16" and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
            continue
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:
        problems.append(Problem(source.name, "text is neither UTF-8 nor GB18030", "decoded with replacements"))
        text = data.decode("utf-8", errors="replace")
    doc = Document(source)
    chunks = text.replace("\r\n", "\n").replace("\r", "\n").split("\f")
    for i, chunk in enumerate(chunks):
        doc.pages.append(PageText(i + 1, chunk, "plain"))
    return doc


def check_image(source: SourceFile, problems: list[Problem]) -> bool:
    """Refuse unreadable and oversized images before any worker decodes them."""
    try:
        open_image_safely(source.path, MAX_IMAGE_PIXELS).close()
    except (ImageTooLarge, UnsupportedImage) as exc:
        problems.append(Problem(source.name, str(exc), "skipped the file", severity="error"))
        return False
    return True


def run_ocr(
    pending: list[_PendingOcr],
    jobs: list[ocr.PageJob],
    problems: list[Problem],
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    cache: ocr.PageCache | None = None,
) -> None:
    """OCR all pending pages and images of the package in one process pool."""
    results = ocr.ocr_pages(jobs, workers=workers, progress=progress, cache=cache)
    for item, result in zip(pending, results, strict=True):
        doc = item.document
        if item.image_index >= 0:
            image = doc.images[item.image_index]
            if isinstance(result, Exception):
                problems.append(Problem(doc.name, f"OCR of an embedded image failed: {result}", "kept without text",
                                        location=f"page {image.page}"))
                continue
            image.ocr_text, image.confidence, image.text_area = result.text, result.confidence, result.text_area
            continue
        page = doc.pages[item.page_index]
        if isinstance(result, Exception):
            problems.append(Problem(doc.name, f"OCR failed: {result}", "page left empty",
                                    location=f"page {page.number}", severity="error"))
            continue
        page.text, page.confidence, page.preview = result.text, result.confidence, result.preview
        page.text_area = result.text_area
        page.method = "ocr"
        if not result.text.strip():
            page.blank = True


@dataclass
class ReadingPlan:
    """What reading a package involves: documents with their text layers read, and the OCR still to do."""

    documents: list[Document]
    pending: list[_PendingOcr]
    jobs: list[ocr.PageJob]

    def page_jobs(self) -> list[ocr.PageJob]:
        """The OCR jobs of whole pages (scans, image files), not of images cropped from text pages."""
        return [job for item, job in zip(self.pending, self.jobs, strict=True) if item.image_index < 0]


def plan_reading(
    sources: Iterable[SourceFile],
    lang: str,
    problems: list[Problem],
    crops_dir: Path,
    progress: Callable[[int, int, str], None] | None = None,
    ocr_steps: Sequence[str] = ocr.DEFAULT_STEPS,
    want_previews: bool = True,
) -> ReadingPlan:
    """Read text layers and plain text; list every page and embedded image that needs OCR.

    Embedded images are written to ``crops_dir`` (their OCR jobs point there).
    """
    documents: list[Document] = []
    pending: list[_PendingOcr] = []
    jobs: list[ocr.PageJob] = []
    sources = list(sources)
    for n, source in enumerate(sources):
        if progress:
            progress(n, len(sources), f"reading {source.name}")
        if source.kind == "text":
            documents.append(read_text_file(source, problems))
        elif source.kind == "image":
            if not check_image(source, problems):
                continue
            doc = Document(source, [PageText(1, "", "ocr")])
            documents.append(doc)
            pending.append(_PendingOcr(doc, 0))
            jobs.append(ocr.PageJob(str(source.path), -1, lang, tuple(ocr_steps), max_pixels=MAX_IMAGE_PIXELS))
        else:
            doc, needs_ocr = read_pdf(source, problems, want_previews=want_previews)
            if not doc.pages:
                continue
            documents.append(doc)
            for index in needs_ocr:
                pending.append(_PendingOcr(doc, index))
                jobs.append(ocr.PageJob(str(source.path), index, lang, tuple(ocr_steps)))
            for i, image in enumerate(doc.images):
                crop_path = crops_dir / f"{len(jobs):05d}.png"
                crop_path.write_bytes(image.png)
                pending.append(_PendingOcr(doc, -1, i))
                jobs.append(ocr.PageJob(str(crop_path), -1, lang, ("grayscale",)))
    return ReadingPlan(documents, pending, jobs)


def read_sources(
    sources: Iterable[SourceFile],
    lang: str,
    problems: list[Problem],
    progress: Callable[[int, int, str], None] | None = None,
    workers: int | None = None,
    ocr_steps: Sequence[str] = ocr.DEFAULT_STEPS,
    want_previews: bool = True,
    ocr_cache: ocr.PageCache | None = None,
) -> list[Document]:
    """Read every source: text layers first (fast), then one parallel OCR pass over the rest.

    ``ocr_cache`` holds finished OCR pages (a resumed job, or pages read by other workers, skips them).
    """
    crops_dir = Path(tempfile.mkdtemp(prefix="casebook-crops-"))
    try:
        plan = plan_reading(sources, lang, problems, crops_dir, progress, ocr_steps, want_previews)
        documents, jobs = plan.documents, plan.jobs
        if jobs:
            done = 0

            def tick(step: int) -> None:
                nonlocal done
                done += step
                if progress:
                    progress(done, len(jobs), "OCR")

            tick(0)  # the bar (CLI) and the status (web) show OCR from its start, not its first batch
            run_ocr(plan.pending, jobs, problems, progress=tick, workers=workers, cache=ocr_cache)
    finally:
        shutil.rmtree(crops_dir, ignore_errors=True)
    report_blank_pages(documents, problems)
    return documents


def report_blank_pages(documents: list[Document], problems: list[Problem]) -> None:
    for doc in documents:
        blanks = [p.number for p in doc.pages if p.blank or not p.text.strip()]
        if blanks and len(blanks) == len(doc.pages):
            problems.append(Problem(doc.name, f"all {len(blanks)} pages are blank", "nothing to ingest from this file"))
        elif blanks:
            shown = ", ".join(map(str, blanks[:10])) + (" …" if len(blanks) > 10 else "")
            problems.append(Problem(doc.name, f"{len(blanks)} blank page(s)", "skipped", location=f"pages {shown}",
                                    severity="info"))
