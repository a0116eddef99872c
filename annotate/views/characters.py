"""Characters editor: names, aliases, playable, victims and kills, key roles, goals, scripts."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotate.forms import CharacterFormSet, ScriptForm, int_or_none
from annotate.models import Character, Kill
from annotate.services import access, audit
from review import permissions as review_permissions

CHAR_FIELDS = ("id", "game_id", "name", "aliases", "playable", "is_victim", "is_murderer", "key_role", "goals", "position")


@login_required
def characters(request: HttpRequest, slug: str) -> HttpResponse:
    game, role = access.game_for(request.user, slug)
    queryset = Character.objects.filter(game=game).only(*CHAR_FIELDS)
    action = request.POST.get("action") if request.method == "POST" else None
    if action:
        review_permissions.require(request.user, game, "ground_truth")
    formset = CharacterFormSet(request.POST if action == "characters" else None, queryset=queryset)
    if action == "characters":
        if formset.is_valid():
            try:
                with transaction.atomic():
                    _save_characters(game, formset, request.user)
            except IntegrityError:
                messages.error(request, "Two characters cannot share a name.")
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
    })


def _save_characters(game, formset, user) -> None:
    """Save changed rows, one audit entry per change; new rows go last."""
    position = Character.objects.filter(game=game).count()
    for form in formset.forms:
        if not form.has_changed():
            continue
        before = audit.snapshot(form.instance) if form.instance.pk else None
        char = form.save(commit=False)
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
    game, role = access.game_for(request.user, slug)
    char = get_object_or_404(Character, game=game, pk=pk)
    if request.method == "POST":
        review_permissions.require(request.user, game, "ground_truth")
    form = ScriptForm(request.POST or None, instance=char)
    if request.method == "POST" and form.is_valid():
        if char.spans.exists() and "script" in form.changed_data:
            messages.error(request, "This script has evidence spans; editing it would move them. Nothing was saved.")
        else:
            before = audit.snapshot(char)
            form.save()
            audit.record(game, request.user, char, "update", before, audit.snapshot(char))
            messages.success(request, f"Script of {char.name} saved.")
            return redirect("annotate:characters", slug=slug)
    return render(request, "annotate/script_form.html", {"game": game, "role": role, "form": form, "char": char, "tab": "characters"})
