"""Relationships: list, SVG graph (click an edge to edit), editor with Conan label search."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.forms import ids, int_or_none
from annotate.models import Character, Relationship
from annotate.services import permissions, svg
from annotate.services import relationships as rel_service
from annotate.services.versions import VersionConflict
from annotate.views import common
from annotate.views.common import conflict_context, game_spans
from casebook.interchange import Status


@login_required
def relationships(request: HttpRequest, slug: str) -> HttpResponse:
    """The list page is the editor with no relationship selected."""
    return relationship_edit(request, slug, None)


@login_required
def relationship_edit(request: HttpRequest, slug: str, pk: int | None = None) -> HttpResponse:
    game, role = permissions.game_for(request.user, slug)
    rel = get_object_or_404(Relationship.objects.prefetch_related("evidence"), game=game, pk=pk) if pk else None
    error = None
    state = {
        "source": rel.source_id if rel else int_or_none(request.GET.get("source")),
        "target": rel.target_id if rel else int_or_none(request.GET.get("target")),
        "labels": rel.labels if rel else [], "note": rel.note if rel else "",
        "evidence": {e.pk for e in rel.evidence.all()} if rel else {int(i) for i in request.GET.getlist("evidence") if i.isdigit()},
        "status": rel.status if rel else Status.DRAFT, "version": rel.version if rel else 0,
    }
    conflict: dict = {}
    locked = rel is not None and not permissions.can(request.user, game, "edit", rel, role=role)
    key = f"relationship:{pk or 'new'}"
    status = 200
    if request.method == "POST":
        if not locked:
            permissions.require(request.user, game, "edit" if rel else "create", rel)
        state = {
            "source": int_or_none(request.POST.get("source")), "target": int_or_none(request.POST.get("target")),
            "labels": [lbl for lbl in request.POST.getlist("labels") if lbl.strip()], "note": request.POST.get("note", ""),
            "evidence": set(ids(request.POST.getlist("evidence"))),
            "status": rel.status if rel else Status.DRAFT,  # states move only through the review workflow
            "version": int_or_none(request.POST.get("version")) or 0,
        }
    if request.method == "POST" and locked:
        # Refused, but what the user typed is shown back and kept as their server draft.
        common.keep_refused(request.user, game, key, {"kept": _kept_fields(state)}, state["version"])
        error, status = common.locked_message(rel, "relationship", request.user), 403
    elif request.method == "POST":
        try:
            saved = rel_service.save_relationship(
                game, rel, source_id=state["source"] or 0, target_id=state["target"] or 0, labels=state["labels"],
                note=state["note"], evidence_ids=state["evidence"], status=state["status"], user=request.user,
                expected_version=state["version"],
            )
        except rel_service.RelationshipError as exc:
            error = str(exc)
        except VersionConflict as exc:
            conflict = _relationship_conflict(exc.current, state, slug)
            error = "Someone saved this relationship while you were editing it; see below."
            state["version"] = exc.current.version  # an explicit second save replaces theirs knowingly
        else:
            common.drop_kept(request.user, game, key)
            messages.success(request, "Relationship saved.")
            return redirect("annotate:relationship_edit", slug=slug, pk=saved.pk)
    people = list(Character.objects.filter(game=game).only("id", "name", "playable", "position", "aliases"))
    names = {p.pk: p.name for p in people}
    rels = list(Relationship.objects.filter(game=game).only("id", "source_id", "target_id", "labels", "status"))
    graph = svg.relationship_graph(
        [(p.pk, p.name, p.playable) for p in people],
        [(r.pk, r.source_id, r.target_id, ", ".join(r.labels)) for r in rels],
        lambda rid: reverse("annotate:relationship_edit", args=[slug, rid]),
        current=rel.pk if rel else None,
    )
    rows = [{"r": r, "source": names.get(r.source_id, "?"), "target": names.get(r.target_id, "?")} for r in rels]
    return render(request, "annotate/relationships.html", {
        "game": game, "role": role, "rel": rel, "state": state, "error": error, "people": people, "rows": rows,
        "graph": graph, "spans": list(game_spans(game)), "statuses": list(Status), "tab": "relationships",
        "vocabulary": rel_service.known_labels(), "locked": locked,
        "locked_message": common.locked_message(rel, "relationship", request.user) if locked else "", "kept": common.kept_text(request.user, game, key),
        **conflict,
    }, status=status)


def _kept_fields(state: dict) -> list[list[str]]:
    """A refused relationship save in words, for the kept-text box."""
    names = dict(Character.objects.filter(pk__in=[state["source"] or 0, state["target"] or 0]).values_list("pk", "name"))
    return [["A (source)", names.get(state["source"], "")], ["B (target)", names.get(state["target"], "")],
            ["labels", ", ".join(state["labels"])], ["note", state["note"]],
            ["evidence", ", ".join(map(str, sorted(state["evidence"])))]]


def _relationship_conflict(current: Relationship, mine: dict, slug: str) -> dict:
    names = dict(Character.objects.filter(game_id=current.game_id).values_list("pk", "name"))
    return conflict_context(current, [
        ("A (source)", current.source.name, names.get(mine["source"], "")),
        ("B (target)", current.target.name, names.get(mine["target"], "")),
        ("labels", ", ".join(current.labels), ", ".join(mine["labels"])),
        ("note", current.note, mine["note"].strip()),
        ("evidence", ", ".join(map(str, sorted(e.pk for e in current.evidence.all()))),
         ", ".join(map(str, sorted(mine["evidence"])))),
    ], reverse("annotate:relationship_edit", args=[slug, current.pk]))


@login_required
@require_POST
def relationship_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    game, _ = permissions.game_for(request.user, slug)
    rel = get_object_or_404(Relationship.objects.prefetch_related("evidence"), game=game, pk=pk)
    permissions.require(request.user, game, "edit", rel)
    rel_service.delete_relationship(rel, request.user)
    messages.success(request, "Relationship deleted.")
    return redirect("annotate:relationships", slug=slug)


@login_required
def label_search(request: HttpRequest, slug: str) -> JsonResponse:
    permissions.game_for(request.user, slug)
    return JsonResponse({"labels": rel_service.search_labels(request.GET.get("q", ""))})
