"""A played session of a game: players, ordered turns, and per-turn annotations.

Every session hangs off a :class:`annotate.models.Game`, so it has a page under ``/g/<slug>/`` and
the game's members and roles apply. A scriptless social-deduction game (ONUW) gets a Game row of
its own with ``extra["played_only"] = True`` (see README, "Played games").
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

from annotate.models import Character, Game, ReviewedItem

from .vocab import DEFAULT_TYPE, SESSION_TYPES, session_type


class Session(models.Model):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="play_sessions")
    title = models.CharField(max_length=300)
    session_type = models.CharField(max_length=20, choices=[(k, t.title) for k, t in SESSION_TYPES.items()],
                                    default=DEFAULT_TYPE)
    source_format = models.CharField(max_length=20, blank=True, help_text="onuw / whodunitbench / csv / jsonl")
    source_name = models.CharField(max_length=300, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "id"]

    def __str__(self) -> str:
        return self.title

    @property
    def vocabulary(self):
        return session_type(self.session_type)

    def player_names(self) -> list[str]:
        return [p.name for p in self.players.all()]


class Player(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="players")
    name = models.CharField(max_length=200)
    character = models.ForeignKey(Character, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    true_role = models.CharField(max_length=100, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["session", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["session", "name"], name="unique_player_name")]

    def __str__(self) -> str:
        return self.name


class Turn(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveIntegerField(help_text="0-based order in the session.")
    speaker = models.ForeignKey(Player, null=True, blank=True, on_delete=models.SET_NULL, related_name="turns")
    speaker_label = models.CharField(max_length=200, blank=True, help_text="The speaker as written in the log.")
    text = models.TextField()
    phase = models.CharField(max_length=40, blank=True)
    visible_to = models.JSONField(default=list, blank=True, help_text="Receivers; empty = everyone.")
    timestamp = models.BigIntegerField(null=True, blank=True, help_text="Wall time in ns, when the log has it.")
    extra = models.JSONField(default=dict, blank=True, help_text="Private reasoning and other log fields kept verbatim.")

    class Meta:
        ordering = ["session", "index"]
        constraints = [models.UniqueConstraint(fields=["session", "index"], name="unique_turn_index")]

    def __str__(self) -> str:
        return f"#{self.index} {self.speaker_label}: {self.text[:40]}"


class TurnAnnotation(ReviewedItem):
    """One annotator's reading of one turn (or the labels that came with the log: ``source=imported``).

    ``triplets`` are ``[speaker, action, object]`` lists; ``suspicions`` maps every player to the
    players they suspect (of the session type's suspect role) after this turn.
    """

    class Source(models.TextChoices):
        HUMAN = "human"
        IMPORTED = "imported"
        LLM = "llm"
        HEURISTIC = "heuristic"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="turn_annotations")
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="turn_annotations", help_text="Empty for labels imported with the log.")
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.HUMAN)
    triplets = models.JSONField(default=list, blank=True)
    face = models.CharField(max_length=20, blank=True)
    tone = models.CharField(max_length=20, blank=True)
    suspicions = models.JSONField(default=dict, blank=True)
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["turn", "id"]
        constraints = [models.UniqueConstraint(fields=["turn", "annotator"], name="unique_turn_annotator")]

    def __str__(self) -> str:
        return f"{self.turn} by {self.annotator or self.source}"
