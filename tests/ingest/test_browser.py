"""In real headless Chromium: upload a package, watch the job page turn from queued to done without
a reload, then correct the split in the editor (rename a section, move a boundary by picking a
line, mark the clue section as manual, change an image clue's kind) and rebuild the game."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotate import models as m
from casebook.models import Job

from .conftest import panel
from .ingest_makers import png_bytes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-12345678"


@pytest.fixture
def uploader(django_user_model, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.DATA_DIR = tmp_path
    user = django_user_model.objects.create_user("lin", password=PASSWORD)
    other = m.Game.objects.create(slug="other", title="Other", language="en")
    m.Membership.objects.create(user=user, game=other, role="manager")
    return user


def test_upload_live_status_and_split_editor(page, live_server, uploader, en_combined_pdf, clue_card, tmp_path):
    from ingest.tasks import run_job, run_pages

    path, parts = en_combined_pdf
    photo = tmp_path / "vitamin.png"
    photo.write_bytes(png_bytes(panel(clue_card, "vitamin")))

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "lin")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/ingest/")
    page.set_input_files("input[type=file]", [str(path), str(photo)])
    page.fill("input[name=title]", "Sin")
    page.select_option("select[name=language]", "en")
    with page.expect_navigation():
        page.click("button[type=submit]")

    # The task backend is the database queue: nothing runs until a worker takes the job.
    job = Job.objects.get(kind="ingest")
    assert page.locator("#job-state").inner_text() == "queued"
    assert page.locator("#job-summary").is_hidden()
    page.evaluate("window.__stayed = true")  # gone if the page reloads
    run_job(job.pk)  # what db_workers do: the job's task plans the page batches (the photo's OCR) …
    run_pages(job.pk)  # … and a page task reads them, then builds the game
    expect(page.locator("#job-state")).to_have_text("done", timeout=30_000)
    assert page.evaluate("window.__stayed") is True
    summary = page.locator("#summary-lines").inner_text()
    assert "characters found: 4" in summary and "1 media_rich" in summary
    assert "pages:" in summary and "text-layer" in summary

    page.click("#split-link")
    page.wait_for_load_state()
    game = m.Game.objects.get(title="Sin")
    rows = game.extra["ingest"]["split"]
    index = {d["section"]: i for i, d in enumerate(rows)}
    assert [d["section"] for d in rows if d["kind"] == "character"] == list(parts)

    # rename Hu Investigate, mark the clue section as manual
    page.fill(f"input[name=row-{index['Hu Investigate']}-section]", "Researcher Hu")
    clues_row = next(i for i, d in enumerate(rows) if d["kind"] == "clues" and d["source"] == path.name)
    page.select_option(f"select[name=row-{clues_row}-kind]", "manual")
    # move Officer Li's start one line down: pick that line in the page's line list
    li = index["Officer Li"]
    row = page.locator(f"tr[data-row='{li}']")
    row.locator("summary").click()
    lines = row.locator(f"a[data-pick='{li}']")
    current = next(n for n in range(lines.count()) if "on" in (lines.nth(n).get_attribute("class") or ""))
    target = lines.nth(current + 1)
    new_offset = int(target.get_attribute("data-offset"))
    picked_text, skipped_text = target.inner_text(), lines.nth(current).inner_text()
    assert new_offset > rows[li]["start_offset"]
    target.click()
    assert page.input_value(f"input[name=row-{li}-offset]") == str(new_offset)
    assert "on" in (target.get_attribute("class") or "") and "on" not in (lines.nth(current).get_attribute("class") or "")
    with page.expect_navigation():
        page.click("#split-form button[type=submit]")

    game.refresh_from_db()
    names = list(game.characters.values_list("name", flat=True))
    assert names == ["Zhang Villager", "Chief Wang", "Officer Li", "Researcher Hu"]
    split = {d["section"]: d for d in game.extra["ingest"]["split"]}
    assert split["Officer Li"]["start_offset"] == new_offset and split["Officer Li"]["reason"].startswith("corrected")
    # the script now starts at the picked line; the line above went to the section before
    assert game.characters.get(name="Officer Li").script.startswith(picked_text[:40])
    assert game.characters.get(name="Chief Wang").script.rstrip().endswith(skipped_text)
    assert "Clue 1: a bloody sickle." in game.truth_text and not game.clues.filter(kind="text").exists()
    assert page.locator("input[name^=row-][name$=-section][value='Researcher Hu']").count() == 1

    (image_clue,) = game.clues.filter(kind="image")
    assert image_clue.image_kind == "media_rich"
    page.select_option(f"select[name='kind-{image_clue.key}']", "text_rich")
    with page.expect_navigation():
        page.get_by_role("button", name="Save image kinds").click()
    image_clue.refresh_from_db()
    assert image_clue.image_kind == "text_rich"
    assert page.locator(f"select[name='kind-{image_clue.key}']").input_value() == "text_rich"
