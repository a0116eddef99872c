"""Ingest upload URLs (mounted at /ingest/)."""
from django.urls import path

from . import views

app_name = "ingest"
urlpatterns = [
    path("", views.upload, name="upload"),
    path("jobs/<int:pk>/", views.job_status, name="job"),
    path("jobs/<int:pk>.json", views.job_json, name="job_json"),
    path("games/<str:slug>/split/", views.split_editor, name="split"),
]
