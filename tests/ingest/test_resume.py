"""Resumable ingest: finished OCR pages are kept and not read again; OCR pool processes die with their parent."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from ingest.ocr import OcrResult, PageCache, PageJob, ocr_pages

pytestmark = pytest.mark.ocr
ROOT = Path(__file__).resolve().parent.parent.parent
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _pages(folder: Path, count: int) -> list[PageJob]:
    font = ImageFont.truetype(FONT, 40)
    jobs = []
    for n in range(count):
        img = Image.new("L", (1400, 500), 255)
        draw = ImageDraw.Draw(img)
        for line in range(3):
            draw.text((60, 60 + line * 120), f"Page {n + 1}: the butler entered the study.", fill=0, font=font)
        path = folder / f"page{n + 1}.png"
        img.save(path)
        jobs.append(PageJob(str(path), -1, "eng"))
    return jobs


def test_a_resumed_run_starts_at_the_first_page_not_done(tmp_path):
    jobs = _pages(tmp_path, 3)
    cache = PageCache(tmp_path / "cache")
    first = ocr_pages(jobs[:2], workers=1, cache=cache)  # the run that was killed after two pages
    assert all("butler" in r.text for r in first)
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 2
    cache.put(jobs[0], OcrResult("FROM THE CACHE", 99.0))  # proves page 1 is not read again
    ticks: list[int] = []
    again = ocr_pages(jobs, workers=1, cache=PageCache(tmp_path / "cache"), progress=ticks.append)
    assert ticks[0] == 2 and sum(ticks) == 3  # progress starts at the pages already done
    assert again[0].text == "FROM THE CACHE" and "Page 2" in again[1].text and "Page 3" in again[2].text
    changed = PageJob(jobs[0].path, -1, "eng", ("grayscale",))  # other steps: not the same page result
    assert PageCache(tmp_path / "cache").get(changed) is None


KILLABLE = """
import sys
from pathlib import Path
from ingest.ocr import PageJob, ocr_pages
paths = sorted(Path(sys.argv[1]).glob("*.png"))
ocr_pages([PageJob(str(p), -1, "eng") for p in paths] * 6, workers=2)
"""


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid and stat[0] != "Z":
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_pool_processes_die_when_the_parent_is_killed(tmp_path):
    _pages(tmp_path, 4)
    parent = subprocess.Popen([sys.executable, "-c", KILLABLE, str(tmp_path)], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    pool: list[int] = []
    try:
        for _ in range(200):
            pool = [pid for pid in _children(parent.pid) if _alive(pid)]
            if len(pool) >= 2:
                break
            time.sleep(0.1)
        assert len(pool) >= 2, "the OCR pool never started"
        time.sleep(0.5)  # let the initializer run
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        for _ in range(50):
            if not any(_alive(pid) for pid in pool):
                break
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in pool)
    finally:
        if parent.poll() is None:
            parent.kill()
        for pid in pool:  # only matters when the test fails: leave nothing behind
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
