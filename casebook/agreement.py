"""Inter-rater agreement statistics: Cohen's kappa (two raters), Fleiss' kappa (more), and the
kappa over ``{item: {rater: category}}`` ratings that every app's agreement report uses.

Pure functions on plain values, in the core so that review (relationship labels, blind
validation), playlogs (turn annotations) and the Label Studio bridge share one implementation.
"""
from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field


class AgreementError(ValueError):
    """The data cannot give an agreement figure, or an answer cannot be recorded; message for the user."""


@dataclass
class Kappa:
    """A kappa with its ingredients; ``kappa`` is None when chance agreement is 1 (all one category)."""

    kappa: float | None
    observed: float
    expected: float
    items: int
    raters: int
    categories: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        value = "n/a (every rating is the same category)" if self.kappa is None else f"{self.kappa:.3f}"
        return f"κ = {value}  (P_o = {self.observed:.3f}, P_e = {self.expected:.3f}, {self.items} items, {self.raters} raters)"


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> Kappa:
    """Cohen's (1960) kappa for two raters who rated the same items in the same order."""
    if len(a) != len(b):
        raise AgreementError(f"The two raters rated different numbers of items ({len(a)} and {len(b)}).")
    n = len(a)
    if n == 0:
        raise AgreementError("No item was rated by both annotators.")
    observed = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    ca, cb = Counter(a), Counter(b)
    cats = sorted(set(ca) | set(cb), key=str)
    expected = sum((ca[c] / n) * (cb[c] / n) for c in cats)
    kappa = None if expected >= 1 else (observed - expected) / (1 - expected)
    return Kappa(kappa, observed, expected, n, 2, [str(c) for c in cats])


def fleiss_kappa(table: Sequence[Sequence[int]], categories: Sequence[str] = ()) -> Kappa:
    """Fleiss' (1971) kappa from an items × categories table of counts (every row sums to the
    same number of raters n ≥ 2)."""
    rows = [list(r) for r in table]
    if not rows:
        raise AgreementError("No item was rated by all annotators.")
    n = sum(rows[0])
    if n < 2:
        raise AgreementError("Fleiss' kappa needs at least two ratings per item.")
    if any(sum(r) != n for r in rows) or any(len(r) != len(rows[0]) for r in rows):
        raise AgreementError("Every item must have the same number of ratings for Fleiss' kappa.")
    big_n = len(rows)
    p_i = [(sum(x * x for x in r) - n) / (n * (n - 1)) for r in rows]
    observed = sum(p_i) / big_n
    p_j = [sum(r[j] for r in rows) / (big_n * n) for j in range(len(rows[0]))]
    expected = sum(p * p for p in p_j)
    kappa = None if expected >= 1 else (observed - expected) / (1 - expected)
    return Kappa(kappa, observed, expected, big_n, n, list(categories))


def fleiss_from_ratings(ratings: Sequence[Sequence[Hashable]]) -> Kappa:
    """Fleiss' kappa from per-item lists of category labels (one per rater)."""
    cats = sorted({c for r in ratings for c in r}, key=str)
    return fleiss_kappa([[Counter(r)[c] for c in cats] for r in ratings], [str(c) for c in cats])


@dataclass
class RelationshipAgreement:
    raters: list[str]
    items: int  # pairs labelled by every rater (the ones kappa uses)
    partial: int  # pairs labelled by some raters only (left out)
    overall: Kappa | None  # Cohen for two raters, Fleiss for more
    method: str
    pairwise: list[tuple[str, str, Kappa]] = field(default_factory=list)


def ratings_agreement(by_item: Mapping[Hashable, Mapping[str, Hashable]]) -> RelationshipAgreement | None:
    """Kappa over ``{item: {rater: category}}`` (Cohen for two raters, Fleiss for more) over the items
    every rater rated, with pairwise Cohen; None without two raters. Shared by Casebook's own label
    judgements and contributions from elsewhere (Label Studio annotations)."""
    raters = sorted({r for v in by_item.values() for r in v})
    if len(raters) < 2:
        return None
    complete = [v for v in by_item.values() if len(v) == len(raters)]
    pairwise = []
    for x, y in itertools.combinations(raters, 2):
        both = [v for v in by_item.values() if x in v and y in v]
        if both:
            pairwise.append((x, y, cohen_kappa([v[x] for v in both], [v[y] for v in both])))
    overall, method = None, "cohen" if len(raters) == 2 else "fleiss"
    if complete:
        if len(raters) == 2:
            overall = cohen_kappa([v[raters[0]] for v in complete], [v[raters[1]] for v in complete])
        else:
            overall = fleiss_from_ratings([[v[r] for r in raters] for v in complete])
    return RelationshipAgreement(raters, len(complete), len(by_item) - len(complete), overall, method, pairwise)
