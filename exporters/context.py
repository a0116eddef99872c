"""Template context for the page header: offer "Import" only to who may import (a link that ends on
a 403 page wastes an annotator's click). Lazy: the query runs only when a template asks."""
from __future__ import annotations

from django.http import HttpRequest

from . import jobs


def import_link(request: HttpRequest) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"may_import": False}
    return {"may_import": lambda: jobs.may_import(user)}
