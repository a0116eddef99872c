"""A killed worker's tesseract dies with it: SIGKILL the process running a long tesseract batch for real."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import missing

ROOT = Path(__file__).resolve().parents[2]

RUN = """
import sys
from ingest import ocr
ocr.tesseract_pages([sys.argv[1]], "eng")
"""


def tesseract_children(pid: int) -> list[int]:
    """Live (not zombie) tesseract runs over a page whose parent is ``pid`` (not ``--version``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                comm, rest = (entry / "stat").read_text().split(") ", 1)
                state, ppid = rest.split()[:2]
                if (comm.endswith("(tesseract") and int(ppid) == pid and state != "Z"
                        and b"poster.ppm" in (entry / "cmdline").read_bytes()):
                    found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux-only")
def test_tesseract_dies_when_the_process_that_started_it_is_killed(clue_card, tmp_path):
    if shutil.which("tesseract") is None:
        missing("tesseract is not installed")
    # One page, so tesseract writes nothing to the dead worker's pipes between pages (a write would
    # end it by SIGPIPE anyway): the real WhoDunitBench clue collage tiled 6×6, a run of many seconds.
    page = tmp_path / "poster.ppm"
    width, height = clue_card.size
    poster = Image.new("RGB", (width * 6, height * 6), "white")
    for i in range(36):
        poster.paste(clue_card, (width * (i % 6), height * (i // 6)))
    poster.save(page, "PPM")
    worker = subprocess.Popen([sys.executable, "-c", RUN, str(page)], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE)
    children: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while not children and time.monotonic() < deadline and worker.poll() is None:
            children = tesseract_children(worker.pid)
            time.sleep(0.05)
        assert children, f"no tesseract started: {worker.poll()} {worker.stderr.read() if worker.poll() else ''}"
        time.sleep(0.3)
        assert all(alive(pid) for pid in children)  # still reading the page
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        deadline = time.monotonic() + 1  # the kernel signals at once; without, tesseract runs until it next writes to a dead pipe
        while any(alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(pid) for pid in children), "tesseract outlived the killed worker"
    finally:
        if worker.poll() is None:
            worker.kill()
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
