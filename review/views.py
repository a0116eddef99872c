"""Thin views of the review workflow: parse the request, check the role through
``annotate.services.permissions``, call ``annotate.services.states`` / ``review.history`` / ``review.agreement`` /
``review.services``, render. Non-members get 404, members without the role 403."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotate.models import Character, Question, SpanLabelConflict
from annotate.services import permissions, states
from annotate.services.chains import level_label
from annotate.services.questions import KIND_LABELS, lettered_options
from annotate.services.relationships import known_labels
from annotate.services.spans import span_labels
from casebook.interchange import LETTERS, Status
from casebook.models import AuditEntry

from . import agreement, history, services
from .models import ITEM_TYPES, Assignment, LabelJudgement


def _int(value) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _back(request: HttpRequest, fallback: str) -> HttpResponse:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect(fallback)


def _item(game, item_type: str, pk: int):
    try:
        return history.get_item(game, item_type, pk)
    except history.AuditError as exc:
        raise Http404(str(exc)) from exc


def _ctx(game, role, **extra) -> dict:
    return {"game": game, "role": role, "tab": "review", "can_review": permissions.has_role(role, permissions.REVIEWER),
            "can_manage": permissions.has_role(role, permissions.MANAGER), **extra}


# ---- queues ----------------------------------------------------------------------------------

@login_required
def queue(request: HttpRequest) -> HttpResponse:
    """Reviewer queue across the games where the user reviews, filtered by game/type/kind/author/state."""
    games = permissions.games_with_role(request.user, permissions.REVIEWER)
    if not games.exists():
        return redirect("review:mine")
    f = {k: request.GET.get(k, "") for k in ("game", "type", "kind", "author")}
    state = request.GET.get("state", Status.SUBMITTED)
    try:
        listing = services.review_queue(request.user, game_slug=f["game"], item_type=f["type"], kind=f["kind"],
                                        author=f["author"], state=state, offset=_int(request.GET.get("offset")) or 0)
    except services.WorkflowError as exc:
        messages.error(request, str(exc))
        listing = services.Listing([], 0, 0, 100)
    query = request.GET.copy()
    query.pop("offset", None)
    return render(request, "review/queue.html", {
        "reopen_requests": services.reopen_requests(request.user),
        "rows": listing.rows, "listing": listing, "games": games, "filters": f, "state": state, "states": services.STATES,
        "item_types": ITEM_TYPES, "kinds": KIND_LABELS.items(), "querystring": query.urlencode(),
        "authors": sorted({u for u in get_user_model().objects.filter(memberships__game__in=games)
                           .values_list("username", flat=True)}),
    })


@login_required
@require_POST
def bulk(request: HttpRequest) -> HttpResponse:
    """Bulk approve (or reject with one reason) the ticked items; each item succeeds or fails alone."""
    action = request.POST.get("action", "approve")
    if action not in {"approve", "reject"}:
        messages.error(request, "Bulk actions are approve and reject.")
        return _back(request, "review:queue")
    chosen = []
    for key in request.POST.getlist("items"):
        kind, _, pk = key.partition(":")
        model = history.MODELS.get(kind)
        obj = model.objects.select_related("game").filter(pk=_int(pk)).first() if model and _int(pk) else None
        if obj is not None:
            chosen.append(obj)
    if not chosen:
        messages.warning(request, "Tick at least one item (x toggles the row under the cursor).")
        return _back(request, "review:queue")
    for obj in chosen:
        if permissions.role_of(request.user, obj.game) is None:
            raise Http404("No such item")
    result = states.bulk(chosen, action, request.user, reason=request.POST.get("reason", ""))
    if result.done:
        messages.success(request, f"{states.PAST[action]} {len(result.done)} item(s).")
    for obj, why in result.failed[:10]:
        messages.error(request, f"{services.describe(obj)[:60]}: {why}")
    return _back(request, "review:queue")


@login_required
def mine(request: HttpRequest) -> HttpResponse:
    """An annotator's own queue: assignments with progress, rejected items with reasons, drafts."""
    games = list(permissions.games_with_role(request.user, permissions.ANNOTATOR))
    by_state = {s: services.items(games, authored_by=request.user, state=s, limit=200 if s == Status.REJECTED else 50)
                for s in services.STATES}
    assignments = [services.progress(a) for a in
                   Assignment.objects.filter(assignee=request.user).select_related("game", "character")]
    return render(request, "review/mine.html", {"by_state": by_state, "assignments": assignments, "games": games})


# ---- one item --------------------------------------------------------------------------------

def _question_parts(item) -> dict:
    """What an export writes of a question: options with the export's letters (those it leaves out
    listed apart), its image, its chain node and level, and the quotes of its evidence."""
    if not isinstance(item, Question):
        return {"options": [], "held_back": [], "evidence": []}
    options, held_back = lettered_options(list(item.options.all()))
    return {"options": options, "held_back": held_back, "level": level_label(item.level),
            "evidence": [{"owner": e.character.name if e.character else (e.clue.title or e.clue.key) if e.clue else e.document,
                          "label": e.label, "quote": e.quote} for e in item.evidence.select_related("character", "clue")]}


def _span_label_choices(item) -> list[dict]:
    """For a span-label conflict: the game's span labels, those the annotators chose first, with who chose them."""
    if not isinstance(item, SpanLabelConflict):
        return []
    said: dict[str, list[str]] = {}
    for c in item.candidates or []:
        said.setdefault(str(c.get("label")), []).append(str(c.get("who")))
    labels = span_labels(item.game)
    order = [k for k in said if k in labels] + [k for k in labels if k not in said]
    return [{"value": k, "zh": labels[k][0], "en": labels[k][1], "who": said.get(k, [])} for k in order]


@login_required
def item_detail(request: HttpRequest, slug: str, item_type: str, pk: int) -> HttpResponse:
    game, role = permissions.game_for(request.user, slug, "view")
    item = _item(game, item_type, pk)
    can_history = permissions.can(request.user, game, "history", role=role)
    return render(request, "review/item.html", _ctx(
        game, role, item=item, item_type=item_type, type_label=ITEM_TYPES[item_type], label=services.describe(item),
        actions=states.allowed_actions(item, request.user, role=role), labels=states.LABELS,
        needs_reason=states.NEEDS_REASON, comments=services.comments_for(game, item_type, pk),
        history=history.history(game, item_type, pk) if can_history else [],
        can_revert=permissions.can(request.user, game, "revert", role=role),
        can_edit=permissions.can(request.user, game, "edit", item, role=role),
        **_question_parts(item),
        nodes=list(item.nodes.all()) if item_type == "reasoningchain" else [],
        span_label_choices=_span_label_choices(item),
        letters=LETTERS,
    ))


@login_required
@require_POST
def transition(request: HttpRequest, slug: str, item_type: str, pk: int) -> HttpResponse:
    game, _ = permissions.game_for(request.user, slug, "view")
    item = _item(game, item_type, pk)
    action = request.POST.get("action", "")
    try:
        if action == "approve" and isinstance(item, SpanLabelConflict):  # resolving sets the span's label
            states.resolve_span_label(item, request.POST.get("label", ""), request.user,
                                      expected_version=_int(request.POST.get("version")))
        else:
            states.transition(item, action, request.user, reason=request.POST.get("reason", ""),
                              expected_version=_int(request.POST.get("version")))
    except states.TransitionError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{states.PAST.get(action, action)}: {services.describe(item)[:60]}")
    return _back(request, request.path.rsplit("transition/", 1)[0])


@login_required
@require_POST
def comment(request: HttpRequest, slug: str, item_type: str, pk: int) -> HttpResponse:
    game, _ = permissions.game_for(request.user, slug, "comment")
    item = _item(game, item_type, pk)
    try:
        text = request.POST.get("text", "").strip()
        if request.POST.get("reopen") and text:  # "request reopening" from a read-only editor
            text = f"{services.REOPEN_PREFIX} {text}"
        services.add_comment(game, request.user, item, text)
    except services.WorkflowError as exc:
        messages.error(request, str(exc))
    return redirect("review:item", slug=slug, item_type=item_type, pk=pk)


@login_required
@require_POST
def revert(request: HttpRequest, slug: str, item_type: str, pk: int, entry: int) -> HttpResponse:
    game, _ = permissions.game_for(request.user, slug, "revert")
    _item(game, item_type, pk)
    row = get_object_or_404(AuditEntry, game=game, item_type=item_type, item_id=pk, pk=entry)
    try:
        history.revert(game, row, request.user, side=request.POST.get("side", "after"))
    except history.AuditError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Restored the version {'after' if request.POST.get('side', 'after') == 'after' else 'before'} "
                                  f"change #{row.pk}; the revert is in the history.")
    return redirect("review:item", slug=slug, item_type=item_type, pk=pk)


# ---- per game ----------------------------------------------------------------------------------

@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    game, role = permissions.game_for(request.user, slug, "view")
    data = services.game_dashboard(game)
    return render(request, "review/dashboard.html", _ctx(
        game, role, d=data, states=services.STATES, kind_labels=dict(KIND_LABELS), members=services.members(game),
    ))


@login_required
def person(request: HttpRequest, slug: str, username: str) -> HttpResponse:
    """Per-annotator dashboard: own work by kind and state, rejections, assignments, reviews done.
    Members see their own page; reviewers and managers see everybody's."""
    game, role = permissions.game_for(request.user, slug, "view")
    who = get_user_model().objects.filter(username=username).first()
    if who is None or permissions.role_of(who, game) is None:
        raise Http404("Not a member of this game")
    if who != request.user:
        permissions.require(request.user, game, "review_queue")
    return render(request, "review/person.html", _ctx(game, role, p=services.person_dashboard(game, who),
                                                      states=services.STATES, kind_labels=dict(KIND_LABELS)))


@login_required
def assignments(request: HttpRequest, slug: str) -> HttpResponse:
    game, role = permissions.game_for(request.user, slug, "assign")
    if request.method == "POST":
        try:
            if request.POST.get("delete"):
                services.delete_assignment(game, request.user, _int(request.POST["delete"]) or 0)
                messages.success(request, "Assignment removed.")
            else:
                a = services.create_assignment(
                    game, request.user, assignee=request.POST.get("assignee", ""), kind=request.POST.get("kind", ""),
                    question_kind=request.POST.get("question_kind", ""), character_id=_int(request.POST.get("character")),
                    first=_int(request.POST.get("first")), last=_int(request.POST.get("last")),
                    target=_int(request.POST.get("target")), note=request.POST.get("note", ""),
                )
                messages.success(request, f"Assigned {a.describe()} to {a.assignee.get_username()}.")
        except services.WorkflowError as exc:
            messages.error(request, str(exc))
        return redirect("review:assignments", slug=slug)
    rows = [services.progress(a) for a in Assignment.objects.filter(game=game).select_related("assignee", "character")]
    return render(request, "review/assignments.html", _ctx(
        game, role, rows=rows, members=services.members(game), kinds=Assignment.Kind.choices,
        question_kinds=KIND_LABELS.items(), characters=Character.objects.filter(game=game).only("id", "name"),
    ))


@login_required
def validate(request: HttpRequest, slug: str) -> HttpResponse:
    """Blind validation: the next approved MCQ, options shown without the key."""
    game, role = permissions.game_for(request.user, slug, "validate")
    if request.method == "POST":
        question = get_object_or_404(Question, game=game, pk=_int(request.POST.get("question")) or 0)
        try:
            answer = agreement.record_validation(question, request.user, request.POST.getlist("letters"))
        except agreement.AgreementError as exc:
            messages.error(request, str(exc))
        else:
            if answer.agrees:
                messages.success(request, "Recorded: your answer matches the key.")
            else:
                messages.warning(request, f"Recorded: you chose {answer.letters.upper()}, the key is "
                                          f"{answer.key.upper()}. The question went back to review.")
        return redirect("review:validate", slug=slug)
    queue = agreement.validation_queue(game, request.user)
    question = queue[0] if queue else None
    return render(request, "review/validate.html", _ctx(
        game, role, question=question, remaining=len(queue),
        options=list(zip(LETTERS, agreement.shown_options(question), strict=False)) if question else [],
        multi=bool(question and (question.multi or len(question.answer) > 1)),
    ))


@login_required
def labels(request: HttpRequest, slug: str) -> HttpResponse:
    """Independent relationship labelling of the game's pairs (the input of Cohen's / Fleiss' kappa)."""
    game, role = permissions.game_for(request.user, slug, "label")
    if request.method == "POST":
        source = get_object_or_404(Character, game=game, pk=_int(request.POST.get("source")) or 0)
        target = get_object_or_404(Character, game=game, pk=_int(request.POST.get("target")) or 0)
        raw = request.POST.get("labels", "")
        try:
            agreement.record_labels(game, request.user, source, target, [x for x in raw.replace("，", ",").split(",")])
        except agreement.AgreementError as exc:
            messages.error(request, f"{source.name} → {target.name}: {exc}")
        else:
            messages.success(request, f"Saved your labels for {source.name} → {target.name}.")
        return redirect("review:labels", slug=slug)
    mine_ = {(j.source_id, j.target_id): j for j in LabelJudgement.objects.filter(game=game, annotator=request.user)}
    pairs = []
    seen = set()
    for rel in game.relationships.select_related("source", "target").order_by("position", "id"):
        key = (rel.source_id, rel.target_id)
        if key not in seen:
            seen.add(key)
            pairs.append({"source": rel.source, "target": rel.target, "mine": mine_.get(key)})
    return render(request, "review/labels.html", _ctx(game, role, pairs=pairs, done=len(mine_), known=known_labels()))
