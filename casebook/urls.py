"""Top-level URLs: each app owns its own urls module."""
from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from django.views.static import serve

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("ingest/", include("ingest.urls")),
    path("generate/", include("generation.urls")),
    path("review/", include("review.urls")),
    path("labelstudio/", include("labelstudio.urls")),
    path("", include("annotate.urls")),
    # Media (uploaded scans, clue images) are served by Django itself: Casebook runs on a closed
    # network without a separate file server. Access is checked in the views that link to them.
    path(f"{settings.MEDIA_URL.strip('/')}/<path:path>", serve, {"document_root": settings.MEDIA_ROOT}),
]
