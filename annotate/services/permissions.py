"""Who may do what in a game: one place every view, command and job of every app asks.

Roles come from ``annotate.models.Membership.role`` and are ordered annotator < reviewer <
manager (``ROLE_RANK``); superusers act as managers everywhere. Non-members get ``Http404``
(a game's existence is not leaked); members whose role is too low get ``PermissionDenied`` (403).
The one question is :func:`can` / :func:`require` (``game_for`` for a slug, ``command_user`` for
``--as``); memberships and job visibility live here too, so there is a single source of truth.
It lives in the domain so features (review, generation, playlogs, exporters) check roles without
importing each other.
"""
from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404

from annotate.models import Game, Membership
from casebook.interchange import Status
from casebook.models import Job

ANNOTATOR, REVIEWER, MANAGER = Membership.Role.ANNOTATOR, Membership.Role.REVIEWER, Membership.Role.MANAGER
ROLE_RANK = {ANNOTATOR: 1, REVIEWER: 2, MANAGER: 3}

# The lowest role allowed to do each action (ownership rules for annotators are in `can`).
ACTIONS: dict[str, str] = {
    "view": ANNOTATOR,
    "create": ANNOTATOR,
    "comment": ANNOTATOR,
    "history": ANNOTATOR,
    "validate": ANNOTATOR,
    "label": ANNOTATOR,
    "edit": ANNOTATOR,  # own drafts / rejected items only; reviewers edit anything
    "ground_truth": REVIEWER,  # cast, kills, key statements: the answer key approved questions rest on
    "submit": ANNOTATOR,  # own items only; reviewers submit anything
    "withdraw": ANNOTATOR,  # own items only
    "approve": REVIEWER,
    "reject": REVIEWER,
    "reopen": REVIEWER,
    "revert": REVIEWER,
    "review_queue": REVIEWER,
    "agreement": REVIEWER,
    "members": MANAGER,
    "targets": MANAGER,
    "span_labels": MANAGER,
    "labelstudio": MANAGER,
    "assign": MANAGER,
    "export": MANAGER,
}
OWN_ONLY = {"edit", "submit", "withdraw"}
EDITABLE_BY_AUTHOR = {Status.DRAFT, Status.REJECTED}


class RoleError(PermissionDenied):
    """A member tried something their role does not allow; the message says which role is needed."""


def visible_games(user) -> QuerySet[Game]:
    """Games the user may open (all of them for a superuser)."""
    if not user.is_authenticated:
        return Game.objects.none()
    if user.is_superuser:
        return Game.objects.all()
    return Game.objects.filter(memberships__user=user)


def role_of(user, game: Game) -> str | None:
    """The user's role in the game; superusers act as managers; ``None`` for non-members, inactive
    users and no user at all (a command run without ``--as``)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return Membership.Role.MANAGER
    return Membership.objects.filter(user=user, game=game).values_list("role", flat=True).first()


def has_role(role: str | None, needed: str) -> bool:
    """Whether ``role`` ranks at least ``needed`` (``None``, a non-member, never does)."""
    return role is not None and ROLE_RANK.get(role, 0) >= ROLE_RANK[needed]


def can(user, game: Game, action: str, item=None, *, role: str | None = None) -> bool:
    """May ``user`` do ``action`` in ``game`` (on ``item``, for ownership-limited actions)?"""
    if action not in ACTIONS:
        raise ValueError(f"Unknown action {action!r}.")
    role = role if role is not None else role_of(user, game)
    if not has_role(role, ACTIONS[action]):
        return False
    if action in OWN_ONLY and item is not None and not has_role(role, REVIEWER):
        if getattr(item, "author_id", None) != user.pk:
            return False
        if action == "edit" and getattr(item, "status", Status.DRAFT) not in EDITABLE_BY_AUTHOR:
            return False
    return True


def require(user, game: Game, action: str, item=None) -> str:
    """Return the user's role, or raise Http404 (non-member) / RoleError (role or ownership)."""
    role = role_of(user, game)
    if role is None:
        raise Http404("No such game")
    if not can(user, game, action, item, role=role):
        needed = ACTIONS[action]
        if has_role(role, needed) and action in OWN_ONLY:
            status = getattr(item, "status", "")
            if status in (Status.APPROVED, Status.SUBMITTED):
                raise RoleError(f"This item is {status}: it changes only through review. "
                                "Ask a reviewer to reopen it (request reopening on its review page).")
            raise RoleError(f"Annotators may {action} only their own draft or rejected items; this one is not.")
        raise RoleError(f"'{action}' needs the {needed} role in {game.title}; you are {role}.")
    return role


def require_role(game: Game, user, role: str) -> str:
    """Return the user's role when it is at least ``role``; Http404 for non-members, 403 otherwise."""
    current = role_of(user, game)
    if current is None:
        raise Http404("No such game")
    if not has_role(current, role):
        raise RoleError(f"This needs the {role} role in {game.title}; you are {current}.")
    return current


def game_for(user, slug: str, action: str = "view") -> tuple[Game, str]:
    """The game with ``slug`` and the user's role, checked for ``action`` (404 for non-members)."""
    game = Game.objects.filter(slug=slug).first()
    if game is None:
        raise Http404("No such game")
    return game, require(user, game, action)


def command_user(username: str, game: Game, action: str):
    """For management commands: check ``--as USERNAME`` for ``action`` in ``game``.

    An empty username means the operator at the shell (full access, like a superuser); otherwise
    the user must exist and hold the role. Raises ``CommandError`` with a readable message.
    """
    from django.contrib.auth import get_user_model
    from django.core.management.base import CommandError

    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"No user {username!r}.")
    try:
        require(user, game, action)
    except Http404 as exc:
        raise CommandError(f"{username} is not a member of {game.slug}.") from exc
    except PermissionDenied as exc:
        raise CommandError(str(exc)) from exc
    return user


def games_with_role(user, role: str):
    """Games where the user holds at least ``role`` (all games for superusers)."""
    if user is None or not user.is_authenticated:
        return Game.objects.none()
    if user.is_superuser:
        return Game.objects.all()
    allowed = [r for r, rank in ROLE_RANK.items() if rank >= ROLE_RANK[role]]
    return Game.objects.filter(memberships__user=user, memberships__role__in=allowed).distinct()


class LastManager(ValueError):
    """Demoting or removing this member would leave the game with nobody who can manage it."""


def set_membership(game: Game, user, role: str | None) -> None:
    """Give ``user`` ``role`` in ``game`` (``None`` removes them), never removing the last manager.

    The game's manager rows are locked first, so two managers demoting each other at once cannot
    both succeed.
    """
    with transaction.atomic():
        managers = list(Membership.objects.select_for_update().filter(game=game, role=Membership.Role.MANAGER)
                        .values_list("user_id", flat=True))
        if role != Membership.Role.MANAGER and managers == [user.pk]:
            raise LastManager(f"{user.get_username()} is the last manager of this game; make someone else manager first.")
        if role is None:
            Membership.objects.filter(game=game, user=user).delete()
        else:
            Membership.objects.update_or_create(game=game, user=user, defaults={"role": role})


def may_view_job(user, job: Job) -> bool:
    """The job's owner, superusers and members of the job's game."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_superuser or job.user_id == user.pk:
        return True
    return job.game_id is not None and role_of(user, job.game) is not None


def may_resume_job(user, job: Job) -> bool:
    """The job's owner, superusers and managers of the job's game."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_superuser or job.user_id == user.pk:
        return True
    return job.game_id is not None and has_role(role_of(user, job.game), MANAGER)
