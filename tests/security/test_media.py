"""Attack 2: an uploaded file never runs as script in Casebook's origin. Stored names are
sanitised, the type comes from the content, only raster images are inline, everything is
``nosniff`` with a script-forbidding CSP; pages get a CSP too. Checked with the test client and
in real headless Chromium."""
from __future__ import annotations

import io

import pytest
from django.core.files.base import ContentFile
from django.test import Client
from django.urls import reverse
from PIL import Image

from annotate.models import Clue, SourceDocument
from casebook.images import sniff_media_type
from casebook.security import safe_file_name

PAYLOAD = b"<html><body><script>document.title='pwned';fetch('/pwned/')</script></body></html>"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>document.title="pwned"</script></svg>'


def gif_with_script() -> bytes:
    """A valid GIF whose comment holds a script (a polyglot an HTML sniffer would run)."""
    out = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(out, "GIF", comment=PAYLOAD)
    return out.getvalue()


def test_names_and_types_come_from_content():
    gif = gif_with_script()
    assert sniff_media_type(gif) == "image/gif" and sniff_media_type(PAYLOAD) == "application/octet-stream"
    assert safe_file_name("x.html", gif) == "x.gif"
    assert safe_file_name("../../证据.svg", SVG) == "证据.bin"
    assert safe_file_name("notes.TXT", b"hello") == "notes.txt"


def stored_source(game, name: str, data: bytes) -> SourceDocument:
    """A file stored under a dangerous name, as uploads were before names were sanitised."""
    doc = SourceDocument(game=game, filename=name, sha256=name, role="other")
    doc.file.save(name, ContentFile(data), save=True)
    assert doc.file.name.endswith(name)
    return doc


@pytest.mark.django_db
def test_clue_upload_named_html_is_stored_and_served_as_an_image(client, victim, people):
    client.force_login(people["annotator"])
    response = client.post(reverse("annotate:clues", args=[victim.slug]), {
        "title": "polyglot", "image_kind": "media_rich",
        "image": ContentFile(gif_with_script(), name="x.html"),
    })
    assert response.status_code == 302
    clue = Clue.objects.get(game=victim, title="polyglot")
    assert clue.image.name.endswith(".gif")
    served = client.get(clue.image.url)
    assert served["Content-Type"] == "image/gif" and served["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in served["Content-Security-Policy"] and "script-src" not in served["Content-Security-Policy"]
    assert not served.has_header("Content-Disposition") or served["Content-Disposition"].startswith("inline")


@pytest.mark.django_db
@pytest.mark.parametrize("name,data", [("x.html", PAYLOAD), ("x.svg", SVG), ("x.xhtml", PAYLOAD)])
def test_stored_markup_is_downloaded_never_rendered(client, victim, people, name, data):
    doc = stored_source(victim, name, data)
    client.force_login(people["manager"])
    served = client.get(doc.file.url)
    assert served.status_code == 200
    assert served["Content-Type"] == "application/octet-stream"
    assert served["Content-Disposition"].startswith("attachment")
    assert served["X-Content-Type-Options"] == "nosniff" and "sandbox" in served["Content-Security-Policy"]


@pytest.mark.django_db
def test_pages_carry_a_content_security_policy(client, victim, people):
    client.force_login(people["manager"])
    policy = client.get(reverse("annotate:workspace", args=[victim.slug]))["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "object-src 'none'" in policy and "frame-ancestors 'none'" in policy


@pytest.fixture
def media_through_casebook(monkeypatch):
    """Django's test live server serves MEDIA_URL itself, bypassing our view; send it to Casebook."""
    from django.test.testcases import _MediaFilesHandler

    monkeypatch.setattr(_MediaFilesHandler, "_should_handle", lambda self, path: False)


def test_uploaded_markup_does_not_run_in_chromium(transactional_db, media_through_casebook, page, live_server,
                                                  victim, people):
    docs = [stored_source(victim, name, data) for name, data in (("x.html", PAYLOAD), ("x.svg", SVG))]
    clue = Clue.objects.create(game=victim, key="img/poly", kind="image", title="poly")
    clue.image.save("poly.gif", ContentFile(gif_with_script()), save=True)
    client = Client()
    client.force_login(people["manager"])
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                               "url": live_server.url}])
    hits: list[str] = []
    page.on("request", lambda request: hits.append(request.url) if "/pwned/" in request.url else None)
    for doc in docs:
        with page.expect_download() as download:
            try:
                page.goto(live_server.url + doc.file.url)
            except Exception as exc:  # Chromium reports a navigation that became a download
                assert "Download is starting" in str(exc)
        assert download.value.suggested_filename.startswith("x.")
    page.goto(live_server.url + reverse("annotate:workspace", args=[victim.slug]))
    page.goto(live_server.url + clue.image.url)
    assert page.title() != "pwned"
    page.goto(live_server.url + reverse("annotate:clues", args=[victim.slug]))
    page.wait_for_load_state("networkidle")
    assert page.title() != "pwned" and hits == []
