from django.apps import AppConfig


class GenerationConfig(AppConfig):
    name = "generation"
    verbose_name = "Question generation and quality"
