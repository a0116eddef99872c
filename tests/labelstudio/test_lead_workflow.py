"""Issue #16 end to end, as a team lead runs it on a real published game (WellPlay 罪恶, Chinese)
against a real Label Studio: push with the command → two Label Studio users annotate the same
tasks (one picks the relation label in the Taxonomy, the other on the arrow, as projects pushed
before did) → pull → one deletes an annotation, the other fixes a region → pull, pull again →
push again → pull. Casebook must show every contribution, conflict and deletion, and nothing twice.
"""
from __future__ import annotations

import os

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotate.models import EvidenceSpan, Game, Membership, Relationship, SpanLabelConflict
from casebook.interchange import Status
from labelstudio import config
from labelstudio.client import LabelStudioClient
from labelstudio.models import LabelStudioLink, LabelStudioTask, PulledItem
from labelstudio.pull import person_in
from review.models import Comment

from .test_bridge import _snapshot

pytestmark = [pytest.mark.labelstudio, pytest.mark.django_db]


def _span(rid: str, text: str, quote: str, label: str) -> dict:
    start = text.index(quote)
    return {"id": rid, "from_name": config.SPAN_LABELS, "to_name": config.TEXT, "type": "labels",
            "value": {"start": start, "end": start + len(quote), "text": quote, "labels": [label]}}


def _picked(region: dict, *labels: str) -> dict:
    return {"id": region["id"], "from_name": config.RELATION_TAXONOMY, "to_name": config.TEXT, "type": "taxonomy",
            "value": {**region["value"], "taxonomy": [["Allies", label] for label in labels]}}


def _unique_phrases(script: str, names: list[str], n: int, size: int = 6) -> list[str]:
    """``n`` phrases of ``size`` characters that occur once in the script and name nobody."""
    out: list[str] = []
    for i in range(0, len(script) - size, size * 3):
        phrase = script[i:i + size]
        if (script.count(phrase) == 1 and not any(c.isspace() for c in phrase)
                and not any(name in phrase or phrase in name for name in names)):
            out.append(phrase)
        if len(out) == n:
            return out
    raise AssertionError("the script has too few distinct phrases")


def test_push_two_annotators_delete_fix_and_pull_repeatedly_on_a_real_game(wellplay_anchor, labelstudio_server,
                                                                           django_user_model, capsys):
    url, token = labelstudio_server
    ls = LabelStudioClient(url, token)
    call_command("import_dataset", str(wellplay_anchor / "chinese" / "罪恶（4人封闭）"), format="wellplay", verbosity=0)
    game = Game.objects.get()
    suffix = os.urandom(3).hex()
    carol_ls = ls.sdk.users.create(username=f"carol{suffix}", email=f"carol-{suffix}@example.org")
    carol = django_user_model.objects.create_user(f"carol{suffix}", email=f"carol-{suffix}@example.org")
    lead = django_user_model.objects.create_user(f"lead{suffix}")
    Membership.objects.create(user=carol, game=game, role="annotator")
    Membership.objects.create(user=lead, game=game, role="manager")

    call_command("labelstudio", "push", game.slug, "--url", url, "--token", token)
    link = LabelStudioLink.objects.get(game=game)
    assert f"project {link.project_id} created" in capsys.readouterr().out
    tasks = LabelStudioTask.objects.filter(link=link)
    assert tasks.filter(kind="script").count() == 4 and tasks.filter(kind="question").count() > 30

    # a script that names two other characters
    people = list(game.characters.all())
    for owner in people:
        named = [c for c in people if c.pk != owner.pk and c.name in owner.script
                 and person_in(c.name, people) == c]
        if len(named) >= 2:
            break
    else:
        raise AssertionError("no script names two other characters")
    b, c = named[:2]
    script = owner.script
    p1, p2 = _unique_phrases(script, [p.name for p in people], 2)
    task = tasks.get(kind="script", object_id=owner.pk).task_id
    nb, nc = _span("nb", script, b.name, "人物"), _span("nc", script, c.name, "人物")
    # admin: the label searched in the Taxonomy of the arrow's first name; carol: on the arrow (older projects)
    ls.create_annotation(task, [nb, nc, _picked(nb, "friend of x"), {"from_id": "nb", "to_id": "nc", "type": "relation",
                                                                      "direction": "right"},
                                _span("p1", script, p1, "线索"), _span("p2", script, p2, "地点")])
    carol_script = ls.create_annotation(task, [nb, nc, {"from_id": "nb", "to_id": "nc", "type": "relation",
                                                         "direction": "right", "labels": ["friend of x"]},
                                               _span("p1", script, p1, "时间")], user_id=carol_ls.id)
    question = game.questions.filter(options__isnull=False).order_by("position", "id").first()
    q_task = tasks.get(kind="question", object_id=question.pk).task_id
    key = [o["value"] for o in ls.sdk.tasks.get(id=str(q_task)).data["options"]
           if o["option_id"] in set(question.options.filter(is_correct=True).values_list("pk", flat=True))]
    for user_id in (None, carol_ls.id):
        ls.create_annotation(q_task, [{"id": "k", "from_name": config.CORRECT, "to_name": config.STEM, "type": "choices",
                                       "value": {"choices": key}}], **({"user_id": user_id} if user_id else {}))

    call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token)
    out = capsys.readouterr().out
    assert "5 created (1 relation, 4 span)" in out and "1 conflict (1 span)" in out, out
    spans = {s.quote: s for s in EvidenceSpan.objects.filter(game=game, character=owner)}
    assert {b.name, c.name, p1, p2} <= set(spans) and (spans[p1].label, spans[p2].label) == ("clue", "place")
    (rel,) = Relationship.objects.filter(game=game, target=b, source=c, labels=["friend of x"])  # both ways of labelling: one
    assert rel.status == Status.DRAFT and {e.quote for e in rel.evidence.all()} == {b.name, c.name}
    (conflict,) = SpanLabelConflict.objects.filter(game=game, span=spans[p1])
    assert conflict.status == Status.SUBMITTED and [x["label"] for x in conflict.candidates] == ["clue", "time"]
    assert "conflict" in out and f"carol-{suffix}@example.org labels it time" in out
    rows = PulledItem.objects.filter(link=link)
    assert {r.annotator for r in rows} == {"admin@example.com", f"carol-{suffix}@example.org"}
    assert {r.user for r in rows if r.annotator.startswith("carol")} == {carol}

    web = Client()
    web.force_login(lead)
    page = web.get(reverse("labelstudio:game", kwargs={"slug": game.slug})).content.decode()
    assert f'data-annotator="carol-{suffix}@example.org"' in page and "Agreement on span labels" in page
    assert "Conflicts waiting in review (1)" in page and reverse("review:item", args=[game.slug, "spanlabelconflict", conflict.pk]) in page
    queue = web.get(reverse("review:queue") + f"?game={game.slug}&type=spanlabelconflict").content.decode()
    assert reverse("review:item", args=[game.slug, "spanlabelconflict", conflict.pk]) in queue

    before = (_snapshot(game), Comment.objects.count(), SpanLabelConflict.objects.count())
    call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token)
    out = capsys.readouterr().out
    assert "0 created; 0 updated" in out and "conflict" not in out
    assert (_snapshot(game), Comment.objects.count(), SpanLabelConflict.objects.count()) == before

    # carol deletes her annotation; admin fixes his: the place span p2 goes, p1 becomes time (agreeing with carol's
    # deleted one is irrelevant now: the conflict stays for the reviewer)
    ls.sdk.annotations.delete(id=carol_script)
    (mine,) = [a for a in ls.export_tasks(link.project_id) if a["id"] == task][0]["annotations"]
    fixed = [r for r in mine["result"] if r.get("id") != "p2"]
    ls.sdk.annotations.update(id=mine["id"], result=fixed)
    call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token)
    out = capsys.readouterr().out
    assert "5 deleted (1 relation, 4 span)" in out, out
    assert f"span {spans[b.name].pk} {b.name!r} is still marked by another annotation; kept" in out
    assert f"its label time is marked deleted in label conflict {conflict.pk}" in out
    assert Comment.objects.filter(item_type="spanlabelconflict", item_id=conflict.pk,
                                  text__startswith=f"carol-{suffix}@example.org's label time was deleted").count() == 1
    spans[p2].refresh_from_db()
    assert spans[p2].state == "withdrawn"
    assert EvidenceSpan.objects.get(pk=spans[b.name].pk).state == "draft"  # admin still marks it
    rel.refresh_from_db()
    assert rel.status == Status.DRAFT and not rel.reject_reason  # admin still draws it
    deleted = PulledItem.objects.filter(link=link, deleted_at__isnull=False)
    assert {r.annotator for r in deleted} == {"admin@example.com", f"carol-{suffix}@example.org"}
    assert deleted.filter(annotator__startswith="carol").count() == 4  # her 3 spans and her relation
    page = web.get(reverse("labelstudio:game", kwargs={"slug": game.slug})).content.decode()
    assert f'data-annotator="carol-{suffix}@example.org"' in page

    before = (_snapshot(game), Comment.objects.count(), PulledItem.objects.count())
    for _ in range(2):
        call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token)
        out = capsys.readouterr().out
        assert "0 created; 0 updated" in out and " deleted" not in out and "conflict" not in out, out
    assert (_snapshot(game), Comment.objects.count(), PulledItem.objects.count()) == before

    # pushing again (also under another name of the same server) creates nothing new
    def ours() -> list[int]:  # earlier runs on this server left projects of the same game
        return sorted(p.id for p in ls.sdk.projects.list(page_size=1000)
                      if (p.description or "").startswith(f"Casebook game {game.slug} "))

    projects = ours()
    assert link.project_id in projects
    call_command("labelstudio", "push", game.slug, "--url", url.replace("127.0.0.1", "localhost"), "--token", token)
    out = capsys.readouterr().out
    assert f"project {link.project_id} updated" in out and "0 task(s) created" in out and LabelStudioLink.objects.filter(game=game).count() == 1
    assert ours() == projects
    assert LabelStudioTask.objects.filter(link=link).count() == tasks.count()
    call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token)
    assert "0 created; 0 updated" in capsys.readouterr().out
    assert (_snapshot(game), Comment.objects.count(), PulledItem.objects.count()) == before

    # the last annotation of the script goes: its drafts are withdrawn and the open label conflict leaves the queue
    ls.sdk.annotations.delete(id=mine["id"])
    call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token)
    out = capsys.readouterr().out
    assert f"its label conflict {conflict.pk} left the review queue" in out, out
    conflict.refresh_from_db()
    assert conflict.status == Status.DRAFT and EvidenceSpan.objects.get(pk=spans[p1].pk).state == "withdrawn"
    assert "Conflicts waiting in review" not in web.get(reverse("labelstudio:game", kwargs={"slug": game.slug})).content.decode()
    assert Comment.objects.filter(item_type="spanlabelconflict", item_id=conflict.pk, text__contains="withdrawn").exists()
    rel.refresh_from_db()
    assert rel.reject_reason.startswith("Withdrawn: deleted in Label Studio")
