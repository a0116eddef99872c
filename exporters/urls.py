"""Export pages live under the game (/g/<slug>/export/); the import page is global (/imports/)."""
from django.urls import path

from . import views

app_name = "exporters"
urlpatterns = [
    path("g/<str:slug>/export/", views.export_page, name="export"),
    path("g/<str:slug>/export/<int:pk>/", views.export_job, name="export_job"),
    path("g/<str:slug>/export/<int:pk>/download/", views.export_download, name="export_download"),
    path("imports/", views.import_page, name="import"),
    path("imports/<int:pk>/", views.import_job, name="import_job"),
]
