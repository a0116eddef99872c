"""Ingest URLs: the upload and its jobs under /ingest/, a game's split editor under /g/<slug>/split/."""
from django.urls import path

from . import views

app_name = "ingest"
urlpatterns = [
    path("ingest/", views.upload, name="upload"),
    path("ingest/jobs/<int:pk>/", views.job_status, name="job"),
    path("ingest/jobs/<int:pk>.json", views.job_json, name="job_json"),
    path("g/<str:slug>/split/", views.split_editor, name="split"),
]
