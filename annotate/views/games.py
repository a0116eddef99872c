"""Game list, creation, workspace, targets and members."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotate.forms import GameForm
from annotate.models import Character, Clue, Membership, Question, ReasoningChain, Relationship
from annotate.services import permissions
from annotate.services.progress import parse_targets, progress_for
from annotate.services.questions import KIND_LABELS
from annotate.services.spans import SpanError, parse_span_labels, set_span_labels
from annotate.services.spans import span_labels as game_span_labels
from casebook import audit
from casebook.interchange import ClueKind


@login_required
def game_list(request: HttpRequest) -> HttpResponse:
    games = list(permissions.visible_games(request.user).only("id", "slug", "title", "language", "origin", "targets", "title_note"))
    progress = progress_for(games)
    roles = {}
    if not request.user.is_superuser:
        roles = dict(Membership.objects.filter(user=request.user).values_list("game_id", "role"))
    rows = [{"game": g, "progress": progress[g.pk], "role": roles.get(g.pk, "manager")} for g in games]
    return render(request, "annotate/game_list.html", {"rows": rows, "sent_back": sent_back_to(request.user, games)})


def sent_back_to(user, games: list) -> list[dict]:
    """The user's rejected work with the reviewer's reason, so the home page says what to fix."""
    from django.urls import reverse

    ids = [g.pk for g in games]
    items = []
    for q in Question.objects.filter(game_id__in=ids, author=user, status="rejected").select_related("game")[:50]:
        items.append({"kind": "question", "title": q.stem, "game": q.game, "reason": q.reject_reason,
                      "url": reverse("annotate:question_edit", args=[q.game.slug, q.pk])})
    for r in Relationship.objects.filter(game_id__in=ids, author=user, status="rejected").select_related(
            "game", "source", "target")[:50]:
        items.append({"kind": "relationship", "title": f"{r.source.name} → {r.target.name}: {', '.join(r.labels)}",
                      "game": r.game, "reason": r.reject_reason,
                      "url": reverse("annotate:relationship_edit", args=[r.game.slug, r.pk])})
    for c in ReasoningChain.objects.filter(game_id__in=ids, author=user, status="rejected").select_related("game")[:50]:
        items.append({"kind": "chain", "title": c.title or c.goal, "game": c.game, "reason": c.reject_reason,
                      "url": reverse("annotate:chain_detail", args=[c.game.slug, c.pk])})
    return items


@login_required
def game_create(request: HttpRequest) -> HttpResponse:
    form = GameForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            game = form.save()
            Membership.objects.create(user=request.user, game=game, role=Membership.Role.MANAGER)
            audit.record(game, request.user, game, "create", None, audit.snapshot(game))
        messages.success(request, f"Created {game.title}. You are its manager.")
        return redirect("annotate:workspace", slug=game.slug)
    return render(request, "annotate/game_form.html", {"form": form})


@login_required
def workspace(request: HttpRequest, slug: str) -> HttpResponse:
    game, role = permissions.game_for(request.user, slug)
    characters = list(Character.objects.filter(game=game).only("id", "name", "playable", "is_victim", "is_murderer", "key_role", "aliases", "position"))
    clue_counts = dict(Clue.objects.filter(game=game).values_list("kind").annotate(n=Count("id")))
    counts = {
        "relationships": Relationship.objects.filter(game=game).count(),
        "chains": ReasoningChain.objects.filter(game=game).count(),
        "text_clues": clue_counts.get(ClueKind.TEXT, 0),
        "image_clues": clue_counts.get(ClueKind.IMAGE, 0),
    }
    status_counts = dict(Question.objects.filter(game=game).values_list("status").annotate(n=Count("id")))
    members_list = list(Membership.objects.filter(game=game).select_related("user").only("role", "user__username"))
    return render(request, "annotate/workspace.html", {
        "game": game, "role": role, "can_manage": permissions.has_role(role, permissions.MANAGER), "characters": characters,
        "progress": progress_for([game])[game.pk], "counts": counts, "status_counts": status_counts,
        "members": members_list, "kind_labels": KIND_LABELS.items(), "targets": game.targets or {},
        "roles": Membership.Role.choices, "tab": "workspace",
        "span_labels_text": "\n".join(f"{k} = {zh} / {en}" for k, (zh, en) in game_span_labels(game).items()),
    })


@login_required
@require_POST
def targets(request: HttpRequest, slug: str) -> HttpResponse:
    game, _ = permissions.game_for(request.user, slug, "targets")
    try:
        new = parse_targets(request.POST)
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("annotate:workspace", slug=slug)
    before = {"targets": game.targets}
    game.targets = new
    game.save(update_fields=["targets", "updated_at"])
    audit.record(game, request.user, game, "targets", before, {"targets": new})
    messages.success(request, "Targets saved.")
    return redirect("annotate:workspace", slug=slug)


@login_required
@require_POST
def members(request: HttpRequest, slug: str) -> HttpResponse:
    """Add, change or remove a member by username (managers only)."""
    game, _ = permissions.game_for(request.user, slug, "members")
    username = request.POST.get("username", "").strip()
    role = request.POST.get("role", "")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        messages.error(request, f"No user called “{username}”.")
    elif role != "remove" and role not in Membership.Role.values:
        messages.error(request, "Pick a role.")
    else:
        was_member = Membership.objects.filter(game=game, user=user).exists()
        try:
            permissions.set_membership(game, user, None if role == "remove" else role)
        except permissions.LastManager as exc:
            messages.error(request, str(exc))
        else:
            if role == "remove":
                if was_member:
                    audit.record(game, request.user, game, "member-removed", {"user": username}, None)
                messages.success(request, f"{username} is no longer a member.")
            else:
                audit.record(game, request.user, game, "member", None, {"user": username, "role": role})
                messages.success(request, f"{username} is now {role}.")
    return redirect("annotate:workspace", slug=slug)


@login_required
@require_POST
def span_labels(request: HttpRequest, slug: str) -> HttpResponse:
    """Set the game's evidence span labels (managers only), one ``value = 中文 / English`` a line."""
    game, _ = permissions.game_for(request.user, slug, "span_labels")
    try:
        labels = parse_span_labels(request.POST.get("labels", ""))
    except SpanError as exc:
        messages.error(request, str(exc))
        return redirect("annotate:workspace", slug=slug)
    set_span_labels(game, labels, user=request.user)
    messages.success(request, f"Span labels saved ({len(labels)}).")
    return redirect("annotate:workspace", slug=slug)
