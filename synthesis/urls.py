"""Synthetic drafts: /synthesis/ for starting runs, /g/<slug>/synthesis/ for a draft's record."""
from django.urls import path

from . import views

app_name = "synthesis"
urlpatterns = [
    path("synthesis/new/", views.new, name="new"),
    path("synthesis/jobs/<int:pk>/", views.job_detail, name="job"),
    path("synthesis/jobs/<int:pk>/status.json", views.job_status, name="job_status"),
    path("g/<str:slug>/synthesis/", views.game, name="game"),
    path("g/<str:slug>/synthesis/records/<int:pk>.json", views.record, name="record"),
    path("g/<str:slug>/synthesis/rerun/", views.rerun, name="rerun"),
]
