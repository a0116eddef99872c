"""Domain model of Casebook (see shared/design.md).

Every model hangs off a Game. Text offsets in EvidenceSpan are Unicode code points into the text
stored here (role scripts, manual, clue text), which is the normalised text; the published raw
strings needed for byte-exact exports live in ``raw``/``extra`` fields.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

from casebook.interchange import (
    ChainGoal,
    ClueKind,
    ImageKind,
    Language,
    NodeKind,
    OptionOrigin,
    OptionReview,
    Origin,
    QuestionKind,
    SpanDocument,
    Status,
)


def _choices(enum) -> list[tuple[str, str]]:
    return [(m.value, m.name.replace("_", " ").capitalize()) for m in enum]


class Game(models.Model):
    slug = models.SlugField(max_length=200, unique=True, allow_unicode=True)
    title = models.CharField(max_length=300)
    title_note = models.CharField(max_length=100, blank=True)
    language = models.CharField(max_length=2, choices=_choices(Language))
    origin = models.CharField(max_length=40, choices=_choices(Origin), default=Origin.MANUAL)
    source_id = models.CharField(
        max_length=300, blank=True, help_text="Identifier in the source dataset (WellPlay dir, WhodunitBench folder)."
    )
    counterpart = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="counterpart_of",
        help_text="The same game in the other language.",
    )
    truth_text = models.TextField(blank=True, help_text="Truth / host manual (WhodunitBench `reason`).")
    truth_motive = models.TextField(blank=True)
    truth_method = models.TextField(blank=True)
    public_clue_text = models.TextField(blank=True)
    task_prompt_civilian = models.TextField(blank=True)
    task_prompt_murderer = models.TextField(blank=True)
    targets = models.JSONField(default=dict, blank=True, help_text="Question count targets per kind.")
    extra = models.JSONField(default=dict, blank=True)
    import_report = models.JSONField(default=list, blank=True)
    content_hash = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title", "language"]

    def __str__(self) -> str:
        return f"{self.title} [{self.language}]"


class Character(models.Model):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="characters")
    name = models.CharField(max_length=200)
    aliases = models.JSONField(default=list, blank=True)
    playable = models.BooleanField(default=True)
    position = models.PositiveIntegerField(default=0)
    script = models.TextField(blank=True)
    goals = models.JSONField(default=list, blank=True)
    self_intro = models.TextField(blank=True)
    fixed_answer = models.TextField(blank=True)
    is_murderer = models.BooleanField(default=False)
    is_victim = models.BooleanField(default=False)
    victim_position = models.PositiveIntegerField(null=True, blank=True)
    key_role = models.BooleanField(default=False)
    extra = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=1, help_text="Optimistic lock: bumped on every save.")

    class Meta:
        ordering = ["game", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["game", "name"], name="unique_character_name")]

    def __str__(self) -> str:
        return self.name


class Kill(models.Model):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="kills")
    killer = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="kills")
    victim = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="killed_by")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["killer", "victim"], name="unique_kill")]


class SourceDocument(models.Model):
    """An uploaded or imported original file, kept with its digest."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="documents")
    filename = models.CharField(max_length=500)
    file = models.FileField(upload_to="sources/%Y/%m/", blank=True)
    sha256 = models.CharField(max_length=64, db_index=True)
    media_type = models.CharField(max_length=100, blank=True)
    role = models.CharField(max_length=40, blank=True, help_text="script / manual / clues / combined / image")
    size = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "filename"]

    def __str__(self) -> str:
        return self.filename


class Page(models.Model):
    document = models.ForeignKey(SourceDocument, on_delete=models.CASCADE, related_name="pages")
    number = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    method = models.CharField(max_length=20, blank=True, help_text="text-layer / ocr / plain")
    ocr_confidence = models.FloatField(null=True, blank=True)
    preview = models.ImageField(upload_to="pages/%Y/%m/", blank=True)

    class Meta:
        ordering = ["document", "number"]
        constraints = [models.UniqueConstraint(fields=["document", "number"], name="unique_page")]


class Clue(models.Model):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="clues")
    key = models.CharField(max_length=300)
    kind = models.CharField(max_length=10, choices=_choices(ClueKind), default=ClueKind.TEXT)
    title = models.CharField(max_length=300, blank=True)
    text = models.TextField(blank=True)
    owner = models.ForeignKey(Character, null=True, blank=True, on_delete=models.SET_NULL, related_name="clues")
    position = models.PositiveIntegerField(default=0)
    filename = models.CharField(max_length=300, blank=True)
    image = models.ImageField(upload_to="clues/%Y/%m/", blank=True)
    media_type = models.CharField(max_length=50, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    image_kind = models.CharField(max_length=12, choices=_choices(ImageKind), blank=True)
    ocr_text = models.TextField(blank=True)
    page = models.ForeignKey(Page, null=True, blank=True, on_delete=models.SET_NULL, related_name="clues")
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["game", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["game", "key"], name="unique_clue_key")]

    def __str__(self) -> str:
        return self.title or self.key


class EvidenceSpan(models.Model):
    """Code-point offsets [start, end) into a stored text, with the quoted text kept."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="spans")
    document = models.CharField(max_length=10, choices=_choices(SpanDocument))
    character = models.ForeignKey(Character, null=True, blank=True, on_delete=models.CASCADE, related_name="spans")
    clue = models.ForeignKey(Clue, null=True, blank=True, on_delete=models.CASCADE, related_name="spans")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    quote = models.TextField()
    label = models.CharField(max_length=40, blank=True, help_text="Span label from the game's set (clue, alibi, ...).")
    state = models.CharField(
        max_length=10, choices=[("live", "live"), ("draft", "draft"), ("withdrawn", "withdrawn")], default="live",
        help_text="draft: imported (e.g. from Label Studio) and not yet checked; withdrawn: its source deleted it.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "document", "start"]
        constraints = [models.CheckConstraint(condition=models.Q(end__gte=models.F("start")), name="span_end_after_start")]

    def __str__(self) -> str:
        return f"{self.document}[{self.start}:{self.end}] {self.quote[:30]}"


class ReviewedItem(models.Model):
    """Fields shared by everything that goes through review (questions, chains, relationships)."""

    status = models.CharField(max_length=10, choices=_choices(Status), default=Status.DRAFT, db_index=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reject_reason = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=1, help_text="Optimistic lock: bumped on every save.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class Relationship(ReviewedItem):
    """Directed edge: ``target`` is <labels> of ``source``."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="relationships")
    source = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="relations_out")
    target = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="relations_in")
    labels = models.JSONField(default=list)
    note = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)
    evidence = models.ManyToManyField(EvidenceSpan, blank=True, related_name="relationships")

    class Meta:
        ordering = ["game", "position", "id"]


class SpanLabelConflict(ReviewedItem):
    """Annotators gave one evidence span different labels (e.g. two Label Studio annotators).

    Spans have no review state of their own; this item is their way into the review queue, under
    the same conflict mechanism as disagreeing option reviews (``review.states.flag_conflict``).
    Approving it with a chosen ``label`` sets the span's label (``review.states.resolve_span_label``).
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="span_label_conflicts")
    span = models.ForeignKey(EvidenceSpan, on_delete=models.CASCADE, related_name="label_conflicts")
    candidates = models.JSONField(default=list, blank=True,
                                  help_text='Who said what: [{"who": "annotator", "label": "clue"}, ...].')
    label = models.CharField(max_length=40, blank=True, help_text="The label chosen when the conflict was resolved.")

    class Meta:
        ordering = ["game", "id"]

    def __str__(self) -> str:
        return f"span {self.span_id} label conflict"


class ReasoningChain(ReviewedItem):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="chains")
    goal = models.CharField(max_length=10, choices=_choices(ChainGoal), default=ChainGoal.OTHER)
    title = models.CharField(max_length=300, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["game", "position", "id"]


class ChainNode(models.Model):
    chain = models.ForeignKey(ReasoningChain, on_delete=models.CASCADE, related_name="nodes")
    key = models.CharField(max_length=100)
    kind = models.CharField(max_length=12, choices=_choices(NodeKind), default=NodeKind.DIRECT)
    text = models.TextField()
    parents = models.ManyToManyField("self", symmetrical=False, blank=True, related_name="children")
    level = models.IntegerField(null=True, blank=True, help_text="Declared hop level; computed when empty.")
    knowledge = models.TextField(blank=True)
    image_clue = models.ForeignKey(Clue, null=True, blank=True, on_delete=models.SET_NULL, related_name="chain_nodes")
    evidence = models.ManyToManyField(EvidenceSpan, blank=True, related_name="chain_nodes")
    position = models.PositiveIntegerField(default=0)
    extra = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=1, help_text="Optimistic lock: bumped on every save.")

    class Meta:
        ordering = ["chain", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["chain", "key"], name="unique_node_key")]


class KeyStatement(models.Model):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="key_statements")
    owner_name = models.CharField(max_length=200, help_text="Role name as published (may not resolve).")
    character = models.ForeignKey(Character, null=True, blank=True, on_delete=models.SET_NULL, related_name="key_statements")
    text = models.TextField()
    node = models.ForeignKey(ChainNode, null=True, blank=True, on_delete=models.SET_NULL, related_name="key_statements")
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["game", "position", "id"]


class Question(ReviewedItem):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="questions")
    kind = models.CharField(max_length=12, choices=_choices(QuestionKind), db_index=True)
    sub_type = models.CharField(max_length=40, blank=True)
    stem = models.TextField()
    answer = models.TextField(blank=True, help_text="Answer letters as exported, or free text (open-ended: motive/method).")
    multi = models.BooleanField(default=False)
    weight = models.PositiveIntegerField(null=True, blank=True, help_text="Empty = default for the kind (10/5/2).")
    perspective = models.ForeignKey(Character, null=True, blank=True, on_delete=models.SET_NULL, related_name="questions")
    image_clue = models.ForeignKey(Clue, null=True, blank=True, on_delete=models.SET_NULL, related_name="questions")
    chain_node = models.ForeignKey(ChainNode, null=True, blank=True, on_delete=models.SET_NULL, related_name="questions")
    level = models.IntegerField(null=True, blank=True)
    source = models.CharField(max_length=100, blank=True)
    raw = models.TextField(blank=True, help_text="Published string; cleared when the question is edited.")
    position = models.PositiveIntegerField(default=0)
    evidence = models.ManyToManyField(EvidenceSpan, blank=True, related_name="questions")
    provenance = models.JSONField(default=dict, blank=True)
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["game", "position", "id"]
        indexes = [models.Index(fields=["game", "kind", "position"])]

    def __str__(self) -> str:
        return self.stem[:80]


class Option(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="options")
    position = models.PositiveIntegerField(default=0)
    text = models.TextField()
    is_correct = models.BooleanField(default=False)
    origin = models.CharField(max_length=10, choices=_choices(OptionOrigin), default=OptionOrigin.HUMAN)
    model_name = models.CharField(max_length=200, blank=True)
    review = models.CharField(max_length=10, choices=_choices(OptionReview), default=OptionReview.ACCEPTED)
    version = models.PositiveIntegerField(default=1, help_text="Optimistic lock: bumped on every save.")

    class Meta:
        ordering = ["question", "position", "id"]


class Membership(models.Model):
    class Role(models.TextChoices):
        ANNOTATOR = "annotator"
        REVIEWER = "reviewer"
        MANAGER = "manager"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.ANNOTATOR)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "game"], name="unique_membership")]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.game}"


class Draft(models.Model):
    """An editor's unsaved form state (autosave), per user and item; never exported."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="drafts")
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="drafts")
    key = models.CharField(max_length=100, help_text='What is being edited, e.g. "question:12" or "question:new".')
    data = models.JSONField(default=dict)
    base_version = models.PositiveIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "game", "key"], name="unique_draft")]
