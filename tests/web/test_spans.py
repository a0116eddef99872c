"""Evidence spans as first-class annotations: labels from the game's set, boundary moves, deletion
that asks when the span is cited, undo that brings the citations back, and the label in exports."""
from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotate.models import ChainNode, EvidenceSpan, Membership, ReasoningChain, Relationship
from annotate.services import chains, spans
from casebook.interchange import DEFAULT_SPAN_LABELS, Status
from casebook.models import AuditEntry
from exporters.service import export_games

pytestmark = pytest.mark.django_db


def _script_span(game, quote: str, **kwargs) -> EvidenceSpan:
    char = game.characters.get(name="林管家")
    start = char.script.index(quote)
    return spans.create_span(game, document="script", owner_id=char.pk, start=start, end=start + len(quote),
                             quote=quote, **kwargs)


def test_labels_come_from_the_game_set_and_unknown_ones_are_refused(game, annotator):
    span = _script_span(game, "管家拿着一把钥匙", label="clue", user=annotator)
    assert span.label == "clue" and spans.span_labels(game) == DEFAULT_SPAN_LABELS
    with pytest.raises(spans.SpanError, match="not one of this game's span labels"):
        _script_span(game, "花园里有脚印", label="weapon")
    assert not EvidenceSpan.objects.filter(quote="花园里有脚印").exists()
    spans.set_span_labels(game, spans.parse_span_labels("weapon = 凶器 / weapon\nclue = 线索 / clue"), user=annotator)
    game.refresh_from_db()
    assert spans.span_labels(game) == {"weapon": ("凶器", "weapon"), "clue": ("线索", "clue")}
    assert _script_span(game, "花园里有脚印", label="weapon").label == "weapon"
    with pytest.raises(spans.SpanError, match="value = 中文 / English"):
        spans.parse_span_labels("weapon 凶器")


def test_the_same_selection_twice_is_one_span_and_gains_a_label(game):
    first = _script_span(game, "花园里有脚印")
    again = _script_span(game, "花园里有脚印", label="place")
    assert again.pk == first.pk and again.label == "place"
    assert EvidenceSpan.objects.filter(game=game, quote="花园里有脚印").count() == 1


def test_moving_boundaries_rereads_the_quote_and_refuses_bad_moves(game, annotator):
    span = _script_span(game, "管家拿着一把钥匙")
    char = span.character
    moved = spans.update_span(game, span.pk, start=span.start - 2, end=span.end + 2, user=annotator, role="annotator")
    assert moved.quote == char.script[span.start - 2:span.end + 2] == "看见管家拿着一把钥匙走进"
    assert AuditEntry.objects.filter(item_type="evidencespan", item_id=span.pk, action="update").count() == 1
    other = _script_span(game, "花园里有脚印")
    with pytest.raises(spans.SpanError, match="already covers exactly"):
        spans.update_span(game, other.pk, start=moved.start, end=moved.end)
    with pytest.raises(spans.SpanError, match="outside the text"):
        spans.update_span(game, span.pk, start=5, end=5)
    with pytest.raises(spans.SpanError, match="both"):
        spans.update_span(game, span.pk, start=5)
    other.refresh_from_db()
    assert other.quote == "花园里有脚印"


def test_deleting_a_cited_span_asks_first_and_undo_restores_every_citation(game, annotator, django_user_model):
    span = _script_span(game, "管家拿着一把钥匙", label="method")
    question = game.questions.first()
    question.evidence.add(span)
    lin, other = list(game.characters.all())[:2]
    rel = Relationship.objects.create(game=game, source=lin, target=other, labels=["employer of x"])
    rel.evidence.add(span)
    chain = ReasoningChain.objects.create(game=game, title="链")
    node = chains.save_node(chain, None, kind="direct", text="起点", span_ids=[span.pk])

    with pytest.raises(spans.SpanCited) as refused:
        spans.delete_span(game, span.pk, user=annotator, role="annotator")
    assert "cited by 3 item(s)" in str(refused.value) and "relationship" in str(refused.value)
    assert EvidenceSpan.objects.filter(pk=span.pk).exists()

    entry = spans.delete_span(game, span.pk, confirmed=True, user=annotator, role="annotator")
    assert not EvidenceSpan.objects.filter(pk=span.pk).exists() and not question.evidence.exists()
    restored = spans.undo_delete(game, entry.pk, user=annotator)
    assert (restored.start, restored.end, restored.quote, restored.label) == (span.start, span.end, span.quote, "method")
    assert list(question.evidence.all()) == [restored] and list(rel.evidence.all()) == [restored]
    assert list(ChainNode.objects.get(pk=node.pk).evidence.all()) == [restored]
    with pytest.raises(spans.SpanError, match="already undone"):
        spans.undo_delete(game, entry.pk)


def test_annotators_may_not_change_spans_that_approved_work_cites(game, annotator):
    span = _script_span(game, "管家拿着一把钥匙")
    question = game.questions.first()
    question.status = Status.APPROVED
    question.save()
    question.evidence.add(span)
    with pytest.raises(spans.SpanError, match="only a reviewer or manager"):
        spans.delete_span(game, span.pk, confirmed=True, role="annotator")
    with pytest.raises(spans.SpanError, match="only a reviewer or manager"):
        spans.update_span(game, span.pk, label="clue", role="annotator")
    assert spans.update_span(game, span.pk, label="clue", role="reviewer").label == "clue"


def test_the_reader_shows_spans_approved_work_cites_read_only_to_annotators(anna_client, game, annotator,
                                                                           django_user_model):
    """The reader marks such a span ``locked`` for an annotator (no handles, no delete, the reason
    shown) instead of offering controls whose save is refused; a reviewer gets it editable."""
    cited, free = _script_span(game, "管家拿着一把钥匙"), _script_span(game, "花园里有脚印")
    question = game.questions.first()
    question.evidence.add(cited)
    game.questions.filter(pk=question.pk).update(status=Status.APPROVED)
    char = game.characters.get(name="林管家")
    url = reverse("annotate:reader", args=[game.slug]) + f"?left=c{char.pk}"

    def locked(client) -> dict[int, bool]:
        data = client.get(url).context["reader_data"]
        return {s["id"]: s["locked"] for s in data["spans"]}

    assert locked(anna_client) == {cited.pk: True, free.pk: False}
    refused = anna_client.post(reverse("annotate:span_edit", args=[game.slug, cited.pk]), json.dumps({"label": "clue"}),
                               content_type="application/json")
    assert refused.status_code == 400 and "reopened" in refused.json()["error"]
    rita = django_user_model.objects.create_user("rita-spans", password="x")
    Membership.objects.create(user=rita, game=game, role=Membership.Role.REVIEWER)
    anna_client.force_login(rita)
    assert locked(anna_client) == {cited.pk: False, free.pk: False}
    answer = anna_client.post(reverse("annotate:span_edit", args=[game.slug, cited.pk]), json.dumps({"label": "clue"}),
                              content_type="application/json").json()
    assert answer["label"] == "clue" and answer["locked"] is False


def test_span_endpoints_answer_in_browser_units_and_keep_other_games_out(anna_client, game, django_user_model):
    span = _script_span(game, "花园里有脚印")
    edit = reverse("annotate:span_edit", args=[game.slug, span.pk])
    answer = anna_client.post(edit, json.dumps({"label": "place"}), content_type="application/json").json()
    assert answer["label"] == "place" and answer["cited"] == []
    unknown = anna_client.post(edit, json.dumps({"label": "凶器"}), content_type="application/json")
    assert unknown.status_code == 400 and "not one of" in unknown.json()["error"]
    span.questions.add(game.questions.first())
    delete = reverse("annotate:span_delete", args=[game.slug, span.pk])
    asked = anna_client.post(delete, "{}", content_type="application/json")
    assert asked.status_code == 409 and "question" in asked.json()["confirm"]
    done = anna_client.post(delete, json.dumps({"confirm": True}), content_type="application/json").json()
    undo = anna_client.post(reverse("annotate:span_undo", args=[game.slug, done["undo"]]), "{}", content_type="application/json")
    assert undo.status_code == 201 and undo.json()["cited"][0]["kind"] == "question"

    from .conftest import make_game
    foreign = make_game("foreign")
    theirs = spans.create_span(foreign, document="manual", owner_id=None, start=0, end=2, quote=foreign.truth_text[:2])
    refused = anna_client.post(reverse("annotate:span_edit", args=["foreign", theirs.pk]), "{}", content_type="application/json")
    assert refused.status_code == 404  # not a member of that game
    same_slug_other_id = anna_client.post(reverse("annotate:span_delete", args=[game.slug, theirs.pk]),
                                          json.dumps({"confirm": True}), content_type="application/json")
    assert same_slug_other_id.status_code == 404 and EvidenceSpan.objects.filter(pk=theirs.pk).exists()


def test_managers_set_the_label_set_and_annotators_may_not(anna_client, game, annotator, client, django_user_model):
    url = reverse("annotate:span_labels", args=[game.slug])
    assert anna_client.post(url, {"labels": "weapon = 凶器 / weapon"}).status_code == 403
    boss = django_user_model.objects.create_user("boss", password="x")
    Membership.objects.create(user=boss, game=game, role="manager")
    client.force_login(boss)
    page = client.post(url, {"labels": "broken line"}, follow=True).content.decode()
    assert "value = 中文 / English" in page and "span_labels" not in (game.extra or {})
    client.post(url, {"labels": "weapon = 凶器 / weapon"})
    game.refresh_from_db()
    assert spans.span_labels(game) == {"weapon": ("凶器", "weapon")}


@pytest.mark.parametrize("fmt,name", [("jsonl", "questions.jsonl"), ("csv", "questions.csv")])
def test_span_labels_travel_through_the_exports_that_carry_evidence(game, tmp_path, fmt, name):
    span = _script_span(game, "管家拿着一把钥匙", label="method")
    question = game.questions.first()
    question.status = Status.APPROVED
    question.save()
    question.evidence.add(span)
    export_games(fmt, tmp_path / fmt, slugs=[game.slug], force=True)
    from exporters.generic.reader import read_csv, read_jsonl
    records = (read_jsonl if fmt == "jsonl" else read_csv)(tmp_path / fmt / name)
    evidence = [e for r in records for e in r["evidence"]]
    assert evidence == [{"document": "script", "owner": "林管家", "start": span.start, "end": span.end,
                         "quote": "管家拿着一把钥匙", "label": "method"}]
