"""OCR quality on dense Chinese scans, per error class, and throughput against raw tesseract.

    .venv/bin/python benchmarks/ocr_quality.py [--pages 4] [--en-pages 2] [--rounds 1] [--save DIR]

Builds dense pages from the two real Chinese WellPlay games (../shared/anchors, never copied):
role-script paragraphs, a cast line glossed with the published English names and quiz questions
from ``GM.csv`` (digits, times, English relation labels inside Chinese), typeset at 10.5 pt
(``tests/ingest/ingest_makers.dense_zh_pages``), rendered at 300 dpi and "scanned" as the ingest
tests do: every other page rotated 1.5–1.8° with sensor noise and specks. ``--en-pages`` adds
English pages of the same games (10.5 pt) to check English does not get worse.

The pages go through the real ingest path (image-only PDFs → ``collect_sources`` →
``read_sources`` → ``clean_documents``, both cores) and, for the baseline, through the raw
``tesseract`` CLI on the same pages pre-rendered to PNG (two at a time, ``OMP_THREAD_LIMIT=1``)
followed by our clean stage. Printed: CER as the tests count it (NFKC, whitespace ignored), a
width-sensitive CER (``，`` vs ``,`` counts) and errors per 100 reference characters by class:
full/half width, other punctuation, digits, Latin letters, CJK substitutions, insertions,
deletions, and space/line-break artefacts (a space inside Chinese, a lost or extra line break;
not part of either CER). Timings are the best of ``--rounds``, raw and ours alternating.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ["OMP_THREAD_LIMIT"] = "1"
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ANCHORS = Path(os.environ.get("CASEBOOK_ANCHORS", ROOT.parent / "shared" / "anchors"))


def raw_tesseract(pngs: list[tuple[Path, str]]) -> list[str]:
    """The baseline: the ``tesseract`` CLI on each (PNG, model), one run a page, all cores at a
    time (``OMP_THREAD_LIMIT=1``); the text of each, in order. Shared with ``ingest_speed.py``."""
    def one(item: tuple[Path, str]) -> str:
        png, lang = item
        return subprocess.run(["tesseract", str(png), "stdout", "-l", lang], capture_output=True, text=True,
                              check=True, env={**os.environ, "OMP_THREAD_LIMIT": "1"}).stdout
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return list(pool.map(one, pngs))


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (tesseract runs, OCR
    workers): a throughput figure that other load on a shared machine does not move."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def build_pages(wellplay: Path, per_game: int, en_per_game: int) -> list[tuple[str, str, str, str, object]]:
    """(game, language, variant, reference text, page image) for every page, clean and noisy alternating."""
    from tests.ingest.ingest_makers import (
        DENSE_FONT_PT,
        ZH_GAMES,
        degrade,
        dense_zh_pages,
        first_chars,
        render_page,
        text_pdf,
        wellplay_scripts,
    )

    pages = []
    for g, game in enumerate(ZH_GAMES):
        for i, text in enumerate(dense_zh_pages(wellplay, game, per_game)):
            pages.append((game, "zh", text, i, g))
        if en_per_game:
            scripts = wellplay_scripts(wellplay, "en", ZH_GAMES[game])
            body = "\n".join(scripts.values())
            for i in range(en_per_game):
                pages.append((ZH_GAMES[game], "en", first_chars(body[i * 2600:], 2400), i, g))
    out = []
    for n, (game, lang, text, i, g) in enumerate(pages):
        img = render_page(text_pdf([(None, text)], lang, font_size=DENSE_FONT_PT))
        variant = "clean" if i % 2 == 0 else "noisy"
        if variant == "noisy":
            img = degrade(img, angle=(1.5 if (i + g) % 4 == 1 else -1.8), noise=18, seed=n)
        out.append((game, lang, variant, text, img))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=4, help="dense Chinese pages per game (two games)")
    parser.add_argument("--en-pages", type=int, default=2, help="English pages per game")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--save", help="also write each page's PNG, reference and OCR text here")
    args = parser.parse_args()
    if not (ANCHORS / "wellplay").is_dir():
        print(f"anchors not found at {ANCHORS} (set CASEBOOK_ANCHORS)")
        return 2

    from ingest import ocr
    from ingest.clean import clean_text
    from ingest.pipeline import clean_documents
    from ingest.read import collect_sources, read_sources
    from tests.ingest.ingest_makers import ERROR_CLASSES, cer, error_classes, image_pdf, strict_cer

    work = Path(tempfile.mkdtemp(prefix="casebook-ocrq-"))
    pages = build_pages(ANCHORS / "wellplay", args.pages, args.en_pages)
    folders = {lang: work / f"scans_{lang}" for lang in ("zh", "en")}
    pngs = []
    for n, (_game, lang, variant, _text, img) in enumerate(pages):
        folders[lang].mkdir(exist_ok=True)
        (folders[lang] / f"{n:02d}_{variant}.pdf").write_bytes(image_pdf([img]))
        png = work / f"{n:02d}.png"
        img.save(png)
        pngs.append((png, ocr.ocr_language(lang)))

    def ours() -> dict[int, str]:
        """The ingest read and clean stages, one call per language (as one game is ingested)."""
        texts = {}
        for lang, folder in folders.items():
            if not folder.is_dir():
                continue
            stage = work / f"stage_{lang}_{time.monotonic_ns()}"
            stage.mkdir()
            sources, problems = collect_sources([folder], stage)
            docs = read_sources(sources, ocr.ocr_language(lang), problems, want_previews=False)
            clean_documents(docs, lang)
            for doc in docs:
                texts[int(Path(doc.name).stem.split("_")[0])] = "\n".join(p.text for p in doc.pages)
        return texts

    raw_t = ours_t = raw_cpu = ours_cpu = float("inf")
    raw_texts: list[str] = []
    our_texts: dict[int, str] = {}
    for _ in range(args.rounds):
        started, cpu = time.perf_counter(), cpu_seconds()
        raw_texts = raw_tesseract(pngs)
        raw_t = min(raw_t, time.perf_counter() - started)
        raw_cpu = min(raw_cpu, cpu_seconds() - cpu)
        started, cpu = time.perf_counter(), cpu_seconds()
        our_texts = ours()
        ours_t = min(ours_t, time.perf_counter() - started)
        ours_cpu = min(ours_cpu, cpu_seconds() - cpu)

    if args.save:
        save = Path(args.save)
        save.mkdir(parents=True, exist_ok=True)
        for n, (_game, _lang, _variant, text, img) in enumerate(pages):
            img.save(save / f"{n:02d}.png")
            (save / f"{n:02d}.ref.txt").write_text(text, encoding="utf-8")
            (save / f"{n:02d}.ours.txt").write_text(our_texts[n], encoding="utf-8")
            (save / f"{n:02d}.raw.txt").write_text(raw_texts[n], encoding="utf-8")

    print(f"{len(pages)} scanned pages at 300 dpi, 10.5 pt (cores: {os.cpu_count()}, OMP_THREAD_LIMIT=1)")
    print(f"{'page':<34} {'chars':>5}  {'CER ours':>8} {'raw':>6}   {'width-sensitive ours':>20} {'raw':>6}")
    totals: dict[tuple[str, str], dict[str, float]] = {}
    for n, (game, lang, variant, text, _img) in enumerate(pages):
        raw_clean = clean_text(raw_texts[n], lang)
        row = (cer(our_texts[n], text), cer(raw_clean, text), strict_cer(our_texts[n], text), strict_cer(raw_clean, text))
        print(f"{n:02d} {game[:18]:<18} {lang} {variant:<6}  {len(text):5d}  {row[0]:8.2%} {row[1]:6.2%}   "
              f"{row[2]:20.2%} {row[3]:6.2%}")
        chars = len(re.sub(r"\s+", "", text))
        for who, hyp in (("ours", our_texts[n]), ("raw", raw_clean)):
            total = totals.setdefault((lang, who), {"chars": 0, "pages": 0, "cer": 0.0, "strict": 0.0,
                                                    **dict.fromkeys(ERROR_CLASSES, 0)})
            total["chars"] += chars
            total["pages"] += 1
            total["cer"] += cer(hyp, text)
            total["strict"] += strict_cer(hyp, text)
            for key, value in error_classes(hyp, text).items():
                total[key] += value
    print()
    print("errors per 100 reference characters (raw = tesseract CLI + our clean stage)")
    print(f"{'':<10}" + "".join(f"{k[:12]:>13}" for k in ("CER", "width-sens.", *ERROR_CLASSES)))
    for (lang, who), total in sorted(totals.items()):
        cells = [100 * total["cer"] / total["pages"], 100 * total["strict"] / total["pages"]]
        cells += [100 * total[k] / total["chars"] for k in ERROR_CLASSES]
        print(f"{lang + ' ' + who:<10}" + "".join(f"{c:13.2f}" for c in cells))
    n = len(pages)
    print()
    print(f"raw tesseract CLI on pre-rendered PNGs, {os.cpu_count()} at a time: {n / raw_t:6.3f} pages/s")
    print(f"casebook read + clean stages on the scanned PDFs:     {n / ours_t:6.3f} pages/s")
    print(f"  throughput ratio ours / raw: {raw_t / ours_t:.2f} (target ≥ 0.90)")
    print(f"  CPU seconds a page (this process and its children; steady when the machine is shared): "
          f"raw {raw_cpu / n:.2f}, ours {ours_cpu / n:.2f}, ratio raw / ours {raw_cpu / ours_cpu:.2f}")
    zh = totals.get(("zh", "ours"))
    if zh:
        print(f"  Chinese CER (mean over pages): {zh['cer'] / zh['pages']:.2%} (target ≤ 2.5 %), "
              f"width-sensitive {zh['strict'] / zh['pages']:.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
