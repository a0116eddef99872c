"""Characters editor: names, aliases, playable, victims and kills, key roles, goals, scripts."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotate.forms import CharacterFormSet, ScriptForm, int_or_none
from annotate.models import Character, Kill
from annotate.services import permissions, versions
from annotate.services.versions import VersionConflict
from annotate.views.common import answer_key_context, conflict_context
from casebook import audit

CHAR_FIELDS = ("id", "game_id", "name", "aliases", "playable", "is_victim", "is_murderer", "key_role", "goals", "position",
               "version")
FLAGS = ("playable", "is_victim", "is_murderer", "key_role")


@login_required
def characters(request: HttpRequest, slug: str) -> HttpResponse:
    game, role = permissions.game_for(request.user, slug)
    queryset = Character.objects.filter(game=game).only(*CHAR_FIELDS)
    action = request.POST.get("action") if request.method == "POST" else None
    if action:
        permissions.require(request.user, game, "ground_truth")
    formset = CharacterFormSet(request.POST if action == "characters" else None, queryset=queryset)
    conflict: dict = {}
    if action == "characters":
        if formset.is_valid():
            try:
                with transaction.atomic():
                    _save_characters(game, formset, request.user)
            except IntegrityError:
                messages.error(request, "Two characters cannot share a name.")
            except VersionConflict as exc:
                formset, conflict = _character_conflict(request, game, queryset, formset, exc.current)
                messages.error(request, f"Someone saved {exc.current.name} while you were editing; nothing was saved.")
            else:
                messages.success(request, "Characters saved.")
                return redirect("annotate:characters", slug=slug)
        else:
            messages.error(request, "Fix the marked fields; nothing was saved.")
    elif action in ("add_kill", "remove_kill"):
        _kill_action(request, game, action)
        return redirect("annotate:characters", slug=slug)
    kills = list(Kill.objects.filter(game=game).select_related("killer", "victim").only("id", "killer__name", "victim__name"))
    people = [(f.instance.pk, f.instance.name) for f in formset.forms if f.instance.pk]
    return render(request, "annotate/characters.html", {
        "game": game, "role": role, "formset": formset, "kills": kills, "people": people, "tab": "characters",
        **answer_key_context(request.user, game, role), **conflict,
    })


def _character_conflict(request: HttpRequest, game, queryset, formset, current: Character) -> tuple:
    """The conflict screen for one character row; the form keeps every row as typed, with that
    row's version moved to the saved one so a second save replaces it knowingly."""
    form = next(f for f in formset.forms if f.instance.pk == current.pk)
    data = form.cleaned_data
    pairs = [("name", current.name, data["name"]),
             ("aliases", ", ".join(current.aliases), ", ".join(a.strip() for a in data["aliases_text"].replace("，", ",")
                                                             .replace("、", ",").split(",") if a.strip())),
             ("goals", "\n".join(current.goals), "\n".join(g.strip() for g in data["goals_text"].splitlines() if g.strip()))]
    pairs += [(flag.replace("_", " "), getattr(current, flag), data[flag]) for flag in FLAGS]
    post = request.POST.copy()
    post[f"{form.prefix}-loaded_version"] = str(current.version)
    rebound = CharacterFormSet(post, queryset=queryset)
    return rebound, conflict_context(current, pairs, reverse("annotate:characters", args=[game.slug]))


def _save_characters(game, formset, user) -> None:
    """Save changed rows, one audit entry per change; new rows go last."""
    position = Character.objects.filter(game=game).count()
    for form in formset.forms:
        if not form.has_changed():
            continue
        before = audit.snapshot(form.instance) if form.instance.pk else None
        char = form.save(commit=False)
        if before is not None:
            versions.claim(char, form.cleaned_data.get("loaded_version"))
        if not char.pk:
            char.game = game
            char.position = position
            position += 1
        char.save()
        audit.record(game, user, char, "update" if before else "create", before, audit.snapshot(char))


def _kill_action(request: HttpRequest, game, action: str) -> None:
    if action == "remove_kill":
        kill = Kill.objects.filter(game=game, pk=int_or_none(request.POST.get("kill"))).first()
        if kill:
            before = audit.snapshot(kill)
            pk = kill.pk
            kill.delete()
            kill.pk = pk
            audit.record(game, request.user, kill, "delete", before, None)
        return
    ids = [int_or_none(request.POST.get("killer")), int_or_none(request.POST.get("victim"))]
    found = {c.pk: c for c in Character.objects.filter(game=game, pk__in=[i for i in ids if i])}
    if ids[0] not in found or ids[1] not in found:
        messages.error(request, "Pick the killer and the victim among the characters.")
        return
    killer, victim = found[ids[0]], found[ids[1]]
    if killer == victim:
        messages.error(request, "Killer and victim must be two different characters.")
        return
    kill, created = Kill.objects.get_or_create(game=game, killer=killer, victim=victim)
    if created:
        with transaction.atomic():
            Character.objects.filter(pk=victim.pk).update(is_victim=True)
            Character.objects.filter(pk=killer.pk).update(is_murderer=True)
            audit.record(game, request.user, kill, "create", None, audit.snapshot(kill))
        messages.success(request, f"{killer.name} killed {victim.name}.")


@login_required
def character_script(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Edit a role script by hand (games created in the browser have no ingested script)."""
    game, role = permissions.game_for(request.user, slug)
    char = get_object_or_404(Character, game=game, pk=pk)
    if request.method == "POST":
        permissions.require(request.user, game, "ground_truth")
    form = ScriptForm(request.POST or None, instance=char)
    conflict: dict = {}
    if request.method == "POST" and form.is_valid():
        if char.spans.exists() and "script" in form.changed_data:
            messages.error(request, "This script has evidence spans; editing it would move them. Nothing was saved.")
        else:
            before = audit.snapshot(Character.objects.get(pk=char.pk))
            try:
                with transaction.atomic():
                    versions.claim(char, form.cleaned_data.get("loaded_version"))
                    form.save()
                    audit.record(game, request.user, char, "update", before, audit.snapshot(char))
            except VersionConflict as exc:
                current = exc.current
                post = request.POST.copy()
                post["loaded_version"] = str(current.version)
                form = ScriptForm(post, instance=current)
                conflict = conflict_context(current, [
                    ("script", current.script, form.data.get("script", "")),
                    ("self intro", current.self_intro, form.data.get("self_intro", "")),
                ], reverse("annotate:character_script", args=[slug, current.pk]))
            else:
                messages.success(request, f"Script of {char.name} saved.")
                return redirect("annotate:characters", slug=slug)
    return render(request, "annotate/script_form.html", {"game": game, "role": role, "form": form, "char": char,
                                                         "tab": "characters",
                                                         **answer_key_context(request.user, game, role), **conflict})
