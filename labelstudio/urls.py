"""labelstudio URLs."""
from django.urls import path

app_name = "labelstudio"
urlpatterns: list = []
