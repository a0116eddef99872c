"""Run the synthesis stages in order, record every request, and land the result as a draft game.

Nothing is written to the game tables until every stage has answered: the draft is assembled in
memory, checked, and written by the one builder in one transaction, so a failed stage leaves no
half-built game (its requests stay recorded on the run, with the reply that could not be used).
:func:`rerun_stage` repeats one stage from the others' stored outputs.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction

from casebook import interchange as ix
from casebook.interchange import Status, name_key

from . import stages
from .assemble import assemble
from .checks import run_checks
from .models import StageRecord, SynthesisRun

RERUNNABLE = ("critic", "clues", "qa")
Progress = Callable[[str, int, int], None]


@dataclass
class SynthesisSettings:
    players: int = 4
    language: str = "en"
    theme: str = ""
    setting: str = ""
    tone: str = ""
    critic_rounds: int = 1
    per_script: int = 4
    per_image: int = 3
    model: str = ""
    base_url: str = ""
    max_tokens: int = 3000

    def validate(self) -> None:
        if not 2 <= self.players <= 12:
            raise ValueError("--players must be between 2 and 12")
        if self.language not in ("zh", "en"):
            raise ValueError("--language must be zh or en")
        if not 0 <= self.critic_rounds <= 5:
            raise ValueError("--critic-rounds must be between 0 and 5")


def prices() -> tuple[float, float] | None:
    """USD per million prompt / completion tokens from CASEBOOK_LLM_PRICE ("in,out"); None when unset."""
    raw = os.environ.get("CASEBOOK_LLM_PRICE", "").strip()
    if not raw:
        return None
    try:
        prompt, completion = (float(x) for x in raw.split(","))
    except ValueError:
        return None
    return prompt, completion


def make_client(options: SynthesisSettings):
    """The one LLM client, on the configured endpoint or ``--base-url`` (a local server needs no key)."""
    from casebook.llm import LLMClient, LLMSettings

    return LLMClient(LLMSettings.from_settings(model=options.model or None, base_url=options.base_url or None))


class _Recorder:
    """Writes one StageRecord per request and keeps the run's usage totals."""

    def __init__(self, run: SynthesisRun, model: str, params: dict[str, Any]) -> None:
        self.run, self.model, self.params, self.price = run, model, params, prices()
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "requests": 0, "cost": 0.0 if self.price else None,
                      **(run.usage or {})}

    def __call__(self, *, stage: str, key: str, round: int, messages: list, reply: str, parsed: Any,
                 problems: list[str], usage: dict[str, int], ok: bool, error: str, seconds: float) -> StageRecord:
        cost = None
        if self.price:
            cost = (usage.get("prompt_tokens", 0) * self.price[0] + usage.get("completion_tokens", 0) * self.price[1]) / 1e6
            self.usage["cost"] = round((self.usage.get("cost") or 0.0) + cost, 6)
        for field in ("prompt_tokens", "completion_tokens"):
            self.usage[field] = self.usage.get(field, 0) + usage.get(field, 0)
        self.usage["requests"] = self.usage.get("requests", 0) + 1
        record = StageRecord.objects.create(run=self.run, stage=stage, key=key[:300], round=round, messages=messages,
                                   model=self.model, params=self.params, reply=reply or "", parsed=parsed,
                                   problems=problems, usage=usage, cost=cost, ok=ok, error=error, seconds=seconds)
        self.run.usage = dict(self.usage)  # the caller's run object stays current for its later save()
        SynthesisRun.objects.filter(pk=self.run.pk).update(usage=self.usage)
        return record


def _asker(run: SynthesisRun, client: Any, options: SynthesisSettings, progress: Callable[[str], None]) -> stages.Asker:
    params = {"max_tokens": options.max_tokens, "temperature": client.settings.temperature}
    recorder = _Recorder(run, client.model, params)
    return stages.Asker(client=client, language=options.language, record=recorder, max_tokens=options.max_tokens,
                        progress=progress)


def _counter(options: SynthesisSettings, progress: Progress | None) -> Callable[[str], None]:
    """Requests are counted to show progress; the total is re-estimated once the clue stage is known."""
    n = options.players
    state = {"done": 0, "total": 1 + n + options.critic_rounds * (2 + n) + 1 + 1 + n + 2}

    def step(label: str) -> None:
        if progress:
            progress(label, state["done"], state["total"])
        state["done"] += 1

    step.state = state  # type: ignore[attr-defined]
    return step


def run_synthesis(options: SynthesisSettings, *, user: Any = None, job: Any = None, client: Any = None,
                  progress: Progress | None = None) -> SynthesisRun:
    """All stages, then the draft game; returns the run (state done, or failed with the reply shown)."""
    options.validate()
    client = client or make_client(options)
    run = SynthesisRun.objects.create(user=user if getattr(user, "is_authenticated", False) else None, job=job,
                                      settings={**asdict(options), "model": client.model})
    step = _counter(options, progress)
    ask = _asker(run, client, options, step)
    outputs: dict[str, Any] = {}
    try:
        outputs["outline"] = stages.outline(ask, asdict(options))
        outputs["characters"] = stages.characters(ask, outputs["outline"])
        for round_ in range(1, options.critic_rounds + 1):
            ask.round = round_
            review = stages.critic(ask, outputs["outline"], outputs["characters"])
            run.critic_rounds = [*run.critic_rounds, {"round": round_, **review}]
            SynthesisRun.objects.filter(pk=run.pk).update(critic_rounds=run.critic_rounds)
            outputs["outline"] = stages.refine(ask, outputs["outline"], review)
            feedback = {name_key(s["name"]): s["suggestion"] for s in review["character_suggestions"]}
            outputs["characters"] = stages.characters(ask, outputs["outline"], feedback)
        ask.round = 0
        outputs["clues"] = stages.clues(ask, outputs["characters"])
        step.state["total"] += len(outputs["clues"]["images"])  # type: ignore[attr-defined]
        outputs["qa"] = stages.qa(ask, outputs["outline"], outputs["characters"], outputs["clues"],
                                  options.per_script, options.per_image)
    except stages.StageFailed as exc:
        run.outputs, run.state = outputs, SynthesisRun.State.FAILED
        run.failure = {"stage": exc.stage, "message": exc.message, "reply": exc.reply[:20000]}
        run.save(update_fields=["outputs", "state", "failure", "updated_at"])
        return run
    run.outputs = outputs
    _land(run, user)
    if progress:
        progress("done", step.state["total"], step.state["total"])  # type: ignore[attr-defined]
    return run


def _land(run: SynthesisRun, user: Any) -> None:
    """Assemble, check and write the draft game (replacing the run's earlier draft, if any)."""
    from annotate import models as m
    from annotate.builder import build_game

    game = assemble(run.outputs, run.settings, run.pk, run.settings.get("model", ""))
    checks = run_checks(game, run.outputs)
    game.extra["synthesis"].update(checks=checks, critic=[{"round": r["round"], "scores": r["scores"]}
                                                          for r in run.critic_rounds])
    with transaction.atomic():
        if run.game_id:
            game.slug = run.game.source_id  # the builder finds the run's game again by its source id
            checks.extend(keep_reviewed(game, run.game))
            game.extra["synthesis"]["checks"] = checks
        result = build_game(game, replace=True, user=user)
        if getattr(user, "is_authenticated", False):
            m.Membership.objects.get_or_create(user=user, game=result.game, defaults={"role": m.Membership.Role.MANAGER})
        run.game, run.checks, run.state = result.game, checks, SynthesisRun.State.DONE
        run.failure = {}
        run.save()


def _touched(status: str, version: int) -> bool:
    return status != Status.DRAFT or version > 1


def keep_reviewed(new: ix.Game, row: Any) -> list[dict[str, str]]:
    """Put back into ``new`` every question and chain a person has touched (reviewed or edited).

    The builder matches questions by kind and order, so each touched question keeps its ordinal
    among its kind (and so its id, history and review state); regenerated questions fill the
    untouched places. A touched chain is kept whole, and regenerated multi-step questions that
    would hang off the discarded new pool are left out. Returns findings saying what was kept.
    """
    from annotate.loader import load_game

    current = load_game(row)
    stored = list(row.questions.order_by("position", "pk").values_list("kind", "status", "version"))
    findings: list[dict[str, str]] = []
    chain_rows = list(row.chains.order_by("position", "pk").values_list("status", "version"))
    if any(_touched(*c) for c in chain_rows):
        keys = {n.key for chain in current.chains for n in chain.nodes}
        new.chains = current.chains
        dropped = [q for q in new.questions if q.kind == "multi_step" and q.chain_node not in keys]
        new.questions = [q for q in new.questions if q not in dropped]
        findings.append({"check": "rerun", "severity": "warning", "where": "chain",
                         "message": f"the reasoning chain was already reviewed or edited, so it was kept; "
                                    f"{len(dropped)} regenerated multi-step question(s) on the new pool were left out"})
    by_kind: dict[str, list[tuple[ix.Question, bool]]] = {}
    for question, (kind, status, version) in zip(current.questions, stored, strict=False):
        by_kind.setdefault(kind, []).append((question, _touched(status, version)))
    fresh: dict[str, list[ix.Question]] = {}
    for question in new.questions:
        fresh.setdefault(question.kind, []).append(question)
    merged: list[ix.Question] = []
    kept = 0
    for kind in dict.fromkeys([*fresh, *by_kind]):
        old, queue = by_kind.get(kind, []), list(fresh.get(kind, []))
        last_touched = max((i for i, (_, t) in enumerate(old) if t), default=-1)
        for i, (question, touched) in enumerate(old):
            if touched:
                merged.append(question)
                kept += 1
            elif queue:
                merged.append(queue.pop(0))
            elif i < last_touched:
                merged.append(question)  # holds its place so later touched questions keep their ids
        merged.extend(queue)
    new.questions = merged
    if kept:
        findings.append({"check": "rerun", "severity": "info", "where": "questions",
                         "message": f"kept {kept} question(s) someone had reviewed or edited"})
    return findings


def rerun_stage(run: SynthesisRun, stage: str, *, user: Any = None, client: Any = None,
                progress: Progress | None = None) -> SynthesisRun:
    """Repeat one stage from the other stages' stored outputs and land the draft again.

    ``critic`` adds a scoring round (nothing else changes); ``clues`` and ``qa`` replace their own
    output. Questions and chains a person already reviewed or edited are kept (:func:`keep_reviewed`),
    and the builder's replace updates the other rows in place.
    """
    if stage not in RERUNNABLE:
        raise ValueError(f"only these stages can be re-run alone: {', '.join(RERUNNABLE)} "
                         "(a new outline or cast is a new game: start a new run)")
    outputs = dict(run.outputs or {})
    if "characters" not in outputs:
        raise ValueError("this run never got past the character stage; start a new run")
    options = SynthesisSettings(**{k: v for k, v in run.settings.items() if k in SynthesisSettings.__dataclass_fields__})
    client = client or make_client(options)
    step = _counter(options, progress)
    ask = _asker(run, client, options, step)
    try:
        if stage == "critic":
            ask.round = len(run.critic_rounds) + 1
            review = stages.critic(ask, outputs["outline"], outputs["characters"])
            run.critic_rounds = [*run.critic_rounds, {"round": ask.round, **review}]
        elif stage == "clues":
            outputs["clues"] = stages.clues(ask, outputs["characters"])
        else:
            outputs["qa"] = stages.qa(ask, outputs["outline"], outputs["characters"],
                                      outputs.get("clues") or {"public": [], "images": []},
                                      options.per_script, options.per_image)
    except stages.StageFailed as exc:
        run.failure = {"stage": exc.stage, "message": exc.message, "reply": exc.reply[:20000]}
        run.save(update_fields=["failure", "updated_at"])
        return run
    run.outputs = outputs
    if "qa" in outputs:
        _land(run, user)
    else:
        run.save()
    return run
