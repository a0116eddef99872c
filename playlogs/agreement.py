"""Agreement between annotators on played sessions (multimind.md §5): stance triplets compared as
sets per turn (precision / recall / F1, micro over turns, the first annotator as reference), face
and tone by Cohen's κ (turns both labelled), and exact agreement of suspicion sets."""
from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass

from annotate.models import Game
from casebook.agreement import AgreementError, Kappa, cohen_kappa

from .models import TurnAnnotation


@dataclass
class PairAgreement:
    first: str
    second: str
    turns: int
    precision: float | None
    recall: float | None
    f1: float | None
    face: Kappa | None
    tone: Kappa | None
    suspicion_exact: float | None  # share of (turn, player) suspicion sets both gave identically


def triplet_prf(reference: list[set], predicted: list[set]) -> tuple[float | None, float | None, float | None]:
    """Micro P/R/F1 over turns of triplet sets; None where the denominator is empty."""
    tp = sum(len(r & p) for r, p in zip(reference, predicted, strict=True))
    n_pred, n_ref = sum(map(len, predicted)), sum(map(len, reference))
    precision = tp / n_pred if n_pred else None
    recall = tp / n_ref if n_ref else None
    f1 = (2 * precision * recall / (precision + recall) if precision is not None and recall is not None
          and precision + recall > 0 else (0.0 if precision is not None and recall is not None else None))
    return precision, recall, f1


def _kappa(a: list[str], b: list[str]) -> Kappa | None:
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x and y]
    if not pairs:
        return None
    try:
        return cohen_kappa([x for x, _ in pairs], [y for _, y in pairs])
    except AgreementError:
        return None


def session_agreement(game: Game, session_ids: list[int] | None = None) -> list[PairAgreement]:
    """One row per pair of human annotators who annotated at least one common turn."""
    rows = TurnAnnotation.objects.filter(game=game, annotator__isnull=False).exclude(source=TurnAnnotation.Source.IMPORTED)
    if session_ids:
        rows = rows.filter(turn__session_id__in=session_ids)
    by_user: dict[str, dict[int, TurnAnnotation]] = defaultdict(dict)
    for a in rows.select_related("annotator"):
        by_user[a.annotator.username][a.turn_id] = a
    out = []
    for first, second in itertools.combinations(sorted(by_user), 2):
        common = sorted(set(by_user[first]) & set(by_user[second]))
        if not common:
            continue
        ref = [by_user[first][t] for t in common]
        pred = [by_user[second][t] for t in common]
        precision, recall, f1 = triplet_prf([{tuple(x) for x in a.triplets} for a in ref],
                                            [{tuple(x) for x in a.triplets} for a in pred])
        same = total = 0
        for a, b in zip(ref, pred, strict=True):
            for who in set(a.suspicions) & set(b.suspicions):
                total += 1
                same += set(a.suspicions[who]) == set(b.suspicions[who])
        out.append(PairAgreement(first, second, len(common), precision, recall, f1,
                                 _kappa([a.face for a in ref], [b.face for b in pred]),
                                 _kappa([a.tone for a in ref], [b.tone for b in pred]),
                                 same / total if total else None))
    return out
