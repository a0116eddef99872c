"""One URL scheme: every page of a game lives under /g/<slug>/, and the old addresses answer with a
permanent redirect to the new one (query string kept; 308 for writes so a form keeps its method
and body). The old Label Studio addresses name the game by primary key: only members are told
the slug."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import get_resolver, resolve, reverse
from django.urls.resolvers import URLPattern, URLResolver

pytestmark = pytest.mark.django_db

# Every old per-game address (as the previous URL conf wrote it) and the page it became.
OLD_TO_NEW = {
    "/generate/g/{slug}/": "/g/{slug}/generate/",
    "/generate/g/{slug}/distractors/": "/g/{slug}/generate/distractors/",
    "/generate/g/{slug}/questions/7/distractors/": "/g/{slug}/generate/questions/7/distractors/",
    "/generate/g/{slug}/jobs/7/": "/g/{slug}/generate/jobs/7/",
    "/generate/g/{slug}/jobs/7/status.json": "/g/{slug}/generate/jobs/7/status.json",
    "/generate/g/{slug}/review/": "/g/{slug}/generate/review/",
    "/generate/g/{slug}/options/7/review/": "/g/{slug}/generate/options/7/review/",
    "/generate/g/{slug}/relations/": "/g/{slug}/generate/relations/",
    "/generate/g/{slug}/quality/": "/g/{slug}/generate/quality/",
    "/review/g/{slug}/": "/g/{slug}/review/",
    "/review/g/{slug}/assignments/": "/g/{slug}/review/assignments/",
    "/review/g/{slug}/validate/": "/g/{slug}/review/validate/",
    "/review/g/{slug}/labels/": "/g/{slug}/review/labels/",
    "/review/g/{slug}/people/annotator/": "/g/{slug}/review/people/annotator/",
    "/review/g/{slug}/question/7/": "/g/{slug}/review/question/7/",
    "/review/g/{slug}/question/7/transition/": "/g/{slug}/review/question/7/transition/",
    "/review/g/{slug}/question/7/comment/": "/g/{slug}/review/question/7/comment/",
    "/review/g/{slug}/question/7/revert/9/": "/g/{slug}/review/question/7/revert/9/",
    "/ingest/games/{slug}/split/": "/g/{slug}/split/",
}
LABEL_STUDIO = {
    "/labelstudio/{pk}/": "/g/{slug}/labelstudio/",
    "/labelstudio/{pk}/run/": "/g/{slug}/labelstudio/run/",
    "/labelstudio/{pk}/jobs/7.json": "/g/{slug}/labelstudio/jobs/7.json",
}


def _patterns(resolver: URLResolver, prefix: str = "", namespace: str = "") -> list[tuple[str, str, URLPattern]]:
    out = []
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            out += _patterns(entry, prefix + str(entry.pattern), entry.namespace or namespace)
        else:
            out.append((namespace, prefix + str(entry.pattern), entry))
    return out


def test_every_page_that_names_a_game_is_under_g_slug():
    routes = [(ns, route) for ns, route, p in _patterns(get_resolver()) if ns != "moved" and "slug" in route]
    assert len(routes) >= 55
    assert [r for r in routes if not r[1].startswith("g/<str:slug>/")] == []
    assert [r for ns, r, p in _patterns(get_resolver()) if ns != "moved" and "game_pk" in r] == []


def test_every_moved_route_is_listed_here_and_leads_to_a_live_page():
    moved = [route for ns, route, p in _patterns(get_resolver()) if ns == "moved"]
    assert len(moved) == len(OLD_TO_NEW) + len(LABEL_STUDIO)
    for old, new in OLD_TO_NEW.items():
        match = resolve(old.format(slug="sin"))
        assert match.namespace == "moved", old
        assert resolve(new.format(slug="sin")).namespace != "moved", new


def test_old_addresses_redirect_permanently_keeping_the_query_string(people, victim):
    client = Client()
    client.force_login(people["manager"])
    for old, new in OLD_TO_NEW.items():
        old_url, new_url = old.format(slug=victim.slug), new.format(slug=victim.slug)
        got = client.get(f"{old_url}?job=3&q=%E7%BA%BF%E7%B4%A2")
        assert got.status_code == 301, old
        assert got["Location"] == f"{new_url}?job=3&q=%E7%BA%BF%E7%B4%A2", old
        posted = client.post(old_url, {"x": "1"})
        assert posted.status_code == 308 and posted["Location"] == new_url, old  # method and body kept


def test_a_redirect_is_followed_to_the_real_page(people, victim):
    client = Client()
    client.force_login(people["manager"])
    page = client.get(f"/review/g/{victim.slug}/?tab=all", follow=True)
    assert page.redirect_chain == [(f"/g/{victim.slug}/review/?tab=all", 301)]
    assert page.status_code == 200 and victim.title in page.content.decode()
    assert reverse("review:dashboard", kwargs={"slug": victim.slug}) == f"/g/{victim.slug}/review/"


def test_old_label_studio_addresses_tell_the_slug_to_members_only(people, victim):
    member = Client()
    member.force_login(people["annotator"])
    manager = Client()
    manager.force_login(people["manager"])
    outsider = Client()
    outsider.force_login(people["outsider"])
    for old, new in LABEL_STUDIO.items():
        old_url, new_url = old.format(pk=victim.pk), new.format(slug=victim.slug)
        got = manager.get(old_url + "?job=4")
        assert got.status_code == 301 and got["Location"] == new_url + "?job=4", old
        assert member.get(old_url)["Location"] == new_url  # the page itself then refuses a non-manager
        assert manager.post(old_url).status_code == 308
        refused = outsider.get(old_url)
        assert refused.status_code == 404 and victim.slug not in refused.content.decode(), old
        anonymous = Client().get(old_url)
        assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"], old
        assert victim.slug not in anonymous["Location"].split("next=")[0]
    assert manager.get(f"/labelstudio/{victim.pk + 10_000}/").status_code == 404
    assert member.get(f"/g/{victim.slug}/labelstudio/").status_code == 403
    assert manager.get(f"/g/{victim.slug}/labelstudio/").status_code == 200
