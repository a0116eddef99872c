"""Distractor generation for one question: pick the mode, build the request, ask, clean, store.

Stages, each usable alone:
- :func:`game_pools` — the offline candidate pools of a game (names, places, times, methods, graph);
- :func:`build_request` — a plain :class:`~generation.prompts.DistractorRequest` for a question
  (stem, correct answer, kind, language, options present, context from the perspective's script
  and the evidence spans);
- :func:`ask_llm` / :func:`ask_offline` — the wrong options, cleaned (no blanks, no near-duplicates
  of the answer or of each other);
- :func:`store_options` — append them as ``Option`` rows (origin llm/heuristic, review pending),
  in one transaction that also bumps the question's version and clears ``raw``.

``ask_llm`` touches no database, so batches can run it in threads while the job thread writes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F

from annotate.models import Game, Option, Question
from annotate.services.questions import edited_provenance
from annotate.services.questions import snapshot as question_snapshot
from casebook import audit
from casebook.interchange import LETTERS, OptionOrigin, OptionReview, QuestionKind
from casebook.llm import LLMClient, LLMError

from .offline import OfflineError, Pools, build_pools, near_duplicate, offline_distractors
from .prompts import DistractorRequest, build_messages, context_excerpts, distractor_schema

# Kinds answered in free text: no options, nothing to generate.
FREE_TEXT_KINDS = {QuestionKind.OPEN_ENDED, QuestionKind.FACTUAL, QuestionKind.INFERENTIAL}
MAX_OPTIONS = 5  # WellPlay's CSV holds options a–e; WhodunitBench uses 4


class GenerationError(ValueError):
    """This question cannot get distractors; the message says why (shown per question)."""


@dataclass
class Outcome:
    question_id: int
    options: list[Option] = field(default_factory=list)
    origin: str = ""
    model: str = ""
    skipped: str = ""  # reason nothing was needed


def game_pools(game: Game) -> Pools:
    """Offline pools from the game's characters, scripts, clues, manual and relationship graph."""
    characters = list(game.characters.all())
    names = [c.name for c in characters if c.playable] + [c.name for c in characters if not c.playable]
    texts = [c.script for c in characters] + [c.ocr_text or c.text for c in game.clues.all()]
    texts += [game.truth_text, game.public_clue_text]
    by_id = {c.pk: c.name for c in characters}
    relations = [(by_id[r.source_id], by_id[r.target_id], list(r.labels)) for r in game.relationships.all()]
    return build_pools(game.language, names, texts, relations)


def live_options(question: Question) -> list[Option]:
    return [o for o in question.options.all() if o.review != OptionReview.REJECTED]


def missing_count(question: Question, n: int) -> int:
    """How many distractors to add so the question has ``n`` wrong options (rejected ones not counted)."""
    options = live_options(question)
    wrong = sum(1 for o in options if not o.is_correct)
    room = MAX_OPTIONS - len(options)
    return max(0, min(n - wrong, room))


def check_eligible(question: Question) -> None:
    if question.kind in FREE_TEXT_KINDS:
        raise GenerationError(f"{question.get_kind_display()} questions are answered in free text; they have no options")
    if not any(o.is_correct for o in live_options(question)):
        raise GenerationError("mark the correct option first: distractors are written against it")


def build_request(question: Question, n: int, names: list[str] | None = None,
                  scripts: list[str] | None = None) -> DistractorRequest:
    """Everything the prompt needs, as plain data (safe to hand to another thread).

    Context: the evidence quotes, then the perspective character's script — or, for a question asked
    to nobody in particular, all scripts (``scripts``, loaded once per batch) — ranked by relevance.
    """
    options = live_options(question)
    correct = [o.text for o in options if o.is_correct]
    texts = [span.quote for span in question.evidence.all()]
    perspective = question.perspective
    if perspective is not None and perspective.script:
        texts.append(perspective.script)
    elif perspective is None:
        if scripts is None:
            scripts = list(question.game.characters.exclude(script="").values_list("script", flat=True))
        texts += scripts
    if names is None:
        names = list(question.game.characters.values_list("name", flat=True))
    query = question.stem + " " + " ".join(correct)
    return DistractorRequest(
        stem=question.stem, answer=" / ".join(correct), n=n, kind=question.kind, sub_type=question.sub_type,
        language=question.game.language, existing=[o.text for o in options if not o.is_correct],
        context=context_excerpts(texts, query), names=names,
        perspective=perspective.name if perspective else "", question_id=question.pk,
    )


# What small models write instead of an option: placeholders and echoes of the instructions.
_PLACEHOLDER = re.compile(
    r"^(?:[.…。·_\-—*?？!！,，、/\\]+|n/?a|none|null|tbd|todo|xxx+|placeholder|\.\.\.|"
    r"(?:wrong\s+)?(?:option|answer|distractor|choice)\s*\d*|(?:错误)?(?:选项|答案|干扰项)\s*\d*|[a-e]\s*[.:：)]?)$",
    re.I)


def is_garbage(text: str, req: DistractorRequest) -> bool:
    """Placeholders (``...``, ``N/A``, ``Option 2``), a single Latin letter or digit (``S``), or text copied
    from the prompt (the question itself)."""
    if _PLACEHOLDER.match(text):
        return True
    if len(text) == 1 and text.isascii():
        return True
    return near_duplicate(text, req.stem)


def clean(candidates: list[object], req: DistractorRequest) -> list[str]:
    """Strings only, stripped, at most ``req.n``, no garbage (:func:`is_garbage`), none a near-duplicate
    of the answer, an option or each other."""
    taken = [req.answer, *req.answer.split(" / "), *req.existing]
    out: list[str] = []
    for item in candidates:
        if not isinstance(item, str):
            continue
        text = " ".join(item.split()).strip()
        if not text or is_garbage(text, req) or any(near_duplicate(text, other) for other in taken):
            continue
        out.append(text)
        taken.append(text)
        if len(out) == req.n:
            break
    return out


def ask_llm(client: LLMClient, req: DistractorRequest) -> list[str]:
    """The model's distractors for one request; raises LLMError when none is usable. No DB access."""
    reply = client.chat_json(build_messages(req), distractor_schema(req.n), name="distractors")
    items = reply.get("distractors") if isinstance(reply, dict) else reply if isinstance(reply, list) else None
    if not isinstance(items, list):
        raise LLMError('the reply has no "distractors" list')
    if not any(isinstance(item, str) and item.strip() for item in items):
        raise LLMError("the model returned no options (an empty list)")
    texts = clean(items, req)
    if not texts:
        raise LLMError("no usable option: every one the model wrote is a placeholder, copies the question, "
                       "or repeats the answer or an existing option")
    return texts


def ask_offline(req: DistractorRequest, pools: Pools, seed: int | str = 0) -> list[str]:
    try:
        texts = offline_distractors(
            stem=req.stem, answer=req.answer.split(" / ")[0], n=req.n, pools=pools, kind=req.kind,
            sub_type=req.sub_type, existing=req.existing, seed=seed,
        )
    except OfflineError as exc:
        raise GenerationError(str(exc)) from exc
    return clean(texts, req)


@transaction.atomic
def store_options(question: Question, texts: list[str], *, origin: str, model_name: str = "", user=None) -> list[Option]:
    """Append generated options (review pending); bump the version and clear ``raw`` so exports re-render.

    A handful of queries whatever the question (a batch job calls this once per answer as it arrives).
    """
    question = Question.objects.select_for_update().select_related("game").get(pk=question.pk)
    existing = list(question.options.order_by("position", "id"))
    before = question_snapshot(question, existing)
    start = (max((o.position for o in existing), default=0)) + 1
    rows = [
        Option(question=question, position=start + i, text=text, is_correct=False, origin=origin,
               model_name=model_name if origin == OptionOrigin.LLM else "", review=OptionReview.PENDING)
        for i, text in enumerate(texts)
    ]
    Option.objects.bulk_create(rows)
    refresh_answer(question, existing + rows)
    audit.record(question.game, user, question, f"generate-{origin}", before,
                 question_snapshot(question, existing + rows))
    return rows


def answer_letters(options: list[Option]) -> str:
    """Letters of the correct options among those that will be exported (rejected ones left out)."""
    live = [o for o in sorted(options, key=lambda o: (o.position, o.pk or 0)) if o.review != OptionReview.REJECTED]
    return "".join(LETTERS[i] for i, o in enumerate(live) if o.is_correct and i < len(LETTERS))


def refresh_answer(question: Question, options: list[Option] | None = None) -> None:
    """After options changed: answer letters recomputed, ``raw`` cleared, marked edited, version + 1 (one UPDATE)."""
    if options is None:
        options = list(question.options.all())
    answer = answer_letters(options)
    provenance = edited_provenance(question.provenance)
    Question.objects.filter(pk=question.pk).update(
        answer=answer, raw="", provenance=provenance, version=F("version") + 1
    )
    question.answer, question.raw, question.version = answer, "", question.version + 1
    question.provenance = provenance


def generate_for_question(question: Question, n: int = 3, *, client: LLMClient | None = None,
                          pools: Pools | None = None, user=None, seed: int | str = 0) -> Outcome:
    """Add up to ``n`` distractors to one question: with the LLM when ``client`` is given, else offline."""
    check_eligible(question)
    outcome = Outcome(question.pk)
    need = missing_count(question, n)
    if need == 0:
        outcome.skipped = f"already has {n} or more distractors (or {MAX_OPTIONS} options)"
        return outcome
    req = build_request(question, need)
    if client is not None:
        texts, outcome.origin, outcome.model = ask_llm(client, req), OptionOrigin.LLM, client.model
    else:
        texts, outcome.origin = ask_offline(req, pools or game_pools(question.game), seed), OptionOrigin.HEURISTIC
    outcome.options = store_options(question, texts, origin=outcome.origin, model_name=outcome.model, user=user)
    return outcome
