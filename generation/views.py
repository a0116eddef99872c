"""Thin views over the generation services: distractor jobs, review, relation MCQs, quality report.

Every page is for members of the game (or superusers) only; anyone else gets a 404, as in the
annotation app (:func:`annotate.services.permissions.game_for`).
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.models import Option, Question
from annotate.services import permissions
from annotate.services.permissions import game_for
from casebook.interchange import LETTERS, name_key
from casebook.llm import LLMSettings
from casebook.models import Job

from .distractors import FREE_TEXT_KINDS
from .jobs import JOB_KIND, start_distractor_job
from .quality import ERROR, INFO, WARNING, check_game
from .relations import create_relation_questions
from .review import ReviewError, generated_options, review_option


def _context(game, role, **extra):
    return {"game": game, "role": role, "tab": "generate", **extra}


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@login_required
@require_GET
def index(request: HttpRequest, slug: str) -> HttpResponse:
    """Multiple-choice questions with their option counts, the generate form and recent jobs."""
    game, role = game_for(request.user, slug)
    kind = request.GET.get("kind", "")
    questions = game.questions.exclude(kind__in=FREE_TEXT_KINDS).annotate(
        n_options=Count("options", filter=~Q(options__review="rejected")),
        n_pending=Count("options", filter=Q(options__review="pending")),
    ).select_related("perspective").order_by("position", "id")
    if kind:
        questions = questions.filter(kind=kind)
    settings = LLMSettings.from_settings()
    jobs = Job.objects.filter(game=game, kind=JOB_KIND)[:5]
    kinds = sorted(set(game.questions.exclude(kind__in=FREE_TEXT_KINDS).values_list("kind", flat=True)))
    page = Paginator(questions, 200).get_page(request.GET.get("page"))
    return render(request, "generation/index.html", _context(
        game, role, questions=page.object_list, page=page, kind=kind, kinds=kinds, llm=settings, jobs=jobs))


@login_required
@require_POST
def generate(request: HttpRequest, slug: str) -> HttpResponse:
    """Start a distractor job for the selected questions (one or many)."""
    game, _ = game_for(request.user, slug)
    try:
        only = request.POST.get("only")  # the per-row button: that question alone
        ids = [int(only)] if only else [int(i) for i in request.POST.getlist("question")]
        n = int(request.POST.get("n", 3))
    except ValueError:
        messages.error(request, "The question ids and the number of distractors must be whole numbers.")
        return redirect("generation:index", slug=game.slug)
    mode = request.POST.get("mode", "auto")
    if not ids:
        messages.error(request, "Select at least one question.")
        return redirect("generation:index", slug=game.slug)
    if not 1 <= n <= 4:
        messages.error(request, "Ask for 1 to 4 distractors per question.")
        return redirect("generation:index", slug=game.slug)
    if mode not in {"auto", "llm", "offline"}:
        messages.error(request, f"Unknown mode {mode!r}.")
        return redirect("generation:index", slug=game.slug)
    if mode == "llm" and not LLMSettings.from_settings().configured:
        messages.error(request, "No LLM endpoint is configured (OPENAI_API_KEY); choose the offline heuristics.")
        return redirect("generation:index", slug=game.slug)
    job = start_distractor_job(game, ids, n=n, mode=mode, user=request.user)
    return redirect("generation:job", slug=game.slug, pk=job.pk)


@login_required
@require_POST
def question_distractors(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """From the question editor: a distractor job for this one question (whoever may edit it)."""
    from annotate.services import permissions

    game, _ = game_for(request.user, slug)
    question = get_object_or_404(Question, game=game, pk=pk)
    permissions.require(request.user, game, "edit", question)
    mode = request.POST.get("mode", "auto")
    if mode not in {"auto", "llm", "offline"}:
        return JsonResponse({"error": f"Unknown mode {mode!r}."}, status=400)
    if mode == "llm" and not LLMSettings.from_settings().configured:
        return JsonResponse({"error": "No LLM endpoint is configured (OPENAI_API_KEY); use the offline heuristics."},
                            status=400)
    if question.kind in FREE_TEXT_KINDS:
        return JsonResponse({"error": "This kind is answered in free text; it has no options."}, status=400)
    job = start_distractor_job(game, [question.pk], n=3, mode=mode, user=request.user)
    return JsonResponse({"job": job.pk, "status_url": reverse("generation:job_status", args=[game.slug, job.pk])})


def _job_payload(job: Job, slug: str) -> dict:
    result = job.result or {}
    return {
        **job.progress_payload(),
        "written": len(result.get("written", {})), "failures": result.get("failures", []),
        "skipped": result.get("skipped", []), "origin": result.get("origin", ""), "model": result.get("model", ""),
        "review_url": reverse("generation:review", kwargs={"slug": slug}),
    }


@login_required
@require_GET
def job_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    game, role = game_for(request.user, slug)
    job = get_object_or_404(Job, pk=pk, game=game, kind=JOB_KIND)
    return render(request, "generation/job.html", _context(game, role, job=job, payload=_job_payload(job, game.slug)))


@login_required
@require_GET
def job_status(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Polled by the job page: state, progress and the failures so far."""
    game, _ = game_for(request.user, slug)
    job = get_object_or_404(Job, pk=pk, game=game, kind=JOB_KIND)
    return JsonResponse(_job_payload(job, game.slug))


@login_required
@require_GET
def review(request: HttpRequest, slug: str) -> HttpResponse:
    """Generated options grouped by question; pending ones first unless ?all=1."""
    game, role = game_for(request.user, slug)
    show_all = request.GET.get("all") == "1"
    options = generated_options(game)
    question_ids = list(options.filter(review="pending").values_list("question_id", flat=True).distinct()) \
        if not show_all else list(options.values_list("question_id", flat=True).distinct())
    questions = (Question.objects.filter(pk__in=question_ids).prefetch_related("options")
                 .select_related("perspective").order_by("position", "id")[:200])
    groups = []
    for q in questions:
        rows = []
        live = 0
        for o in q.options.all():
            letter = ""
            if o.review != "rejected":
                letter = LETTERS[live] if live < len(LETTERS) else "?"
                live += 1
            rows.append({"option": o, "letter": letter, "generated": o.origin in {"llm", "heuristic"}})
        groups.append({"question": q, "rows": rows})
    return render(request, "generation/review.html", _context(game, role, groups=groups, show_all=show_all))


@login_required
@require_POST
def review_action(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Accept / edit / reject one option; JSON for the keyboard UI, a redirect for plain forms."""
    game, _ = game_for(request.user, slug)
    option = get_object_or_404(Option.objects.select_related("question"), pk=pk, question__game=game)
    action = request.POST.get("action", "")
    try:
        permissions.require(request.user, game, "edit", option.question)  # approved questions change only via review
        version = request.POST.get("version", "")
        option = review_option(option, action, text=request.POST.get("text"), user=request.user,
                               expected_version=int(version) if version.isdigit() else 0)
    except (ReviewError, permissions.RoleError) as exc:
        if _wants_json(request):
            return JsonResponse({"ok": False, "error": str(exc)}, status=403 if isinstance(exc, permissions.RoleError) else 400)
        messages.error(request, str(exc))
        return redirect("generation:review", slug=game.slug)
    if _wants_json(request):
        question = Question.objects.get(pk=option.question_id)
        return JsonResponse({"ok": True, "id": option.pk, "review": option.review, "text": option.text,
                             "answer": question.answer, "version": question.version,
                             "option_version": option.version})
    return redirect(f"{reverse('generation:review', kwargs={'slug': game.slug})}#q{option.question_id}")


@login_required
@require_http_methods(["GET", "POST"])
def relations(request: HttpRequest, slug: str) -> HttpResponse:
    """Generate draft relation MCQs from the relationship graph."""
    game, role = game_for(request.user, slug)
    characters = list(game.characters.all())
    if request.method == "POST":
        try:
            seed = int(request.POST.get("seed") or 0)
        except ValueError:
            messages.error(request, "The seed must be a whole number.")
            return redirect("generation:relations", slug=game.slug)
        perspective = None
        if request.POST.get("perspective"):
            wanted = name_key(request.POST["perspective"])
            perspective = next((c for c in characters if name_key(c.name) == wanted or str(c.pk) == request.POST["perspective"]), None)
            if perspective is None:
                messages.error(request, "That perspective is not a character of this game.")
                return redirect("generation:relations", slug=game.slug)
        result = create_relation_questions(game, seed=seed, perspective=perspective, user=request.user)
        for message in result.messages:
            messages.warning(request, message)
        messages.success(request, f"{len(result.created)} draft relation question(s) created "
                                  f"({result.skipped} pair(s) already asked).")
        return redirect("generation:relations", slug=game.slug)
    recent = (game.questions.filter(provenance__generator="relations").prefetch_related("options")
              .select_related("perspective").order_by("-position")[:50])
    edges = game.relationships.count()
    return render(request, "generation/relations.html", _context(
        game, role, characters=[c for c in characters if c.playable], recent=recent, edges=edges))


@login_required
@require_GET
def quality(request: HttpRequest, slug: str) -> HttpResponse:
    """The quality report of the game's multiple-choice questions."""
    game, role = game_for(request.user, slug)
    kind = request.GET.get("kind", "")
    report = check_game(game, kinds=[kind] if kind else None)
    stems = dict(game.questions.values_list("pk", "stem"))
    per_question = [{"id": qid, "stem": stems.get(qid, ""), "findings": findings}
                    for qid, findings in report.per_question().items()]
    if request.GET.get("format") == "json":
        return JsonResponse({"game": game.slug, **report.to_dict()}, json_dumps_params={"ensure_ascii": False})
    kinds = sorted(set(game.questions.exclude(kind__in=FREE_TEXT_KINDS).values_list("kind", flat=True)))
    return render(request, "generation/quality.html", _context(
        game, role, report=report, per_set=report.per_set(), per_question=per_question, kind=kind, kinds=kinds,
        ERROR=ERROR, WARNING=WARNING, INFO=INFO))
