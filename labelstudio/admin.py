"""Read-mostly admin views of the Label Studio mapping (for support: which task is which object)."""
from django.contrib import admin

from .models import LabelStudioLink, LabelStudioTask, PulledItem


@admin.register(LabelStudioLink)
class LabelStudioLinkAdmin(admin.ModelAdmin):
    list_display = ("game", "url", "project_id", "project_created", "kinds", "pushed_at", "pulled_at")
    list_filter = ("url",)


@admin.register(LabelStudioTask)
class LabelStudioTaskAdmin(admin.ModelAdmin):
    list_display = ("link", "task_id", "kind", "object_id")
    list_filter = ("kind",)


@admin.register(PulledItem)
class PulledItemAdmin(admin.ModelAdmin):
    list_display = ("link", "task_id", "annotation_id", "annotator", "user", "key", "kind", "label", "span", "relationship",
                    "question", "created_item", "deleted_at", "pulled_at")
    list_filter = ("kind", "label", "annotator")
    raw_id_fields = ("span", "relationship", "question", "user")
