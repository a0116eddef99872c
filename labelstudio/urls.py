"""labelstudio URLs: the bridge page of a game, starting jobs, and the job status polled by the page."""
from django.urls import path

from . import views

app_name = "labelstudio"
urlpatterns = [
    path("g/<str:slug>/labelstudio/", views.game_page, name="game"),
    path("g/<str:slug>/labelstudio/run/", views.start, name="start"),
    path("g/<str:slug>/labelstudio/jobs/<int:job_pk>.json", views.job_status, name="job_status"),
]
