"""The ground-truth belief matrix of a played game (MultiMind paper Eq. 15) and what follows from it.

Pure functions over plain lists, in core because both the sessions app (exports) and the
evaluation runner (scoring, no database) use them. Players are identified by name, in session order.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def belief_matrix(players: Sequence[str], suspicions: Mapping[str, Sequence[str]]) -> list[list[float]]:
    """``B[i][j] = 1/|S_i|`` for j in S_i; ``1/P`` everywhere when S_i is empty; 0 otherwise."""
    n = len(players)
    index = {p: k for k, p in enumerate(players)}
    matrix = []
    for player in players:
        suspects = {index[s] for s in suspicions.get(player, ()) if s in index}
        if suspects:
            matrix.append([1 / len(suspects) if j in suspects else 0.0 for j in range(n)])
        else:
            matrix.append([1 / n] * n if n else [])
    return matrix


def suspicion_toward(matrix: Sequence[Sequence[float]]) -> list[float]:
    """Suspicion toward player k: the sum of the other players' beliefs in k (paper Eq. 8)."""
    n = len(matrix)
    return [sum(matrix[j][k] for j in range(n) if j != k) for k in range(n)]


def suspects_from_guesses(guesses: Mapping[str, Mapping[str, str]] | None, suspect_role: str) -> dict[str, list[str]]:
    """ONUW ``guesses`` (subject → object → role, alternatives joined by '/') → suspect sets."""
    out: dict[str, list[str]] = {}
    for subject, row in (guesses or {}).items():
        if not isinstance(row, Mapping):
            continue
        out[subject] = [obj for obj, role in row.items()
                        if isinstance(role, str) and suspect_role in [r.strip().lower() for r in role.split("/")]]
    return out


def row_cross_entropy(truth: Sequence[float], predicted: Sequence[float], eps: float = 1e-6) -> float:
    """−Σ t·log p of one row; the prediction is renormalised and clipped so it never explodes."""
    total = sum(max(p, 0.0) for p in predicted)
    probs = [max(p, 0.0) / total if total > 0 else 1 / len(predicted) for p in predicted]
    return -sum(t * math.log(max(p, eps)) for t, p in zip(truth, probs, strict=True))


def normalize_rows(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    """Each row scaled to sum 1 (a row of zeros becomes uniform)."""
    out = []
    for row in matrix:
        total = sum(max(v, 0.0) for v in row)
        out.append([max(v, 0.0) / total for v in row] if total > 0 else [1 / len(row)] * len(row))
    return out
