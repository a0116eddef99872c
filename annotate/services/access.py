"""Who may see and change a game.

A game is visible to its members and to superusers only; everyone else gets a 404, so the
existence of a game is not leaked. Roles are ordered annotator < reviewer < manager.
"""
from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from annotate.models import Game, Membership
from casebook.models import Job

ROLE_RANK = {Membership.Role.ANNOTATOR: 1, Membership.Role.REVIEWER: 2, Membership.Role.MANAGER: 3}


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


def game_for(user, slug: str, *, min_role: str = Membership.Role.ANNOTATOR) -> tuple[Game, str]:
    """The game with this slug and the user's role in it, in one query.

    Raises Http404 for non-members (and unknown slugs), PermissionDenied when the role is too low.
    """
    if not user.is_authenticated:
        raise Http404("No such game")
    if user.is_superuser:
        game = Game.objects.filter(slug=slug).first()
        role = Membership.Role.MANAGER
    else:
        membership = Membership.objects.select_related("game").filter(user=user, game__slug=slug).first()
        game = membership.game if membership else None
        role = membership.role if membership else None
    if game is None:
        raise Http404("No such game")
    if ROLE_RANK[role] < ROLE_RANK[min_role]:
        raise PermissionDenied(f"This needs the {min_role} role in {game.title}.")
    return game, role


def can_manage(role: str | None) -> bool:
    return role is not None and ROLE_RANK.get(role, 0) >= ROLE_RANK[Membership.Role.MANAGER]


class LastManager(ValueError):
    """Demoting or removing this member would leave the game with nobody who can manage it."""


def set_membership(game: Game, user, role: str | None) -> None:
    """Give ``user`` ``role`` in ``game`` (``None`` removes them), never removing the last manager.

    The game's manager rows are locked first, so two managers demoting each other at once cannot
    both succeed.
    """
    from django.db import transaction

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
    return job.game_id is not None and can_manage(role_of(user, job.game))
