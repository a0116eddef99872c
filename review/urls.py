"""Review workflow URLs: the cross-game queue under /review/, a game's review pages under /g/<slug>/review/."""
from django.urls import path

from . import views

app_name = "review"
urlpatterns = [
    path("review/", views.queue, name="queue"),
    path("review/bulk/", views.bulk, name="bulk"),
    path("review/mine/", views.mine, name="mine"),
    path("g/<str:slug>/review/", views.dashboard, name="dashboard"),
    path("g/<str:slug>/review/assignments/", views.assignments, name="assignments"),
    path("g/<str:slug>/review/validate/", views.validate, name="validate"),
    path("g/<str:slug>/review/labels/", views.labels, name="labels"),
    path("g/<str:slug>/review/people/<str:username>/", views.person, name="person"),
    path("g/<str:slug>/review/<str:item_type>/<int:pk>/", views.item_detail, name="item"),
    path("g/<str:slug>/review/<str:item_type>/<int:pk>/transition/", views.transition, name="transition"),
    path("g/<str:slug>/review/<str:item_type>/<int:pk>/comment/", views.comment, name="comment"),
    path("g/<str:slug>/review/<str:item_type>/<int:pk>/revert/<int:entry>/", views.revert, name="revert"),
]
