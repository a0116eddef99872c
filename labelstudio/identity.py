"""Which Label Studio project is this game's, whatever URL the server is reached by.

A project is known by the server's answer, not by the URL text: a link stores the project id and
the project's creation stamp, and the same server under another name (``localhost`` for
``127.0.0.1``, a proxy, a new DNS name) answers the same stamp for the same id. So push and pull
find the game's project through any of its URLs and never create a second one by accident.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotate.models import Game

from .client import LabelStudioClient
from .models import LabelStudioLink


def description_marker(game: Game) -> str:
    """The words every project description of the game starts with (push writes them)."""
    return f"Casebook game {game.slug} "


@dataclass
class Found:
    link: LabelStudioLink | None
    project: dict | None  # the project as the server answers it, None when it no longer exists
    note: str = ""


def find_link(game: Game, client: LabelStudioClient) -> Found:
    """The game's link on ``client``'s server (by URL, else by identity), with the live project."""
    links = list(LabelStudioLink.objects.filter(game=game).order_by("-pushed_at", "-pk"))
    exact = next((ln for ln in links if ln.url == client.url), None)
    if exact is not None:
        project = client.find_project(exact.project_id)
        if project is not None and _same(exact, project, game):
            _remember_stamp(exact, project)
            return Found(exact, project)
        if project is None:
            return Found(exact, None)
    for link in links:
        if link is exact:
            continue
        project = client.find_project(link.project_id)
        if project is not None and _same(link, project, game):
            note = (f"{client.url} is the same Label Studio server as {link.url} (project {link.project_id} answers with "
                    f"the same identity); using that project")
            if exact is not None:
                exact.delete()  # a stale link whose project id now names another game's project
            LabelStudioLink.objects.filter(pk=link.pk).update(url=client.url)
            link.url = client.url
            _remember_stamp(link, project)
            return Found(link, project, note)
    if exact is not None:  # the id now names someone else's project: the old one is gone
        return Found(exact, None)
    return Found(None, None)


def _same(link: LabelStudioLink, project: dict, game: Game) -> bool:
    if link.project_created:
        return project.get("created") == link.project_created
    return str(project.get("description", "")).startswith(description_marker(game))


def _remember_stamp(link: LabelStudioLink, project: dict) -> None:
    if not link.project_created and project.get("created"):
        link.project_created = project["created"]
        LabelStudioLink.objects.filter(pk=link.pk).update(project_created=link.project_created)
