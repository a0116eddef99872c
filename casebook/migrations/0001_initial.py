"""Job and AuditEntry move from ``annotate`` to the core, state only.

The tables (``annotate_job``, ``annotate_auditentry``) were created by annotate's migrations and
keep their names and rows: this migration only teaches Django's model state that the core owns
them. ``annotate.0008`` then drops them from annotate's state; neither touches the database.
Content types follow the models so admin permissions granted on them are kept.
"""
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def move_content_types(apps, schema_editor, *, old: str = "annotate", new: str = "casebook") -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for model in ("job", "auditentry"):
        if not content_type.objects.using(db).filter(app_label=new, model=model).exists():
            content_type.objects.using(db).filter(app_label=old, model=model).update(app_label=new)


def move_content_types_back(apps, schema_editor) -> None:
    move_content_types(apps, schema_editor, old="casebook", new="annotate")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        # The tables exist, with every column below, once annotate's job-lease migration ran.
        ("annotate", "0007_merge_job_lease_and_versions"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.CASEBOOK_GAME_MODEL),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AuditEntry",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("item_type", models.CharField(max_length=40)),
                        ("item_id", models.PositiveBigIntegerField()),
                        ("action", models.CharField(max_length=40)),
                        ("before", models.JSONField(blank=True, null=True)),
                        ("after", models.JSONField(blank=True, null=True)),
                        ("at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        ("game", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="audit",
                                                   to=settings.CASEBOOK_GAME_MODEL)),
                        ("user", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                   to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "annotate_auditentry",
                        "ordering": ["-at", "-id"],
                        "indexes": [models.Index(fields=["item_type", "item_id"], name="annotate_au_item_ty_75d291_idx")],
                    },
                ),
                migrations.CreateModel(
                    name="Job",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("kind", models.CharField(max_length=40)),
                        ("state", models.CharField(choices=[("queued", "Queued"), ("running", "Running"), ("done", "Done"),
                                                            ("failed", "Failed"), ("interrupted", "Interrupted")],
                                                   default="queued", max_length=12)),
                        ("done", models.PositiveIntegerField(default=0)),
                        ("total", models.PositiveIntegerField(default=0)),
                        ("message", models.TextField(blank=True)),
                        ("params", models.JSONField(blank=True, default=dict)),
                        ("result", models.JSONField(blank=True, default=dict)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("worker", models.CharField(blank=True, max_length=100)),
                        ("heartbeat_at", models.DateTimeField(blank=True, null=True)),
                        ("task_id", models.CharField(blank=True, help_text="The django-tasks result id of the last enqueue.",
                                                     max_length=64)),
                        ("game", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                                   related_name="jobs", to=settings.CASEBOOK_GAME_MODEL)),
                        ("user", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                   to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "annotate_job",
                        "ordering": ["-created_at"],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_types, move_content_types_back),
    ]
