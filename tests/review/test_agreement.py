"""Kappa against hand-worked textbook tables; relationship agreement and blind validation on the
real WellPlay game 罪恶; the `agreement` management command."""
from __future__ import annotations

import io
from fractions import Fraction

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Membership, Question
from casebook.interchange import Status
from review import agreement
from review.models import Comment

# Cohen's kappa, the worked example of the Wikipedia article "Cohen's kappa" (50 grant proposals,
# readers A and B): yes/yes 20, yes/no 5, no/yes 10, no/no 15.
#   P_o = (20 + 15) / 50 = 0.7
#   P_yes = (25/50)(30/50) = 0.30, P_no = (25/50)(20/50) = 0.20, P_e = 0.5
#   kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
COHEN_A = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
COHEN_B = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15

# Fleiss' kappa, the worked example of Fleiss (1971) as laid out in the Wikipedia article
# "Fleiss' kappa": 10 subjects, 14 raters, 5 categories. Published result: P̄ = 0.378,
# P̄e = 0.213, kappa = 0.210.
FLEISS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def test_cohen_kappa_worked_example():
    k = agreement.cohen_kappa(COHEN_A, COHEN_B)
    assert k.observed == pytest.approx(0.7) and k.expected == pytest.approx(0.5)
    assert k.kappa == pytest.approx(0.4)


def test_fleiss_kappa_fleiss_1971_table():
    n, big_n = 14, len(FLEISS)
    # By hand, with exact fractions: P_i = (Σ n_ij² − n) / (n(n − 1)); p_j = Σ_i n_ij / (N n).
    p_bar = sum(Fraction(sum(x * x for x in row) - n, n * (n - 1)) for row in FLEISS) / big_n
    p_e = sum(Fraction(sum(row[j] for row in FLEISS), big_n * n) ** 2 for j in range(5))
    by_hand = (p_bar - p_e) / (1 - p_e)
    assert float(p_bar) == pytest.approx(0.378, abs=5e-4) and float(p_e) == pytest.approx(0.213, abs=5e-4)
    k = agreement.fleiss_kappa(FLEISS)
    assert k.kappa == pytest.approx(float(by_hand), abs=1e-12)
    assert k.kappa == pytest.approx(0.210, abs=5e-4)
    assert (k.items, k.raters) == (10, 14)


def test_kappa_edge_cases():
    assert agreement.cohen_kappa(["a", "a"], ["a", "a"]).kappa is None  # chance agreement 1: undefined
    assert agreement.cohen_kappa(["a", "b"], ["a", "b"]).kappa == pytest.approx(1.0)
    with pytest.raises(agreement.AgreementError, match="different numbers"):
        agreement.cohen_kappa(["a"], ["a", "b"])
    with pytest.raises(agreement.AgreementError, match="same number of ratings"):
        agreement.fleiss_kappa([[2, 1], [1, 1]])


@pytest.fixture
def raters(wellplay_game, django_user_model):
    out = []
    for name in ("ann1", "ann2", "ann3"):
        user = django_user_model.objects.create_user(name, password="x")
        Membership.objects.create(user=user, game=wellplay_game, role="annotator")
        out.append(user)
    return out


def _pairs(game, n):
    rels = list(game.relationships.select_related("source", "target").order_by("position")[:n])
    assert len(rels) == n, "the anchor game has fewer relationships than the test expects"
    return rels


def test_relationship_kappa_on_real_pairs(wellplay_game, raters):
    rels = _pairs(wellplay_game, 4)
    published = [r.labels for r in rels]
    # ann1 and ann2 copy the published labels, except ann2 says "none" on the last pair;
    # ann3 agrees on pairs 0-1 only and picks "friend" elsewhere.
    plan = {
        "ann1": published,
        "ann2": published[:3] + [[]],
        "ann3": published[:2] + [["friend"], ["friend"]],
    }
    for user in raters:
        for rel, labels in zip(rels, plan[user.username], strict=True):
            agreement.record_labels(wellplay_game, user, rel.source, rel.target, labels)
    result = agreement.relationship_agreement(wellplay_game)
    assert result.method == "fleiss" and result.items == 4 and result.raters == ["ann1", "ann2", "ann3"]
    cats = [["+".join(sorted(lb)) or "none" for lb in (plan[u][i] for u in ("ann1", "ann2", "ann3"))] for i in range(4)]
    # By hand, Fleiss over the 4×3 ratings:
    categories = sorted({c for row in cats for c in row})
    table = [[row.count(c) for c in categories] for row in cats]
    p_bar = sum(Fraction(sum(x * x for x in r) - 3, 6) for r in table) / 4
    p_e = sum(Fraction(sum(r[j] for r in table), 12) ** 2 for j in range(len(categories)))
    assert result.overall.kappa == pytest.approx(float((p_bar - p_e) / (1 - p_e)))
    pair = {(x, y): k for x, y, k in result.pairwise}
    assert pair[("ann1", "ann2")].observed == pytest.approx(0.75)


def test_relationship_kappa_two_raters_is_cohen(wellplay_game, raters):
    rels = _pairs(wellplay_game, 3)
    for rel in rels:
        agreement.record_labels(wellplay_game, raters[0], rel.source, rel.target, rel.labels)
        agreement.record_labels(wellplay_game, raters[1], rel.source, rel.target, rel.labels)
    agreement.record_labels(wellplay_game, raters[0], rels[0].target, rels[0].source, ["friend"])  # only one rater
    result = agreement.relationship_agreement(wellplay_game)
    assert result.method == "cohen" and (result.items, result.partial) == (3, 1)
    assert result.overall.observed == pytest.approx(1.0)


def test_record_labels_rejects_unknown_labels(wellplay_game, raters):
    rel = _pairs(wellplay_game, 1)[0]
    with pytest.raises(agreement.AgreementError, match="Not a Conan label"):
        agreement.record_labels(wellplay_game, raters[0], rel.source, rel.target, ["best buddy forever"])
    with pytest.raises(agreement.AgreementError, match="two different"):
        agreement.record_labels(wellplay_game, raters[0], rel.source, rel.source, ["friend"])


def test_blind_validation_disagreement_goes_back_to_review(wellplay_game, raters):
    questions = list(Question.objects.filter(game=wellplay_game, status=Status.APPROVED, options__isnull=False)
                     .distinct().order_by("position")[:2])
    right, wrong = questions
    validator = raters[0]
    queue = agreement.validation_queue(wellplay_game, validator)
    assert right in queue and wrong in queue
    ok = agreement.record_validation(right, validator, agreement.key_of(right).upper())
    assert ok.agrees
    right.refresh_from_db()
    assert right.status == Status.APPROVED
    key = agreement.key_of(wrong)
    other = next(c for c in "abcd" if c not in key)
    bad = agreement.record_validation(wrong, validator, other)
    assert not bad.agrees
    wrong.refresh_from_db()
    assert wrong.status == Status.SUBMITTED
    note = Comment.objects.get(item_type="question", item_id=wrong.pk)
    assert note.system and f"chose {other.upper()}" in note.text and key.upper() in note.text
    assert wrong not in agreement.validation_queue(wellplay_game, validator)
    with pytest.raises(agreement.AgreementError, match="Only approved"):
        agreement.record_validation(wrong, raters[1], "a")
    with pytest.raises(agreement.AgreementError, match="Not an option"):
        agreement.record_validation(right, raters[1], "z")
    Question.objects.filter(pk=right.pk).update(reviewer=raters[2])
    assert right not in agreement.validation_queue(wellplay_game, raters[2])
    with pytest.raises(agreement.AgreementError, match="seen its key"):
        agreement.record_validation(right, raters[2], "a")
    summary = agreement.validation_agreement(wellplay_game)
    assert (summary.answers, summary.agreeing) == (2, 1) and summary.rate == pytest.approx(0.5)


def test_agreement_command(wellplay_game, raters):
    rels = _pairs(wellplay_game, 2)
    for user in raters:
        for rel in rels:
            agreement.record_labels(wellplay_game, user, rel.source, rel.target, rel.labels if user != raters[2] else [])
    q = Question.objects.filter(game=wellplay_game, status=Status.APPROVED, options__isnull=False).distinct().first()
    agreement.record_validation(q, raters[0], agreement.key_of(q))
    out = io.StringIO()
    call_command("agreement", wellplay_game.slug, "--questions", stdout=out)
    text = out.getvalue()
    expected = agreement.relationship_agreement(wellplay_game).overall
    assert "Fleiss' kappa" in text and str(expected) in text
    assert "answers: 1, agreeing with the key: 1 (100.0%)" in text
    assert f"#{q.pk} key {agreement.key_of(q).upper()}" in text
    with pytest.raises(CommandError, match="No game"):
        call_command("agreement", "no-such-game", stdout=io.StringIO())
    with pytest.raises(CommandError, match="needs the reviewer role"):
        call_command("agreement", wellplay_game.slug, "--as", "ann1", stdout=io.StringIO())
