from django.apps import AppConfig


class SynthesisConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "synthesis"
    verbose_name = "Synthetic game drafts"
