"""Top-level URLs: each app owns its own urls module."""
from django.conf import settings
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from annotate.views import protected_media
from casebook.security import ThrottledLoginView

urlpatterns = [
    path("favicon.ico", RedirectView.as_view(url=static("casebook/favicon.ico"), permanent=True)),
    path("admin/", admin.site.urls),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),  # before auth.urls' own login
    path("accounts/", include("django.contrib.auth.urls")),
    path("ingest/", include("ingest.urls")),
    path("generate/", include("generation.urls")),
    path("review/", include("review.urls")),
    path("labelstudio/", include("labelstudio.urls")),
    path("", include("synthesis.urls")),
    path("", include("playlogs.urls")),
    path("", include("exporters.urls")),
    path("", include("annotate.urls")),
    # Media (uploaded scans, clue images) are served by Django itself, since Casebook runs on a
    # closed network without a separate file server; only members of the file's game may read it.
    path(f"{settings.MEDIA_URL.strip('/')}/<path:path>", protected_media, name="media"),
]
