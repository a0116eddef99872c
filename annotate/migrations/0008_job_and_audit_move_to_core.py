"""Job and AuditEntry now belong to the core app (``casebook.0001``): drop them from annotate's
model state only. The tables ``annotate_job`` and ``annotate_auditentry`` and their rows stay."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("annotate", "0007_merge_job_lease_and_versions"),
        ("casebook", "0001_initial"),
        ("synthesis", "0002_job_in_core"),  # the last reference to annotate.Job is gone first
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="AuditEntry"),
                migrations.DeleteModel(name="Job"),
            ],
            database_operations=[],
        ),
    ]
