"""Integrity of the review path (issue 13): write → generate → review shows what the export writes.

On the real WellPlay game 罪恶 (anchors): an author writes a question, distractors are generated
offline (audited in the one snapshot shape), the reviewer's page and the author's "rejected" page
render, and the editor, the list and the review page give every option its export letter while
options awaiting review or rejected carry none.
"""
from __future__ import annotations

from django.urls import reverse

from annotate.loader import load_game
from annotate.models import Option, Question
from annotate.services import states
from annotate.services.questions import QuestionInput, save_question
from casebook.interchange import OptionReview, QuestionKind, Status
from casebook.models import AuditEntry
from generation.distractors import generate_for_question, store_options
from generation.review import review_option
from review import history


def _written_and_generated(game, author) -> Question:
    """What an author does: write a two-option question, then ask for two more distractors."""
    names = list(game.characters.order_by("position").values_list("name", flat=True))
    question = save_question(game, None, QuestionInput(
        kind=QuestionKind.OBJECTIVE, stem="谁最后一个离开了书房？", options=[(names[0], True), (names[1], False)],
    ), user=author)
    outcome = generate_for_question(question, 3, user=author)
    assert len(outcome.options) >= 1, outcome.skipped
    return Question.objects.get(pk=question.pk)


def test_review_page_after_generated_distractors(client, wellplay_game, django_user_model):
    from annotate.models import Membership

    anna = django_user_model.objects.create_user("anna")
    rita = django_user_model.objects.create_user("rita")
    Membership.objects.create(user=anna, game=wellplay_game, role="annotator")
    Membership.objects.create(user=rita, game=wellplay_game, role="reviewer")
    question = _written_and_generated(wellplay_game, anna)
    entry = AuditEntry.objects.filter(item_type="question", item_id=question.pk, action="generate-heuristic").get()
    assert all(isinstance(o, dict) and {"text", "correct", "review"} <= set(o) for o in entry.after["options"])
    question = states.transition(question, "submit", anna)

    client.force_login(rita)
    url = reverse("review:item", args=[wellplay_game.slug, "question", question.pk])
    page = client.get(url)
    assert page.status_code == 200
    body = page.content.decode()
    assert "generate-heuristic" in body and "(pending)" in body  # the history shows the generated options
    states.transition(Question.objects.get(pk=question.pk), "reject", rita, reason="选项太像了")

    client.force_login(anna)
    assert client.get(reverse("review:mine")).status_code == 200
    assert client.get(url).status_code == 200


def test_history_reads_entries_written_before_the_one_shape(client, wellplay_game, django_user_model):
    """Audit rows already stored with options as plain strings or lists still display."""
    root = django_user_model.objects.create_superuser("root")
    question = wellplay_game.questions.order_by("position").first()
    AuditEntry.objects.create(game=wellplay_game, item_type="question", item_id=question.pk, action="generate-llm",
                              before={"stem": question.stem, "options": ["甲", "乙"]},
                              after={"stem": question.stem, "options": [["甲", True, "accepted"], "乙", "丙"]})
    rows = history.history(wellplay_game, "question", question.pk)
    assert any("a. 甲 ✓" in c.after_text for r in rows for c in r.changes)
    client.force_login(root)
    assert client.get(reverse("review:item", args=[wellplay_game.slug, "question", question.pk])).status_code == 200


def test_editor_list_and_review_letters_equal_the_export(client, wellplay_game, django_user_model):
    root = django_user_model.objects.create_superuser("root")
    question = _written_and_generated(wellplay_game, root)
    generated = list(question.options.filter(review=OptionReview.PENDING).order_by("position"))
    assert len(generated) >= 2
    review_option(generated[0], "reject", user=root)
    review_option(generated[1], "accept", user=root)
    Question.objects.filter(pk=question.pk).update(status=Status.APPROVED)
    exported = next(q for q in load_game(wellplay_game, statuses=(Status.APPROVED,)).questions
                    if q.stem == question.stem)
    expected = [(letter, o.text) for letter, o in zip("abcdefghij", exported.options, strict=False)]
    assert generated[0].text not in [t for _, t in expected] and generated[1].text in [t for _, t in expected]

    client.force_login(root)
    editor = client.get(reverse("annotate:question_edit", args=[wellplay_game.slug, question.pk])).content.decode()
    editable = editor.split('id="options"')[1].split("</ol>")[0]
    positions = [editable.index(f'value="{text}"') for _, text in expected]
    assert positions == sorted(positions)  # every exported option, in export order
    assert generated[0].text not in editable and generated[0].text in editor.split('id="held-back"')[1]
    review_page = client.get(reverse("review:item", args=[wellplay_game.slug, "question", question.pk])).content.decode()
    shown = review_page.split('id="options"')[1].split("</ol>")[0]
    for letter, text in expected:
        assert f'<span class="letter">{letter}.</span> {text}' in shown
    assert generated[0].text not in shown
    assert f'id="export-answer">{exported.answer}<' in review_page
    listing = client.get(reverse("annotate:question_list", args=[wellplay_game.slug]), {"q": question.stem}).content.decode()
    assert generated[0].text not in listing and generated[1].text in listing

    # Saving from the editor keeps the held-back options and the letters.
    pending_before = set(Option.objects.filter(question=question, review__in=["pending", "rejected"]).values_list("text", flat=True))
    question.refresh_from_db()
    new_stem = question.stem + "？"
    save_question(wellplay_game, question, QuestionInput(
        kind=question.kind, stem=new_stem, options=[(o.text, o.correct) for o in exported.options],
        status=Status.DRAFT), expected_version=question.version, user=root)
    assert set(Option.objects.filter(question=question, review__in=["pending", "rejected"])
               .values_list("text", flat=True)) == pending_before
    Question.objects.filter(pk=question.pk).update(status=Status.APPROVED)
    again = next(q for q in load_game(wellplay_game, statuses=(Status.APPROVED,)).questions
                 if q.stem == new_stem)
    assert [o.text for o in again.options] == [t for _, t in expected] and again.answer == exported.answer


# ---- the one version check on every editor (item 8), through the real views -------------------

def _characters_post(game, versions: dict[int, int], rename: dict[int, str]) -> dict:
    chars = list(game.characters.order_by("position", "id"))
    data = {"action": "characters", "form-TOTAL_FORMS": str(len(chars)), "form-INITIAL_FORMS": str(len(chars)),
            "form-MIN_NUM_FORMS": "0", "form-MAX_NUM_FORMS": "1000"}
    for i, c in enumerate(chars):
        data.update({f"form-{i}-id": str(c.pk), f"form-{i}-name": rename.get(c.pk, c.name),
                     f"form-{i}-aliases_text": ", ".join(c.aliases), f"form-{i}-goals_text": "\n".join(c.goals),
                     f"form-{i}-loaded_version": str(versions[c.pk])})
        data.update({f"form-{i}-{flag}": "on" for flag in ("playable", "is_victim", "is_murderer", "key_role")
                     if getattr(c, flag)})
    return data


def test_characters_scripts_and_nodes_are_version_checked(client, game, users):
    from annotate.models import ChainNode, Character

    client.force_login(users["mia"])
    char = game.characters.order_by("position").first()
    loaded = dict(game.characters.values_list("pk", "version"))
    url = reverse("annotate:characters", args=[game.slug])
    assert client.post(url, _characters_post(game, loaded, {char.pk: "林管家（甲）"})).status_code == 302
    page = client.post(url, _characters_post(game, loaded, {char.pk: "Butler Lin"})).content.decode()
    assert 'id="conflict"' in page and "林管家（甲）" in page and 'value="Butler Lin"' in page
    assert Character.objects.get(pk=char.pk).name == "林管家（甲）"
    again = {**loaded, char.pk: Character.objects.get(pk=char.pk).version}
    assert client.post(url, _characters_post(game, again, {char.pk: "Butler Lin"})).status_code == 302
    assert Character.objects.get(pk=char.pk).name == "Butler Lin"

    script_url = reverse("annotate:character_script", args=[game.slug, char.pk])
    version = Character.objects.get(pk=char.pk).version
    assert client.post(script_url, {"script": "第一版剧本", "self_intro": "", "loaded_version": version}).status_code == 302
    page = client.post(script_url, {"script": "second script", "self_intro": "", "loaded_version": version})
    assert 'id="conflict"' in page.content.decode() and Character.objects.get(pk=char.pk).script == "第一版剧本"

    chain = game.chains.get()
    node = ChainNode.objects.get(chain=chain)
    node_url = reverse("annotate:node_edit", args=[game.slug, chain.pk, node.pk])
    form = {"kind": node.kind, "text": "管家十点在书房（改）", "version": node.version}
    from annotate.models import EvidenceSpan

    butler = Character.objects.get(pk=char.pk)
    span_ids = [EvidenceSpan.objects.create(game=game, document="script", character=butler, start=0, end=2,
                                            quote=butler.script[:2]).pk]
    assert client.post(node_url, {**form, "evidence": span_ids}).status_code == 302
    page = client.post(node_url, {**form, "text": "The butler was in the study", "evidence": span_ids}).content.decode()
    assert 'id="conflict"' in page and "The butler was in the study" in page
    assert ChainNode.objects.get(pk=node.pk).text == "管家十点在书房（改）"


def test_review_page_shows_image_chain_node_level_and_evidence(client, django_user_model, settings, tmp_path):
    """On the demo game: an image question shows its image, a multi-step question its chain node and
    the level the export writes, and evidence quotes are listed."""
    from annotate.builder import build_game
    from annotate.demo import read_demo_games
    from annotate.services.chains import level_label

    settings.MEDIA_ROOT = tmp_path
    demo = build_game(read_demo_games()[0]).game
    client.force_login(django_user_model.objects.create_superuser("root"))
    image_q = demo.questions.filter(image_clue__isnull=False).first()
    step_q = demo.questions.filter(kind=QuestionKind.MULTI_STEP).select_related("chain_node").first()
    assert image_q is not None and step_q is not None
    page = client.get(reverse("review:item", args=[demo.slug, "question", image_q.pk])).content.decode()
    assert 'id="question-image"' in page and image_q.image_clue.image.url in page
    page = client.get(reverse("review:item", args=[demo.slug, "question", step_q.pk])).content.decode()
    node_line = page.split('id="chain-node"')[1].split("</p>")[0]
    assert step_q.chain_node.key in node_line and f"level <strong>{level_label(step_q.level)}</strong>" in node_line
    with_evidence = demo.questions.filter(evidence__isnull=False).first()
    page = client.get(reverse("review:item", args=[demo.slug, "question", with_evidence.pk])).content.decode()
    assert with_evidence.evidence.first().quote[:20] in page.split('id="evidence"')[1]


def test_free_text_question_keeps_no_held_back_options(game, users):
    """Turned into a free-text question, a question keeps none of its options (pending ones could
    otherwise reach an export that includes drafts)."""
    question = game.questions.order_by("position").first()
    store_options(question, ["厨师"], origin="heuristic", user=users["anna"])
    question = Question.objects.get(pk=question.pk)
    save_question(game, question, QuestionInput(kind=QuestionKind.OPEN_ENDED, stem=question.stem, answer="林管家"),
                  expected_version=question.version, user=users["mia"])
    assert not Option.objects.filter(question=question).exists()


def test_option_review_is_version_checked(client, game, users):
    """Two reviewers act on the same generated option: the second, holding the old version, is told
    and changes nothing; the page's form carries the version."""
    from generation.review import ReviewError

    question = game.questions.order_by("position").first()
    (option,) = store_options(question, ["厨师"], origin="heuristic", user=users["anna"])
    stale = Option.objects.get(pk=option.pk)
    review_option(option, "edit", text="园丁厨师", user=users["rita"])
    try:
        review_option(stale, "reject", user=users["rex"])
    except ReviewError as exc:
        assert "someone reviewed this option meanwhile" in str(exc) and "园丁厨师" in str(exc)
    else:
        raise AssertionError("a stale review went through")
    assert Option.objects.get(pk=option.pk).review == OptionReview.EDITED

    client.force_login(users["mia"])
    page = client.get(reverse("generation:review", args=[game.slug]), {"all": "1"}).content.decode()
    current = Option.objects.get(pk=option.pk)
    assert f'data-version="{current.version}"' in page
    url = reverse("generation:review_option", args=[game.slug, option.pk])
    refused = client.post(url, {"action": "accept", "version": stale.version}, HTTP_ACCEPT="application/json")
    assert refused.status_code == 400 and Option.objects.get(pk=option.pk).review == OptionReview.EDITED
    done = client.post(url, {"action": "accept", "version": current.version}, HTTP_ACCEPT="application/json").json()
    assert done["ok"] and done["option_version"] == current.version + 1
