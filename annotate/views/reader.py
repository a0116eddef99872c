"""Script reader (two panes), search across the game's texts, clue gallery, span creation."""
from __future__ import annotations

import json
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.forms import int_or_none
from annotate.models import Character, Clue, EvidenceSpan, Game
from annotate.services import access
from annotate.services.clues import ClueError, add_clue
from annotate.services.spans import SpanError, create_span, segments, span_label
from casebook.interchange import ClueKind, SpanDocument


@dataclass
class Pane:
    """One document shown in the reader."""

    ref: str  # "c<id>", "k<id>", "manual", "public"
    title: str
    document: str
    owner_id: int | None
    text: str
    runs: list


def _documents(game: Game, characters: list[Character], clues: list[Clue]) -> list[tuple[str, str]]:
    docs = [(f"c{c.pk}", f"{c.name} — script") for c in characters]
    docs += [("manual", "Truth manual"), ("public", "Public clues")]
    docs += [(f"k{c.pk}", f"Clue · {c.title or c.key}") for c in clues]
    return docs


def _pane(game: Game, ref: str, scripts: dict[int, Character], clues: dict[int, Clue], spans: list[EvidenceSpan],
          highlight: tuple[int, int] | None) -> Pane | None:
    if ref.startswith("c") and ref[1:].isdigit() and int(ref[1:]) in scripts:
        ch = scripts[int(ref[1:])]
        pane = Pane(ref, ch.name, SpanDocument.SCRIPT, ch.pk, ch.script, [])
        mine = [s for s in spans if s.document == SpanDocument.SCRIPT and s.character_id == ch.pk]
    elif ref.startswith("k") and ref[1:].isdigit() and int(ref[1:]) in clues:
        clue = clues[int(ref[1:])]
        pane = Pane(ref, clue.title or clue.key, SpanDocument.CLUE, clue.pk, clue.text or clue.ocr_text, [])
        mine = [s for s in spans if s.document == SpanDocument.CLUE and s.clue_id == clue.pk]
    elif ref == "manual":
        pane = Pane(ref, "Truth manual", SpanDocument.MANUAL, None, game.truth_text, [])
        mine = [s for s in spans if s.document == SpanDocument.MANUAL]
    elif ref == "public":
        pane = Pane(ref, "Public clues", SpanDocument.PUBLIC, None, game.public_clue_text, [])
        mine = [s for s in spans if s.document == SpanDocument.PUBLIC]
    else:
        return None
    marks = list(mine)
    if highlight:
        marks.append(EvidenceSpan(pk=0, start=highlight[0], end=highlight[1]))
    pane.runs = segments(pane.text, marks)
    return pane


@login_required
def reader(request: HttpRequest, slug: str) -> HttpResponse:
    """Up to two documents side by side; queries do not depend on the text length or game size."""
    game, role = access.game_for(request.user, slug)
    characters = list(Character.objects.filter(game=game).only("id", "name", "position", "playable"))
    clues = list(Clue.objects.filter(game=game, kind=ClueKind.TEXT).only("id", "key", "title", "position"))
    docs = _documents(game, characters, clues)
    default = docs[0][0] if docs else "manual"
    refs = [request.GET.get("left") or default]
    if request.GET.get("right"):
        refs.append(request.GET["right"])
    char_ids = [int(r[1:]) for r in refs if r.startswith("c") and r[1:].isdigit()]
    clue_ids = [int(r[1:]) for r in refs if r.startswith("k") and r[1:].isdigit()]
    scripts = {c.pk: c for c in Character.objects.filter(game=game, pk__in=char_ids).only("id", "name", "script")} if char_ids else {}
    clue_texts = {c.pk: c for c in Clue.objects.filter(game=game, pk__in=clue_ids)} if clue_ids else {}
    spans = list(EvidenceSpan.objects.filter(game=game).filter(
        Q(character_id__in=char_ids) | Q(clue_id__in=clue_ids) | Q(document__in=[SpanDocument.MANUAL, SpanDocument.PUBLIC])
    ))
    hl = None
    raw_hl = request.GET.get("hl", "")
    if "-" in raw_hl:
        a, _, b = raw_hl.partition("-")
        if a.isdigit() and b.isdigit():
            hl = (int(a), int(b))
    panes = [p for i, r in enumerate(refs) if (p := _pane(game, r, scripts, clue_texts, spans, hl if i == 0 else None))]
    recent = sorted(spans, key=lambda s: -s.pk)[:15]
    labels = {s.pk: f"{s.document} [{s.start}:{s.end}] “{s.quote[:30]}”" for s in recent}
    return render(request, "annotate/reader.html", {
        "game": game, "role": role, "docs": docs, "panes": panes, "refs": refs, "tab": "reader",
        "recent": [(s, labels[s.pk]) for s in recent],
        "span_url": reverse("annotate:span_create", args=[game.slug]),
    })


@login_required
@require_POST
def span_create(request: HttpRequest, slug: str) -> JsonResponse:
    """JSON in, JSON out: the reader posts browser (UTF-16) offsets and the selected text."""
    game, _ = access.game_for(request.user, slug)
    try:
        data = json.loads(request.body or b"{}")
        owner = data.get("owner_id")
        span = create_span(
            game, document=str(data.get("document", "")), owner_id=int(owner) if owner not in (None, "") else None,
            start=data.get("start"), end=data.get("end"), quote=str(data.get("quote", "")),
            unit=str(data.get("unit", "utf16")), user=request.user,
        )
    except (ValueError, TypeError) as exc:  # SpanError is a ValueError; so is bad JSON
        message = str(exc) if isinstance(exc, SpanError) else "The request could not be read."
        return JsonResponse({"error": message}, status=400)
    span = EvidenceSpan.objects.select_related("character", "clue").get(pk=span.pk)
    return JsonResponse({"id": span.pk, "start": span.start, "end": span.end, "quote": span.quote, "label": span_label(span)})


@login_required
def search(request: HttpRequest, slug: str) -> HttpResponse:
    """Plain substring search over every text of the game (scripts, manual, public, clues)."""
    game, role = access.game_for(request.user, slug)
    query = request.GET.get("q", "").strip()
    hits = []
    if query:
        texts = [(f"c{c.pk}", c.name, c.script) for c in Character.objects.filter(game=game).only("id", "name", "script")]
        texts += [("manual", "Truth manual", game.truth_text), ("public", "Public clues", game.public_clue_text)]
        texts += [(f"k{c.pk}", c.title or c.key, c.text or c.ocr_text)
                  for c in Clue.objects.filter(game=game).only("id", "key", "title", "text", "ocr_text")]
        for ref, title, text in texts:
            hay, needle = text.lower(), query.lower()
            if len(hay) != len(text):  # lowering changed the length: offsets would drift
                hay, needle = text, query
            start = hay.find(needle)
            while start != -1 and len(hits) < 200:
                end = start + len(query)
                hits.append({"ref": ref, "title": title, "start": start, "end": end, "before": text[max(0, start - 40):start],
                             "match": text[start:end], "after": text[end:end + 40], "clue": ref.startswith("k")})
                start = hay.find(needle, end)
    return render(request, "annotate/search.html", {"game": game, "role": role, "q": query, "hits": hits, "tab": "search"})


@login_required
def clue_gallery(request: HttpRequest, slug: str) -> HttpResponse:
    """Image gallery (zoom, OCR text beside) and text clues; POST adds a clue."""
    game, role = access.game_for(request.user, slug)
    if request.method == "POST":
        upload = request.FILES.get("image")
        try:
            clue = add_clue(
                game, title=request.POST.get("title", ""), text=request.POST.get("text", ""),
                owner_id=int_or_none(request.POST.get("owner")), image_kind=request.POST.get("image_kind", ""),
                filename=upload.name if upload else "", data=upload.read() if upload else None, user=request.user,
            )
        except ClueError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Added clue {clue.key}.")
            return redirect("annotate:clues", slug=slug)
    clues = list(Clue.objects.filter(game=game).select_related("owner").only(
        "id", "key", "kind", "title", "text", "image", "image_kind", "ocr_text", "owner__name", "filename"))
    images = [c for c in clues if c.kind == ClueKind.IMAGE]
    texts = [c for c in clues if c.kind != ClueKind.IMAGE]
    owners = list(Character.objects.filter(game=game).only("id", "name", "position"))
    return render(request, "annotate/clues.html", {
        "game": game, "role": role, "images": images, "texts": texts, "owners": owners, "tab": "clues",
    })
