from django.apps import AppConfig


class CasebookConfig(AppConfig):
    """The core app: owns the job and audit models every feature writes (see casebook/models.py)."""

    name = "casebook"
    verbose_name = "Casebook core"
