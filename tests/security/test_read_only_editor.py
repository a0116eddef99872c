"""#15 "Editing something you may not edit": an annotator opening an approved question sees it read
only with "request reopening"; a refused save keeps their text (form and server draft) and is
never a bare 403 page; the request reaches the reviewer queue."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import ChainNode, Draft, Question, ReasoningChain, Relationship

pytestmark = pytest.mark.django_db


@pytest.fixture
def approved(victim) -> Question:
    Question.objects.filter(game=victim).update(status="approved")
    return victim.questions.first()


def test_approved_question_is_read_only_for_an_annotator(client, people, victim, approved):
    client.force_login(people["annotator"])
    page = client.get(reverse("annotate:question_edit", args=[victim.slug, approved.pk])).content.decode()
    assert "<fieldset disabled" in page and "Request reopening" in page and "approved" in page
    assert "Delete question" not in page
    client.force_login(people["reviewer"])
    page = client.get(reverse("annotate:question_edit", args=[victim.slug, approved.pk])).content.decode()
    assert "<fieldset disabled" not in page and "Delete question" in page


def test_refused_save_keeps_the_text_and_the_request_reaches_the_queue(client, people, victim, approved):
    before = (approved.version, approved.stem)
    client.force_login(people["annotator"])
    url = reverse("annotate:question_edit", args=[victim.slug, approved.pk])
    response = client.post(url, {"version": approved.version, "kind": approved.kind, "stem": "我改写的题干：谁在十点进了书房？",
                                 "option_row": ["0", "1"], "option_text_0": "林管家", "option_correct_0": "on",
                                 "option_text_1": "园丁"})
    html = response.content.decode()
    assert response.status_code == 403 and "<html" in html.lower()  # a page, not a bare 403
    assert "我改写的题干" in html and "Ask a reviewer to reopen" in html
    draft = Draft.objects.get(user=people["annotator"], game=victim, key=f"question:{approved.pk}")
    assert draft.data["fields"]["stem"].startswith("我改写的题干") and draft.data["options"][0] == ["林管家", True]
    approved.refresh_from_db()
    assert (approved.version, approved.stem) == before

    client.post(reverse("review:comment", args=[victim.slug, "question", approved.pk]),
                {"reopen": "1", "text": "题干有错字"})
    client.force_login(people["reviewer"])
    queue = client.get(reverse("review:queue")).content.decode()
    assert "Reopening requested" in queue and "题干有错字" in queue and f"question {approved.pk}" in queue


@pytest.fixture
def approved_relationship(victim) -> Relationship:
    a, b = list(victim.characters.all())[:2]
    return Relationship.objects.create(game=victim, source=a, target=b, labels=["lover of x"], note="旧备注",
                                       status="approved")


@pytest.fixture
def approved_chain(victim) -> tuple[ReasoningChain, ChainNode]:
    chain = ReasoningChain.objects.create(game=victim, goal="murderer", title="谁下的毒", status="approved")
    node = ChainNode.objects.create(chain=chain, key="c1", text="茶是冷的",
                                    image_clue=victim.clues.get(key="img/1.png"))
    return chain, node


def test_approved_relationship_is_read_only_and_a_refused_save_keeps_the_text(client, people, victim,
                                                                             approved_relationship):
    rel = approved_relationship
    url = reverse("annotate:relationship_edit", args=[victim.slug, rel.pk])
    client.force_login(people["annotator"])
    page = client.get(url).content.decode()
    assert "<fieldset disabled" in page and "Request reopening" in page and "relationship is approved" in page
    assert reverse("annotate:relationship_delete", args=[victim.slug, rel.pk]) not in page
    response = client.post(url, {"version": rel.version, "source": rel.source_id, "target": rel.target_id,
                                 "labels": ["rival of x"], "note": "我的新备注：他们在吵架"})
    html = response.content.decode()
    assert response.status_code == 403 and "<html" in html.lower() and "我的新备注：他们在吵架" in html
    assert "Your text, not saved" in html and "rival of x" in html
    rel.refresh_from_db()
    assert (rel.labels, rel.note, rel.version) == (["lover of x"], "旧备注", 1)
    # The kept text survives a reload, until a save succeeds.
    assert "我的新备注：他们在吵架" in client.get(url).content.decode()
    assert Draft.objects.filter(user=people["annotator"], key=f"relationship:{rel.pk}").exists()

    client.post(reverse("review:comment", args=[victim.slug, "relationship", rel.pk]), {"reopen": "1", "text": "标签错了"})
    client.force_login(people["reviewer"])
    queue = client.get(reverse("review:queue")).content.decode()
    assert "标签错了" in queue and f"relationship {rel.pk}" in queue
    page = client.get(url).content.decode()
    assert "<fieldset disabled" not in page and "Request reopening" not in page
    # Once reopened the item is in the queue itself; the request is no longer listed as open.
    client.post(reverse("review:transition", args=[victim.slug, "relationship", rel.pk]),
                {"action": "reopen", "reason": "按请求重新打开", "version": rel.version})
    assert Relationship.objects.get(pk=rel.pk).status == "submitted"
    assert "标签错了" not in client.get(reverse("review:queue")).content.decode()


def test_approved_chain_node_is_read_only_and_a_refused_save_keeps_the_text(client, people, victim, approved_chain):
    chain, node = approved_chain
    url = reverse("annotate:node_edit", args=[victim.slug, chain.pk, node.pk])
    client.force_login(people["annotator"])
    page = client.get(url).content.decode()
    assert page.count("<fieldset disabled") == 2 and "Request reopening" in page and "chain is approved" in page
    assert "Delete node" not in page
    response = client.post(url, {"version": node.version, "kind": "direct", "text": "茶其实是热的，我改了"})
    html = response.content.decode()
    assert response.status_code == 403 and "茶其实是热的，我改了" in html and "Your text, not saved" in html
    refused_title = client.post(url, {"action": "chain", "version": chain.version, "title": "新标题", "goal": "murderer"})
    assert refused_title.status_code == 403 and "新标题" in refused_title.content.decode()
    deleted = client.post(url, {"action": "delete"})
    assert deleted.status_code == 403
    node.refresh_from_db()
    chain.refresh_from_db()
    assert (node.text, node.version, chain.title, chain.version) == ("茶是冷的", 1, "谁下的毒", 1)

    client.post(reverse("review:comment", args=[victim.slug, "reasoningchain", chain.pk]),
                {"reopen": "1", "text": "节点c1写错了"})
    client.force_login(people["reviewer"])
    assert "节点c1写错了" in client.get(reverse("review:queue")).content.decode()
    page = client.get(url).content.decode()
    assert "<fieldset disabled" not in page and "Delete node" in page
    saved = client.post(url, {"version": node.version, "kind": "direct", "text": "茶是温的",
                                 "image_clue": node.image_clue_id})
    assert saved.status_code == 302
    node.refresh_from_db()
    assert node.text == "茶是温的"


def test_annotator_edits_own_draft_relationship_and_the_kept_text_goes_on_save(client, people, victim):
    a, b = list(victim.characters.all())[:2]
    client.force_login(people["annotator"])
    response = client.post(reverse("annotate:relationships", args=[victim.slug]),
                           {"version": 0, "source": a.pk, "target": b.pk, "labels": ["friend of x"], "note": ""})
    rel = Relationship.objects.get(game=victim, note="")
    assert response.status_code == 302 and rel.author == people["annotator"]
    page = client.get(reverse("annotate:relationship_edit", args=[victim.slug, rel.pk])).content.decode()
    assert "<fieldset disabled" not in page and "Request reopening" not in page


def test_the_answer_key_pages_are_read_only_for_annotators(client, people, victim):
    """Cast, kills, key statements and scripts change only through reviewers: annotators see them
    read only, with whom to ask, instead of forms whose save is refused."""
    char = victim.characters.first()
    pages = [reverse("annotate:characters", args=[victim.slug]), reverse("annotate:chain_list", args=[victim.slug]),
             reverse("annotate:character_script", args=[victim.slug, char.pk])]
    client.force_login(people["annotator"])
    for url in pages:
        page = client.get(url).content.decode()
        assert 'id="read-only-key"' in page and "reviewer, manager" not in page and "manager, reviewer" in page, url
    characters = client.get(pages[0]).content.decode()
    assert "<fieldset disabled" in characters and "Save characters" not in characters and "Add kill" not in characters
    assert "Add key statement" not in client.get(pages[1]).content.decode()
    client.force_login(people["reviewer"])
    for url in pages:
        assert 'id="read-only-key"' not in client.get(url).content.decode(), url
    assert "Save characters" in client.get(pages[0]).content.decode()


def test_the_header_offers_import_only_to_who_may_import(client, people, victim):
    import_url = reverse("exporters:import")
    for name, offered in (("annotator", False), ("reviewer", False), ("manager", True)):
        client.force_login(people[name])
        page = client.get(reverse("annotate:workspace", args=[victim.slug])).content.decode()
        assert (f'href="{import_url}"' in page) is offered, name
        assert (client.get(import_url).status_code == 200) is offered, name


def test_the_review_page_of_an_approved_item_offers_the_reopening_request(client, people, victim, approved):
    url = reverse("review:item", args=[victim.slug, "question", approved.pk])
    client.force_login(people["annotator"])
    page = client.get(url).content.decode()
    assert "Request reopening" in page and reverse("review:comment", args=[victim.slug, "question", approved.pk]) in page
    client.force_login(people["reviewer"])
    page = client.get(url).content.decode()
    assert "Request reopening" not in page and 'data-action="reopen"' in page


def test_the_author_of_a_submitted_relationship_is_told_to_withdraw_it(client, people, victim):
    a, b = list(victim.characters.all())[:2]
    rel = Relationship.objects.create(game=victim, source=a, target=b, labels=["friend of x"], status="submitted",
                                      author=people["annotator"])
    client.force_login(people["annotator"])
    page = client.get(reverse("annotate:relationship_edit", args=[victim.slug, rel.pk])).content.decode()
    assert "<fieldset disabled" in page and "You submitted this relationship" in page and "withdraw it" in page
    assert "Request reopening" not in page  # it is not approved: nothing to reopen
    client.post(reverse("review:transition", args=[victim.slug, "relationship", rel.pk]),
                {"action": "withdraw", "version": rel.version})
    page = client.get(reverse("annotate:relationship_edit", args=[victim.slug, rel.pk])).content.decode()
    assert "<fieldset disabled" not in page
