"""The demo game: fixtures consistent, ``load_demo`` writes both languages, links them, creates
the demo manager, keeps every evidence offset exact and every image decodable, and is idempotent."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from PIL import Image

from annotate import models as m
from annotate.demo import DemoError, load_demo, read_demo_games
from annotate.loader import load_game
from casebook import interchange as ix

PROJECT = Path(__file__).resolve().parent.parent
DEMO = PROJECT / "fixtures" / "demo"
EXPECTED_KINDS = {
    "objective": 3, "reasoning": 15, "relations": 8, "long_script": 20,
    "text_image": 4, "media_image": 3, "multi_step": 5, "open_ended": 2,
}
COUNTED_MODELS = (m.Game, m.Character, m.Kill, m.Clue, m.EvidenceSpan, m.Relationship, m.ReasoningChain,
                  m.ChainNode, m.KeyStatement, m.Question, m.Option, m.Membership)


@pytest.fixture
def demo_env(settings, tmp_path, monkeypatch):
    """Media and the generated password go to a temporary data dir, never the real one."""
    settings.DATA_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; not under test here
    monkeypatch.delenv("CASEBOOK_DEMO_PASSWORD", raising=False)
    return tmp_path


def run_load_demo(*args: str) -> str:
    out = io.StringIO()
    call_command("load_demo", *args, stdout=out, stderr=out)
    return out.getvalue()


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in COUNTED_MODELS}


def span_text(span: m.EvidenceSpan) -> str:
    """The stored text an evidence span points into."""
    if span.document == ix.SpanDocument.SCRIPT:
        return span.character.script
    if span.document == ix.SpanDocument.CLUE:
        return span.clue.text or span.clue.ocr_text
    if span.document == ix.SpanDocument.MANUAL:
        return span.game.truth_text
    if span.document == ix.SpanDocument.PUBLIC:
        return span.game.public_clue_text
    raise AssertionError(f"unexpected span document {span.document}")


# -- the fixtures themselves (no database) -------------------------------------------------------


def test_committed_json_matches_the_generator():
    """fixtures/demo/game.*.json are exactly what make_game.py writes from the content files."""
    done = subprocess.run([sys.executable, str(DEMO / "make_game.py"), "--check"], capture_output=True, text=True,
                          cwd=PROJECT, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_fixtures_are_a_complete_bilingual_game():
    zh, en = read_demo_games(DEMO)
    assert (zh.language, en.language) == ("zh", "en")
    assert zh.counterpart == en.slug and en.counterpart == zh.slug
    for game in (zh, en):
        assert Counter(q.kind for q in game.questions) == EXPECTED_KINDS
        assert len(game.playable) == 4 and game.murderers == [game.kills[0].killer]
        assert [c.name for c in game.characters if c.is_victim] == game.victims and len(game.victims) == 1
        assert game.truth.motive and game.truth.method and game.truth.motive in game.truth.text
        for ch in game.playable:
            assert ch.goals, ch.name
            assert len(ch.script) >= (750 if game.language == "zh" else 2000), (ch.name, len(ch.script))
        images = [c for c in game.clues if c.kind == ix.ClueKind.IMAGE]
        assert sorted(c.image_kind for c in images) == ["media_rich", "text_rich", "text_rich"]
        for clue in images:
            assert clue.media_type == "image/png" and len(clue.data) < 150 * 1024
        # Every multiple-choice answer names exactly the options marked correct.
        for q in game.questions:
            if q.kind != ix.QuestionKind.OPEN_ENDED:
                assert q.answer == q.answer_letters and q.answer, q.stem
        wellplay_subtypes = Counter((q.kind, q.sub_type) for q in game.questions_of(*ix.WELLPLAY_KINDS))
        for sub in ("how", "why", "where", "when", "suspect"):
            assert wellplay_subtypes[("reasoning", sub)] == 3
        assert {s for k, s in wellplay_subtypes if k == "relations"} == {"one", "two", "non_existent"}
        assert all(q.multi for q in game.questions if q.sub_type == "suspect")
        # Image questions point at the right kind of image.
        kinds = {c.key: c.image_kind for c in images}
        assert {kinds[q.image_clue] for q in game.questions_of(ix.QuestionKind.TEXT_IMAGE)} == {"text_rich"}
        assert {kinds[q.image_clue] for q in game.questions_of(ix.QuestionKind.MEDIA_IMAGE)} == {"media_rich"}


def test_reasoning_chain_shape():
    for game in read_demo_games(DEMO):
        (chain,) = game.chains
        assert chain.goal == ix.ChainGoal.MURDERER
        by_kind = Counter(node.kind for node in chain.nodes)
        assert by_kind == {"direct": 3, "inferred": 2, "conclusion": 1}
        nodes = {node.key: node for node in chain.nodes}
        for node in chain.nodes:
            if node.kind == "direct":
                assert node.evidence and all(s.document == "script" for s in node.evidence)
            else:
                assert node.parents and all(p in nodes for p in node.parents)
        for q in game.questions_of(ix.QuestionKind.MULTI_STEP):
            assert q.level == nodes[q.chain_node].level
            assert q.source == ("p" if q.level == 0 else f"p-{q.level}")
        assert {nodes[s.node].kind for s in game.key_statements if s.node} == {"direct"}
        key_roles = {c.name for c in game.characters if c.key_role}
        assert {s.owner for s in game.key_statements} == key_roles


# -- load_demo on a test database ----------------------------------------------------------------


@pytest.mark.django_db
def test_load_demo_writes_links_and_is_idempotent(demo_env, client):
    out = run_load_demo()
    assert out.count(": created") == 2 and "Demo loaded." in out
    password = (demo_env / "demo_password").read_text().strip()
    assert len(password) >= 12 and password in out

    zh = m.Game.objects.get(language="zh")
    en = m.Game.objects.get(language="en")
    assert zh.counterpart == en and en.counterpart == zh
    for game in (zh, en):
        assert dict(Counter(game.questions.values_list("kind", flat=True))) == EXPECTED_KINDS
        assert game.characters.filter(playable=True).count() == 4
        (kill,) = game.kills.all()
        assert kill.killer.is_murderer and kill.victim.is_victim and not kill.victim.playable
        assert game.chains.get().nodes.count() == 6
        assert game.key_statements.count() == 4
        assert game.relationships.count() == 5

    # Evidence offsets are code points into the stored texts.
    spans = m.EvidenceSpan.objects.select_related("character", "clue", "game")
    assert spans.count() > 40
    for span in spans:
        assert span_text(span)[span.start:span.end] == span.quote, (span.document, span.quote)
    assert any(not span.quote.isascii() for span in spans)  # the Chinese ones, not just the English

    # Image clues: stored, decodable, the bytes of the committed PNGs.
    images = m.Clue.objects.filter(kind="image")
    assert images.count() == 6
    for clue in images:
        data = clue.image.read()
        clue.image.close()
        assert hashlib.sha256(data).hexdigest() == clue.sha256
        assert data == (DEMO / "img" / clue.filename).read_bytes()
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            assert img.format == "PNG" and img.width > 400
        assert clue.media_type == "image/png" and clue.image_kind in {"text_rich", "media_rich"}

    # The demo user administers both games and can log in.
    user = get_user_model().objects.get(username="demo")
    assert user.is_superuser and user.is_staff
    assert set(user.memberships.values_list("game__language", "role")) == {("zh", "manager"), ("en", "manager")}
    assert client.login(username="demo", password=password)

    before = counts()
    stamps = list(m.Game.objects.order_by("pk").values_list("updated_at", flat=True))
    again = run_load_demo()
    assert again.count(": unchanged") == 2 and "nothing changed" in again and password in again
    assert counts() == before
    assert list(m.Game.objects.order_by("pk").values_list("updated_at", flat=True)) == stamps
    assert get_user_model().objects.count() == 1


@pytest.mark.django_db
def test_loader_reads_back_what_the_fixtures_say(demo_env):
    load_demo(data_dir=demo_env)
    for fixture in read_demo_games(DEMO):
        stored = load_game(fixture.slug)
        assert [(q.kind, q.stem, q.answer, [o.text for o in q.options]) for q in stored.questions] == [
            (q.kind, q.stem, q.answer, [o.text for o in q.options]) for q in fixture.questions
        ]
        assert [c.script for c in stored.characters] == [c.script for c in fixture.characters]
        assert stored.truth == fixture.truth
        assert {c.key: c.sha256 for c in stored.clues} == {c.key: c.sha256 for c in fixture.clues}


@pytest.mark.django_db
def test_password_from_environment_is_applied(demo_env, monkeypatch):
    load_demo(data_dir=demo_env)
    monkeypatch.setenv("CASEBOOK_DEMO_PASSWORD", "tea-and-aconite-42")
    result = load_demo(data_dir=demo_env)
    assert result.user_changed and result.password_source == "CASEBOOK_DEMO_PASSWORD"
    assert get_user_model().objects.get(username="demo").check_password("tea-and-aconite-42")
    assert not load_demo(data_dir=demo_env).changed


@pytest.mark.django_db
def test_broken_fixture_is_reported_and_writes_nothing(demo_env, tmp_path):
    broken = tmp_path / "demo"
    shutil.copytree(DEMO, broken, ignore=shutil.ignore_patterns("__pycache__"))
    (broken / "img" / "iou.en.png").write_bytes(b"this is not a png")
    with pytest.raises(DemoError, match=r"iou\.en\.png: not a readable image"):
        load_demo(demo_dir=broken, data_dir=demo_env)
    assert m.Game.objects.count() == 0

    (broken / "img" / "iou.en.png").unlink()
    with pytest.raises(DemoError, match="cannot be read"):
        load_demo(demo_dir=broken, data_dir=demo_env)

    data = json.loads((broken / "game.zh.json").read_text(encoding="utf-8"))
    (broken / "game.zh.json").write_text(json.dumps(data)[:-40], encoding="utf-8")
    with pytest.raises(DemoError, match=r"game\.zh\.json: not valid UTF-8 JSON"):
        load_demo(demo_dir=broken, data_dir=demo_env)
    assert m.Game.objects.count() == 0 and get_user_model().objects.count() == 0
