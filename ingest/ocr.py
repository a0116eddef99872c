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
- Throughput: a scanned page that is one stored image is OCR'd from the stored pixels, not
  rasterised again (``embedded_scan``); pages go to tesseract in batches of one language
  (``run_batch``: one model load per batch instead of per page) and preprocessing plans on a
  box-reduced thumbnail with a coarse-to-fine skew search. Together these took the read stage from
  0.77–0.89× to 0.95–1.10× of the raw tesseract CLI on pre-rendered pages (``benchmarks/ingest_speed.py``).
- Dense 10.5 pt Chinese pages (issue 21, ``benchmarks/ocr_quality.py``: paragraphs, full-width
  punctuation, digits, Latin names): this page path reads them at CER 1.2–2.2 % (mean 1.6 %, raw
  tesseract 2.4 %); the errors left there were the clean stage's (brackets, line joins). Measured
  and not taken, on 2–4 of those pages: a 28 px or 31 px line target (one page in two fell to
  17–70 % CER: the same cliff as above), ``--psm 6`` (one page 79 %), a 0.7 px Gaussian blur
  (1.84 → 1.79 % on 2 clean pages, worse on one), bilinear instead of Hamming shrinking (1.58 →
  1.46 % on 4 pages, worse on one: within page-to-page noise), ``tessedit_do_invert=0`` (same
  text, no CPU saved). Tesseract's CPU a page hardly depends on the scale: its LSTM normalises
  every line's height itself.
"""
from __future__ import annotations

import io
import os
import statistics
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field

os.environ.setdefault("OMP_THREAD_LIMIT", "1")

from PIL import Image, ImageFilter, ImageOps  # noqa: E402

from casebook.lazy import lazy_module  # noqa: E402

np = lazy_module("numpy")  # only OCR workers need it; commands and the web app start without it

RENDER_DPI = 300
PREVIEW_WIDTH = 700  # pixels; previews are for the split editor, not for OCR
DEFAULT_STEPS: tuple[str, ...] = ("grayscale", "deskew", "rescale")
PREPROCESS_STEPS: tuple[str, ...] = ("grayscale", "deskew", "rescale", "denoise", "denoise_first", "binarise")
TARGET_LINE_PX = 34  # text-line height the fast LSTM models read best (12 pt at 300 dpi is ~50 px)
TESSERACT_CONFIG = "--psm 3"  # automatic page segmentation (psm 4/6 measured no faster: recognition dominates)
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
    row-sum profile (highest variance). Cheap (~30 ms a page) and robust for 1–3° scan skew.
    """
    return _skew_of_small(thumbnail(gray), max_angle, step)


def thumbnail(gray: Image.Image, longest: int = 1200) -> Image.Image:
    """A copy at most ~``longest`` px on its long side, by integer box reduction (5 ms for a 300 dpi
    page, against 50 ms for ``Image.thumbnail``'s bicubic; the plan needs no finer sampling)."""
    factor = -(-max(gray.size) // longest)
    return gray.reduce(factor) if factor > 1 else gray.copy()


def _skew_of_small(small: Image.Image, max_angle: float = 3.0, step: float = 0.25) -> float:
    """Coarse-to-fine search: whole degrees first, then ``step`` around the best (13 rotations
    instead of 25: a page's profile peak is ~1.5° wide, so the coarse pass cannot miss it)."""
    arr = np.asarray(small, dtype=np.float32)
    ink = (arr < 128).astype(np.uint8) * 255
    if ink.mean() < 0.5:  # blank page
        return 0.0
    ink_img = Image.fromarray(ink)
    scores: dict[float, float] = {}

    def score(angle: float) -> float:
        angle = round(angle, 4)
        if angle not in scores:
            rotated = np.asarray(ink_img.rotate(angle, resample=Image.Resampling.NEAREST, expand=False))
            scores[angle] = float(np.var(rotated.sum(axis=1, dtype=np.float64)))
        return scores[angle]

    coarse = max(np.arange(-max_angle, max_angle + 0.5, 1.0), key=lambda a: (score(float(a)), -abs(a)))
    fine = np.arange(coarse - 1.0 + step, coarse + 1.0 - step / 2, step)
    fine = [float(a) for a in fine if abs(a) <= max_angle + 1e-9]
    return float(max(fine, key=lambda a: (score(a), -abs(a))))


def plan_geometry(gray: Image.Image, target: int = TARGET_LINE_PX) -> tuple[float, float]:
    """(deskew angle, scale) measured on one 1200 px thumbnail, so the full page is transformed once.

    The scale shrinks (never enlarges) the page so text lines are about ``target`` px high. (Rendering
    the PDF directly at the smaller size was tried: pdfium's resampling cost 1.9 points of CER on the
    clean Chinese scans against Lanczos.)
    """
    small = thumbnail(gray)
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
    """Shrink first (fewer pixels to rotate), then rotate with white fill.

    Hamming resampling: on 16 Chinese pages (8 clean, 8 rotated noisy) it read as well as Lanczos
    (CER 2.0 % / 2.1 % against 2.2 % / 2.2 %) at 40 % less preprocessing time; a single affine
    transform doing both was faster still but aliased the noise (5.8 % on the noisy pages).
    """
    out = gray
    if scale != 1.0:
        out = out.resize((round(out.width * scale), round(out.height * scale)), Image.Resampling.HAMMING)
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


def prepare_page(
    img: Image.Image, steps: Sequence[str] = DEFAULT_STEPS, want_preview: bool = True
) -> tuple[Image.Image, float, bytes, bool]:
    """Preprocess one image for tesseract: (prepared image, deskew angle, JPEG preview, is blank)."""
    prepared, angle = preprocess(img, steps)
    preview = preview_image(prepared) if want_preview else b""
    return prepared, angle, preview, is_blank(prepared if prepared.mode == "L" else to_grayscale(prepared))


def write_for_tesseract(prepared: Image.Image, folder: str, stem: str) -> str:
    """Save as uncompressed PGM/PPM: pytesseract would PNG-encode the image (~0.2 s a page) only for
    tesseract to decode it again."""
    path = os.path.join(folder, f"{stem}.{'pgm' if prepared.mode == 'L' else 'ppm'}")
    (prepared if prepared.mode in ("L", "RGB") else prepared.convert("RGB")).save(path, "PPM")
    return path


def tesseract_pages(paths: Sequence[str], lang: str) -> list[dict]:
    """One tesseract run over saved images; ``image_to_data`` columns for each, in order.

    Several images go in as a list file: tesseract loads its model once (~0.2 s, a tenth of a
    page's OCR) and numbers the pages of its TSV output from 1.
    """
    import pytesseract

    _tesseract_dies_with_worker()
    source = paths[0]
    if len(paths) > 1:
        source = os.path.join(os.path.dirname(paths[0]), "pages.txt")
        with open(source, "w", encoding="utf-8") as fh:
            fh.write("".join(f"{path}\n" for path in paths))
    data = pytesseract.image_to_data(source, lang=lang, config=TESSERACT_CONFIG, output_type=pytesseract.Output.DICT)
    by_page: dict[int, dict] = {}
    for i, number in enumerate(data.get("page_num", [])):
        page = by_page.setdefault(int(number), {key: [] for key in data})
        for key, values in data.items():
            page[key].append(values[i])
    return [by_page.get(n, {"text": [], "conf": []}) for n in range(1, len(paths) + 1)]


def result_from_data(data: dict, prepared: Image.Image, angle: float, preview: bytes) -> OcrResult:
    text, confidence, words, area = text_from_data(data)
    return OcrResult(text, confidence, words, area / float(prepared.width * prepared.height), angle, preview)


def ocr_image(
    img: Image.Image, lang: str, steps: Sequence[str] = DEFAULT_STEPS, want_preview: bool = True
) -> OcrResult:
    """OCR one image (already EXIF-transposed) with preprocessing; blank images are not OCR'd."""
    import tempfile

    prepared, angle, preview, blank = prepare_page(img, steps, want_preview)
    if blank:
        return OcrResult("", None, 0, 0.0, angle, preview)
    with tempfile.TemporaryDirectory(prefix="casebook-ocr-") as tmp:
        (data,) = tesseract_pages([write_for_tesseract(prepared, tmp, "page")], lang)
    return result_from_data(data, prepared, angle, preview)


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


SCAN_MIN_DPI = 200  # an embedded scan coarser than this is rendered at RENDER_DPI instead
SCAN_MAX_DPI = 1200
SCAN_MIN_COVERAGE = 0.9  # share of the page the one image must cover to count as "the scan"
MAX_BATCH = 4  # pages per tesseract run: one model load per batch; progress moves after each batch


def embedded_scan(page) -> Image.Image | None:
    """The page's scan as stored in the PDF, when the page is nothing but one full-page image.

    Taking the stored pixels skips rasterising (0.03 s instead of 0.17 s a page) and is also more
    faithful: pdfium resamples even at the scan's own resolution (2481 → 2482 px wide), which
    changed every pixel by ~2.9 grey levels on average against the source scan, the stored image by
    ~0.3 (JPEG). Anything unusual — several objects, rotation or skewing matrix, page /Rotate, low
    resolution, colour spaces other than grey/RGB, a mostly dark result (an inverted or masked
    image) — returns None and the page is rendered.
    """
    import pypdfium2.raw as pdfium_c

    if page.get_rotation():
        return None
    objects = list(page.get_objects(max_depth=1))
    if len(objects) != 1 or objects[0].type != pdfium_c.FPDF_PAGEOBJ_IMAGE:
        return None
    image = objects[0]
    a, b, c, d, _e, _f = image.get_matrix().get()
    if b or c or a <= 0 or d <= 0:
        return None
    left, bottom, right, top = image.get_bounds()
    page_width, page_height = page.get_size()
    if (right - left) * (top - bottom) < SCAN_MIN_COVERAGE * page_width * page_height:
        return None
    metadata = image.get_metadata()
    if metadata.colorspace not in (pdfium_c.FPDF_COLORSPACE_DEVICEGRAY, pdfium_c.FPDF_COLORSPACE_DEVICERGB):
        return None
    px_width, _px_height = image.get_px_size()
    if not SCAN_MIN_DPI <= px_width / (a / 72) <= SCAN_MAX_DPI:
        return None
    pil = to_grayscale(image.get_bitmap(render=False).to_pil())
    small = pil.reduce(8) if min(pil.size) >= 64 else pil
    if float(np.asarray(small, dtype=np.uint8).mean()) < 128:
        return None
    return pil


def render_pdf_page(path: str, index: int, dpi: int = RENDER_DPI) -> Image.Image:
    """The page for OCR (grayscale): its stored scan when it is one (see :func:`embedded_scan`),
    else rasterised at ``dpi``."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        page = pdf[index]
        try:
            try:
                scan = embedded_scan(page)
            except Exception:  # an odd image object: rendering always works
                scan = None
            return scan if scan is not None else page.render(scale=dpi / 72, grayscale=True).to_pil()
        finally:
            page.close()
    finally:
        pdf.close()


def load_image_file(path: str, max_pixels: int) -> Image.Image:
    """Open an image safely (pixel limit checked before decoding) and apply EXIF rotation."""
    from casebook.images import open_image_safely

    img = open_image_safely(path, max_pixels)
    return ImageOps.exif_transpose(img) or img


def load_page(job: PageJob) -> Image.Image:
    if job.page_index >= 0:
        return render_pdf_page(job.path, job.page_index, job.dpi)
    return load_image_file(job.path, job.max_pixels)


def run_batch(jobs: Sequence[PageJob]) -> list[OcrResult | Exception]:
    """Several pages of one language in one tesseract run (worker entry point).

    Each page is loaded and preprocessed on its own, so a bad page yields its exception and the
    others go on; if the tesseract run itself fails, the saved pages are read one by one to find
    the culprit.
    """
    import tempfile

    os.environ["OMP_THREAD_LIMIT"] = "1"
    langs = {job.lang for job in jobs}
    if len(langs) != 1:
        raise ValueError(f"one language per batch, got {sorted(langs)}")
    lang = jobs[0].lang
    results: list[OcrResult | Exception] = [Exception("not run")] * len(jobs)
    with tempfile.TemporaryDirectory(prefix="casebook-ocr-") as tmp:
        listed: list[tuple[int, str, Image.Image, float, bytes]] = []
        for i, job in enumerate(jobs):
            try:
                prepared, angle, preview, blank = prepare_page(load_page(job), job.steps)
                if blank:
                    results[i] = OcrResult("", None, 0, 0.0, angle, preview)
                    continue
                listed.append((i, write_for_tesseract(prepared, tmp, f"{i:04d}"), prepared, angle, preview))
            except Exception as exc:  # reported per page by the caller
                results[i] = exc
        if not listed:
            return results
        try:
            pages: list[dict | Exception] = list(tesseract_pages([path for _i, path, *_rest in listed], lang))
        except Exception:
            pages = []
            for _i, path, *_rest in listed:
                try:
                    pages.extend(tesseract_pages([path], lang))
                except Exception as exc:  # reported per page by the caller
                    pages.append(exc)
        for (i, _path, prepared, angle, preview), data in zip(listed, pages, strict=True):
            results[i] = data if isinstance(data, Exception) else result_from_data(data, prepared, angle, preview)
    return results


def plan_batches(jobs: Sequence[PageJob], workers: int, max_batch: int = MAX_BATCH) -> list[list[int]]:
    """Job indexes grouped into batches of one language, balanced over the workers.

    Each language's pages are cut into a multiple of ``workers`` batches of near-equal size (at most
    ``max_batch``), so both cores finish together on a small package and progress moves every
    batch on a large one.
    """
    by_lang: dict[str, list[int]] = {}
    for i, job in enumerate(jobs):
        by_lang.setdefault(job.lang, []).append(i)
    batches: list[list[int]] = []
    for indexes in by_lang.values():
        count = workers * -(-len(indexes) // (workers * max_batch))
        count = min(count, len(indexes))
        size, extra = divmod(len(indexes), count)
        start = 0
        for b in range(count):
            end = start + size + (1 if b < extra else 0)
            batches.append(indexes[start:end])
            start = end
    return batches


class PageCache:
    """Finished OCR pages on disk, so a resumed ingest starts at the first page not done.

    A page is keyed by its file's content, page index, language, steps and dpi; each result is
    written (atomically) as soon as its batch returns, so a killed worker loses at most the
    batches in flight.
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        from pathlib import Path

        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._file_hashes: dict[str, str] = {}

    def key(self, job: PageJob) -> str:
        import hashlib

        if job.path not in self._file_hashes:
            digest = hashlib.sha256()
            with open(job.path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
            self._file_hashes[job.path] = digest.hexdigest()
        spec = f"{self._file_hashes[job.path]}|{job.page_index}|{job.lang}|{','.join(job.steps)}|{job.dpi}"
        return hashlib.sha256(spec.encode()).hexdigest()

    def get(self, job: PageJob) -> OcrResult | None:
        import pickle

        path = self.folder / f"{self.key(job)}.pickle"
        try:
            return pickle.loads(path.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError):
            return None

    def put(self, job: PageJob, result: OcrResult) -> None:
        import pickle

        path = self.folder / f"{self.key(job)}.pickle"
        partial = path.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(result))
        partial.replace(path)


def _load_prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` on Linux, loaded once in the parent: a forked child must not ``dlopen``
    (another thread of a worker may hold the loader's lock at fork time)."""
    import sys

    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl


_PRCTL = _load_prctl()


def _die_with_parent() -> None:
    """The kernel kills this process when its parent dies (even by SIGKILL); no-op off Linux.

    Pool initializer for OCR processes and ``preexec_fn`` of tesseract runs: a killed worker
    must not leave OCR running for a batch that another worker will take over anyway.
    """
    import signal

    if _PRCTL is not None:
        pr_set_pdeathsig = 1
        _PRCTL(pr_set_pdeathsig, signal.SIGKILL)
        if os.getppid() == 1:  # the parent died before prctl took effect
            os._exit(1)


def _tesseract_dies_with_worker() -> None:
    """Make every tesseract that pytesseract starts die with the process that started it.

    pytesseract has no hook for ``Popen`` arguments, so its ``subprocess_args`` (looked up at each
    run) is wrapped once to add ``preexec_fn``; idempotent, and harmless off Linux.
    """
    from pytesseract import pytesseract as module

    if _PRCTL is None or getattr(module.subprocess_args, "dies_with_parent", False):
        return
    original = module.subprocess_args

    def subprocess_args(*args, **kwargs) -> dict:
        return {**original(*args, **kwargs), "preexec_fn": _die_with_parent}

    subprocess_args.dies_with_parent = True  # type: ignore[attr-defined]
    module.subprocess_args = subprocess_args


def ocr_pages(
    jobs: Sequence[PageJob],
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    cache: PageCache | None = None,
) -> list[OcrResult | Exception]:
    """OCR many pages in parallel, a batch of pages per process; results in job order.

    A page that fails yields its exception (the caller turns it into a warning naming the page),
    so one bad page never stops the others. With a ``cache``, pages done by an earlier run are
    taken from it (and counted as progress at once) and each new result is saved to it.
    """
    results: list[OcrResult | Exception] = [Exception("not run")] * len(jobs)
    todo = list(range(len(jobs)))
    if cache is not None:
        for i in list(todo):
            cached = cache.get(jobs[i])
            if cached is not None:
                results[i] = cached
                todo.remove(i)
        if progress and len(todo) < len(jobs):
            progress(len(jobs) - len(todo))
    workers = max(1, min(workers or os.cpu_count() or 1, len(todo) or 1))
    batches = [[todo[n] for n in batch] for batch in plan_batches([jobs[i] for i in todo], workers)]

    def store(batch: list[int], outcome: list[OcrResult | Exception] | Exception) -> None:
        for n, i in enumerate(batch):
            results[i] = outcome if isinstance(outcome, Exception) else outcome[n]
            if cache is not None and isinstance(results[i], OcrResult):
                cache.put(jobs[i], results[i])
        if progress:
            progress(len(batch))

    if workers == 1:
        for batch in batches:
            try:
                store(batch, run_batch([jobs[i] for i in batch]))
            except Exception as exc:  # reported per page
                store(batch, exc)
        return results
    import multiprocessing
    import threading

    # fork is cheapest and safe in a single-threaded parent (the command, tests); a threaded parent
    # (web server, task worker) gets spawn, which needs the usual ``if __name__ == "__main__"`` guard.
    method = "fork" if threading.active_count() == 1 else "spawn"
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                             initializer=_die_with_parent) as pool:
        futures = {pool.submit(run_batch, [jobs[i] for i in batch]): n for n, batch in enumerate(batches)}
        for future in as_completed(futures):
            batch = batches[futures[future]]
            try:
                store(batch, future.result())
            except Exception as exc:  # reported per page
                store(batch, exc)
    return results


def mean_confidence(results: Iterable[OcrResult]) -> float | None:
    values = [r.confidence for r in results if r.confidence is not None]
    return round(statistics.fmean(values), 1) if values else None
