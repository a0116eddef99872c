"""Question list and the one editor for every kind, with drafts and the version check."""
from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.forms import int_or_none, question_input
from annotate.models import Character, Clue, Draft, Option, Question
from annotate.services import permissions
from annotate.services import states as review_states
from annotate.services.chains import game_nodes, level_label
from annotate.services.questions import (
    FREE_TEXT_KINDS,
    IMAGE_KINDS,
    KIND_LABELS,
    NOT_EXPORTED,
    SINGLE_ANSWER_KINDS,
    QuestionError,
    VersionConflict,
    check_ready_for_review,
    delete_question,
    effective_weight,
    lettered_options,
    save_question,
)
from annotate.views.common import conflict_context, game_spans, locked_message
from casebook.interchange import DEFAULT_WEIGHTS, LETTERS, SUB_TYPES, ClueKind, QuestionKind, Status

PAGE_SIZE = 50  # a screenful or two; keeps the page under ~100 ms at 20 clients on 2 cores


@login_required
def question_list(request: HttpRequest, slug: str) -> HttpResponse:
    """Filter by kind/status/text; paginated so the page costs the same for 20 or 20,000 questions."""
    game, role = permissions.game_for(request.user, slug)
    qs = Question.objects.filter(game=game)
    kind, status, text = request.GET.get("kind", ""), request.GET.get("status", ""), request.GET.get("q", "").strip()
    if kind:
        qs = qs.filter(kind=kind)
    if status:
        qs = qs.filter(status=status)
    if text:
        qs = qs.filter(stem__icontains=text)
    counts = dict(Question.objects.filter(game=game).values_list("kind").annotate(n=Count("id")))
    page = Paginator(
        qs.select_related("perspective").only(
            "id", "kind", "sub_type", "stem", "answer", "status", "weight", "version", "position", "perspective__name"
        ).order_by("position", "id"),
        PAGE_SIZE,
    ).get_page(request.GET.get("page"))
    rows = list(page.object_list)
    options: dict[int, list[Option]] = {}
    for o in (Option.objects.filter(question_id__in=[q.pk for q in rows]).exclude(review__in=NOT_EXPORTED)
              .only("question_id", "text", "is_correct", "position")):
        options.setdefault(o.question_id, []).append(o)
    items = [{"q": q, "options": options.get(q.pk, []), "weight": effective_weight(q), "label": KIND_LABELS.get(q.kind, q.kind)}
             for q in rows]
    kinds = [(k, KIND_LABELS[k], counts.get(k, 0)) for k in QuestionKind]
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "annotate/question_list.html", {
        "game": game, "role": role, "page": page, "items": items, "kinds": kinds, "kind": kind, "status": status,
        "q": text, "statuses": list(Status), "querystring": query.urlencode(), "tab": "questions",
    })


def _state_from_question(q: Question | None, request: HttpRequest) -> dict:
    if q is None:
        kind = request.GET.get("kind") or QuestionKind.REASONING
        return {
            "kind": kind, "stem": "", "sub_type": "", "answer": "", "premises": "", "multi": False, "weight": "",
            "perspective": int_or_none(request.GET.get("perspective")), "image_clue": int_or_none(request.GET.get("image_clue")),
            "chain_node": int_or_none(request.GET.get("chain_node")), "status": Status.DRAFT, "version": 0,
            "evidence": {int(i) for i in request.GET.getlist("evidence") if i.isdigit()},
            "options": [(i, "", False) for i in range(4)],
        }
    return {
        "kind": q.kind, "stem": q.stem, "sub_type": q.sub_type, "answer": q.answer if q.kind in FREE_TEXT_KINDS else "",
        "premises": "\n".join((q.extra or {}).get("premises", [])), "multi": q.multi,
        "weight": "" if q.weight is None else q.weight, "perspective": q.perspective_id, "image_clue": q.image_clue_id,
        "chain_node": q.chain_node_id, "status": q.status, "version": q.version,
        "evidence": {e.pk for e in q.evidence.all()},
        "options": [(i, o.text, o.is_correct) for i, (_, o) in enumerate(lettered_options(list(q.options.all()))[0])],
    }


def _state_from_post(post) -> dict:
    rows = post.getlist("option_row")
    return {
        "kind": post.get("kind", ""), "stem": post.get("stem", ""), "sub_type": post.get("sub_type", ""),
        "answer": post.get("answer", ""), "premises": post.get("premises", ""), "multi": post.get("multi") == "on",
        "weight": post.get("weight", ""), "perspective": int_or_none(post.get("perspective")),
        "image_clue": int_or_none(post.get("image_clue")), "chain_node": int_or_none(post.get("chain_node")),
        "status": post.get("status", Status.DRAFT), "version": int_or_none(post.get("version")) or 0,
        "evidence": {int(i) for i in post.getlist("evidence") if i.isdigit()},
        "options": [(r, post.get(f"option_text_{r}", ""), post.get(f"option_correct_{r}") == "on") for r in rows],
    }


@login_required
def question_edit(request: HttpRequest, slug: str, pk: int | None = None) -> HttpResponse:
    game, role = permissions.game_for(request.user, slug)
    question = None
    if pk is not None:
        question = get_object_or_404(Question.objects.prefetch_related("options", "evidence"), game=game, pk=pk)
    conflict: dict = {}
    error = None
    locked = question is not None and not permissions.can(request.user, game, "edit", question, role=role)
    status = 200
    if request.method == "POST" and locked:
        # Refused, but nothing the user typed is lost: the form comes back with their text, which
        # is also kept as their server draft (the browser's copy is cleared on submit).
        state = _state_from_post(request.POST)
        state["status"] = question.status
        Draft.objects.update_or_create(user=request.user, game=game, key=f"question:{pk}",
                                       defaults={"data": _draft_from_post(request.POST, state),
                                                 "base_version": state["version"]})
        error = locked_message(question, "question", request.user)
        status = 403
    elif request.method == "POST":
        permissions.require(request.user, game, "edit" if question is not None else "create", question)
        state = _state_from_post(request.POST)
        # The state only moves through the review workflow (annotate.services.states), never through this form.
        state["status"] = question.status if question is not None else Status.DRAFT
        try:
            data = question_input(request.POST)
            data.status = state["status"]
            if request.POST.get("then") == "submit":
                check_ready_for_review(data)
            with transaction.atomic():
                saved = save_question(game, question, data, expected_version=state["version"], user=request.user)
                if request.POST.get("then") == "submit":
                    saved = review_states.transition(saved, "submit", request.user)
        except (QuestionError, review_states.TransitionError) as exc:
            error = str(exc)
        except VersionConflict as exc:
            conflict = _question_conflict(exc.current, state, slug)
            error = ("Someone saved this question while you were editing it. Your text is kept in the form; the "
                     "saved version is shown below with the differences marked.")
            state["version"] = exc.current.version  # an explicit second save replaces theirs knowingly
        else:
            Draft.objects.filter(user=request.user, game=game, key=f"question:{pk or 'new'}").delete()
            messages.success(request, f"Saved question {saved.pk} (version {saved.version}).")
            if request.POST.get("then") == "new":
                return redirect(reverse("annotate:question_new", args=[slug]) + f"?kind={saved.kind}")
            return redirect("annotate:question_edit", slug=slug, pk=saved.pk)
    else:
        state = _state_from_question(question, request)
    characters = list(Character.objects.filter(game=game).only("id", "name", "position"))
    image_clues = list(Clue.objects.filter(game=game, kind=ClueKind.IMAGE).only("id", "key", "title", "image", "image_kind"))
    nodes = [(n, level_label(lv)) for n, lv in game_nodes(game)]
    spans = list(game_spans(game))
    draft = Draft.objects.filter(user=request.user, game=game, key=f"question:{pk or 'new'}").only("data", "base_version", "updated_at").first()
    return render(request, "annotate/question_form.html", {
        "game": game, "role": role, "question": question, "state": state, "error": error, **conflict,
        "locked": locked, "locked_message": locked_message(question, "question", request.user) if locked else "",
        "kinds": [(k, KIND_LABELS[k]) for k in QuestionKind], "characters": characters, "image_clues": image_clues,
        "nodes": nodes, "spans": spans, "statuses": list(Status), "letters": LETTERS,
        "held_back": lettered_options(list(question.options.all()))[1] if question is not None else [],
        "config": json.dumps({
            "subTypes": {str(k): list(v) for k, v in SUB_TYPES.items()},
            "freeText": sorted(FREE_TEXT_KINDS), "single": sorted(SINGLE_ANSWER_KINDS), "image": sorted(IMAGE_KINDS),
            "weights": {str(k): v for k, v in DEFAULT_WEIGHTS.items()},
            "draftUrl": reverse("annotate:draft", args=[slug, f"question:{pk or 'new'}"]),
            "draftKey": f"casebook:{slug}:question:{pk or 'new'}", "version": state["version"],
            "serverDraft": draft.data if draft else None, "serverDraftVersion": draft.base_version if draft else None,
        }, ensure_ascii=False),
        "tab": "questions",
    }, status=status)


def _draft_from_post(post, state: dict) -> dict:
    """The posted form in the shape ``question.js`` keeps drafts in, so “Restore it” brings it back."""
    skip = {"csrfmiddlewaretoken", "version", "evidence", "option_row"}
    fields = {k: v for k, v in post.items() if k not in skip and not k.startswith("option_")}
    return {"fields": fields, "options": [[text, correct] for _, text, correct in state["options"]],
            "evidence": sorted(str(e) for e in state["evidence"])}


def _question_conflict(current: Question, mine: dict, slug: str) -> dict:
    """The one conflict screen for a question: saved fields beside the editor's, options with letters."""
    def options(rows: list[tuple[str, bool]]) -> str:
        return "\n".join(f"{letter}. {text}{' ✓' if correct else ''}"
                         for letter, (text, correct) in zip(LETTERS, rows, strict=False))

    saved_options = [(o.text, o.is_correct) for _, o in lettered_options(list(current.options.all()))[0]]
    my_options = [(text.strip(), correct) for _, text, correct in mine["options"] if text.strip()]
    return conflict_context(current, [
        ("kind", current.kind, mine["kind"]), ("stem", current.stem, mine["stem"].strip()),
        ("options", options(saved_options), options(my_options) if mine["kind"] not in FREE_TEXT_KINDS else ""),
        ("answer", current.answer if current.kind in FREE_TEXT_KINDS else "",
         mine["answer"].strip() if mine["kind"] in FREE_TEXT_KINDS else ""),
        ("evidence", ", ".join(map(str, sorted(e.pk for e in current.evidence.all()))),
         ", ".join(map(str, sorted(mine["evidence"])))),
        ("asked of", current.perspective_id, mine["perspective"]), ("chain node", current.chain_node_id, mine["chain_node"]),
        ("image clue", current.image_clue_id, mine["image_clue"]),
    ], reverse("annotate:question_edit", args=[slug, current.pk]))


@login_required
@require_POST
def question_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    game, _ = permissions.game_for(request.user, slug)
    question = get_object_or_404(Question.objects.prefetch_related("options", "evidence"), game=game, pk=pk)
    permissions.require(request.user, game, "edit", question)
    delete_question(question, request.user)
    messages.success(request, f"Deleted question {pk}.")
    return redirect("annotate:question_list", slug=slug)


@login_required
def draft(request: HttpRequest, slug: str, key: str) -> JsonResponse:
    """GET the server copy of a draft, POST (JSON) to store it, DELETE to drop it."""
    game, _ = permissions.game_for(request.user, slug)
    if request.method == "POST":
        try:
            payload = json.loads(request.body or b"{}")
        except ValueError:
            return JsonResponse({"error": "The draft could not be read."}, status=400)
        if not isinstance(payload, dict) or len(request.body) > 1_000_000:
            return JsonResponse({"error": "Drafts are JSON objects under 1 MB."}, status=400)
        Draft.objects.update_or_create(
            user=request.user, game=game, key=key[:100],
            defaults={"data": payload.get("data", {}), "base_version": int_or_none(str(payload.get("version", "")))},
        )
        return JsonResponse({"saved": True})
    if request.method == "DELETE":
        Draft.objects.filter(user=request.user, game=game, key=key).delete()
        return JsonResponse({"deleted": True})
    found = Draft.objects.filter(user=request.user, game=game, key=key).first()
    return JsonResponse({"data": found.data if found else None, "version": found.base_version if found else None})
