"""OCR of page images with tesseract (through pytesseract), one page per process.

Why these choices (measured by ``benchmarks/ingest_speed.py`` and the ``ocr`` tests):
- One language model per document: ``chi_sim`` (or ``chi_tra``) for Chinese, ``eng`` for
  English. A mixed ``chi_sim+eng`` model garbles whole Chinese lines and is slower; the Chinese
  models read ASCII digits and the odd Latin letter well enough.
- ``OMP_THREAD_LIMIT=1`` in every worker: tesseract's OpenMP threads make a page ~5x slower on a
  small VM; parallelism comes from one page per process instead.
- Preprocessing is grayscale → deskew (projection-profile search, ±3°) → rescale so text lines are
  ~34 px high (only ever down), both planned on a thumbnail and applied in one pass (shrink, then
  rotate). Measured on 550-character pages of three Chinese Sin scripts at 300 dpi, clean and
  rotated-noisy (6 pages, CER mean / worst): rescale, no median 2.1 % / 3.0 %; + 3×3 median after
  2.7 % / 3.6 %; + median at full resolution first 2.7 % / 4.0 % (and 1 s a page slower). Lines at
  28–29 px read best (1.8 % / 2.3 %) but 24–26 px collapse (up to 61 %), so 34 px keeps a margin
  from that cliff. Without rescaling (glyphs ~50 px) the fast chi_sim model made 3.4 % on a page
  that reads at 1.6–2.3 % rescaled. English stays at 0–0.1 % throughout; smaller pages OCR faster.
  Median denoise and Otsu binarisation stay available (``PREPROCESS_STEPS``) but are off: tesseract
  binarises itself and the median blurred strokes more than it removed noise.
"""
from __future__ import annotations

import io
import os
import statistics
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field

os.environ.setdefault("OMP_THREAD_LIMIT", "1")

import numpy as np  # noqa: E402
from PIL import Image, ImageFilter, ImageOps  # noqa: E402

RENDER_DPI = 300
PREVIEW_WIDTH = 700  # pixels; previews are for the split editor, not for OCR
DEFAULT_STEPS: tuple[str, ...] = ("grayscale", "deskew", "rescale")
PREPROCESS_STEPS: tuple[str, ...] = ("grayscale", "deskew", "rescale", "denoise", "denoise_first", "binarise")
TARGET_LINE_PX = 34  # text-line height the fast LSTM models read best (12 pt at 300 dpi is ~50 px)
MIN_WORD_CONFIDENCE = 30.0  # tesseract word confidences below this are noise (specks, borders)


def ocr_language(language: str, traditional: bool = False) -> str:
    """The tesseract model for a game language: never a mix of Chinese and English models."""
    if language == "zh":
        return "chi_tra" if traditional else "chi_sim"
    return "eng"


@dataclass
class OcrResult:
    text: str
    confidence: float | None  # mean word confidence 0-100, None when nothing was read
    words: int = 0
    text_area: float = 0.0  # fraction of the image covered by confident word boxes
    angle: float = 0.0  # deskew angle applied (degrees)
    preview: bytes = field(default=b"", repr=False)  # JPEG of the (deskewed) page, small


# -- preprocessing -----------------------------------------------------------------------------


def to_grayscale(img: Image.Image) -> Image.Image:
    if img.mode in ("RGBA", "LA", "P"):
        img = img.convert("RGBA")
        background = Image.new("RGBA", img.size, "white")
        img = Image.alpha_composite(background, img)
    return img.convert("L")


def estimate_skew(gray: Image.Image, max_angle: float = 3.0, step: float = 0.25) -> float:
    """Angle (degrees, counter-clockwise) that makes text lines horizontal.

    Projection-profile method on a downscaled, inverted copy: the right angle gives the sharpest
    row-sum profile (highest variance). Cheap (~50 ms a page) and robust for 1–3° scan skew.
    """
    small = gray.copy()
    small.thumbnail((900, 900))
    return _skew_of_small(small, max_angle, step)


def _skew_of_small(small: Image.Image, max_angle: float = 3.0, step: float = 0.25) -> float:
    arr = np.asarray(small, dtype=np.float32)
    ink = (arr < 128).astype(np.uint8) * 255
    if ink.mean() < 0.5:  # blank page
        return 0.0
    ink_img = Image.fromarray(ink)
    best_angle, best_score = 0.0, -1.0
    for angle in np.arange(-max_angle, max_angle + step / 2, step):
        rotated = np.asarray(ink_img.rotate(float(angle), resample=Image.Resampling.NEAREST, expand=False))
        score = float(np.var(rotated.sum(axis=1, dtype=np.float64)))
        if score > best_score:
            best_angle, best_score = float(angle), score
    return best_angle


def plan_geometry(gray: Image.Image, target: int = TARGET_LINE_PX) -> tuple[float, float]:
    """(deskew angle, scale) measured on one 1200 px thumbnail, so the full page is transformed once.

    The scale shrinks (never enlarges) the page so text lines are about ``target`` px high. (Rendering
    the PDF directly at the smaller size was tried: pdfium's resampling cost 1.9 points of CER on the
    clean Chinese scans against Lanczos.)
    """
    small = gray.copy()
    small.thumbnail((1200, 1200))
    factor = small.width / gray.width
    angle = _skew_of_small(small)
    if abs(angle) < 0.2:
        angle = 0.0
    straight = small.rotate(angle, resample=Image.Resampling.NEAREST, expand=True, fillcolor=255) if angle else small
    height = line_height(straight)
    scale = 1.0
    if height:
        scale = max(0.55, target / (height / factor))
        if scale >= 0.9:
            scale = 1.0
    return angle, scale


def apply_geometry(gray: Image.Image, angle: float, scale: float) -> Image.Image:
    """Shrink first (fewer pixels to rotate), then rotate with white fill."""
    out = gray
    if scale != 1.0:
        out = out.resize((round(out.width * scale), round(out.height * scale)), Image.Resampling.LANCZOS,
                         reducing_gap=3.0)
    if angle:
        out = out.rotate(angle, resample=Image.Resampling.BILINEAR, expand=True, fillcolor=255)
    return out


def line_height(gray: Image.Image) -> float | None:
    """Median height (px) of the runs of inked rows: the text-line height of a page."""
    arr = np.asarray(to_grayscale(gray), dtype=np.uint8)
    rows = (arr < 128).mean(axis=1) > 0.003
    heights, run = [], 0
    for inked in rows:
        if inked:
            run += 1
        elif run:
            heights.append(run)
            run = 0
    heights = [h for h in heights if h >= 6]
    return float(np.median(heights)) if len(heights) >= 3 else None


def binarise(gray: Image.Image) -> Image.Image:
    """Otsu threshold (global)."""
    hist = np.bincount(np.asarray(gray, dtype=np.uint8).ravel(), minlength=256).astype(np.float64)
    total = hist.sum()
    cum = np.cumsum(hist)
    cum_mean = np.cumsum(hist * np.arange(256))
    mean_all = cum_mean[-1] / total
    w0 = cum / total
    w1 = 1 - w0
    mu0 = np.divide(cum_mean, cum, out=np.zeros_like(cum_mean), where=cum > 0)
    mu1 = np.divide(cum_mean[-1] - cum_mean, total - cum, out=np.zeros_like(cum_mean), where=(total - cum) > 0)
    between = w0 * w1 * (mu0 - mu1) ** 2
    threshold = int(np.argmax(between)) if mean_all else 128
    return gray.point(lambda v: 255 if v > threshold else 0)


def preprocess(img: Image.Image, steps: Sequence[str] = DEFAULT_STEPS) -> tuple[Image.Image, float]:
    """Apply the chosen steps in a fixed order; returns the image and the deskew angle.

    "deskew" and "rescale" are planned on a thumbnail and applied in one pass; "denoise" (3×3
    median) runs at full resolution before them when "denoise_first" is among the steps, else
    after (on the smaller page, about half the cost).
    """
    out = to_grayscale(img) if {"grayscale", "binarise", "deskew", "rescale", "denoise"} & set(steps) else img
    if "denoise" in steps and "denoise_first" in steps:
        out = out.filter(ImageFilter.MedianFilter(3))
    angle, scale = plan_geometry(out) if ("deskew" in steps or "rescale" in steps) else (0.0, 1.0)
    if "deskew" not in steps:
        angle = 0.0
    if "rescale" not in steps:
        scale = 1.0
    out = apply_geometry(out, angle, scale)
    if "denoise" in steps and "denoise_first" not in steps:
        out = out.filter(ImageFilter.MedianFilter(3))
    if "binarise" in steps:
        out = binarise(out)
    return out, angle


def is_blank(gray: Image.Image) -> bool:
    """A page with (almost) no ink: skip OCR and warn instead."""
    small = gray.copy()
    small.thumbnail((400, 400))
    arr = np.asarray(small, dtype=np.uint8)
    return float((arr < 160).mean()) < 0.001


def preview_image(img: Image.Image, width: int = PREVIEW_WIDTH) -> bytes:
    """A small JPEG of the page for the split editor (JPEG encodes several times faster than PNG,
    which kept text-layer reading under the raw pdfplumber speed; previews need no lossless detail)."""
    small = img
    if small.width > width + 2:
        small = small.resize((width, max(1, round(img.height * width / img.width))), Image.Resampling.BILINEAR)
    if small.mode not in ("L", "RGB"):
        small = small.convert("RGB")
    buf = io.BytesIO()
    small.save(buf, "JPEG", quality=75)
    return buf.getvalue()


# -- OCR ---------------------------------------------------------------------------------------


def text_from_data(data: dict) -> tuple[str, float | None, int, float]:
    """Rebuild the page text from ``image_to_data`` (one call gives both text and confidences).

    Words are grouped by (block, paragraph, line); paragraphs are separated by a blank line, as
    ``image_to_string`` does. Returns text, mean confidence, word count and the confident text
    area (in pixels, summed word boxes).
    """
    lines: dict[tuple[int, int, int], list[str]] = {}
    order: list[tuple[int, int, int]] = []
    confidences: list[float] = []
    area = 0.0
    for i, word in enumerate(data["text"]):
        word = (word or "").strip()
        conf = float(data["conf"][i])
        if not word or conf < 0:
            continue
        key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
        if key not in lines:
            lines[key] = []
            order.append(key)
        lines[key].append(word)
        confidences.append(conf)
        if conf >= MIN_WORD_CONFIDENCE:
            area += float(data["width"][i]) * float(data["height"][i])
    out: list[str] = []
    previous: tuple[int, int] | None = None
    for key in order:
        if previous is not None and key[:2] != previous:
            out.append("")
        out.append(" ".join(lines[key]))
        previous = key[:2]
    mean = statistics.fmean(confidences) if confidences else None
    return "\n".join(out), mean, len(confidences), area


def ocr_image(
    img: Image.Image, lang: str, steps: Sequence[str] = DEFAULT_STEPS, want_preview: bool = True
) -> OcrResult:
    """OCR one image (already EXIF-transposed) with preprocessing; blank images are not OCR'd."""
    import pytesseract

    prepared, angle = preprocess(img, steps)
    preview = preview_image(prepared) if want_preview else b""
    gray = prepared if prepared.mode == "L" else to_grayscale(prepared)
    if is_blank(gray):
        return OcrResult("", None, 0, 0.0, angle, preview)
    # Hand tesseract an uncompressed PGM/PPM file: pytesseract would PNG-encode the image (~0.2 s a
    # page) only for tesseract to decode it again.
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".pgm" if prepared.mode == "L" else ".ppm") as tmp:
        (prepared if prepared.mode in ("L", "RGB") else prepared.convert("RGB")).save(tmp, "PPM")
        tmp.flush()
        data = pytesseract.image_to_data(tmp.name, lang=lang, config="--psm 3", output_type=pytesseract.Output.DICT)
    text, confidence, words, area = text_from_data(data)
    return OcrResult(text, confidence, words, area / float(prepared.width * prepared.height), angle, preview)


# -- page jobs (picklable, run in worker processes) ---------------------------------------------


@dataclass(frozen=True)
class PageJob:
    """One page to OCR: a PDF page (rendered in the worker) or an image file."""

    path: str
    page_index: int  # 0-based PDF page index; -1 for an image file
    lang: str
    steps: tuple[str, ...] = DEFAULT_STEPS
    dpi: int = RENDER_DPI
    max_pixels: int = 120_000_000


def render_pdf_page(path: str, index: int, dpi: int = RENDER_DPI) -> Image.Image:
    """The page rasterised at ``dpi`` (grayscale) for OCR.

    Taking a scanned page's embedded image as is (no rasterising, 0.04 s instead of 0.15 s) was
    tried and dropped: Chinese CER on the benchmark's clean scans rose from 1.9 % to 2.7 %.
    """
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        page = pdf[index]
        try:
            return page.render(scale=dpi / 72, grayscale=True).to_pil()
        finally:
            page.close()
    finally:
        pdf.close()


def load_image_file(path: str, max_pixels: int) -> Image.Image:
    """Open an image safely (pixel limit checked before decoding) and apply EXIF rotation."""
    from exporters.images import open_image_safely

    img = open_image_safely(path, max_pixels)
    return ImageOps.exif_transpose(img) or img


def run_page_job(job: PageJob) -> OcrResult:
    """Worker entry point: render or load, preprocess, OCR."""
    os.environ["OMP_THREAD_LIMIT"] = "1"
    if job.page_index >= 0:
        img = render_pdf_page(job.path, job.page_index, job.dpi)
    else:
        img = load_image_file(job.path, job.max_pixels)
    return ocr_image(img, job.lang, job.steps)


def ocr_pages(
    jobs: Sequence[PageJob],
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[OcrResult | Exception]:
    """OCR many pages in parallel, one page per process; results in job order.

    A page that fails yields its exception (the caller turns it into a warning naming the page),
    so one bad page never stops the others.
    """
    results: list[OcrResult | Exception] = [Exception("not run")] * len(jobs)
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
    if workers == 1:
        for i, job in enumerate(jobs):
            try:
                results[i] = run_page_job(job)
            except Exception as exc:  # reported per page
                results[i] = exc
            if progress:
                progress(1)
        return results
    import multiprocessing
    import threading

    # fork is cheapest and safe in a single-threaded parent (the command, tests); a threaded parent
    # (web server, task worker) gets spawn, which needs the usual ``if __name__ == "__main__"`` guard.
    method = "fork" if threading.active_count() == 1 else "spawn"
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method)) as pool:
        futures = {pool.submit(run_page_job, job): i for i, job in enumerate(jobs)}
        for future in as_completed(futures):
            i = futures[future]
            try:
                results[i] = future.result()
            except Exception as exc:  # reported per page
                results[i] = exc
            if progress:
                progress(1)
    return results


def mean_confidence(results: Iterable[OcrResult]) -> float | None:
    values = [r.confidence for r in results if r.confidence is not None]
    return round(statistics.fmean(values), 1) if values else None
