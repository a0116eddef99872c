from django.apps import AppConfig


class PlaylogsConfig(AppConfig):
    """Played games: sessions, turns and their theory-of-mind annotations (issue 17)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "playlogs"
    verbose_name = "Played games"
