"""Stage 5 and the whole pipeline into the database: command, duplicates, replace, re-split."""
from __future__ import annotations

import hashlib

import pytest
from django.core.management import CommandError, call_command

from annotate import models as m
from ingest.build import InvalidSplit, rebuild_from_split
from ingest.pipeline import IngestOptions, run_ingest
from ingest.read import IngestError
from ingest.split import CHARACTER, SplitDecision

from .ingest_makers import cer

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_command_ingests_a_per_file_package(zh_package, zh_scripts, capsys):
    call_command("ingest", str(zh_package), "--game", "罪恶", "--language", "zh", "--workers", "1")
    out = capsys.readouterr().out
    assert "characters found: 4" in out and "ingested into" in out and "mean OCR confidence" in out
    game = m.Game.objects.get(title="罪恶")
    assert game.origin == "ingested" and game.language == "zh"
    chars = {c.name: c for c in game.characters.all()}
    assert set(chars) == set(zh_scripts)
    for name, script in zh_scripts.items():
        assert cer(chars[name].script, script) <= 0.01
        assert chars[name].extra["source_pages"][0]["document"] == f"{name}.pdf"
    assert "张村民就是南城杀人狂" in game.truth_text
    text_clues = list(game.clues.filter(kind="text").values_list("text", flat=True))
    assert text_clues == ["线索1：一把带血的镰刀。", "线索2：王村长的账本。"]
    photo, note = game.clues.filter(kind="image")
    assert photo.image_kind == "media_rich" and photo.image and photo.page.document.filename == "img/7.png"
    assert note.image_kind == "text_rich" and note.key == "img/2.png" and "胡调研" in note.ocr_text
    docs = {d.filename: d for d in game.documents.all()}
    assert len(docs) == 8
    original = (zh_package / "张村民.pdf").read_bytes()
    assert docs["张村民.pdf"].sha256 == hashlib.sha256(original).hexdigest()
    assert docs["张村民.pdf"].file.read() == original and docs["张村民.pdf"].media_type == "application/pdf"
    assert docs["张村民.pdf"].role == "script" and docs["主持人手册.pdf"].role == "manual"
    pages = m.Page.objects.filter(document=docs["王村长.pdf"])
    assert pages.count() >= 2 and all(p.method == "text-layer" and p.preview for p in pages)
    split = game.extra["ingest"]["split"]
    assert {d["section"] for d in split} >= set(zh_scripts) | {"manual", "clues"}

    with pytest.raises(CommandError, match="already ingested"):
        call_command("ingest", str(zh_package / "张村民.pdf"), "--game", "另一个游戏", "--language", "zh")
    with pytest.raises(CommandError, match="--replace"):
        call_command("ingest", str(zh_package), "--game", "罪恶", "--language", "zh", "--workers", "1")
    assert m.Game.objects.count() == 1 and m.SourceDocument.objects.count() == 8

    call_command("ingest", str(zh_package), "--game", "罪恶", "--language", "zh", "--workers", "1", "--replace")
    assert m.Game.objects.count() == 1 and m.SourceDocument.objects.count() == 8
    assert game.characters.count() == 4


def test_nothing_saved_when_nothing_is_usable(tmp_path):
    (tmp_path / "empty.pdf").write_bytes(b"")
    (tmp_path / "x.docx").write_bytes(b"nope")
    with pytest.raises(IngestError, match="empty.pdf"):
        run_ingest([tmp_path], IngestOptions("Nothing", "en"))
    assert not m.Game.objects.exists() and not m.SourceDocument.objects.exists()


def test_combined_pdf_and_rebuild_from_corrected_split(en_combined_pdf, en_scripts, django_user_model):
    path, parts = en_combined_pdf
    user = django_user_model.objects.create_user("ann", password="pw-12345678")
    summary = run_ingest([path], IngestOptions("Sin", "en"), user=user)
    assert summary.status == "created" and summary.characters == list(en_scripts)
    game = m.Game.objects.get(slug=summary.game_slug)
    assert m.Membership.objects.filter(user=user, game=game, role="manager").exists()
    chars = {c.name: c.script for c in game.characters.all()}
    names = list(en_scripts)
    for i, name in enumerate(names):
        body = parts[name].split("\n", 1)[1]
        assert cer(chars[name][-len(body):], body) <= 0.01, name
        for other in names[i + 1:]:
            assert f"Character: {other}" not in chars[name]
    assert game.truth_text.startswith("Host manual")
    assert game.clues.filter(kind="text").count() == 2

    decisions = [SplitDecision(**d) for d in game.extra["ingest"]["split"]]
    # rename Chief Wang, merge Officer Li into him (drop the boundary)
    fixed = []
    for d in decisions:
        if d.section == "Officer Li":
            continue
        if d.section == "Chief Wang":
            d = SplitDecision("Wang the Chief", CHARACTER, d.source, d.start_page, d.start_offset, "renamed")
        fixed.append(d)
    result = rebuild_from_split(game, fixed, user=user)
    assert result.status == "replaced"
    chars = {c.name: c.script for c in game.characters.all()}
    assert "Officer Li" not in chars and "Officer Li received an order" in chars["Wang the Chief"]
    assert game.documents.count() == 1 and m.Page.objects.filter(document__game=game).count() >= 3
    assert [d["section"] for d in m.Game.objects.get(pk=game.pk).extra["ingest"]["split"]].count("Wang the Chief") == 1

    with pytest.raises(InvalidSplit, match="no page 99"):
        rebuild_from_split(game, [SplitDecision("X", CHARACTER, path.name, 99, 0)])
