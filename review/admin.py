"""Admin views of the workflow records (read mostly; the web pages are the normal way in)."""
from django.contrib import admin

from .models import Assignment, Comment, LabelJudgement, ValidationAnswer


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    list_display = ("game", "item_type", "item_id", "author", "system", "created_at")
    list_filter = ("item_type", "system")
    search_fields = ("text",)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("game", "assignee", "kind", "question_kind", "character", "first", "last", "target")
    list_filter = ("kind",)


@admin.register(ValidationAnswer)
class ValidationAnswerAdmin(admin.ModelAdmin):
    list_display = ("question", "validator", "letters", "key", "agrees", "created_at")
    list_filter = ("agrees",)


@admin.register(LabelJudgement)
class LabelJudgementAdmin(admin.ModelAdmin):
    list_display = ("game", "annotator", "source", "target", "labels")
