"""What Casebook remembers about a game's Label Studio project.

A :class:`LabelStudioLink` is one game pushed to one Label Studio server (project id, kinds
pushed). :class:`LabelStudioTask` maps each Label Studio task back to the Casebook object it shows
(a character's role script or a question), so a pull knows where annotations belong and a second
push updates tasks instead of duplicating them. :class:`PulledItem` records every annotation
result already imported (by annotation id and region id), which makes pulling idempotent and keeps
the Label Studio span label (clue / alibi / ...) that EvidenceSpan itself has no field for.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

from annotate.models import EvidenceSpan, Game, Question, Relationship


class LabelStudioLink(models.Model):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="labelstudio_links")
    url = models.URLField(max_length=500, help_text="Base URL of the Label Studio server.")
    project_id = models.PositiveIntegerField()
    kinds = models.JSONField(default=list, help_text="What was pushed: spans, relations, questions.")
    project_created = models.CharField(max_length=64, blank=True,
                                       help_text="The project's created_at on the server: with project_id, the server's "
                                                 "identity (the same server under another URL answers the same).")
    created_at = models.DateTimeField(auto_now_add=True)
    pushed_at = models.DateTimeField(null=True, blank=True)
    pulled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["game", "url"], name="unique_labelstudio_link")]

    def __str__(self) -> str:
        return f"{self.game} → {self.url} project {self.project_id}"

    @property
    def project_url(self) -> str:
        return f"{self.url}/projects/{self.project_id}/data"


class LabelStudioTask(models.Model):
    class Kind(models.TextChoices):
        SCRIPT = "script"  # a character's role script: spans and relations
        QUESTION = "question"  # an MCQ review

    link = models.ForeignKey(LabelStudioLink, on_delete=models.CASCADE, related_name="tasks")
    task_id = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    object_id = models.PositiveIntegerField(help_text="Character pk (script) or Question pk (question).")
    data_hash = models.CharField(max_length=64, blank=True, help_text="sha256 of the task data last sent.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["link", "task_id"], name="unique_labelstudio_task"),
            models.UniqueConstraint(fields=["link", "kind", "object_id"], name="unique_labelstudio_object"),
        ]


class PulledItem(models.Model):
    """One imported annotation result: a span region, a relation, or a question review."""

    class Kind(models.TextChoices):
        SPAN = "span"
        RELATION = "relation"
        REVIEW = "review"

    link = models.ForeignKey(LabelStudioLink, on_delete=models.CASCADE, related_name="pulled")
    task_id = models.PositiveIntegerField()
    annotation_id = models.PositiveIntegerField()
    key = models.CharField(max_length=200, help_text='Region id, "from>to" for a relation, "review" for a question.')
    kind = models.CharField(max_length=10, choices=Kind.choices)
    label = models.CharField(max_length=100, blank=True, help_text="Span label (clue, alibi, ...).")
    annotator = models.CharField(max_length=200, blank=True, help_text="The Label Studio user (email) who made the annotation.")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                             help_text="The Casebook user of the same name, if any.")
    value = models.JSONField(default=dict, blank=True, help_text="The contribution as judged (label, labels or choices).")
    created_item = models.BooleanField(default=False, help_text="This pull created the Casebook item (not reused).")
    deleted_at = models.DateTimeField(null=True, blank=True, help_text="When a pull found it deleted in Label Studio.")
    span = models.ForeignKey(EvidenceSpan, null=True, blank=True, on_delete=models.SET_NULL, related_name="labelstudio_items")
    relationship = models.ForeignKey(Relationship, null=True, blank=True, on_delete=models.SET_NULL, related_name="labelstudio_items")
    question = models.ForeignKey(Question, null=True, blank=True, on_delete=models.SET_NULL, related_name="labelstudio_items")
    fingerprint = models.CharField(max_length=64, help_text="sha256 of the result as imported; a change means update.")
    pulled_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["link", "annotation_id", "key"], name="unique_pulled_item")]
