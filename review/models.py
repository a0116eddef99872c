"""Workflow records that live beside the annotation models: comments, assignments, blind
validation answers and per-annotator relationship labels (for agreement statistics)."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from annotate.models import Character, Game, Question

ITEM_TYPES = {"question": "Question", "relationship": "Relationship", "reasoningchain": "Reasoning chain",
              "spanlabelconflict": "Span label conflict"}


class Comment(models.Model):
    """A note on one reviewed item (question / relationship / chain), shown beside its history."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="review_comments")
    item_type = models.CharField(max_length=40, choices=list(ITEM_TYPES.items()))
    item_id = models.PositiveBigIntegerField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    text = models.TextField()
    system = models.BooleanField(default=False, help_text="Written by the workflow (e.g. a validator disagreed).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["item_type", "item_id"])]

    def __str__(self) -> str:
        return f"{self.item_type}:{self.item_id} {self.text[:40]}"


class Assignment(models.Model):
    """Work a manager hands to an annotator: a kind of item, optionally narrowed to one character
    (perspective / relationship source) or a range of question positions."""

    class Kind(models.TextChoices):
        QUESTIONS = "questions"
        RELATIONSHIPS = "relationships"
        CHAINS = "chains"
        VALIDATION = "validation"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="assignments")
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=15, choices=Kind.choices, default=Kind.QUESTIONS)
    question_kind = models.CharField(max_length=12, blank=True, help_text="Only questions of this kind (empty = any).")
    character = models.ForeignKey(Character, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    first = models.PositiveIntegerField(null=True, blank=True, help_text="First question position (inclusive).")
    last = models.PositiveIntegerField(null=True, blank=True, help_text="Last question position (inclusive).")
    target = models.PositiveIntegerField(null=True, blank=True, help_text="How many items are expected.")
    note = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "assignee", "id"]

    def __str__(self) -> str:
        return f"{self.assignee} · {self.describe()}"

    def describe(self) -> str:
        parts = [self.get_kind_display()]
        if self.question_kind:
            parts.append(self.question_kind)
        if self.character_id:
            parts.append(f"character {self.character.name}")
        if self.first is not None or self.last is not None:
            parts.append(f"#{self.first if self.first is not None else '…'}–{self.last if self.last is not None else '…'}")
        return " · ".join(parts)


class ValidationAnswer(models.Model):
    """A validator's blind answer to an approved multiple-choice question (the key is hidden)."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="validations")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="validations")
    letters = models.CharField(max_length=20, help_text="Chosen option letters, sorted (e.g. 'b' or 'ac').")
    key = models.CharField(max_length=20, help_text="The question's answer letters when it was validated.")
    agrees = models.BooleanField()
    question_version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["question", "validator", "question_version"], name="unique_validation")
        ]


class LabelJudgement(models.Model):
    """One annotator's independent labels for one ordered character pair (input to kappa)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="label_judgements")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="label_judgements")
    source = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    target = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    labels = models.JSONField(default=list, help_text="Conan labels; an empty list means 'no relationship'.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["game", "source", "target", "annotator"]
        constraints = [
            models.UniqueConstraint(fields=["annotator", "source", "target"], name="unique_label_judgement")
        ]

    @property
    def category(self) -> str:
        """The label set as one nominal category (kappa compares whole label sets)."""
        return "+".join(sorted(self.labels)) or "none"


def comment_on_reason(sender, *, item, item_type: str, user, text: str, system: bool, **kwargs) -> Comment:
    """Receiver of ``annotate.services.states.reason_given``: the reason of a reject, a reopen or a
    conflict becomes a comment in the item's thread, where its author looks for it."""
    return Comment.objects.create(game=item.game, item_type=item_type, item_id=item.pk, author=user, text=text,
                                  system=system)
