"""Reasoning chains: list, chain page with SVG drawing and node editor, key statements."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.forms import ChainForm, ids, int_or_none
from annotate.models import ChainNode, Character, Clue, KeyStatement, ReasoningChain
from annotate.services import permissions, svg, versions
from annotate.services.chains import ChainError, chain_graph, delete_node, level_label, save_node
from annotate.services.versions import VersionConflict
from annotate.views.common import (
    answer_key_context,
    conflict_context,
    drop_kept,
    game_spans,
    keep_refused,
    kept_text,
    locked_message,
)
from casebook import audit
from casebook.interchange import ClueKind, NodeKind, Status


@login_required
def chain_list(request: HttpRequest, slug: str) -> HttpResponse:
    game, role = permissions.game_for(request.user, slug)
    form = ChainForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        chain = form.save(commit=False)
        chain.game, chain.author = game, request.user
        chain.position = ReasoningChain.objects.filter(game=game).count()
        chain.save()
        audit.record(game, request.user, chain, "create", None, audit.snapshot(chain))
        return redirect("annotate:chain_detail", slug=slug, pk=chain.pk)
    chains = list(ReasoningChain.objects.filter(game=game).prefetch_related("nodes"))
    statements = list(KeyStatement.objects.filter(game=game).select_related("character", "node"))
    key_roles = list(Character.objects.filter(game=game, key_role=True).only("id", "name"))
    nodes = [n for c in chains for n in c.nodes.all()]
    return render(request, "annotate/chain_list.html", {
        "game": game, "role": role, "chains": chains, "form": form, "statements": statements, "key_roles": key_roles,
        "nodes": nodes, "tab": "chains", **answer_key_context(request.user, game, role),
    })


@login_required
def chain_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    return node_edit(request, slug, pk, None)


@login_required
def node_edit(request: HttpRequest, slug: str, pk: int, node_pk: int | None = None) -> HttpResponse:
    game, role = permissions.game_for(request.user, slug)
    chain = get_object_or_404(ReasoningChain, game=game, pk=pk)
    chain.game = game
    nodes, parents, levels = chain_graph(chain)
    by_id = {n.pk: n for n in nodes}
    node = by_id.get(node_pk) if node_pk else None
    if node_pk and node is None:
        return redirect("annotate:chain_detail", slug=slug, pk=pk)
    error = None
    state = {
        "kind": node.kind if node else request.GET.get("kind", NodeKind.DIRECT),
        "text": node.text if node else "", "knowledge": node.knowledge if node else "",
        "parents": set(parents.get(node.pk, [])) if node else set(),
        "evidence": {e.pk for e in node.evidence.all()} if node else {int(i) for i in request.GET.getlist("evidence") if i.isdigit()},
        "image_clue": node.image_clue_id if node else None, "version": node.version if node else 0,
    }
    chain_form, chain_conflict = ChainForm(instance=chain), {}
    # Nodes belong to the chain: who may not edit the chain (an approved one, someone else's) sees it read-only.
    locked = not permissions.can(request.user, game, "edit", chain, role=role)
    chain_key, node_key = f"reasoningchain:{chain.pk}", f"chainnode:{chain.pk}:{node_pk or 'new'}"
    status = 200
    if request.method == "POST" and locked:
        # Refused, but nothing typed is lost: shown back and kept as the user's server draft.
        if request.POST.get("action") == "chain":
            chain_form = ChainForm(request.POST, instance=ReasoningChain(game=game))
            keep_refused(request.user, game, chain_key, {"kept": [["title", request.POST.get("title", "")],
                                                                 ["goal", request.POST.get("goal", "")]]},
                         int_or_none(request.POST.get("version")))
        elif request.POST.get("action") != "delete":
            state = _node_state(request.POST)
            keep_refused(request.user, game, node_key, {"kept": _kept_node(state, by_id)}, state["version"])
        error, status = locked_message(chain, "chain", request.user), 403
    elif request.method == "POST" and request.POST.get("action") == "chain":
        chain_form, chain_conflict = _edit_chain(request, game, chain)
        if chain_form is None:
            drop_kept(request.user, game, chain_key)
            return redirect("annotate:chain_detail", slug=game.slug, pk=chain.pk)
    if request.method == "POST" and not locked and request.POST.get("action") != "chain":
        permissions.require(request.user, game, "edit", chain)  # nodes belong to the chain's author
        if request.POST.get("action") == "delete" and node:
            delete_node(node, request.user)
            messages.success(request, f"Deleted node {node.key}.")
            return redirect("annotate:chain_detail", slug=slug, pk=pk)
        state = _node_state(request.POST)
        try:
            saved = save_node(chain, node, kind=state["kind"], text=state["text"], parent_ids=state["parents"],
                              span_ids=state["evidence"], image_clue_id=state["image_clue"], knowledge=state["knowledge"],
                              user=request.user, expected_version=state["version"] if node else None)
        except ChainError as exc:
            error = str(exc)
        except VersionConflict as exc:
            current, keys = exc.current, {n.pk: n.key for n in nodes}
            chain_conflict = {**conflict_context(current, [
                ("kind", current.kind, state["kind"]), ("statement", current.text, state["text"].strip()),
                ("knowledge", current.knowledge, state["knowledge"].strip()),
                ("parents", ", ".join(sorted(p.key for p in current.parents.all())),
                 ", ".join(sorted(keys.get(p, str(p)) for p in state["parents"]))),
                ("evidence", ", ".join(map(str, sorted(e.pk for e in current.evidence.all()))),
                 ", ".join(map(str, sorted(state["evidence"])))),
            ], reverse("annotate:node_edit", args=[slug, pk, current.pk])), "conflict_on": "node"}
            error = f"Someone saved node {current.key} while you were editing it; see below."
            state["version"] = current.version  # an explicit second save replaces theirs knowingly
        else:
            drop_kept(request.user, game, node_key)
            messages.success(request, f"Saved node {saved.key}.")
            return redirect("annotate:chain_detail", slug=slug, pk=pk)
    drawing = svg.chain_graph(
        [(n.pk, n.key, n.kind, n.text) for n in nodes], parents, levels,
        lambda nid: reverse("annotate:node_edit", args=[slug, pk, nid]),
    )
    rows = [{"n": n, "level": level_label(levels.get(n.pk)), "parents": [by_id[p].key for p in parents.get(n.pk, []) if p in by_id]}
            for n in nodes]
    return render(request, "annotate/chain_detail.html", {
        "game": game, "role": role, "chain": chain, "rows": rows, "drawing": drawing, "node": node, "state": state,
        "error": error, "candidates": [n for n in nodes if not node or n.pk != node.pk], "spans": list(game_spans(game)),
        "image_clues": list(Clue.objects.filter(game=game, kind=ClueKind.IMAGE).only("id", "key", "title")),
        "kinds": list(NodeKind), "tab": "chains", "chain_form": chain_form, "statuses": list(Status),
        "chain_version": chain_conflict["conflict"].version if chain_conflict.get("conflict_on") == "chain" else chain.version,
        "locked": locked, "locked_message": locked_message(chain, "chain", request.user) if locked else "",
        "kept_items": [k for k in (kept_text(request.user, game, chain_key), kept_text(request.user, game, node_key)) if k],
        **chain_conflict,
    }, status=status)


def _node_state(post) -> dict:
    return {
        "kind": post.get("kind", ""), "text": post.get("text", ""), "knowledge": post.get("knowledge", ""),
        "parents": set(ids(post.getlist("parents"))), "evidence": set(ids(post.getlist("evidence"))),
        "image_clue": int_or_none(post.get("image_clue")), "version": int_or_none(post.get("version")) or 0,
    }


def _kept_node(state: dict, by_id: dict) -> list[list[str]]:
    """A refused node save in words, for the kept-text box."""
    return [["kind", state["kind"]], ["statement", state["text"]], ["knowledge", state["knowledge"]],
            ["parents", ", ".join(sorted(by_id[p].key for p in state["parents"] if p in by_id))],
            ["evidence", ", ".join(map(str, sorted(state["evidence"])))]]


def _edit_chain(request: HttpRequest, game, chain: ReasoningChain) -> tuple[ChainForm | None, dict]:
    """Title and goal of the chain itself, under the version check; its state moves only through
    the review workflow. ``(None, {})`` once saved, else the bound form (the user's text kept) and
    the conflict screen's context when someone saved in between."""
    permissions.require(request.user, game, "edit", chain)
    before = audit.snapshot(chain)
    form = ChainForm(request.POST, instance=chain)
    if not form.is_valid():
        messages.error(request, "Pick a goal.")
        return form, {}
    try:
        with transaction.atomic():
            versions.claim(chain, int_or_none(request.POST.get("version")))
            chain = form.save()
            audit.record(game, request.user, chain, "update", before, audit.snapshot(chain))
    except VersionConflict as exc:
        current = exc.current
        return form, {**conflict_context(current, [
            ("title", current.title, form.cleaned_data["title"]), ("goal", current.goal, form.cleaned_data["goal"]),
        ], reverse("annotate:chain_detail", args=[game.slug, current.pk])), "conflict_on": "chain"}
    messages.success(request, "Chain saved.")
    return None, {}


@login_required
@require_POST
def key_statements(request: HttpRequest, slug: str) -> HttpResponse:
    """Add or remove a key statement (WhodunitBench SPC ground truth) owned by a key role."""
    game, _ = permissions.game_for(request.user, slug)
    permissions.require(request.user, game, "ground_truth")
    if request.POST.get("action") == "delete":
        item = KeyStatement.objects.filter(game=game, pk=int_or_none(request.POST.get("id"))).first()
        if item:
            before, item_pk = audit.snapshot(item), item.pk
            item.delete()
            item.pk = item_pk
            audit.record(game, request.user, item, "delete", before, None)
        return redirect("annotate:chain_list", slug=slug)
    owner = Character.objects.filter(game=game, pk=int_or_none(request.POST.get("character")), key_role=True).first()
    text = request.POST.get("text", "").strip()
    node = ChainNode.objects.filter(chain__game=game, pk=int_or_none(request.POST.get("node"))).first()
    if owner is None or not text:
        messages.error(request, "A key statement needs a key role (mark one on the Characters page) and its text.")
        return redirect("annotate:chain_list", slug=slug)
    with transaction.atomic():
        item = KeyStatement.objects.create(game=game, owner_name=owner.name, character=owner, text=text, node=node,
                                           position=KeyStatement.objects.filter(game=game).count())
        audit.record(game, request.user, item, "create", None, audit.snapshot(item))
    messages.success(request, f"Key statement added for {owner.name}.")
    return redirect("annotate:chain_list", slug=slug)
