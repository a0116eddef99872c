"""Queries behind the review pages: the reviewer queue, an annotator's own work, assignments and
dashboards. Plain functions over the ORM (no request objects), so commands and tests reuse them."""
from __future__ import annotations

import datetime
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from annotate.models import Character, Game, Membership, Question, ReasoningChain, Relationship, SpanLabelConflict
from annotate.services import permissions, snapshots
from casebook import audit
from casebook.interchange import QuestionKind, Status
from casebook.models import AuditEntry

from . import agreement, history
from .models import ITEM_TYPES, Assignment, Comment

STATES = [s.value for s in Status]
ITEM_MODELS = history.MODELS
DONE_STATES = (Status.SUBMITTED, Status.APPROVED)
# A comment starting with this asks the reviewers to reopen an approved item; the queue lists them.
REOPEN_PREFIX = "Reopening requested:"


class WorkflowError(ValueError):
    """Bad input for an assignment or a queue filter; the message is for the user."""


@dataclass
class Row:
    """One reviewed item in a list, whatever its model."""

    item_type: str
    item: object
    game: Game

    @property
    def key(self) -> str:
        return f"{self.item_type}:{self.item.pk}"

    @property
    def label(self) -> str:
        return describe(self.item)

    @property
    def kind(self) -> str:
        return getattr(self.item, "kind", "") or ITEM_TYPES[self.item_type]


def describe(item) -> str:
    """A one-line human description of a reviewed item."""
    if isinstance(item, Question):
        return item.stem
    if isinstance(item, Relationship):
        return f"{item.source.name} → {item.target.name}: {', '.join(item.labels) or '—'}"
    if isinstance(item, ReasoningChain):
        return item.title or f"{item.goal} chain"
    if isinstance(item, SpanLabelConflict):
        said = " / ".join(f"{c.get('label')} ({c.get('who')})" for c in item.candidates or [])
        return f"“{item.span.quote[:60]}”: {said or item.span.label or '—'}"
    return str(item)


def _related(model):
    fields = ["game", "author", "reviewer"]
    if model is Relationship:
        fields += ["source", "target"]
    if model is SpanLabelConflict:
        fields += ["span"]
    return fields


@dataclass
class Listing:
    """One page of rows merged over the item types, oldest change first, and the total count."""

    rows: list[Row]
    total: int
    offset: int
    limit: int

    @property
    def end(self) -> int:
        return self.offset + len(self.rows)

    @property
    def has_next(self) -> bool:
        return self.offset + len(self.rows) < self.total

    @property
    def next_offset(self) -> int:
        return self.offset + self.limit

    @property
    def prev_offset(self) -> int | None:
        return max(0, self.offset - self.limit) if self.offset else None


def items(games, *, item_type: str = "", kind: str = "", author: str = "", state: str = "",
          authored_by=None, offset: int = 0, limit: int = 100) -> Listing:
    """Reviewed items of ``games`` filtered by type, question kind, author username and state;
    one page of at most ``limit`` rows (each type fetches only ``offset + limit`` rows)."""
    if item_type and item_type not in ITEM_MODELS:
        raise WorkflowError(f"Unknown item type {item_type!r}.")
    if state and state not in STATES:
        raise WorkflowError(f"Unknown state {state!r}; choose one of {', '.join(STATES)}.")
    if kind and kind not in {k.value for k in QuestionKind}:
        raise WorkflowError(f"Unknown question kind {kind!r}.")
    offset, limit = max(0, offset), max(1, min(limit, 500))
    types = [item_type] if item_type else list(ITEM_MODELS)
    if kind:
        types = [t for t in types if t == "question"]
    rows: list[Row] = []
    total = 0
    for t in types:
        model = ITEM_MODELS[t]
        qs = model.objects.filter(game__in=games)
        if t == "question" and kind:
            qs = qs.filter(kind=kind)
        if author:
            qs = qs.filter(author__username=author)
        if authored_by is not None:
            qs = qs.filter(author=authored_by)
        if state:
            qs = qs.filter(status=state)
        total += qs.count()
        ordered = qs.select_related(*_related(model)).order_by("updated_at", "id")
        if len(types) == 1:  # one type: the database pages it
            return Listing([Row(t, obj, obj.game) for obj in ordered[offset: offset + limit]], total, offset, limit)
        rows += [Row(t, obj, obj.game) for obj in ordered[: offset + limit]]
    rows.sort(key=lambda r: (r.item.updated_at, r.item_type, r.item.pk))
    return Listing(rows[offset: offset + limit], total, offset, limit)


def review_queue(user, *, game_slug: str = "", **filters) -> Listing:
    """The reviewer queue: items of every game where the user reviews (default: submitted ones)."""
    games = permissions.games_with_role(user, permissions.REVIEWER)
    if game_slug:
        games = games.filter(slug=game_slug)
    filters.setdefault("state", Status.SUBMITTED)
    return items(games, **filters)


def comments_for(game: Game, item_type: str, item_id: int) -> QuerySet[Comment]:
    return Comment.objects.filter(game=game, item_type=item_type, item_id=item_id).select_related("author")


def add_comment(game: Game, user, item, text: str) -> Comment:
    text = (text or "").strip()
    if not text:
        raise WorkflowError("Write something before sending the comment.")
    if len(text) > 5000:
        raise WorkflowError("Comments are limited to 5000 characters.")
    return Comment.objects.create(game=game, item_type=audit.item_type(item), item_id=item.pk, author=user, text=text)


def reopen_requests(user, limit: int = 50) -> list[Comment]:
    """Open reopening requests in the games ``user`` reviews: the item is still approved, or was
    submitted and has not changed since the request (once reopened it is in the queue itself)."""
    games = permissions.games_with_role(user, permissions.REVIEWER)
    found = []
    for comment in (Comment.objects.filter(game__in=games, text__startswith=REOPEN_PREFIX)
                    .select_related("game", "author").order_by("-created_at")[:limit]):
        item = ITEM_MODELS[comment.item_type].objects.filter(pk=comment.item_id, game=comment.game).first()
        if item is not None and (item.status == Status.APPROVED or (
                item.status == Status.SUBMITTED and item.updated_at <= comment.created_at)):
            found.append(comment)
    return found


def open_conflicts(game: Game, limit: int = 100) -> list[Row]:
    """Items that ``review.states.flag_conflict`` sent to review and nobody has decided yet
    (still submitted), newest conflict first: disagreeing annotators waiting for a reviewer."""
    seen: set[tuple[str, int]] = set()
    rows: list[Row] = []
    for item_type, item_id in (Comment.objects.filter(game=game, system=True, text__contains="Conflict: ")
                               .order_by("-created_at", "-id").values_list("item_type", "item_id")):
        if (item_type, item_id) in seen or item_type not in ITEM_MODELS:
            continue
        seen.add((item_type, item_id))
        item = ITEM_MODELS[item_type].objects.filter(game=game, pk=item_id, status=Status.SUBMITTED).first()
        if item is not None:
            rows.append(Row(item_type, item, game))
        if len(rows) >= limit:
            break
    return rows


# ---- assignments ------------------------------------------------------------------------------

def create_assignment(game: Game, manager, *, assignee: str, kind: str, question_kind: str = "",
                      character_id: int | None = None, first: int | None = None, last: int | None = None,
                      target: int | None = None, note: str = "") -> Assignment:
    user = get_user_model().objects.filter(username=assignee).first()
    if user is None or permissions.role_of(user, game) is None:
        raise WorkflowError(f"{assignee or 'Nobody'} is not a member of this game; add them as a member first.")
    if kind not in Assignment.Kind.values:
        raise WorkflowError(f"Unknown assignment kind {kind!r}.")
    if question_kind and question_kind not in {k.value for k in QuestionKind}:
        raise WorkflowError(f"Unknown question kind {question_kind!r}.")
    if question_kind and kind != Assignment.Kind.QUESTIONS:
        raise WorkflowError("A question kind only narrows question assignments.")
    character = None
    if character_id:
        character = Character.objects.filter(game=game, pk=character_id).first()
        if character is None:
            raise WorkflowError("That character is not part of this game.")
    if (first is not None or last is not None) and kind != Assignment.Kind.QUESTIONS:
        raise WorkflowError("Position ranges apply to question assignments only.")
    if first is not None and last is not None and first > last:
        raise WorkflowError(f"The range is empty: first #{first} comes after last #{last}.")
    a = Assignment.objects.create(game=game, assignee=user, assigned_by=manager, kind=kind,
                                  question_kind=question_kind, character=character, first=first, last=last,
                                  target=target, note=note.strip()[:300])
    snapshots.record_change(game, manager, a, "assign", None,
                        {"assignee": user.get_username(), "what": a.describe(), "target": target})
    return a


def delete_assignment(game: Game, manager, pk: int) -> None:
    a = Assignment.objects.filter(game=game, pk=pk).first()
    if a is None:
        raise WorkflowError("That assignment no longer exists.")
    before = {"assignee": a.assignee.get_username(), "what": a.describe()}
    snapshots.record_change(game, manager, a, "unassign", before, None)
    a.delete()


def assignment_items(a: Assignment) -> QuerySet:
    """The items an assignment covers: a position range / character scopes existing items (any
    author); an open assignment counts what the assignee wrote."""
    if a.kind == Assignment.Kind.VALIDATION:
        return a.assignee.validations.filter(question__game=a.game)
    model = {"questions": Question, "relationships": Relationship, "chains": ReasoningChain}[a.kind]
    qs = model.objects.filter(game=a.game)
    scoped = False
    if a.kind == Assignment.Kind.QUESTIONS:
        if a.question_kind:
            qs = qs.filter(kind=a.question_kind)
        if a.character_id:
            qs, scoped = qs.filter(perspective_id=a.character_id), True
        if a.first is not None:
            qs, scoped = qs.filter(position__gte=a.first), True
        if a.last is not None:
            qs, scoped = qs.filter(position__lte=a.last), True
    elif a.kind == Assignment.Kind.RELATIONSHIPS and a.character_id:
        qs, scoped = qs.filter(Q(source_id=a.character_id) | Q(target_id=a.character_id)), True
    return qs if scoped else qs.filter(author=a.assignee)


@dataclass
class Progress:
    assignment: Assignment
    by_state: dict[str, int]
    total: int
    done: int
    expected: int

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.done / self.expected)) if self.expected else 0


def progress(a: Assignment) -> Progress:
    qs = assignment_items(a)
    if a.kind == Assignment.Kind.VALIDATION:
        n = qs.count()
        return Progress(a, {"answered": n}, n, n, a.target or n)
    by_state = dict(qs.values_list("status").annotate(n=Count("id")))
    total = sum(by_state.values())
    done = sum(by_state.get(s, 0) for s in DONE_STATES)
    return Progress(a, by_state, total, done, a.target or total)


# ---- dashboards -------------------------------------------------------------------------------

@dataclass
class Dashboard:
    counts: dict[str, dict[str, int]]  # kind -> state -> n
    totals: dict[str, int]
    per_day: list[tuple[datetime.date, int, int]]  # (day, approved, rejected)
    per_reviewer: list[tuple[str, int, int]]
    per_author: list[tuple[str, dict[str, int]]]
    relationships: agreement.RelationshipAgreement | None = None
    validation: agreement.ValidationSummary | None = None
    assignments: list[Progress] = field(default_factory=list)
    median_hours: float | None = None


def _count_rows(qs, label_field: str | None, label: str) -> list[tuple[str, str, int]]:
    if label_field:
        return [(k, s, n) for k, s, n in qs.values_list(label_field, "status").annotate(n=Count("id"))]
    return [(label, s, n) for s, n in qs.values_list("status").annotate(n=Count("id"))]


def counts_by_kind(game: Game, author=None) -> dict[str, dict[str, int]]:
    """kind (question kinds, "relationship", "chain", "span label conflict") -> state -> count."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(STATES, 0))
    for model, field_name, label in [(Question, "kind", ""), (Relationship, None, "relationship"),
                                     (ReasoningChain, None, "chain"), (SpanLabelConflict, None, "span label conflict")]:
        qs = model.objects.filter(game=game)
        if author is not None:
            qs = qs.filter(author=author)
        for kind, state, n in _count_rows(qs, field_name, label):
            out[kind][state] += n
    return {k: dict(v) for k, v in sorted(out.items())}


def throughput(game: Game, *, days: int = 14, reviewer=None):
    """Review decisions per day (approved, rejected) and per reviewer, from the audit log."""
    since = timezone.now() - datetime.timedelta(days=days)
    qs = AuditEntry.objects.filter(game=game, action__in=["approve", "reject"], at__gte=since)
    if reviewer is not None:
        qs = qs.filter(user=reviewer)
    per_day: dict[datetime.date, Counter] = defaultdict(Counter)
    per_user: dict[str, Counter] = defaultdict(Counter)
    for action, at, username in qs.values_list("action", "at", "user__username"):
        per_day[timezone.localtime(at).date()][action] += 1
        per_user[username or "—"][action] += 1
    day_rows = [(d, c["approve"], c["reject"]) for d, c in sorted(per_day.items())]
    user_rows = sorted(((u, c["approve"], c["reject"]) for u, c in per_user.items()), key=lambda r: -(r[1] + r[2]))
    return day_rows, user_rows


def hours_to_decision(game: Game, *, days: int = 14) -> float | None:
    """Median hours from the last submit to the approve/reject decision, over the window."""
    since = timezone.now() - datetime.timedelta(days=days)
    submitted: dict[tuple[str, int], datetime.datetime] = {}
    waits = []
    rows = (AuditEntry.objects.filter(game=game, action__in=["submit", "reopen", "approve", "reject"])
            .order_by("at", "id").values_list("item_type", "item_id", "action", "at"))
    for kind, pk, action, at in rows:
        if action in {"submit", "reopen"}:
            submitted[(kind, pk)] = at
        elif (kind, pk) in submitted and at >= since:
            waits.append((at - submitted.pop((kind, pk))).total_seconds() / 3600)
    return statistics.median(waits) if waits else None


def game_dashboard(game: Game) -> Dashboard:
    counts = counts_by_kind(game)
    totals = Counter()
    for states in counts.values():
        totals.update(states)
    per_day, per_reviewer = throughput(game)
    per_author: dict[str, Counter] = defaultdict(Counter)
    for model in ITEM_MODELS.values():
        for username, state, n in (model.objects.filter(game=game).values_list("author__username", "status")
                                   .annotate(n=Count("id"))):
            per_author[username or "(imported)"][state] += n
    assignments = [progress(a) for a in Assignment.objects.filter(game=game).select_related("assignee", "character")]
    return Dashboard(counts, dict(totals), per_day, per_reviewer,
                     sorted((u, dict(c)) for u, c in per_author.items()),
                     agreement.relationship_agreement(game), agreement.validation_agreement(game), assignments,
                     hours_to_decision(game))


@dataclass
class PersonDashboard:
    user: object
    role: str | None
    counts: dict[str, dict[str, int]]
    rejected: list[Row]
    assignments: list[Progress]
    reviews_per_day: list[tuple[datetime.date, int, int]]
    validations: int
    validations_agreeing: int

    @property
    def rejection_rate(self) -> float | None:
        decided = sum(s.get("approved", 0) + s.get("rejected", 0) for s in self.counts.values())
        rejected = sum(s.get("rejected", 0) for s in self.counts.values())
        return rejected / decided if decided else None


def person_dashboard(game: Game, user) -> PersonDashboard:
    reviews, _ = throughput(game, reviewer=user)
    vals = user.validations.filter(question__game=game)
    return PersonDashboard(
        user, permissions.role_of(user, game), counts_by_kind(game, author=user),
        items([game], state=Status.REJECTED, authored_by=user, limit=200).rows,
        [progress(a) for a in Assignment.objects.filter(game=game, assignee=user).select_related("character")],
        reviews, vals.count(), vals.filter(agrees=True).count(),
    )


def members(game: Game) -> list[Membership]:
    return list(Membership.objects.filter(game=game).select_related("user").order_by("role", "user__username"))
