"""The two records every app writes, owned by the core: background jobs and the audit trail.

Both point at the game through ``settings.CASEBOOK_GAME_MODEL`` (a swappable string reference,
Django's pattern for ``AUTH_USER_MODEL``), so the core never imports the domain app that defines
the game. The tables keep the names they had when the models lived in ``annotate``
(``annotate_job``, ``annotate_auditentry``): the move was a state-only migration, no data moved.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models


class AuditEntry(models.Model):
    """Who changed what, when: before/after snapshots of an item (JSON)."""

    game = models.ForeignKey(settings.CASEBOOK_GAME_MODEL, on_delete=models.CASCADE, related_name="audit")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    item_type = models.CharField(max_length=40)
    item_id = models.PositiveBigIntegerField()
    action = models.CharField(max_length=40)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "annotate_auditentry"
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["item_type", "item_id"], name="annotate_au_item_ty_75d291_idx")]


class Job(models.Model):
    """A long-running background job (ingest, LLM batch, Label Studio sync) with live progress."""

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        INTERRUPTED = "interrupted"  # its worker died (lease expired); can be resumed

    kind = models.CharField(max_length=40)
    game = models.ForeignKey(settings.CASEBOOK_GAME_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="jobs")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    state = models.CharField(max_length=12, choices=State.choices, default=State.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The lease (see casebook.jobs): who runs the job and when it last said it is alive.
    worker = models.CharField(max_length=100, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    task_id = models.CharField(max_length=64, blank=True, help_text="The django-tasks result id of the last enqueue.")

    class Meta:
        db_table = "annotate_job"
        ordering = ["-created_at"]

    @property
    def finished(self) -> bool:
        return self.state in {self.State.DONE, self.State.FAILED, self.State.INTERRUPTED}

    @property
    def resumable(self) -> bool:
        return self.state == self.State.INTERRUPTED

    def progress_payload(self) -> dict:
        """What every job status page polls; each kind of job adds its own result fields.

        A running job whose lease expired (its worker died) is reported, and saved, as interrupted.
        """
        from casebook.jobs import refresh

        refresh(self)
        return {"id": self.pk, "state": self.state, "done": self.done, "total": self.total,
                "message": self.message, "finished": self.finished, "resumable": self.resumable,
                "heartbeat_at": self.heartbeat_at.isoformat() if self.heartbeat_at else None}
