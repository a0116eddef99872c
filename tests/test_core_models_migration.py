"""Job and AuditEntry moved from ``annotate`` to the core without touching the database: a
database migrated to the state before the move, with rows written through the old models,
migrates forward and every row (and the foreign keys to and from them) is still there."""
from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from casebook.models import AuditEntry, Job

BEFORE_MOVE = [("annotate", "0007_merge_job_lease_and_versions"), ("synthesis", "0001_initial"), ("casebook", None)]


def _migrate(targets) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection)  # a fresh loader sees what is applied now


@pytest.mark.django_db(transaction=True)
def test_rows_written_before_the_move_survive_it() -> None:
    executor = _migrate(BEFORE_MOVE)
    assert ("casebook", "0001_initial") not in executor.loader.applied_migrations
    old = executor.loader.project_state(list(executor.loader.applied_migrations)).apps
    game = old.get_model("annotate", "Game").objects.create(slug="mansion-zh", title="雪夜山庄", language="zh")
    user = old.get_model("auth", "User").objects.create(username="anna")
    job = old.get_model("annotate", "Job").objects.create(
        kind="ingest", game=game, user=user, state="interrupted", done=3, total=7, message="第 3/7 页",
        params={"language": "zh"}, worker="host:1", task_id="t-1")
    entry = old.get_model("annotate", "AuditEntry").objects.create(
        game=game, user=user, item_type="question", item_id=42, action="approve",
        before={"status": "submitted"}, after={"status": "approved"})
    run = old.get_model("synthesis", "SynthesisRun").objects.create(game=game, user=user, job=job)
    old_type = old.get_model("contenttypes", "ContentType").objects.get_or_create(app_label="annotate", model="job")[0]

    executor = _migrate(executor.loader.graph.leaf_nodes())
    assert {("casebook", "0001_initial"), ("annotate", "0008_job_and_audit_move_to_core")} <= set(
        executor.loader.applied_migrations)

    moved = Job.objects.get(pk=job.pk)
    assert (moved.kind, moved.state, moved.done, moved.total, moved.message, moved.params, moved.worker, moved.task_id) == (
        "ingest", "interrupted", 3, 7, "第 3/7 页", {"language": "zh"}, "host:1", "t-1")
    assert moved.game.slug == "mansion-zh" and moved.user.username == "anna" and moved.resumable
    kept = AuditEntry.objects.get(pk=entry.pk)
    assert (kept.item_type, kept.item_id, kept.action, kept.after) == ("question", 42, "approve", {"status": "approved"})
    assert list(moved.game.jobs.all()) == [moved] and list(moved.game.audit.all()) == [kept]

    from synthesis.models import SynthesisRun

    assert SynthesisRun.objects.get(pk=run.pk).job == moved
    # The content type row moved with the model, so permissions granted on it are kept.
    assert ContentType.objects.get_for_model(Job).pk == old_type.pk
    assert not ContentType.objects.filter(app_label="annotate", model="job").exists()


def test_core_tables_keep_their_names() -> None:
    assert Job._meta.db_table == "annotate_job" and AuditEntry._meta.db_table == "annotate_auditentry"
    assert Job._meta.app_label == AuditEntry._meta.app_label == "casebook"
