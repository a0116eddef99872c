"""Views: membership gating (404 for non-members), every page renders, constant query counts on a
small vs a large game, span creation over HTTP, the version conflict page, protected media."""
from __future__ import annotations

import json

import pytest
from django.core.files.base import ContentFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import (
    ChainNode,
    Clue,
    Draft,
    EvidenceSpan,
    Membership,
    Question,
    ReasoningChain,
    Relationship,
)
from annotate.services import chains, spans
from casebook.models import AuditEntry

from .conftest import make_game


def game_urls(game) -> list[str]:
    q = game.questions.first()
    chain = ReasoningChain.objects.filter(game=game).first() or ReasoningChain.objects.create(game=game, title="链")
    char = game.characters.first()
    return [
        reverse("annotate:workspace", args=[game.slug]),
        reverse("annotate:reader", args=[game.slug]) + f"?left=c{char.pk}&right=manual",
        reverse("annotate:search", args=[game.slug]) + "?q=管家",
        reverse("annotate:clues", args=[game.slug]),
        reverse("annotate:characters", args=[game.slug]),
        reverse("annotate:character_script", args=[game.slug, char.pk]),
        reverse("annotate:question_list", args=[game.slug]),
        reverse("annotate:question_new", args=[game.slug]),
        reverse("annotate:question_edit", args=[game.slug, q.pk]),
        reverse("annotate:relationships", args=[game.slug]),
        reverse("annotate:chain_list", args=[game.slug]),
        reverse("annotate:chain_detail", args=[game.slug, chain.pk]),
        reverse("annotate:label_search", args=[game.slug]) + "?q=father",
        reverse("annotate:draft", args=[game.slug, "question:new"]),
    ]


@pytest.mark.django_db
def test_login_required_and_non_members_get_404(client, game, outsider, annotator):
    urls = game_urls(game)
    for url in urls:
        assert client.get(url).status_code == 302  # to the login page
    client.force_login(outsider)
    for url in urls:
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("annotate:span_create", args=[game.slug]), "{}", content_type="application/json").status_code == 404
    assert game.title not in client.get(reverse("annotate:game_list")).content.decode()
    client.force_login(annotator)
    for url in urls:
        assert client.get(url).status_code == 200, url
    assert game.title in client.get(reverse("annotate:game_list")).content.decode()
    # annotators cannot set targets or manage members
    assert client.post(reverse("annotate:targets", args=[game.slug]), {"target_objective": "5"}).status_code == 403


@pytest.mark.django_db
def test_login_page_and_create_game_by_hand(client, django_user_model):
    assert "Log in to Casebook" in client.get(reverse("login")).content.decode()
    django_user_model.objects.create_user("maria", password="pw-123456")
    response = client.post(reverse("login"), {"username": "maria", "password": "pw-123456"})
    assert response.status_code == 302
    response = client.post(reverse("annotate:game_create"), {"title": "雾中山庄", "language": "zh"})
    game = Membership.objects.get(user__username="maria").game
    assert response.url == reverse("annotate:workspace", args=[game.slug]) and game.slug == "雾中山庄"
    response = client.post(reverse("annotate:targets", args=[game.slug]), {"target_objective": "12"}, follow=True)
    assert "Targets saved" in response.content.decode()
    assert "0 / 12" in response.content.decode()
    again = client.post(reverse("annotate:game_create"), {"title": "雾中山庄", "language": "zh"})
    assert "already exists" in again.content.decode()


def _count(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(ctx.captured_queries)


@pytest.mark.django_db
def test_query_count_does_not_grow_with_game_size(client, django_user_model):
    user = django_user_model.objects.create_user("q", password="x")
    small = make_game("small", questions=5, characters=2, spans=2)
    big = make_game("big", questions=250, characters=12, script_chars=20_000, spans=60)
    for g in (small, big):
        Membership.objects.create(user=user, game=g, role="manager")
        chain = ReasoningChain.objects.create(game=g, title="链")
        span = spans.create_span(g, document="script", owner_id=g.characters.first().pk, start=0, end=2,
                                 quote=g.characters.first().script[:2])
        prev = chains.save_node(chain, None, kind="direct", text="起点", span_ids=[span.pk])
        for i in range(3 if g is small else 30):
            prev = chains.save_node(chain, None, kind="inferred", text=f"推理{i}", parent_ids=[prev.pk])
        people = list(g.characters.all())
        for a, b in zip(people, people[1:], strict=False):
            Relationship.objects.create(game=g, source=a, target=b, labels=["friend of x"])
    client.force_login(user)
    for s_url, b_url in zip(game_urls(small), game_urls(big), strict=True):
        assert _count(client, b_url) <= _count(client, s_url), b_url
    # the list page is paginated: the big game's 250 questions make 5 pages of 50
    page = client.get(reverse("annotate:question_list", args=["big"])).content.decode()
    assert "page 1 of 5" in page


@pytest.mark.django_db
def test_reader_renders_a_50k_script_as_one_text_block(anna_client, django_user_model):
    game = make_game("long", script_chars=50_000, questions=1, spans=5)
    Membership.objects.create(user=django_user_model.objects.get(username="anna"), game=game)
    char = game.characters.first()
    html = anna_client.get(reverse("annotate:reader", args=[game.slug]) + f"?left=c{char.pk}").content.decode()
    assert "50000 characters" in html
    assert html.count(char.script) == 1  # the text once, as plain text; the script draws the 5 spans
    assert html.count('"quote":') == 5


@pytest.mark.django_db
def test_span_endpoint_converts_browser_offsets(anna_client, game):
    char = game.characters.get(name="林管家")
    quote = "花园里有脚印"
    cp = char.script.index(quote)
    u16 = len(char.script[:cp].encode("utf-16-le")) // 2
    url = reverse("annotate:span_create", args=[game.slug])
    body = {"document": "script", "owner_id": char.pk, "start": u16, "end": u16 + len(quote), "quote": quote, "unit": "utf16"}
    data = anna_client.post(url, json.dumps(body), content_type="application/json").json()
    assert (data["start"], data["end"], data["quote"]) == (u16, u16 + len(quote), quote)  # answered in browser units
    stored = EvidenceSpan.objects.get(pk=data["id"])
    assert (stored.start, stored.end) == (cp, cp + len(quote)) and u16 == cp + 2  # two “𠮷” before it
    body["start"] = u16 - 1  # the code-point offset would be wrong by one: refused, clearly
    bad = anna_client.post(url, json.dumps({**body, "start": cp, "end": cp + len(quote), "unit": "codepoint", "quote": "别的字"}),
                           content_type="application/json")
    assert bad.status_code == 400 and "does not match" in bad.json()["error"]
    junk = anna_client.post(url, "not json", content_type="application/json")
    assert junk.status_code == 400 and junk.json()["error"]


def _post_question(client, game, q, version, stem):
    return client.post(reverse("annotate:question_edit", args=[game.slug, q.pk]), {
        "version": version, "kind": "reasoning", "sub_type": "why", "stem": stem, "status": "approved",
        "option_row": ["1", "2", "3"], "option_text_1": "为了钱", "option_text_2": "为了爱", "option_text_3": "为了仇",
        "option_correct_3": "on", "weight": "",
    })


@pytest.mark.django_db
def test_stale_tab_gets_a_conflict_and_keeps_its_text(anna_client, game, annotator):
    q = game.questions.first()
    Question.objects.filter(pk=q.pk).update(author=annotator, status="draft")  # annotators edit their own drafts
    assert _post_question(anna_client, game, q, 1, "第一个标签页的版本？").status_code == 302
    q.refresh_from_db()
    assert q.version == 2 and q.answer == "c" and q.raw == ""
    assert q.status == "draft"  # the form's "approved" is ignored: states move only through review
    stale = _post_question(anna_client, game, q, 1, "第二个标签页的版本？")
    html = stale.content.decode()
    assert stale.status_code == 200 and "Someone saved this question" in html
    assert "第二个标签页的版本？" in html and "第一个标签页的版本？" in html  # both versions shown
    assert '<tr class="differs" data-field="stem">' in html and '<tr class="" data-field="options">' in html
    q.refresh_from_db()
    assert q.stem == "第一个标签页的版本？"
    assert 'name="version" value="2"' in html  # saving again overwrites knowingly
    assert _post_question(anna_client, game, q, 2, "第二个标签页的版本？").status_code == 302
    q.refresh_from_db()
    assert q.stem == "第二个标签页的版本？" and q.version == 3
    assert AuditEntry.objects.filter(item_type="question", item_id=q.pk).count() == 2


@pytest.mark.django_db
def test_invalid_question_is_refused_with_message_and_input_kept(anna_client, game):
    response = anna_client.post(reverse("annotate:question_new", args=[game.slug]), {
        "version": 0, "kind": "long_script", "stem": "谁在说谎？", "option_row": ["1", "2"],
        "option_text_1": "甲", "option_text_2": "乙", "option_correct_1": "on", "option_correct_2": "on",
    })
    assert response.status_code == 200
    html = response.content.decode()
    assert "exactly one correct option" in html and "谁在说谎？" in html
    assert not Question.objects.filter(stem="谁在说谎？").exists()


@pytest.mark.django_db
def test_server_draft_round_trip(anna_client, game, annotator):
    url = reverse("annotate:draft", args=[game.slug, "question:new"])
    assert anna_client.post(url, json.dumps({"data": {"fields": {"stem": "草稿"}}, "version": 0}),
                            content_type="application/json").json() == {"saved": True}
    assert anna_client.get(url).json()["data"]["fields"]["stem"] == "草稿"
    assert Draft.objects.get(user=annotator).game == game
    page = anna_client.get(reverse("annotate:question_new", args=[game.slug])).content.decode()
    assert "草稿" in page  # handed to the editor, which offers to restore it


@pytest.mark.django_db
def test_relationship_and_chain_views(anna_client, game):
    a, b = list(game.characters.all()[:2])
    url = reverse("annotate:relationships", args=[game.slug])
    bad = anna_client.post(url, {"source": a.pk, "target": b.pk, "labels": ["best buddy of x"], "status": "draft"})
    assert "Not a Conan label" in bad.content.decode()
    ok = anna_client.post(url, {"source": a.pk, "target": b.pk, "labels": ["father of x"], "status": "approved"})
    rel = Relationship.objects.get(game=game)
    assert ok.url == reverse("annotate:relationship_edit", args=[game.slug, rel.pk])
    page = anna_client.get(ok.url).content.decode()
    assert "<svg" in page and f'href="/g/{game.slug}/relationships/{rel.pk}/"' in page
    labels = anna_client.get(reverse("annotate:label_search", args=[game.slug]) + "?q=father").json()["labels"]
    assert labels[0]["label"].startswith("father")
    chain = ReasoningChain.objects.create(game=game, title="动机", author=rel.author)
    curl = reverse("annotate:chain_detail", args=[game.slug, chain.pk])
    clue = Clue.objects.get(game=game, kind="image")
    anna_client.post(curl, {"kind": "direct", "text": "平面图显示密道", "image_clue": clue.pk})
    d = ChainNode.objects.get(chain=chain)
    anna_client.post(curl, {"kind": "conclusion", "text": "凶手走了密道", "parents": [d.pk]})
    c = ChainNode.objects.get(chain=chain, kind="conclusion")
    refused = anna_client.post(reverse("annotate:node_edit", args=[game.slug, chain.pk, d.pk]),
                               {"kind": "inferred", "text": "平面图显示密道", "parents": [c.pk]})
    assert "cycle" in refused.content.decode()
    html = anna_client.get(curl).content.decode()
    assert "1-step" in html and "<svg" in html
    chain.refresh_from_db()
    version = chain.version  # bumped by every node change
    anna_client.post(curl, {"action": "chain", "title": "动机链", "goal": "motive", "status": "approved", "version": version})
    chain.refresh_from_db()
    assert (chain.title, chain.status, chain.version) == ("动机链", "draft", version + 1)  # state: review only
    assert AuditEntry.objects.filter(item_type="reasoningchain", action="update").exists()


@pytest.mark.django_db
def test_media_is_served_to_members_only(client, game, annotator, outsider, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    clue = Clue.objects.get(game=game, kind="image")
    clue.image.save("plan.png", ContentFile(b"\x89PNG\r\n\x1a\nfake"), save=True)
    url = "/" + settings.MEDIA_URL.strip("/") + "/" + clue.image.name
    client.force_login(outsider)
    assert client.get(url).status_code == 404
    client.force_login(annotator)
    response = client.get(url)
    assert response.status_code == 200 and b"".join(response.streaming_content).startswith(b"\x89PNG")
    assert client.get(url.replace("plan", "../../etc/passwd")).status_code == 404


@pytest.mark.django_db
def test_add_clues_by_hand_and_refuse_non_images(anna_client, game, settings, tmp_path):
    import io

    from PIL import Image

    settings.MEDIA_ROOT = tmp_path
    url = reverse("annotate:clues", args=[game.slug])
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(buf, "PNG")
    png = ContentFile(buf.getvalue(), name="地图.png")
    response = anna_client.post(url, {"title": "地图", "image": png, "image_kind": "media_rich", "text": "负三层"}, follow=True)
    clue = Clue.objects.get(game=game, key="img/地图.png")
    assert (clue.kind, clue.media_type, clue.image_kind, clue.ocr_text) == ("image", "image/png", "media_rich", "负三层")
    assert clue.image.url in response.content.decode()
    assert anna_client.get(clue.image.url).status_code == 200
    bad = anna_client.post(url, {"title": "x", "image": ContentFile(b"%PDF-1.4 not an image", name="x.png")}, follow=True)
    assert "not an image" in bad.content.decode()
    text = anna_client.post(url, {"title": "信", "text": "我在十点见过他。"}, follow=True)
    assert "Added clue clue-" in text.content.decode()
    assert Clue.objects.filter(game=game).count() == 4


@pytest.mark.django_db
def test_characters_kills_members_key_statements_and_search_highlight(client, game, annotator, django_user_model):
    boss = django_user_model.objects.create_user("boss", password="x")
    Membership.objects.create(user=boss, game=game, role="manager")
    client.force_login(boss)
    members = reverse("annotate:members", args=[game.slug])
    assert "No user called" in client.post(members, {"username": "nobody", "role": "reviewer"}, follow=True).content.decode()
    client.post(members, {"username": "anna", "role": "reviewer"})
    assert Membership.objects.get(user=annotator).role == "reviewer"
    client.post(members, {"username": "anna", "role": "remove"})
    assert not Membership.objects.filter(user=annotator).exists()

    chars = list(game.characters.all())
    url = reverse("annotate:characters", args=[game.slug])
    form = {"action": "characters", "form-TOTAL_FORMS": len(chars) + 1, "form-INITIAL_FORMS": len(chars)}
    for i, c in enumerate(chars):
        form.update({f"form-{i}-id": c.pk, f"form-{i}-name": c.name, f"form-{i}-playable": "on",
                     f"form-{i}-aliases_text": "", f"form-{i}-goals_text": "", f"form-{i}-loaded_version": c.version})
    form.update({"form-0-aliases_text": "老林，林伯", "form-0-key_role": "on", "form-0-goals_text": "找到钥匙\n隐瞒身份",
                 f"form-{len(chars)}-name": "小麦", f"form-{len(chars)}-aliases_text": ""})
    assert client.post(url, form).status_code == 302
    lin = game.characters.get(name="林管家")
    assert lin.aliases == ["老林", "林伯"] and lin.goals == ["找到钥匙", "隐瞒身份"] and lin.key_role
    assert game.characters.filter(name="小麦", playable=False).exists()
    victim = chars[1]
    client.post(url, {"action": "add_kill", "killer": lin.pk, "victim": victim.pk})
    victim.refresh_from_db()
    assert game.kills.get().killer == lin and victim.is_victim
    assert "two different" in client.post(url, {"action": "add_kill", "killer": lin.pk, "victim": lin.pk}, follow=True).content.decode()

    ks = reverse("annotate:key_statements", args=[game.slug])
    client.post(ks, {"character": lin.pk, "text": "我十点进过书房。"})
    assert game.key_statements.get().character == lin
    assert "key role" in client.post(ks, {"character": victim.pk, "text": "x"}, follow=True).content.decode()

    reader = reverse("annotate:reader", args=[game.slug]) + f"?left=c{lin.pk}&hl=4-6"
    html = client.get(reader).content.decode()
    assert '"highlight": [5, 7]' in html  # code points 4–6 after “𠮷” (2 units in the browser)
    assert AuditEntry.objects.filter(game=game, user=boss).count() >= 6


@pytest.mark.django_db
def test_annotators_edit_only_their_own_drafts_and_submit_them(anna_client, game, annotator):
    theirs = game.questions.first()  # imported: nobody's draft
    assert _post_question(anna_client, game, theirs, theirs.version, "改别人的题？").status_code == 403
    theirs.refresh_from_db()
    assert theirs.stem != "改别人的题？"
    Question.objects.filter(pk=theirs.pk).update(author=annotator, status="draft")
    response = anna_client.post(reverse("annotate:question_edit", args=[game.slug, theirs.pk]), {
        "version": theirs.version, "kind": "reasoning", "sub_type": "why", "stem": "为什么？", "then": "submit",
        "option_row": ["1", "2"], "option_text_1": "为了钱", "option_text_2": "为了爱", "option_correct_1": "on",
    })
    assert response.status_code == 302
    theirs.refresh_from_db()
    assert (theirs.stem, theirs.status) == ("为什么？", "submitted")
    assert AuditEntry.objects.filter(item_type="question", item_id=theirs.pk, action="submit").exists()
