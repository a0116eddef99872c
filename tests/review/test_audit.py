"""Audit history and revert: snapshots before/after, per-item history, revert restores options."""
from __future__ import annotations

import pytest

from annotate.models import EvidenceSpan, Option, Question
from annotate.services import snapshots, states
from annotate.services.questions import QuestionInput, save_question
from casebook import audit
from casebook.models import AuditEntry
from review import history


def _edit(question: Question, user, *, stem: str, options: list[tuple[str, bool]]) -> AuditEntry:
    before = snapshots.snapshot_item(question)
    question.stem = stem
    question.save()
    question.options.all().delete()
    Option.objects.bulk_create([Option(question=question, position=i, text=t, is_correct=c) for i, (t, c) in enumerate(options)])
    return snapshots.record_change(question.game, user, question, "update", before)


def test_history_lists_every_change_with_fields(anna_question, users, game):
    _edit(anna_question, users["anna"], stem="新题干：谁拿了钥匙？", options=[("林管家", False), ("王·小明", True)])
    states.transition(anna_question, "submit", users["anna"])
    rows = history.history(game, "question", anna_question.pk)
    assert [r.entry.action for r in rows] == ["submit", "update"]  # newest first
    fields = {c.field: c for c in rows[1].changes}
    assert fields["stem"].before.startswith("问题0") and fields["stem"].after == "新题干：谁拿了钥匙？"
    assert [o["text"] for o in fields["options"].after] == ["林管家", "王·小明"]
    assert fields["options"].after_text == "a. 林管家 / b. 王·小明 ✓"
    assert {c.field for c in rows[0].changes} == {"status"}
    assert rows[1].entry.user == users["anna"]


def test_revert_restores_stem_options_and_is_audited(anna_question, users, game):
    original_stem = anna_question.stem
    original = [(o.text, o.is_correct) for o in anna_question.options.all()]
    entry = _edit(anna_question, users["anna"], stem="改坏了", options=[("X", True), ("Y", False)])
    version = Question.objects.get(pk=anna_question.pk).version
    q = history.revert(game, entry, users["rita"], side="before")
    assert q.stem == original_stem
    assert [(o.text, o.is_correct) for o in q.options.order_by("position")] == original
    assert q.version == version + 1
    last = AuditEntry.objects.filter(item_type="question", item_id=q.pk).first()
    assert last.action == "revert" and last.user == users["rita"]
    assert last.before["stem"] == "改坏了" and last.after["stem"] == original_stem
    assert last.after["_reverted_to"] == {"entry": entry.pk, "side": "before"}
    # ... and the revert can itself be undone by restoring the version the edit produced.
    q = history.revert(game, entry, users["rita"], side="after")
    assert q.stem == "改坏了" and [o.text for o in q.options.order_by("position")] == ["X", "Y"]


def test_revert_keeps_workflow_state_and_llm_option_origin(anna_question, users, game):
    Option.objects.filter(question=anna_question, position=2).update(origin="llm", model_name="qwen", review="edited")
    entry = _edit(anna_question, users["anna"], stem="v2", options=[("only", True), ("two", False)])
    states.transition(anna_question, "submit", users["anna"])
    q = history.revert(game, entry, users["rita"], side="before")
    assert q.status == "submitted"
    llm = q.options.get(position=2)
    assert (llm.origin, llm.model_name, llm.review) == ("llm", "qwen", "edited")


def test_revert_of_an_edit_made_in_the_question_editor(anna_question, users, game):
    """Snapshots written by annotate.services.questions (options as text/correct only) revert too."""
    data = QuestionInput(kind=anna_question.kind, stem="编辑器里改的题干", options=[("甲", False), ("乙", True), ("丙", False)])
    save_question(game, anna_question, data, expected_version=anna_question.version, user=users["anna"])
    entry = AuditEntry.objects.filter(item_type="question", item_id=anna_question.pk, action="update").first()
    q = history.revert(game, entry, users["rita"], side="before")
    assert q.stem.startswith("问题0") and q.answer == "a"
    assert [o.text for o in q.options.order_by("position")] == ["林管家", "王小明", "Alice Smith"]


def test_revert_errors_are_clear(anna_question, users, game):
    entry = _edit(anna_question, users["anna"], stem="x", options=[("a", True), ("b", False)])
    with pytest.raises(history.AuditError, match="after or before"):
        history.revert(game, entry, users["rita"], side="sideways")
    create = snapshots.record_change(game, users["anna"], anna_question, "create", None)
    with pytest.raises(history.AuditError, match="no snapshot"):
        history.revert(game, create, users["rita"], side="before")
    with pytest.raises(history.AuditError, match="Unknown item type"):
        history.get_item(game, "character", 1)


def test_approvals_for_export_provenance(anna_question, users, game):
    q = states.transition(anna_question, "submit", users["anna"])
    q = states.transition(q, "approve", users["rita"])
    q = states.transition(q, "reopen", users["rex"], reason="key?")
    q = states.transition(q, "approve", users["rex"])
    record = audit.approvals(game)[q.pk]
    assert record["approved_by"] == "rex" and record["approved_at"].startswith(str(q.updated_at.year))
    from annotate.loader import load_game

    loaded = next(x for x in load_game(game).questions if x.stem == q.stem)
    assert loaded.provenance["approved_by"] == "rex"


def test_chain_history_includes_its_node_edits(game, users):
    from annotate.services.chains import save_node

    chain = game.chains.get()
    butler = game.characters.get(name="林管家")
    span = EvidenceSpan.objects.create(game=game, document="script", character=butler, start=0, end=4,
                                       quote=butler.script[0:4])
    node = save_node(chain, None, kind="direct", text="管家在十点前离开了书房", span_ids=[span.pk], user=users["anna"])
    states.transition(chain, "submit", users["rita"])
    rows = history.history(game, "reasoningchain", chain.pk)
    assert [(r.entry.action, r.part) for r in rows] == [("submit", ""), ("create", f"node {node.key}")]
    text = {c.field: c.after_text for c in rows[1].changes}
    assert text["text"] == "管家在十点前离开了书房"
    assert not rows[1].can_restore_after  # node entries are shown; nodes are restored in the chain editor
