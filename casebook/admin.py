"""Django admin for the core records: background jobs and the audit trail."""
from __future__ import annotations

from django.contrib import admin

from .models import AuditEntry, Job

admin.site.register(Job)


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ("at", "user", "game", "item_type", "item_id", "action")
    list_filter = ("item_type", "action")
