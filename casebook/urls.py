"""Top-level URLs: each app owns its own urls module; every page of one game is under ``/g/<slug>/``.

The old per-game addresses (``/generate/g/<slug>/…``, ``/review/g/<slug>/…``,
``/ingest/games/<slug>/split/``, ``/labelstudio/<game pk>/…``) answer with a permanent redirect
to the new one (namespace ``moved``), so bookmarks and open tabs keep working.
"""
from django.conf import settings
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from annotate.views import protected_media
from casebook.redirects import moved
from casebook.security import ThrottledLoginView
from labelstudio.views import moved_by_pk

GENERATION_ROUTES = {  # route after /generate/g/<slug>/ (old) and after /g/<slug>/generate/ (new) → name
    "": "index", "distractors/": "generate", "questions/<int:pk>/distractors/": "question_distractors",
    "jobs/<int:pk>/": "job", "jobs/<int:pk>/status.json": "job_status", "review/": "review",
    "options/<int:pk>/review/": "review_option", "relations/": "relations", "quality/": "quality",
}
REVIEW_ROUTES = {  # route after /review/g/<slug>/ (old) and after /g/<slug>/review/ (new) → name
    "": "dashboard", "assignments/": "assignments", "validate/": "validate", "labels/": "labels",
    "people/<str:username>/": "person", "<str:item_type>/<int:pk>/": "item",
    "<str:item_type>/<int:pk>/transition/": "transition", "<str:item_type>/<int:pk>/comment/": "comment",
    "<str:item_type>/<int:pk>/revert/<int:entry>/": "revert",
}
moved_routes = [
    *(moved(f"generate/g/<str:slug>/{route}", f"generation:{name}") for route, name in GENERATION_ROUTES.items()),
    *(moved(f"review/g/<str:slug>/{route}", f"review:{name}") for route, name in REVIEW_ROUTES.items()),
    moved("ingest/games/<str:slug>/split/", "ingest:split"),
    # by primary key: only a member of the game is told its slug
    path("labelstudio/<int:game_pk>/", moved_by_pk, {"to": "labelstudio:game"}, name="labelstudio-game"),
    path("labelstudio/<int:game_pk>/run/", moved_by_pk, {"to": "labelstudio:start"}, name="labelstudio-start"),
    path("labelstudio/<int:game_pk>/jobs/<int:job_pk>.json", moved_by_pk, {"to": "labelstudio:job_status"},
         name="labelstudio-job_status"),
]

urlpatterns = [
    path("favicon.ico", RedirectView.as_view(url=static("casebook/favicon.ico"), permanent=True)),
    path("admin/", admin.site.urls),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),  # before auth.urls' own login
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("ingest.urls")),
    path("", include("generation.urls")),
    path("", include("review.urls")),
    path("", include("labelstudio.urls")),
    path("", include("synthesis.urls")),
    path("", include("playlogs.urls")),
    path("", include("exporters.urls")),
    path("", include("annotate.urls")),
    # Media (uploaded scans, clue images) are served by Django itself, since Casebook runs on a
    # closed network without a separate file server; only members of the file's game may read it.
    path("", include((moved_routes, "moved"))),
    path(f"{settings.MEDIA_URL.strip('/')}/<path:path>", protected_media, name="media"),
]
