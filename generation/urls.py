"""Question generation URLs (distractors, relation MCQs, quality checks)."""
from django.urls import path

app_name = "generation"
urlpatterns: list = []
