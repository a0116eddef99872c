"""Question generation URLs (distractors, review, relation MCQs, quality checks), under /g/<slug>/generate/."""
from django.urls import path

from . import views

app_name = "generation"
urlpatterns = [
    path("g/<str:slug>/generate/", views.index, name="index"),
    path("g/<str:slug>/generate/distractors/", views.generate, name="generate"),
    path("g/<str:slug>/generate/questions/<int:pk>/distractors/", views.question_distractors, name="question_distractors"),
    path("g/<str:slug>/generate/jobs/<int:pk>/", views.job_detail, name="job"),
    path("g/<str:slug>/generate/jobs/<int:pk>/status.json", views.job_status, name="job_status"),
    path("g/<str:slug>/generate/review/", views.review, name="review"),
    path("g/<str:slug>/generate/options/<int:pk>/review/", views.review_action, name="review_option"),
    path("g/<str:slug>/generate/relations/", views.relations, name="relations"),
    path("g/<str:slug>/generate/quality/", views.quality, name="quality"),
]
