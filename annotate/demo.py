"""The demo game: read the two language versions from ``fixtures/demo/``, write them through the
one builder, link them as counterparts, and give a ``demo`` superuser the manager role on both.

Kept apart from the management command so tests and other code can call it without a command
line. Every stage is idempotent: a second run finds everything in place and changes nothing.
"""
from __future__ import annotations

import io
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from PIL import Image, UnidentifiedImageError

from casebook import interchange as ix

from . import models as m
from .builder import build_game

DEMO_DIR = Path(settings.BASE_DIR) / "fixtures" / "demo"
DEMO_FILES = ("game.zh.json", "game.en.json")
DEMO_USERNAME = "demo"
PASSWORD_ENV = "CASEBOOK_DEMO_PASSWORD"


class DemoError(Exception):
    """The demo fixtures are missing or broken; the message says which file and why."""


@dataclass
class DemoResult:
    games: list[tuple[m.Game, str]] = field(default_factory=list)  # (game, builder status)
    problems: list[ix.Problem] = field(default_factory=list)
    linked: bool = False  # counterparts were (re)linked by this run
    user_created: bool = False
    user_changed: bool = False  # password reset or admin rights restored
    memberships_changed: int = 0
    username: str = DEMO_USERNAME
    password: str = ""
    password_source: str = ""  # where the password came from (env variable or file)

    @property
    def changed(self) -> bool:
        return (
            any(status in {"created", "replaced"} for _, status in self.games)
            or self.linked or self.user_created or self.user_changed or self.memberships_changed > 0
        )


# -- reading the fixtures ----------------------------------------------------------------------


def sniff_image(data: bytes, where: str) -> str:
    """The media type of image bytes, from their content (never from the file name)."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.verify()
            kind = img.format
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise DemoError(f"{where}: not a readable image ({exc})") from exc
    media_type = Image.MIME.get(kind or "")
    if not media_type:
        raise DemoError(f"{where}: unknown image format {kind!r}")
    return media_type


def read_demo_game(path: Path, image_dir: Path | None = None) -> ix.Game:
    """One language version: the interchange JSON plus the bytes of its image clues."""
    image_dir = image_dir or path.parent / "img"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DemoError(f"demo fixture not found: {path}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DemoError(f"{path}: not valid UTF-8 JSON ({exc})") from exc
    try:
        game = ix.game_from_dict(data)
    except (TypeError, AttributeError) as exc:
        raise DemoError(f"{path}: not an interchange game ({exc})") from exc
    for clue in game.clues:
        if clue.kind != ix.ClueKind.IMAGE:
            continue
        image_path = image_dir / clue.filename
        try:
            clue.data = image_path.read_bytes()
        except OSError as exc:
            raise DemoError(f"{path}: image clue '{clue.key}' needs {image_path}, which cannot be read ({exc})") from exc
        clue.media_type = sniff_image(clue.data, str(image_path))
    return game


def read_demo_games(demo_dir: Path = DEMO_DIR) -> list[ix.Game]:
    """Both versions, read and checked before anything is written."""
    return [read_demo_game(demo_dir / name) for name in DEMO_FILES]


# -- the demo user -----------------------------------------------------------------------------


def demo_password(data_dir: Path | None = None) -> tuple[str, str]:
    """``CASEBOOK_DEMO_PASSWORD`` when set, else a password generated once and kept in the data dir."""
    given = os.environ.get(PASSWORD_ENV, "").strip()
    if given:
        return given, PASSWORD_ENV
    path = Path(data_dir or settings.DATA_DIR) / "demo_password"
    if path.exists():
        kept = path.read_text(encoding="utf-8").strip()
        if kept:
            return kept, str(path)
    password = secrets.token_urlsafe(12)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(password + "\n", encoding="utf-8")
    path.chmod(0o600)
    return password, str(path)


def ensure_demo_user(password: str, username: str = DEMO_USERNAME):
    """A superuser (admin access) with ``password``; returns (user, created, changed)."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username, defaults={"is_staff": True, "is_superuser": True})
    changed = False
    if not (user.is_staff and user.is_superuser and user.is_active):
        user.is_staff = user.is_superuser = user.is_active = True
        changed = True
    if created or not user.check_password(password):
        user.set_password(password)
        changed = True
    if changed or created:
        user.save()
    return user, created, changed and not created


def ensure_manager(user, game: m.Game) -> bool:
    """Make ``user`` a manager of ``game``; True when something was written."""
    membership, created = m.Membership.objects.get_or_create(
        user=user, game=game, defaults={"role": m.Membership.Role.MANAGER}
    )
    if not created and membership.role != m.Membership.Role.MANAGER:
        membership.role = m.Membership.Role.MANAGER
        membership.save(update_fields=["role"])
        return True
    return created


def link_counterparts(a: m.Game, b: m.Game) -> bool:
    """Point the two games at each other (the builder usually has already); True when changed."""
    if a.counterpart_id == b.pk and b.counterpart_id == a.pk:
        return False
    m.Game.objects.filter(counterpart__in=[a, b]).exclude(pk__in=[a.pk, b.pk]).update(counterpart=None)
    m.Game.objects.filter(pk=a.pk).update(counterpart=b)
    m.Game.objects.filter(pk=b.pk).update(counterpart=a)
    a.refresh_from_db()
    b.refresh_from_db()
    return True


# -- the whole thing ---------------------------------------------------------------------------


def load_demo(*, replace: bool = False, demo_dir: Path = DEMO_DIR, data_dir: Path | None = None) -> DemoResult:
    """Load both language versions, link them, and set up the demo manager account.

    All fixtures are read and checked first, then everything is written in one transaction, so a
    broken fixture leaves the database as it was.
    """
    games = read_demo_games(demo_dir)
    password, source = demo_password(data_dir)
    result = DemoResult(password=password, password_source=source)
    with transaction.atomic():
        for game in games:
            built = build_game(game, replace=replace)
            result.games.append((built.game, built.status))
            result.problems.extend(p for p in built.problems if p.severity != "info")
        (zh, _), (en, _) = result.games
        zh.refresh_from_db()
        en.refresh_from_db()
        result.linked = link_counterparts(zh, en)
        user, result.user_created, result.user_changed = ensure_demo_user(password)
        result.memberships_changed = sum(ensure_manager(user, game) for game, _ in result.games)
    return result
