"""Review workflow URLs (mounted at /review/)."""
from django.urls import path

from . import views

app_name = "review"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("bulk/", views.bulk, name="bulk"),
    path("mine/", views.mine, name="mine"),
    path("g/<str:slug>/", views.dashboard, name="dashboard"),
    path("g/<str:slug>/assignments/", views.assignments, name="assignments"),
    path("g/<str:slug>/validate/", views.validate, name="validate"),
    path("g/<str:slug>/labels/", views.labels, name="labels"),
    path("g/<str:slug>/people/<str:username>/", views.person, name="person"),
    path("g/<str:slug>/<str:item_type>/<int:pk>/", views.item_detail, name="item"),
    path("g/<str:slug>/<str:item_type>/<int:pk>/transition/", views.transition, name="transition"),
    path("g/<str:slug>/<str:item_type>/<int:pk>/comment/", views.comment, name="comment"),
    path("g/<str:slug>/<str:item_type>/<int:pk>/revert/<int:entry>/", views.revert, name="revert"),
]
