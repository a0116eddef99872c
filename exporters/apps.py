from django.apps import AppConfig


class ExportersConfig(AppConfig):
    name = "exporters"
    verbose_name = "Dataset import and export"
