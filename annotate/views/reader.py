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
from annotate.services import permissions
from annotate.services import spans as span_service
from annotate.services.clues import ClueError, add_clue
from annotate.services.spans import SpanCited, SpanError, SpanNotFound, codepoint_to_utf16
from casebook.interchange import ClueKind, SpanDocument


@dataclass
class Pane:
    """One document shown in the reader."""

    ref: str  # "c<id>", "k<id>", "manual", "public"
    title: str
    document: str
    owner_id: int | None
    text: str
    spans: list[EvidenceSpan]


def _documents(game: Game, characters: list[Character], clues: list[Clue]) -> list[tuple[str, str]]:
    docs = [(f"c{c.pk}", f"{c.name} — script") for c in characters]
    docs += [("manual", "Truth manual"), ("public", "Public clues")]
    docs += [(f"k{c.pk}", f"Clue · {c.title or c.key}") for c in clues]
    return docs


def _pane(game: Game, ref: str, scripts: dict[int, Character], clues: dict[int, Clue],
          spans: list[EvidenceSpan]) -> Pane | None:
    if ref.startswith("c") and ref[1:].isdigit() and int(ref[1:]) in scripts:
        ch = scripts[int(ref[1:])]
        pane = Pane(ref, ch.name, SpanDocument.SCRIPT, ch.pk, ch.script, [])
        pane.spans = [s for s in spans if s.document == SpanDocument.SCRIPT and s.character_id == ch.pk]
    elif ref.startswith("k") and ref[1:].isdigit() and int(ref[1:]) in clues:
        clue = clues[int(ref[1:])]
        pane = Pane(ref, clue.title or clue.key, SpanDocument.CLUE, clue.pk, clue.text or clue.ocr_text, [])
        pane.spans = [s for s in spans if s.document == SpanDocument.CLUE and s.clue_id == clue.pk]
    elif ref == "manual":
        pane = Pane(ref, "Truth manual", SpanDocument.MANUAL, None, game.truth_text, [])
        pane.spans = [s for s in spans if s.document == SpanDocument.MANUAL]
    elif ref == "public":
        pane = Pane(ref, "Public clues", SpanDocument.PUBLIC, None, game.public_clue_text, [])
        pane.spans = [s for s in spans if s.document == SpanDocument.PUBLIC]
    else:
        return None
    return pane


def _utf16_offsets(text: str, points: set[int]) -> dict[int, int]:
    """Code-point offsets → browser (UTF-16) offsets, in one pass over the text."""
    wanted = sorted(p for p in points if 0 <= p <= len(text))
    out, units, previous = {}, 0, 0
    for point in wanted:
        units += codepoint_to_utf16(text[previous:point], point - previous)
        out[point], previous = units, point
    return out


def span_payload(span: EvidenceSpan, text: str, cited: list[span_service.Citation], pane: int,
                 utf16: dict[int, int] | None = None, role: str | None = None) -> dict:
    """What the reader's script needs to draw, list and edit one span (offsets in UTF-16 units);
    ``locked`` when approved work cites it and this role may only read it."""
    utf16 = utf16 or _utf16_offsets(text, {span.start, span.end})
    return {
        "id": span.pk, "pane": pane, "start": utf16.get(span.start, 0), "end": utf16.get(span.end, 0),
        "quote": span.quote, "label": span.label, "locked": span_service.locked_by(cited, role) is not None,
        "cited": [{"kind": c.kind, "title": c.title, "status": c.status, "url": reverse(c.url_name, args=(span.game.slug, *c.url_args))}
                  for c in cited],
    }


@login_required
def reader(request: HttpRequest, slug: str) -> HttpResponse:
    """Up to two documents side by side; queries do not depend on the text length or game size."""
    game, role = permissions.game_for(request.user, slug)
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
    panes = [p for r in refs if (p := _pane(game, r, scripts, clue_texts, spans))]
    cited = span_service.citations([s for p in panes for s in p.spans])
    payload = []
    for index, pane in enumerate(panes):
        utf16 = _utf16_offsets(pane.text, {o for s in pane.spans for o in (s.start, s.end)})
        payload += [span_payload(s, pane.text, cited[s.pk], index, utf16, role) for s in pane.spans]
    highlight = None
    a, _, b = request.GET.get("hl", "").partition("-")
    if panes and a.isdigit() and b.isdigit():  # a search hit, in code points of the left pane
        at = _utf16_offsets(panes[0].text, {int(a), int(b)})
        highlight = [at.get(int(a)), at.get(int(b))]
    labels = span_service.span_labels(game)
    return render(request, "annotate/reader.html", {
        "game": game, "role": role, "docs": docs, "panes": panes, "refs": refs, "tab": "reader",
        "span_labels": labels.items(),
        "reader_data": {
            "spans": payload, "highlight": highlight,
            "labels": {k: f"{zh} · {en}" if zh != en else en for k, (zh, en) in labels.items()},
            "urls": {"create": reverse("annotate:span_create", args=[game.slug]),
                     "span": reverse("annotate:span_edit", args=[game.slug, 0]),
                     "delete": reverse("annotate:span_delete", args=[game.slug, 0]),
                     "undo": reverse("annotate:span_undo", args=[game.slug, 0]),
                     "question": reverse("annotate:question_new", args=[game.slug]),
                     "relationship": reverse("annotate:relationships", args=[game.slug])},
        },
    })


def _json_body(request: HttpRequest) -> dict:
    try:
        data = json.loads(request.body or b"{}")
    except ValueError as exc:
        raise SpanError("The request could not be read.") from exc
    if not isinstance(data, dict):
        raise SpanError("The request could not be read.")
    return data


def _span_response(game: Game, span: EvidenceSpan, pane: int, role: str | None, status: int = 200) -> JsonResponse:
    span = span_service.get_span(game, span.pk)
    text = span_service.Target(span.document, character=span.character, clue=span.clue).text(game)
    cited = span_service.citations([span])[span.pk]
    return JsonResponse(span_payload(span, text, cited, pane, role=role), status=status)


def _pane_index(data: dict) -> int:
    pane = data.get("pane", 0)
    return pane if isinstance(pane, int) else 0


@login_required
@require_POST
def span_create(request: HttpRequest, slug: str) -> JsonResponse:
    """JSON in, JSON out: the reader posts browser (UTF-16) offsets and the selected text."""
    game, role = permissions.game_for(request.user, slug)
    try:
        data = _json_body(request)
        owner = data.get("owner_id")
        span = span_service.create_span(
            game, document=str(data.get("document", "")), owner_id=int_or_none(str(owner) if owner is not None else None),
            start=data.get("start"), end=data.get("end"), quote=str(data.get("quote", "")),
            unit=str(data.get("unit", "utf16")), label=str(data.get("label") or ""), user=request.user,
        )
    except SpanError as exc:
        return JsonResponse({"error": str(exc)}, status=404 if isinstance(exc, SpanNotFound) else 400)
    return _span_response(game, span, _pane_index(data), role)


@login_required
@require_POST
def span_edit(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Move a span's boundaries (browser offsets) and/or change its label."""
    game, role = permissions.game_for(request.user, slug)
    try:
        span_service.get_span(game, pk)  # an unknown id (or another game's) is a 404 whatever the body
        data = _json_body(request)
        span = span_service.update_span(
            game, pk, start=data.get("start"), end=data.get("end"),
            label=str(data["label"]) if "label" in data else None,
            unit=str(data.get("unit", "utf16")), user=request.user, role=role,
        )
    except SpanError as exc:
        return JsonResponse({"error": str(exc)}, status=404 if isinstance(exc, SpanNotFound) else 400)
    return _span_response(game, span, _pane_index(data), role)


@login_required
@require_POST
def span_delete(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Delete a span; a cited one answers 409 with what cites it until ``confirm`` is sent."""
    game, role = permissions.game_for(request.user, slug)
    try:
        span_service.get_span(game, pk)
        data = _json_body(request)
        entry = span_service.delete_span(game, pk, confirmed=bool(data.get("confirm")), user=request.user, role=role)
    except SpanCited as exc:
        return JsonResponse({"error": str(exc), "confirm": str(exc)}, status=409)
    except SpanError as exc:
        return JsonResponse({"error": str(exc)}, status=404 if isinstance(exc, SpanNotFound) else 400)
    return JsonResponse({"deleted": pk, "undo": entry.pk})


@login_required
@require_POST
def span_undo(request: HttpRequest, slug: str, entry: int) -> JsonResponse:
    """Undo a deletion (the id is the audit entry the delete answered with)."""
    game, role = permissions.game_for(request.user, slug)
    try:
        data = _json_body(request)
    except SpanError:
        data = {}  # only the pane index is read from the body
    try:
        span = span_service.undo_delete(game, entry, user=request.user)
    except SpanError as exc:
        return JsonResponse({"error": str(exc)}, status=404 if isinstance(exc, SpanNotFound) else 400)
    return _span_response(game, span, _pane_index(data), role, status=201)


@login_required
def search(request: HttpRequest, slug: str) -> HttpResponse:
    """Plain substring search over every text of the game (scripts, manual, public, clues)."""
    game, role = permissions.game_for(request.user, slug)
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
    game, role = permissions.game_for(request.user, slug)
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
