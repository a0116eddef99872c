"""Old addresses of moved pages keep working: a permanent redirect to the page's new URL.

Why not ``RedirectView(pattern_name=...)``: it answers 301 to every method, and a browser turns
a redirected POST into a GET, so a form posted to an old address (an open tab, a bookmarklet, a
script) would lose its data. Here GET/HEAD get 301 and everything else 308, which keeps the
method and body; the query string always travels along.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.urls import path, reverse
from django.urls.resolvers import URLPattern


class HttpResponsePermanentRedirectKeepMethod(HttpResponsePermanentRedirect):
    status_code = 308


def permanent_redirect(request: HttpRequest, url: str) -> HttpResponse:
    """301 (GET/HEAD) or 308 (any other method) to ``url`` plus the request's query string."""
    query = request.META.get("QUERY_STRING", "")
    target = f"{url}?{query}" if query else url
    if request.method in ("GET", "HEAD"):
        return HttpResponsePermanentRedirect(target)
    return HttpResponsePermanentRedirectKeepMethod(target)


def moved_view(name: str) -> Callable[..., HttpResponse]:
    """A view sending every request to the URL named ``name``, built from the same path parameters."""

    def view(request: HttpRequest, **kwargs: Any) -> HttpResponse:
        return permanent_redirect(request, reverse(name, kwargs=kwargs))

    view.moved_to = name  # type: ignore[attr-defined]  # read by the tests of moved routes
    return view


def moved(old_route: str, name: str) -> URLPattern:
    """``path(old_route)`` redirecting to the URL named ``name`` (same parameter names)."""
    return path(old_route, moved_view(name), name=f"{name.replace(':', '-')}")
