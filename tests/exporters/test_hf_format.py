"""The Hugging Face layout: every table loads in ``datasets`` (by file and by the card's configs) and
in pandas, with the row counts the database holds, on the real anchors and the demo game."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from annotate import models as m
from playlogs.models import Session, Turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def media(settings, tmp_path, monkeypatch):
    settings.DATA_DIR = tmp_path / "data"
    settings.MEDIA_ROOT = tmp_path / "data" / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    return tmp_path


def expected_counts() -> dict[str, int]:
    """What an approved-only export must hold, counted in the database."""
    approved = m.Question.objects.filter(status="approved")
    return {
        "games": m.Game.objects.count(),
        "characters": m.Character.objects.count(),
        "scripts": m.Character.objects.exclude(script="").count(),
        "clues": m.Clue.objects.count(),
        "questions": approved.count(),
        "options": m.Option.objects.filter(question__in=approved).exclude(review__in=["rejected", "pending"]).count(),
        "chains": m.ReasoningChain.objects.filter(status="approved").count(),
        "nodes": m.ChainNode.objects.filter(chain__status="approved").count(),
        "spans": m.EvidenceSpan.objects.filter(state="live").count(),
        "relationships": m.Relationship.objects.filter(status="approved").count(),
    }


def header(card: str) -> dict:
    import yaml

    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


def test_hf_layout_loads_in_datasets_and_pandas_with_database_counts(media, wellplay_anchor, whodunitbench_anchor):
    import datasets
    import pandas as pd

    call_command("import_dataset", "--format", "wellplay", str(wellplay_anchor), verbosity=0)
    call_command("import_dataset", "--format", "whodunitbench", str(whodunitbench_anchor), verbosity=0)
    call_command("load_demo", verbosity=0)
    call_command("import_session", str(whodunitbench_anchor / "DI7MI_2"), "--format", "whodunitbench", verbosity=0)
    demo_draft = m.Question.objects.filter(game__source_id="demo-pine-wind-teahouse-zh").first()
    demo_draft.status = "draft"
    demo_draft.save()  # drafts stay out of a published dataset
    out = media / "hf"
    call_command("export", "--format", "hf", "--out", str(out), verbosity=0)
    want = expected_counts()
    want["sessions"] = Session.objects.count()
    want["turns"] = Turn.objects.count()
    assert want["sessions"] >= 1 and want["games"] >= 8 and want["questions"] > 1000

    card = (out / "README.md").read_text(encoding="utf-8")
    meta = header(card)
    assert meta["license"] == "other" and sorted(meta["language"]) == ["en", "zh"]
    assert {c["config_name"] for c in meta["configs"]} == set(want)
    splits = {i["config_name"]: i["splits"][0]["num_examples"] for i in meta["dataset_info"]}
    assert splits == want
    assert "## Citation" in card and "@misc{" in card

    for name, rows in want.items():
        path = out / "data" / f"{name}.parquet"
        frame = pd.read_parquet(path, engine="pyarrow")
        assert len(frame) == rows, name
        by_file = datasets.load_dataset("parquet", data_files=str(path), split="train",
                                        cache_dir=str(media / "hf-cache"))
        assert by_file.num_rows == rows, name
        by_card = datasets.load_dataset(str(out), name, split="train", cache_dir=str(media / "hf-cache"))
        assert by_card.num_rows == rows and by_card.column_names == list(frame.columns), name
        features = next(i for i in meta["dataset_info"] if i["config_name"] == name)["features"]
        assert [f["name"] for f in features] == list(frame.columns)

    questions = pd.read_parquet(out / "data" / "questions.parquet")
    scripts = pd.read_parquet(out / "data" / "scripts.parquet").set_index("script_id")
    clues = pd.read_parquet(out / "data" / "clues.parquet").set_index("clue_id")
    # Every reference resolves, and image clues' files are there by relative path.
    for refs in questions["context_script_ids"]:
        assert set(refs) <= set(scripts.index)
    for refs in questions["context_clue_ids"]:
        assert set(refs) <= set(clues.index)
    images = [p for p in clues["image"] if p]
    assert images and all((out / p).is_file() for p in images)
    same_stem = m.Question.objects.filter(stem=demo_draft.stem)
    assert (questions["stem"] == demo_draft.stem).sum() == same_stem.filter(status="approved").count() \
        == same_stem.count() - 1
    options = pd.read_parquet(out / "data" / "options.parquet")
    first = questions.iloc[0]
    assert list(options[options.question_id == first.question_id].text) == list(first.options)


def test_hf_export_is_deterministic(media):
    call_command("load_demo", verbosity=0)
    call_command("export", "--format", "hf", "--out", str(media / "a"), verbosity=0)
    call_command("export", "--format", "hf", "--out", str(media / "b"), verbosity=0)

    def tree(folder: Path) -> dict[str, bytes]:
        return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}

    assert tree(media / "a") == tree(media / "b")
    assert not (media / "a" / "data" / "sessions.parquet").exists()  # no played sessions: no such table
    meta = header((media / "a" / "README.md").read_text(encoding="utf-8"))
    assert "sessions" not in {c["config_name"] for c in meta["configs"]}
    assert json.loads(json.dumps(meta))  # plain YAML: only mappings, lists and scalars
