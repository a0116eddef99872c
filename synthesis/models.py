"""A synthesis run and the provenance of every request it made.

The run keeps the latest output of each stage (so any stage can be re-run alone from the others'
outputs) and links to the draft game it built. Each :class:`StageRecord` is one request: prompt,
model, parameters, raw reply, parse problems, token usage and cost — kept also when it failed.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models


class SynthesisRun(models.Model):
    class State(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    game = models.ForeignKey("annotate.Game", null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="synthesis_runs")
    job = models.ForeignKey("casebook.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    state = models.CharField(max_length=10, choices=State.choices, default=State.RUNNING)
    settings = models.JSONField(default=dict, help_text="players, language, theme, setting, critic rounds, model, endpoint")
    outputs = models.JSONField(default=dict, help_text="Latest parsed output of each stage.")
    critic_rounds = models.JSONField(default=list, help_text="Critic scores and suggestions, one entry per round.")
    checks = models.JSONField(default=list, help_text="Grounding and consistency checks of the assembled game.")
    usage = models.JSONField(default=dict, help_text="Token totals, request count and cost.")
    failure = models.JSONField(default=dict, blank=True, help_text="Stage, message and reply of a failed stage.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"synthesis run {self.pk} ({self.state})"


class StageRecord(models.Model):
    run = models.ForeignKey(SynthesisRun, on_delete=models.CASCADE, related_name="records")
    stage = models.CharField(max_length=30)
    key = models.CharField(max_length=300, blank=True, help_text="Which character / image clue, where a stage asks per item.")
    round = models.PositiveIntegerField(default=0, help_text="Critic refinement round (0 = first draft).")
    messages = models.JSONField(default=list)
    model = models.CharField(max_length=200, blank=True)
    params = models.JSONField(default=dict)
    reply = models.TextField(blank=True)
    parsed = models.JSONField(null=True, blank=True)
    problems = models.JSONField(default=list)
    usage = models.JSONField(default=dict)
    cost = models.FloatField(null=True, blank=True)
    ok = models.BooleanField(default=True)
    error = models.TextField(blank=True)
    seconds = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "id"]
