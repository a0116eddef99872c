"""The permission matrix, generated from the URL conf: every game-scoped URL × anonymous /
non-member / annotator / reviewer / manager, GET and POST, with the game's own ids and with ids
from another game. Non-members and cross-game ids get 404 and change nothing; members below a
write's role change nothing; no request ever fails with a server error.

A new game-scoped URL with an id in its path fails ``test_every_game_url_is_covered`` until its
ids are described in ``IDS`` below, so the matrix cannot silently miss it."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import get_resolver
from django.urls.resolvers import URLPattern, URLResolver

from annotate.models import (
    ChainNode,
    EvidenceSpan,
    Game,
    KeyStatement,
    Kill,
    Membership,
    Option,
    Question,
    ReasoningChain,
    Relationship,
)
from casebook.models import AuditEntry, Job
from review.models import Assignment

pytestmark = pytest.mark.django_db

# Path ids of each game-scoped URL: parameter → function(game) giving an id that belongs to that game.
QUESTION = {"item_type": lambda g: "question", "pk": lambda g: g.questions.first().pk}
IDS = {
    "annotate:character_script": {"pk": lambda g: g.characters.first().pk},
    "annotate:question_edit": {"pk": lambda g: g.questions.first().pk},
    "annotate:question_delete": {"pk": lambda g: g.questions.first().pk},
    "annotate:relationship_edit": {"pk": lambda g: g.relationships.first().pk},
    "annotate:relationship_delete": {"pk": lambda g: g.relationships.first().pk},
    "annotate:chain_detail": {"pk": lambda g: g.chains.first().pk},
    "annotate:node_edit": {"pk": lambda g: g.chains.first().pk,
                           "node_pk": lambda g: ChainNode.objects.filter(chain__game=g).first().pk},
    "annotate:draft": {"key": lambda g: "question:new"},
    "annotate:span_edit": {"pk": lambda g: g.spans.first().pk},
    "annotate:span_delete": {"pk": lambda g: g.spans.first().pk},
    "annotate:span_undo": {"entry": lambda g: AuditEntry.objects.filter(game=g).first().pk},
    "exporters:export_job": {"pk": lambda g: g.jobs.filter(kind="export").first().pk},
    "exporters:export_download": {"pk": lambda g: g.jobs.filter(kind="export").first().pk},
    "generation:question_distractors": {"pk": lambda g: g.questions.first().pk},
    "generation:job": {"pk": lambda g: g.jobs.first().pk},
    "generation:job_status": {"pk": lambda g: g.jobs.first().pk},
    "generation:review_option": {"pk": lambda g: Option.objects.filter(question__game=g).first().pk},
    "review:person": {"username": lambda g: g.memberships.first().user.username},
    "review:item": QUESTION, "review:transition": QUESTION, "review:comment": QUESTION,
    "review:revert": {**QUESTION, "entry": lambda g: AuditEntry.objects.filter(game=g).first().pk},
    "labelstudio:job_status": {"job_pk": lambda g: g.jobs.first().pk},
    # Apps whose objects the matrix does not build yet: ids that exist in neither game (404 for all).
    "synthesis:record": {"pk": lambda g: 999_999},
    "playlogs:session_annotate": {"pk": lambda g: 999_999},
    "playlogs:turn_save": {"pk": lambda g: 999_999, "index": lambda g: 0},
    "playlogs:turn_suggest": {"pk": lambda g: 999_999, "index": lambda g: 0},
    "playlogs:annotation_transition": {"pk": lambda g: 999_999, "ann": lambda g: 999_999,
                                       "action": lambda g: "approve"},
}
GAME_PARAMS = {"slug": lambda g: g.slug}
# POSTs that write, with the payload that would write and the lowest role allowed to.
WRITES = {
    "annotate:members": ({"username": "annotator", "role": "manager"}, "manager"),
    "annotate:targets": ({"objective": "7"}, "manager"),
    "annotate:span_labels": ({"labels": "weapon = 凶器 / weapon"}, "manager"),
    "exporters:export": ({"format": "jsonl"}, "manager"),
    "annotate:characters": ({"action": "add_kill", "killer": "{c0}", "victim": "{c1}"}, "reviewer"),
    "annotate:key_statements": ({"action": "delete", "id": "{ks}"}, "reviewer"),
    "annotate:character_script": ({"script": "改写", "loaded_version": "{cv}"}, "reviewer"),
    "review:transition": ({"action": "approve", "version": "{qv}"}, "reviewer"),
    "review:assignments": ({"assignee": "annotator", "kind": "questions", "target": "3"}, "manager"),
}
RANK = {"annotator": 1, "reviewer": 2, "manager": 3}


def game_urls() -> list[tuple[str, URLPattern, list[str]]]:
    """(name, pattern, path parameters) of every URL whose path names a game."""
    found = []

    def walk(resolver: URLResolver, namespace: str) -> None:
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):
                if entry.namespace != "moved":  # old addresses redirecting (tests/test_moved_urls.py)
                    walk(entry, entry.namespace or namespace)
            else:
                params = list(entry.pattern.converters)
                if "slug" in params:
                    found.append((f"{namespace}:{entry.name}", entry, params))

    walk(get_resolver(), "")
    return found


def path_for(name: str, game: Game) -> str:
    from django.urls import reverse

    params = [p for n, _, ps in game_urls() if n == name for p in ps]
    makers = {**GAME_PARAMS, **IDS.get(name, {})}
    return reverse(name, kwargs={p: makers[p](game) for p in params})


def cross_path(name: str, game: Game, other: Game) -> str:
    """The URL of ``game`` but with every id taken from ``other``."""
    from django.urls import reverse

    params = [p for n, _, ps in game_urls() if n == name for p in ps]
    makers = {**GAME_PARAMS, **IDS.get(name, {})}
    return reverse(name, kwargs={p: (GAME_PARAMS[p](game) if p in GAME_PARAMS else makers[p](other)) for p in params})


def fingerprint(game: Game) -> tuple:
    """Everything a write to the game would change."""
    game.refresh_from_db()
    questions = list(Question.objects.filter(game=game).values_list("pk", "version", "status", "answer"))
    return (
        game.updated_at, game.targets, questions,
        list(Option.objects.filter(question__game=game).values_list("pk", "text", "review")),
        list(game.characters.values_list("pk", "name", "script", "is_murderer")),
        Kill.objects.filter(game=game).count(), KeyStatement.objects.filter(game=game).count(),
        list(Relationship.objects.filter(game=game).values_list("pk", "version")),
        list(ReasoningChain.objects.filter(game=game).values_list("pk", "version")),
        list(Membership.objects.filter(game=game).values_list("user_id", "role")),
        Job.objects.filter(game=game).count(), Assignment.objects.filter(game=game).count(),
    )


def populate(game: Game, user) -> None:
    """Give a game one of everything a URL can point at."""
    a, b = list(game.characters.all())[:2]
    Relationship.objects.create(game=game, source=a, target=b, labels=["friend"], author=user)
    chain = ReasoningChain.objects.create(game=game, title="谁下的毒", author=user)
    ChainNode.objects.create(chain=chain, key="n1", text="茶是冷的")
    KeyStatement.objects.create(game=game, owner_name=a.name, character=a, text="我在书房。")
    Job.objects.create(kind="distractors", game=game, user=user, state="done")
    Job.objects.create(kind="labelstudio-push", game=game, user=user, state="done")
    Job.objects.create(kind="export", game=game, user=user, state="done", params={"format": "jsonl"})
    EvidenceSpan.objects.create(game=game, document="manual", start=0, end=1, quote=game.truth_text[:1])
    AuditEntry.objects.create(game=game, user=user, item_type="question", item_id=game.questions.first().pk,
                              action="update", before={}, after={})


@pytest.fixture
def world(victim, people):
    populate(victim, people["manager"])
    other = Game.objects.get(slug="outsiders-own")
    populate(other, people["outsider"])
    Question.objects.filter(game=victim).update(status="submitted")
    return victim, other


def clients(people) -> dict[str, Client]:
    out = {"anonymous": Client()}
    for who in ("outsider", "annotator", "reviewer", "manager"):
        out[who] = Client()
        out[who].force_login(people[who])
    return out


def fill(payload: dict, game: Game) -> dict:
    chars = list(game.characters.all())
    values = {"c0": chars[0].pk, "c1": chars[1].pk, "ks": getattr(game.key_statements.first(), "pk", 0),
              "qv": game.questions.first().version, "cv": chars[0].version}
    return {k: v.format(**values) for k, v in payload.items()}


def test_every_game_url_is_covered():
    names = {name for name, _, params in game_urls()}
    assert len(names) >= 40
    for name, _, params in game_urls():
        missing = [p for p in params if p not in GAME_PARAMS and p not in IDS.get(name, {})]
        assert not missing, f"{name}: describe its path ids {missing} in IDS"


def test_outsiders_and_anonymous_users_get_nothing(world, people):
    victim, _ = world
    before = fingerprint(victim)
    by_role = clients(people)
    for name, _, _ in game_urls():
        url = path_for(name, victim)
        for method in ("get", "post"):
            anonymous = getattr(by_role["anonymous"], method)(url)
            assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"], (name, method)
            response = getattr(by_role["outsider"], method)(url, fill(WRITES.get(name, ({}, ""))[0], victim))
            assert response.status_code in (404, 405), (name, method, response.status_code)
            assert victim.title.encode() not in response.content, (name, method)
    assert fingerprint(victim) == before


def test_ids_of_another_game_are_not_found_through_this_one(world, people):
    victim, other = world
    before = fingerprint(other)
    by_role = clients(people)
    for name, _, params in game_urls():
        if not set(params) - set(GAME_PARAMS) or name == "annotate:draft":
            continue  # no object id in the path (drafts are keyed by the user's own text)
        url = cross_path(name, victim, other)
        for role in ("annotator", "reviewer", "manager"):
            for method in ("get", "post"):
                response = getattr(by_role[role], method)(url, fill(WRITES.get(name, ({}, ""))[0], other))
                if name == "review:person":
                    assert response.status_code in (404, 405, 200), (name, role, method)
                    continue
                assert response.status_code in (403, 404, 405), (name, role, method, response.status_code)
    assert fingerprint(other) == before


@pytest.mark.parametrize("role", ["annotator", "reviewer", "manager"])
def test_members_reach_every_page_and_write_only_with_their_role(world, people, role):
    victim, _ = world
    client = clients(people)[role]
    for name, _, _ in game_urls():
        url = path_for(name, victim)
        response = client.get(url)
        assert response.status_code < 500, (name, role)
    for name, (payload, needed) in WRITES.items():
        cache.clear()
        before = fingerprint(victim)
        response = client.post(path_for(name, victim), fill(payload, victim))
        assert response.status_code < 500, (name, role, response.status_code)
        if RANK[role] < RANK[needed]:
            assert response.status_code in (302, 400, 403, 404), (name, role, response.status_code)
            assert fingerprint(victim) == before, (name, role)
        else:  # the payload is a real write: the refusals above are not vacuous
            assert fingerprint(victim) != before, (name, role, response.status_code)
