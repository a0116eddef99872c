"""labelstudio URLs: the bridge page of a game, starting jobs, and the job status polled by the page."""
from django.urls import path

from . import views

app_name = "labelstudio"
urlpatterns = [
    path("<int:game_pk>/", views.game_page, name="game"),
    path("<int:game_pk>/run/", views.start, name="start"),
    path("<int:game_pk>/jobs/<int:job_pk>.json", views.job_status, name="job_status"),
]
