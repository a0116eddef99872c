"""Progress per game: question counts by kind against the targets a manager set."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count

from annotate.models import Game, Question
from annotate.services.questions import KIND_LABELS
from casebook.interchange import QuestionKind


@dataclass
class KindProgress:
    kind: str
    label: str
    count: int
    target: int | None

    @property
    def percent(self) -> int:
        if not self.target:
            return 0
        return min(100, round(100 * self.count / self.target))


def progress_for(games: Iterable[Game]) -> dict[int, list[KindProgress]]:
    """One aggregate query for all games; kinds shown are those with questions or a target."""
    games = list(games)
    counts: dict[tuple[int, str], int] = {}
    rows = Question.objects.filter(game__in=[g.pk for g in games]).values("game_id", "kind").annotate(n=Count("id"))
    for row in rows:
        counts[(row["game_id"], row["kind"])] = row["n"]
    result = {}
    for game in games:
        targets = {k: int(v) for k, v in (game.targets or {}).items() if str(v).isdigit()}
        items = []
        for kind in QuestionKind:
            n, target = counts.get((game.pk, kind), 0), targets.get(kind)
            if n or target:
                items.append(KindProgress(kind, KIND_LABELS[kind], n, target))
        result[game.pk] = items
    return result


def parse_targets(values: dict[str, str]) -> dict[str, int]:
    """Targets from a form: blank or 0 drops the target; anything else must be a whole number."""
    out = {}
    for kind in QuestionKind:
        raw = (values.get(f"target_{kind}") or "").strip()
        if not raw:
            continue
        if not raw.isdigit():
            raise ValueError(f"The target for {KIND_LABELS[kind]} must be a whole number.")
        if int(raw):
            out[str(kind)] = int(raw)
    return out
