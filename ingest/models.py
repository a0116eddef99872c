"""The fan-out of an ingest job: page batches that any worker process (on any machine) can take.

An :class:`IngestPlan` belongs to one ingest ``Job``; its pages needing OCR are cut into
:class:`PageBatch` rows, each claimed under a lease by one worker at a time; each page's OCR result
is saved once as a :class:`PageResult`. The build (saving the game) is claimed once on the plan.
"""
from __future__ import annotations

from django.db import models

from casebook.models import Job


class IngestPlan(models.Model):
    """Which pages an ingest job has to OCR, where its staged files are, and who builds the game."""

    class Build(models.TextChoices):
        WAITING = "waiting"  # pages still being read
        CLAIMED = "claimed"  # one worker is saving the game
        DONE = "done"

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="ingest_plan")
    stage_dir = models.CharField(max_length=500, help_text="Staged package files, relative to the data folder.")
    pages = models.PositiveIntegerField(default=0, help_text="Pages to OCR, over all batches.")
    build = models.CharField(max_length=10, choices=Build.choices, default=Build.WAITING)
    build_worker = models.CharField(max_length=100, blank=True)
    build_runs = models.PositiveIntegerField(default=0, help_text="How often the build stage started (once, unless resumed).")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"ingest plan of job {self.job_id}: {self.pages} page(s), build {self.build}"


class PageBatch(models.Model):
    """A few pages of one language, OCR'd by one worker in one tesseract run."""

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"  # claimed: ``worker`` holds it until ``lease_until``
        DONE = "done"

    plan = models.ForeignKey(IngestPlan, on_delete=models.CASCADE, related_name="batches")
    number = models.PositiveIntegerField()
    pages = models.JSONField(help_text="One entry per page: file (relative), page index, language, steps, key.")
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    worker = models.CharField(max_length=100, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="Claims so far: more than one means a worker was lost.")
    workers = models.JSONField(default=list, blank=True, help_text="Every worker that claimed it, in order.")
    seconds = models.FloatField(null=True, blank=True, help_text="OCR time of the run that saved the results.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["plan", "number"]
        constraints = [models.UniqueConstraint(fields=["plan", "number"], name="ingest_batch_number_once")]

    def __str__(self) -> str:
        return f"batch {self.number} of {self.plan_id}: {len(self.pages)} page(s), {self.state}"


class PageResult(models.Model):
    """One page's OCR result, saved once (by the worker whose claim was current)."""

    plan = models.ForeignKey(IngestPlan, on_delete=models.CASCADE, related_name="results")
    batch = models.ForeignKey(PageBatch, null=True, blank=True, on_delete=models.CASCADE, related_name="results")
    key = models.CharField(max_length=64, help_text="ocr.PageCache key: file content, page, language, steps, dpi.")
    text = models.TextField(blank=True)
    confidence = models.FloatField(null=True, blank=True)
    words = models.PositiveIntegerField(default=0)
    text_area = models.FloatField(default=0.0)
    angle = models.FloatField(default=0.0)
    preview = models.BinaryField(blank=True, default=b"")
    error = models.TextField(blank=True, help_text="Why OCR failed on this page (reported in the summary).")
    worker = models.CharField(max_length=100, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["plan", "key"], name="ingest_page_result_once")]

    def __str__(self) -> str:
        return f"page result {self.key[:12]} of plan {self.plan_id}"
