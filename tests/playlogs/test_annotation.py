"""Annotating turns: validation, roles, version checks, audit, review states; suggestions (LLM via
the local OpenAI-compatible server, offline heuristics); agreement between two annotators."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.http import Http404

from annotate.models import Membership
from annotate.services.permissions import RoleError
from annotate.services.states import StaleVersion, TransitionError
from casebook.interchange import Status
from casebook.models import AuditEntry
from playlogs import assist, services
from playlogs.agreement import session_agreement, triplet_prf
from playlogs.export import turn_rows
from playlogs.models import TurnAnnotation

pytestmark = pytest.mark.django_db

GOOD = {"triplets": [["小红", "suspect", "林管家"]], "face": "anger", "tone": "neutral", "suspicions": {"小红": ["林管家"]}}


def test_save_checks_vocabulary_roles_and_versions(transcript, member, django_user_model):
    anna = member(transcript)
    turn = transcript.turns.get(index=1)
    with pytest.raises(services.AnnotationError) as err:
        services.save_annotation(turn, anna, {"triplets": [["小红", "dance", "Bob"]], "face": "bored",
                                              "suspicions": {"小红": ["nobody"]}}, expected_version=None)
    message = str(err.value)
    assert "action 'dance' is not one of: support, suspect, accuse_as_murderer" in message
    assert "'Bob' is not a player" in message and "face 'bored'" in message and "suspicions of '小红'" in message
    with pytest.raises(services.AnnotationError, match="subject of a triplet is the speaker"):
        services.save_annotation(turn, anna, {"triplets": [["Alice", "suspect", "林管家"]]}, expected_version=None)
    assert not TurnAnnotation.objects.filter(annotator=anna).exists()
    saved = services.save_annotation(turn, anna, GOOD, expected_version=None)
    assert saved.version == 1 and saved.status == Status.DRAFT and saved.author == anna
    changed = services.save_annotation(turn, anna, {**GOOD, "face": "fear"}, expected_version=1)
    assert changed.version == 2
    with pytest.raises(services.AnnotationError, match="changed elsewhere"):
        services.save_annotation(turn, anna, {**GOOD, "face": "happy"}, expected_version=1)
    assert TurnAnnotation.objects.get(pk=saved.pk).face == "fear"  # the stale save changed nothing
    assert list(AuditEntry.objects.filter(item_type="turnannotation", item_id=saved.pk).values_list("action", flat=True)) \
        == ["edit", "create"]
    outsider = django_user_model.objects.create_user("otto")
    with pytest.raises(Http404):
        services.save_annotation(turn, outsider, GOOD, expected_version=None)


def test_review_states_decide_what_the_export_uses(transcript, member):
    anna, rita = member(transcript), member(transcript, Membership.Role.REVIEWER, "rita")
    turn = transcript.turns.get(index=1)
    mine = services.save_annotation(turn, anna, GOOD, expected_version=None)
    assert list(turn_rows(transcript))[1]["triplets"] == []  # a draft is not ground truth
    with pytest.raises(TransitionError, match="needs the reviewer role"):
        services.transition(mine, "approve", anna)
    mine = services.transition(mine, "submit", anna, expected_version=1)
    with pytest.raises(StaleVersion):
        services.transition(mine, "approve", rita, expected_version=1)
    mine = services.transition(mine, "approve", rita, expected_version=mine.version)
    assert mine.status == Status.APPROVED
    row = list(turn_rows(transcript))[1]
    assert row["triplets"] == GOOD["triplets"] and row["annotation"]["annotator"] == "anna"
    assert row["belief_matrix"][1] == [1.0, 0.0, 0.0]
    with pytest.raises(RoleError, match="changes only through review"):  # approved: not the annotator's to edit
        services.save_annotation(turn, anna, GOOD, expected_version=mine.version)


def test_offline_suggestions_read_names_and_cue_words(transcript, no_llm):
    turns = list(transcript.turns.all())
    zh = assist.suggest(turns[1])
    assert zh["source"] == "heuristic"
    assert zh["triplets"] == [["小红", "suspect", "林管家"]] and zh["suspicions"] == {"小红": ["林管家"]}
    en = assist.heuristic_suggestion(turns[2], {"Alice": ["小红"]})
    assert en["triplets"] == [["Alice", "support", "小红"]]
    assert en["suspicions"] == {"Alice": []}  # supporting someone drops the earlier suspicion
    assert assist.heuristic_suggestion(turns[0])["triplets"] == []  # no name with a cue word


def test_llm_suggestions_use_structured_output_and_drop_invalid_parts(transcript, llm_server):
    llm_server.enqueue(json.dumps({"triplets": [{"action": "accuse_as_murderer", "object": "林管家"},
                                                {"action": "fly", "object": "林管家"}],
                                   "face": "anger", "tone": "furious",
                                   "suspicions": [{"player": "小红", "suspects": ["林管家", "ghost"]}]}))
    out = assist.suggest(transcript.turns.get(index=1))
    assert out["source"] == "llm" and out["model"] == "test-model"
    assert out["triplets"] == [["小红", "accuse_as_murderer", "林管家"]]
    assert out["face"] == "anger" and out["tone"] == ""
    assert out["suspicions"] == {"小红": ["林管家"]}
    request = llm_server.requests[-1]
    assert request["response_format"]["type"] == "json_schema"
    assert "accuse_as_murderer" in request["messages"][1]["content"]


def test_failing_endpoint_falls_back_to_the_offline_suggestion(transcript, llm_server):
    from casebook.openai_test_server import Reply

    for _ in range(2):
        llm_server.enqueue(Reply.error(500))
    out = assist.suggest(transcript.turns.get(index=1))
    assert out["source"] == "heuristic" and "LLM unavailable" in out["note"]


def test_agreement_between_two_annotators(transcript, member):
    anna, bob = member(transcript), member(transcript, name="bob")
    t1, t2 = transcript.turns.get(index=1), transcript.turns.get(index=2)
    services.save_annotation(t1, anna, GOOD, expected_version=None)
    services.save_annotation(t1, bob, {**GOOD, "triplets": [["小红", "suspect", "林管家"], ["小红", "support", "Alice"]],
                                       "face": "anger"}, expected_version=None)
    services.save_annotation(t2, anna, {"triplets": [["Alice", "support", "小红"]], "face": "happy",
                                        "suspicions": {"Alice": []}}, expected_version=None)
    services.save_annotation(t2, bob, {"triplets": [["Alice", "suspect", "小红"]], "face": "neutral",
                                       "suspicions": {"Alice": ["小红"]}}, expected_version=None)
    [pair] = session_agreement(transcript.game)
    assert (pair.first, pair.second, pair.turns) == ("anna", "bob", 2)
    assert pair.precision == pytest.approx(1 / 3) and pair.recall == pytest.approx(1 / 2)
    assert pair.f1 == pytest.approx(0.4)
    assert pair.face.observed == 0.5 and pair.suspicion_exact == 0.5
    assert triplet_prf([set()], [set()]) == (None, None, None)
    from io import StringIO

    out = StringIO()
    call_command("agreement", transcript.game.slug, "--sessions", stdout=out)
    text = out.getvalue()
    assert "anna (reference) vs bob: 2 turns" in text and "F1 40.0%" in text and "precision 33.3%" in text


def test_suggest_session_prefills_drafts_with_progress(transcript, member, llm_server):
    from io import StringIO

    anna = member(transcript)
    services.save_annotation(transcript.turns.get(index=0), anna, {"face": "sad"}, expected_version=None)
    llm_server.reply = json.dumps({"triplets": [], "face": "neutral", "tone": "neutral",
                                   "suspicions": [{"player": "Alice", "suspects": ["林管家"]}]})
    out = StringIO()
    call_command("suggest_session", str(transcript.pk), "--as", "anna", stdout=out)
    assert "2/2 turns" in out.getvalue() and "2 drafts pre-filled by the LLM" in out.getvalue()
    drafts = TurnAnnotation.objects.filter(annotator=anna).order_by("turn__index")
    assert [d.source for d in drafts] == ["human", "llm", "llm"]  # the existing annotation was left alone
    assert drafts[1].suspicions == {"Alice": ["林管家"]} and drafts[1].status == Status.DRAFT
    outsider_out = StringIO()
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="not a member"):
        member(transcript, name="bob").memberships.all().delete()
        call_command("suggest_session", str(transcript.pk), "--as", "bob", stdout=outsider_out)


def test_offline_suggestion_uses_the_onuw_action_set(onuw):
    turn = onuw.turns.get(index=1)  # player1: "That is a lie, player2 is the werewolf!"
    out = assist.heuristic_suggestion(turn)
    assert out["triplets"] == [["player1", "point_as_werewolf", "player2"]]
    assert out["face"] == "anger" and out["suspicions"] == {"player1": ["player2"]}
    services.clean(turn, out)  # a suggestion always passes the same validation as a person's input
