"""Played-game sessions live under the game: /g/<slug>/sessions/…"""
from django.urls import path

from . import views

app_name = "playlogs"
urlpatterns = [
    path("g/<str:slug>/sessions/", views.session_list, name="session_list"),
    path("g/<str:slug>/sessions/<int:pk>/", views.session_annotate, name="session_annotate"),
    path("g/<str:slug>/sessions/<int:pk>/turns/<int:index>/", views.turn_save, name="turn_save"),
    path("g/<str:slug>/sessions/<int:pk>/turns/<int:index>/suggest/", views.turn_suggest, name="turn_suggest"),
    path("g/<str:slug>/sessions/<int:pk>/annotations/<int:ann>/<str:action>/", views.annotation_transition,
         name="annotation_transition"),
]
