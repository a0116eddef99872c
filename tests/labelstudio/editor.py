"""Driving Label Studio's real editor in Chromium for the UI tests: log in, open a task, select
or click text by its quote, submit and wait until the server holds the annotation."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from labelstudio.client import LabelStudioClient
from tests.conftest import missing

CHROMIUM = "/usr/bin/chromium"
# LS user created by scripts/labelstudio_server.sh (override when reusing another server)
LS_USER = os.environ.get("CASEBOOK_LABELSTUDIO_USER", "admin@example.com")
LS_PASSWORD = os.environ.get("CASEBOOK_LABELSTUDIO_PASSWORD", "casebook-admin-pass")

# the rectangle of the nth occurrence of a quote inside the labeling area (the task list on the
# left and the task's heading show text too)
FIND = """([quote, nth]) => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const i = node.data.indexOf(quote);
    if (i < 0) continue;
    const range = document.createRange();
    range.setStart(node, i); range.setEnd(node, i + quote.length);
    const rects = range.getClientRects();
    const a = rects[0], z = rects[rects.length - 1];
    if (!a || a.left < 270) continue;
    // a grid cell scrolled under the editor is laid out there too: take only text that is on top
    const top = document.elementFromPoint(a.left + 1, (a.top + a.bottom) / 2);
    if (!top || !(top === node.parentElement || top.contains(node.parentElement) || node.parentElement.contains(top))) continue;
    if (nth-- > 0) continue;
    return [a.left + 1, (a.top + a.bottom) / 2, z.right - 1, (z.top + z.bottom) / 2];
  }
  return null;
}"""


def locate(page, quote: str, nth: int = 0) -> list[float]:
    box = None
    for _ in range(20):
        box = page.evaluate(FIND, [quote, nth])
        if box:
            return box
        page.wait_for_timeout(250)
    raise AssertionError(f"{quote} not shown in the editor")


def drag_select(page, quote: str, nth: int = 0) -> None:
    """Select the quote with the mouse (a region is made with the active label)."""
    box = locate(page, quote, nth)
    page.mouse.move(box[0], box[1])
    page.mouse.down()
    page.mouse.move(box[2], box[3], steps=5)
    page.mouse.up()
    page.wait_for_timeout(300)


def click_text(page, quote: str, nth: int = 0) -> None:
    box = locate(page, quote, nth)
    page.mouse.click((box[0] + box[2]) / 2, box[1])
    page.wait_for_timeout(300)


@contextmanager
def task_page(url: str, project_id: int, task_id: int) -> Iterator:
    """A logged-in Chromium page on the task (skips, or fails under CI=true, without Chromium)."""
    if not Path(CHROMIUM).exists():
        missing(f"{CHROMIUM} not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 1000})
            page.goto(f"{url}/user/login/")
            page.fill("input[name=email]", LS_USER)
            page.fill("input[name=password]", LS_PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_load_state("networkidle")
            if "/user/login" in page.url:
                missing(f"cannot log in to the Label Studio UI as {LS_USER} (set CASEBOOK_LABELSTUDIO_USER/_PASSWORD)")
            page.goto(f"{url}/projects/{project_id}/data?task={task_id}")
            yield page
        finally:
            browser.close()


def submit(page, client: LabelStudioClient, project_id: int, task_id: int) -> None:
    """Press Submit and wait until the server holds an annotation of the task."""
    page.locator('[data-testid="bottombar-submit-button"]').first.click(timeout=10_000)
    for _ in range(40):
        if any(t["id"] == task_id and t["annotations"] for t in client.export_tasks(project_id)):
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"task {task_id} has no annotation after Submit")
